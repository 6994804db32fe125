package stockctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// runPlan runs stockctl without an endpoint, which plan does not need.
func runPlan(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := stockctl.Run(context.Background(), args, stockctl.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	return code, out.String(), errOut.String()
}

func TestStockctl_PlanSizesASaleWithoutTheAPI(t *testing.T) {
	code, out, errOut := runPlan("plan", "--skus", "10", "--orders", "30000", "--page-views", "100000")
	if code != stockctl.ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"sku-009", "index OrdersTable.PendingByExpiry P<k> (each of 128)", "469 WU/s", "47%",
		"binds first, PAST its ceiling", "Deploy with ApiThrottleRateLimit=125000", "per million orders",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runPlan("-o", "json", "plan", "--sku", "hot:12000:30000", "--sku", "cold:100:300")
	var p struct {
		SKUs []struct {
			ID     string `json:"skuId"`
			Shards int    `json:"shards"`
		} `json:"skus"`
		Demand struct {
			RefundRatio float64 `json:"refundRatio"`
		} `json:"demand"`
		USDPerMillionOrders struct {
			Total float64 `json:"total"`
		} `json:"usdPerMillionOrders"`
		Refunds struct {
			Total float64 `json:"total"`
		} `json:"usdRefundsPerMillionOrders"`
	}
	if code != stockctl.ExitOK || json.Unmarshal([]byte(out), &p) != nil || len(p.SKUs) != 2 || p.SKUs[0].ID != "hot" || p.SKUs[0].Shards != 60 || p.SKUs[1].Shards != 1 ||
		p.USDPerMillionOrders.Total <= p.Refunds.Total || p.Refunds.Total <= 0 || p.Demand.RefundRatio != stockctl.DefaultRefundRatio {
		t.Errorf("-o json plan --sku …: exit %d, %+v from %s", code, p, out)
	}
	// Every key of the plan's JSON is camelCase, as the API's and the rehearsal's.
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range jsonKeys(doc) {
		if key == "" || key[0] < 'a' || key[0] > 'z' || strings.ContainsAny(key, "_- ") {
			t.Errorf("the plan's JSON has the key %q, not camelCase", key)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan"}, "plan needs --orders and --page-views (both, 0 for none), or --sku"},
		{[]string{"plan", "--orders", "5"}, "plan needs --orders and --page-views (both, 0 for none), or --sku"},
		{[]string{"plan", "--page-views", "5", "--skus", "2"}, "plan needs --orders and --page-views (both, 0 for none), or --sku"},
		{[]string{"plan", "--orders", "0", "--page-views", "0"}, "plan: at least one of --orders and --page-views must be above 0"},
		{[]string{"plan", "--orders", "-5", "--page-views", "1"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "NaN", "--page-views", "1"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "1", "--page-views", "Inf"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "1", "--page-views", "+Inf"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "+inf", "--page-views", "1"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--sku", "a:+Inf:1"}, `"a:+Inf:1": orders and page views must be numbers from 0 to 10000000`},
		{[]string{"plan", "--orders", "1e308", "--page-views", "1"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "1", "--page-views", "1", "--refunds", "-1"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "1", "--page-views", "1", "--refusals", "-1"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "1", "--page-views", "1", "--refusals", "NaN"}, "must be numbers from 0 to 10000000"},
		{[]string{"plan", "--orders", "1", "--pay-ratio", "NaN"}, "--pay-ratio must be 0 to 1"},
		{[]string{"plan", "--sku", "hot:NaN:1"}, `"hot:NaN:1": orders and page views must be numbers`},
		{[]string{"plan", "--sku", "hot:1:1", "--sku", "hot:2:2"}, "SKU hot given twice"},
		{[]string{"plan", "--orders", "1", "--pay-ratio", "2"}, "--pay-ratio must be 0 to 1"},
		{[]string{"plan", "--orders", "1", "--pay-ratio", "0.5", "--refund-ratio", "0.6"}, "--refund-ratio must be 0 to --pay-ratio (0.5): only a paid order is refunded"},
		{[]string{"plan", "--orders", "1", "--refund-ratio", "-0.1"}, "--refund-ratio must be 0 to --pay-ratio"},
		// --pay-ratio below the default --refund-ratio names that flag and its default.
		{[]string{"plan", "--orders", "1", "--page-views", "1", "--pay-ratio", "0"}, "--refund-ratio must be 0 to --pay-ratio (0): only a paid order is refunded; --refund-ratio is 0.05 unless given: give one, e.g. --refund-ratio 0"},
		{[]string{"plan", "--orders", "1", "--page-views", "1", "--pay-ratio", "0.01"}, "--refund-ratio is 0.05 unless given"},
		// An all-zero SKU line is refused as --orders 0 --page-views 0 is.
		{[]string{"plan", "--sku", "a:0:0"}, `"a:0:0": at least one of its orders and page views must be above 0`},
		{[]string{"plan", "--sku", "hot:10:10", "--sku", "b:c:0:0"}, `"b:c:0:0": at least one of its orders and page views must be above 0`},
		{[]string{"plan", "--orders", "1", "--refund-ratio", "NaN"}, "--refund-ratio must be 0 to --pay-ratio"},
		{[]string{"plan", "--sku", "hot:lots:1"}, `"hot:lots:1": orders and page views must be numbers`},
		{[]string{"plan", "--orders", "1", "extra"}, `unexpected "extra"`},
	} {
		code, out, errOut := runPlan(tc.args...)
		if code != stockctl.ExitUsage || out != "" || !strings.HasPrefix(errOut, "stockctl: ") || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("stockctl %s: exit %d, stdout %q, stderr %q; want a usage error with %q", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
}

// jsonKeys is every object key in v, a decoded JSON document, at any depth.
func jsonKeys(v any) []string {
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			keys = append(keys, k)
			keys = append(keys, jsonKeys(e)...)
		}
	case []any:
		for _, e := range v {
			keys = append(keys, jsonKeys(e)...)
		}
	}
	return keys
}

// stockctl plan --orders 0 (page views alone) prints no cost per million orders: it
// says there is none, and its JSON has no usdPerMillionOrders.
func TestStockctl_PlanOfNoOrdersHasNoCostPerOrder(t *testing.T) {
	code, out, errOut := runPlan("plan", "--orders", "0", "--page-views", "5000")
	if code != stockctl.ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "Cost: no cost per order: the plan has no orders (--orders 0)") || strings.Contains(out, "per million orders") {
		t.Errorf("the plan of no orders:\n%s", out)
	}
	code, out, _ = runPlan("-o", "json", "plan", "--orders", "0", "--page-views", "5000")
	var doc map[string]any
	if code != stockctl.ExitOK || json.Unmarshal([]byte(out), &doc) != nil || doc["usdPerMillionOrders"] != nil || doc["usdFixedPerSale"] == nil {
		t.Errorf("-o json plan --orders 0: exit %d, %s", code, out)
	}
}

// stockctl plan --orders 100000 --page-views 1 --skus 1: one SKU past what 64 shards
// carry is a sale that cannot be carried as asked, said with what would carry it, and
// never "more shards".
func TestStockctl_PlanSaysASKUPastTheMostShardsCannotBeCarried(t *testing.T) {
	code, out, errOut := runPlan("plan", "--orders", "100000", "--page-views", "1", "--skus", "1")
	if code != stockctl.ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"sku-000 CANNOT BE CARRIED AS ASKED", "a waiting room (issue 38)", "split the SKU into 8 SKUs"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "more shards") {
		t.Errorf("the plan advises more shards at 64:\n%s", out)
	}
}

// stockctl plan --risk-checked-buyers N says the scalper check's N getUserRiskRank
// calls and how to read the daily quota that must cover them (getApiQuota), in text
// and JSON; without the flag the plan says nothing of it; a negative count is a
// usage error.
func TestStockctl_PlanSaysTheScalperCheckCallsAndTheQuotaToCheck(t *testing.T) {
	quota := `/cgi-bin/openapi/quota/get?access_token=$ACCESS_TOKEN" -d '{"cgi_path":"/wxa/getuserriskrank"}'`
	_, with, _ := runPlan("plan", "--orders", "100", "--page-views", "100", "--risk-checked-buyers", "50000")
	for _, want := range []string{"Scalper check: 50000 getUserRiskRank calls", "quota.remain of getApiQuota must be at least 50000", quota} {
		if !strings.Contains(with, want) {
			t.Errorf("the plan lacks %q:\n%s", want, with)
		}
	}
	if _, without, _ := runPlan("plan", "--orders", "100", "--page-views", "100"); strings.Contains(without, "getUserRiskRank") {
		t.Errorf("a plan without --risk-checked-buyers speaks of the scalper check:\n%s", without)
	}
	code, out, _ := runPlan("-o", "json", "plan", "--orders", "100", "--page-views", "0", "--risk-checked-buyers", "7")
	var p struct {
		RiskCheck *struct {
			Calls        int    `json:"getUserRiskRankCalls"`
			QuotaRequest string `json:"quotaRequest"`
			QuotaPage    string `json:"quotaPage"`
		} `json:"riskCheck"`
	}
	if code != stockctl.ExitOK || json.Unmarshal([]byte(out), &p) != nil || p.RiskCheck == nil || p.RiskCheck.Calls != 7 ||
		!strings.HasSuffix(p.RiskCheck.QuotaRequest, quota) || !strings.Contains(p.RiskCheck.QuotaPage, "get_api_quota") {
		t.Errorf("-o json plan --risk-checked-buyers 7: exit %d, %+v from %s", code, p.RiskCheck, out)
	}
	if code, out, errOut := runPlan("plan", "--orders", "1", "--risk-checked-buyers", "-1"); code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "--risk-checked-buyers must be 0 to 1000000000") {
		t.Errorf("a negative count: exit %d, %q, %q", code, out, errOut)
	}
}

// --sku gives each SKU's own peaks: beside --skus, --orders or --page-views, which it
// would leave unused, it is refused.
func TestStockctl_PlanRefusesSKUPeaksBesideTheEvenPeaks(t *testing.T) {
	for _, extra := range [][]string{{"--orders", "500"}, {"--skus", "3"}, {"--page-views", "900"}, {"--orders=0", "--page-views=0"}} {
		args := append([]string{"plan", "--sku", "hot:100:1000"}, extra...)
		code, out, errOut := runPlan(args...)
		if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "give --sku or --skus, --orders and --page-views, not both") {
			t.Errorf("%q: exit %d, out %q, err %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runPlan("plan", "--sku", "hot:100:1000", "--refusals", "50", "--pay-ratio", "0.5"); code != stockctl.ExitOK {
		t.Errorf("--sku with --refusals and --pay-ratio: exit %d, err %q", code, errOut)
	}
}

// A peak below 10 shows its tenths, and one above 0 is never shown as 0: half an
// order a second per SKU reads 0.5, payCallback's concurrency of 0.014 reads <0.1.
func TestStockctl_PlanShowsSmallFiguresUnrounded(t *testing.T) {
	code, out, errOut := runPlan("plan", "--orders", "1", "--page-views", "1", "--skus", "2")
	if code != stockctl.ExitOK {
		t.Fatalf("exit %d, err %q", code, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^ +sku-001 +0\.5 +0\.5 +1 *$`),
		regexp.MustCompile(`(?m)^Lambda PayCallbackFunction \(reserved\) +<0\.1 concurrent +20 +0\.1% `),
		regexp.MustCompile(`(?m)^API Gateway account +3\.4 requests/s +10000 +<0\.1% `),
		regexp.MustCompile(`(?m)^Lambda CloseOrderFunction \(reserved\) +11 concurrent +20 +56% `),
		regexp.MustCompile(`(?m)^index OrdersTable\.RefundingBySince R<k> \(each of 16\) +0 WU/s +1000 +0% `),
	} {
		if !want.MatchString(out) {
			t.Errorf("the plan lacks %s:\n%s", want, out)
		}
	}
}

// A negative zero is zero: plan given -0 for any number prints what it prints for 0,
// never "-0" (ParseFloat keeps the sign of -0, and fmt prints it), table and JSON.
func TestStockctl_PlanReadsNegativeZeroAsZero(t *testing.T) {
	for _, args := range [][]string{ // Z: the zero, 0 or -0
		{"plan", "--orders", "Z", "--page-views", "1", "--refunds", "Z", "--refusals", "Z"},
		{"plan", "--orders", "1", "--page-views", "1", "--pay-ratio", "Z", "--refund-ratio", "Z"},
		{"plan", "--sku", "a:Z:1", "--sku", "b:1:Z"},
	} {
		for _, format := range []string{"table", "json"} {
			var zero, negative []string
			for _, a := range append([]string{"-o", format}, args...) {
				zero, negative = append(zero, strings.ReplaceAll(a, "Z", "0")), append(negative, strings.ReplaceAll(a, "Z", "-0"))
			}
			_, want, _ := runPlan(zero...)
			code, out, errOut := runPlan(negative...)
			if code != stockctl.ExitOK || out != want {
				t.Errorf("%q: exit %d, err %q, out differs from %q's:\n%s\nwant:\n%s", negative, code, errOut, zero, out, want)
			}
		}
	}
}

// A peak above 0 is at least 0.001 a second: a tinier one made the figures per order
// infinite, printed as $+Inf, or, with -o json, exit 1 (json: unsupported value), the
// exit status of the API's refusal. It is a usage error naming the bound, table or
// JSON, and plan prints no Inf or NaN at the bound.
func TestStockctl_PlanRefusesAPeakTooSmallToSize(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		for _, args := range [][]string{
			{"plan", "--orders", "1e-320", "--page-views", "1"},
			{"plan", "--orders", "1e-300", "--page-views", "1"},
			{"plan", "--orders", "0.0009", "--page-views", "10000000"},
			{"plan", "--orders", "1", "--page-views", "1e-300"},
			{"plan", "--orders", "1", "--page-views", "1", "--refunds", "1e-320"},
			{"plan", "--orders", "1", "--page-views", "1", "--refusals", "1e-320"},
			{"plan", "--sku", "a:1e-320:1"},
		} {
			code, out, errOut := runPlan(append([]string{"-o", format}, args...)...)
			if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "0.001") {
				t.Errorf("-o %s %q: exit %d, out %.200q, err %q; want exit 2 naming the bound 0.001", format, args, code, out, errOut)
			}
		}
		for _, args := range [][]string{
			{"plan", "--orders", "0.001", "--page-views", "10000000", "--skus", "10000"},
			{"plan", "--sku", "a:0.001:10000000", "--refunds", "0.001", "--refusals", "0.001"},
		} {
			code, out, errOut := runPlan(append([]string{"-o", format}, args...)...)
			if code != stockctl.ExitOK || strings.Contains(out, "Inf") || strings.Contains(out, "NaN") {
				t.Errorf("-o %s %q: exit %d, err %q, out %.300q; want a plan without Inf or NaN", format, args, code, errOut, out)
			}
		}
	}
}
