package stockctl

import (
	"strings"
	"testing"
)

func TestPrintReport_ShowsRefundProblemsAndStuckRefunds(t *testing.T) {
	for _, tc := range []struct {
		name, report string
		want         []string
		balanced     bool
	}{
		{"clean", `{"skusChecked":2,"differences":[],"overdueOrders":[],"repaired":[],"refundProblems":[],"stuckRefunds":[]}`,
			[]string{"2 SKUs checked, 0 differences, 0 overdue orders, 0 repairs, 0 refund problems, 0 stuck refunds"}, true},
		{"refund problem", `{"skusChecked":1,"differences":[],"overdueOrders":[],"repaired":[],"refundProblems":["o1: refunded 99999 fen of 12900 paid"],"stuckRefunds":["o2_R"]}`,
			[]string{"1 refund problems, 1 stuck refunds", "REFUND PROBLEM", "o1: refunded 99999 fen of 12900 paid", "STUCK REFUND", "o2_R"}, false},
		{"stuck refund only", `{"skusChecked":1,"differences":[],"overdueOrders":[],"repaired":[],"refundProblems":[],"stuckRefunds":["o3_R"]}`,
			[]string{"STUCK REFUND", "o3_R"}, true},
	} {
		var out strings.Builder
		if err := printReport(&out, []byte(tc.report)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output %q lacks %q", tc.name, out.String(), w)
			}
		}
		if got := strings.Contains(out.String(), "the books balance"); got != tc.balanced {
			t.Errorf("%s: says the books balance = %v, want %v:\n%s", tc.name, got, tc.balanced, out.String())
		}
	}
}
