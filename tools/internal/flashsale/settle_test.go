package flashsale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// settled is what a settling run should end with.
type settled struct {
	payers, paid, cancels, cancelled int
	available                        int // GET /skus after settling
	onHand                           int // on-hand after settling
}

// The settlement checks, by name.
const (
	checkPayments  = "payments"
	checkCancels   = "cancels"
	checkAvailable = "available after settling"
	checkOnHand    = "on-hand after settling"
)

func TestRun_SettlesAgainstStandIn(t *testing.T) {
	allPass := verdicts{checkPayments: ResultPass, checkCancels: ResultPass, checkAvailable: ResultPass, checkOnHand: ResultPass}
	halfPaid := settled{payers: 20, paid: 20, cancels: 20, cancelled: 20, available: 20, onHand: 20}
	tests := []struct {
		name    string
		fault   fault
		cfg     func(*Config) // nil: settleWith(0.5, true), half pay and the rest cancel
		want    verdicts
		settled settled
	}{
		{name: "half pay, the rest cancel", want: allPass, settled: halfPaid},
		{
			name: "ratio 1: everyone pays, nothing to cancel", cfg: settleWith(1, true), want: allPass,
			settled: settled{payers: 40, paid: 40, available: 0, onHand: 0},
		},
		{
			name: "ratio 0 with cancel unpaid: everyone cancels", cfg: settleWith(0, true), want: allPass,
			settled: settled{cancels: 40, cancelled: 40, available: 40, onHand: 40},
		},
		{
			name: "cancel unpaid off: the unpaid keep their stock", cfg: settleWith(0.25, false),
			want:    verdicts{checkPayments: ResultPass, checkCancels: ResultSkip, checkAvailable: ResultPass, checkOnHand: ResultPass},
			settled: settled{payers: 10, paid: 10, available: 0, onHand: 30},
		},
		{
			name: "cancels carry the holder's bearer token", cfg: func(c *Config) {
				settleWith(0.5, true)(c)
				c.Tokens = []string{"t1", "t2", "t3"}
			},
			want: allPass, settled: halfPaid,
		},
		{
			name: "every pay answered 401 fails the payments check", fault: fault{payFailEvery: 1, payFailStatus: 401},
			want:    verdicts{checkPayments: ResultFail, checkCancels: ResultPass, checkAvailable: ResultPass, checkOnHand: ResultPass},
			settled: settled{payers: 20, paid: 0, cancels: 20, cancelled: 20, available: 20, onHand: 40},
		},
		{
			name: "every 4th pay answered 500 fails the payments check", fault: fault{payFailEvery: 4, payFailStatus: 500},
			want:    verdicts{checkPayments: ResultFail, checkAvailable: ResultPass, checkOnHand: ResultPass},
			settled: settled{payers: 20, paid: 15, cancels: 20, cancelled: 20, available: 20, onHand: 25},
		},
		{
			name: "a 204 that leaves the order PENDING is caught", fault: fault{payIgnored: true},
			want:    verdicts{checkPayments: ResultFail, checkOnHand: ResultPass},
			settled: settled{payers: 20, paid: 0, cancels: 20, cancelled: 20, available: 20, onHand: 40},
		},
		{
			name: "a pay that does not commit on-hand is caught", fault: fault{payKeepsOnHand: true},
			want:    verdicts{checkPayments: ResultPass, checkAvailable: ResultPass, checkOnHand: ResultFail},
			settled: settled{payers: 20, paid: 20, cancels: 20, cancelled: 20, available: 20, onHand: 40},
		},
		{
			name: "a pay that gives the units back to available is caught", fault: fault{payReleases: true},
			want:    verdicts{checkPayments: ResultPass, checkAvailable: ResultFail, checkOnHand: ResultPass},
			settled: settled{payers: 20, paid: 20, cancels: 20, cancelled: 20, available: 40, onHand: 20},
		},
		{
			name: "a cancel that keeps the stock is caught", fault: fault{cancelKeepsStock: true},
			want:    verdicts{checkCancels: ResultPass, checkAvailable: ResultFail, checkOnHand: ResultPass},
			settled: settled{payers: 20, paid: 20, cancels: 20, cancelled: 20, available: 0, onHand: 20},
		},
		{
			name: "every cancel answered 500 fails the cancels check", fault: fault{cancelFailEvery: 1, cancelFailStatus: 500},
			want:    verdicts{checkPayments: ResultPass, checkCancels: ResultFail, checkAvailable: ResultPass},
			settled: settled{payers: 20, paid: 20, cancels: 20, cancelled: 0, available: 0, onHand: 20},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each run has its own stand-in server
			if tt.cfg == nil {
				tt.cfg = settleWith(0.5, true)
			}
			_, cfg := settleStandIn(t, tt.fault, tt.cfg)
			var out bytes.Buffer
			rep, err := Run(context.Background(), cfg, &out)
			var wantErr error // ErrVerificationFailed when any check fails
			if slices.Contains(slices.Collect(maps.Values(tt.want)), ResultFail) {
				wantErr = ErrVerificationFailed
			}
			if !errors.Is(err, wantErr) || (err != nil && wantErr == nil) {
				t.Fatalf("run error = %v, want %v\n%s", err, wantErr, out.String())
			}
			if rep.Created != 40 || rep.Settlement == nil {
				t.Fatalf("created %d, settlement %v; want 40 orders settled", rep.Created, rep.Settlement)
			}
			assertSettled(t, rep.Settlement, tt.settled)
			assertVerdicts(t, rep, tt.want)
			if t.Failed() {
				t.Logf("report:\n%s", out.String())
			}
		})
	}
}

// settleWith sets the settlement configuration.
func settleWith(ratio float64, cancelUnpaid bool) func(*Config) {
	return func(c *Config) { c.PayRatio, c.CancelUnpaid = ratio, cancelUnpaid }
}

// settleStandIn is a stand-in server with 40 cups and fault f, and the test
// configuration against it changed by settle.
func settleStandIn(t *testing.T, f fault, settle func(*Config)) (*standIn, Config) {
	t.Helper()
	s, srv := newStandIn(t, "cup-01", 40, 0, f)
	cfg := testConfig(srv)
	settle(&cfg)
	return s, cfg
}

// wantSetupError fails t unless a run ended in a setup error naming what (err), with no
// report and no order posted to s.
func wantSetupError(t *testing.T, s *standIn, rep *Report, err error, what string) {
	t.Helper()
	if err == nil || rep != nil || errors.Is(err, ErrVerificationFailed) || !strings.Contains(err.Error(), what) {
		t.Errorf("run = %v, %v; want a setup error naming %s, no report", rep, err, what)
	}
	if posts, _, _ := s.requests(); posts != 0 {
		t.Errorf("%d orders posted, want none", posts)
	}
}

func assertSettled(t *testing.T, s *Settlement, want settled) {
	t.Helper()
	got := settled{payers: s.Payers, paid: s.PaidOrders, cancels: s.Cancels, cancelled: s.CancelledOrders, available: s.Available, onHand: -1}
	if s.OnHand != nil {
		got.onHand = *s.OnHand
	}
	if got != want {
		t.Errorf("settlement %+v, want %+v", got, want)
	}
	if s.PaidUnits != s.PaidOrders || s.ReleasedUnits != s.CancelledOrders {
		t.Errorf("paid units %d, released units %d; want %d and %d at qty 1", s.PaidUnits, s.ReleasedUnits, s.PaidOrders, s.CancelledOrders)
	}
}

// Payers are the first round(ratio × orders) orders in buyer order, whatever the
// concurrency: with stock for everyone, buyer i holds one order, so the payers are
// buyer-0 … buyer-(k-1).
func TestRun_PaysTheFirstOrdersInBuyerOrder(t *testing.T) {
	tests := []struct {
		ratio float64
		want  int
	}{
		{0.05, 0},   // 0.4
		{0.0625, 1}, // 0.5 rounds half away from zero
		{0.1875, 2}, // 1.5
		{0.3, 2},    // 2.4
		{0.5, 4},
		{0.99, 8}, // 7.92
		{1, 8},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.ratio), func(t *testing.T) {
			t.Parallel() // each run has its own stand-in server
			s, srv := newStandIn(t, "cup-01", 100, 0, fault{})
			cfg := testConfig(srv)
			cfg.Buyers, cfg.Concurrency, cfg.PayRatio, cfg.CancelUnpaid = 8, 3, tt.ratio, true
			rep, err := run(context.Background(), cfg, &bytes.Buffer{}, s.readOnHand)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			var payers, others []string
			for i := range cfg.Buyers {
				if i < tt.want {
					payers = append(payers, fmt.Sprintf("buyer-%d", i))
				} else {
					others = append(others, fmt.Sprintf("buyer-%d", i))
				}
			}
			slices.Sort(payers)
			slices.Sort(others)
			if got := s.ownersWith("PAID"); !slices.Equal(got, payers) {
				t.Errorf("PAID orders held by %v, want %v", got, payers)
			}
			if got := s.ownersWith("CANCELLED"); !slices.Equal(got, others) {
				t.Errorf("CANCELLED orders held by %v, want %v", got, others)
			}
			if _, pays, cancels := s.requests(); pays != tt.want || cancels != cfg.Buyers-tt.want {
				t.Errorf("server decided %d pays and %d cancels, want %d and %d", pays, cancels, tt.want, cfg.Buyers-tt.want)
			}
			if rep.Settlement.Payers != tt.want || rep.Settlement.PaidOrders != tt.want {
				t.Errorf("report: payers %d paid %d, want %d", rep.Settlement.Payers, rep.Settlement.PaidOrders, tt.want)
			}
		})
	}
}

func TestConfigPayers_RoundsHalfAwayFromZeroWithinTheOrders(t *testing.T) {
	tests := []struct {
		ratio  float64
		orders int
		want   int
	}{
		{0, 40, 0}, {1, 40, 40}, {0.5, 0, 0}, {0.5, 5, 3}, {0.5, 4, 2}, {0.1, 4, 0}, {0.125, 4, 1}, {1, 1, 1},
	}
	for _, tt := range tests {
		c := Config{PayRatio: tt.ratio}
		if got := c.payers(tt.orders); got != tt.want {
			t.Errorf("payers(ratio %v, %d orders) = %d, want %d", tt.ratio, tt.orders, got, tt.want)
		}
	}
}

func TestRun_ReportsSettlement(t *testing.T) {
	t.Parallel() // its own stand-in server
	s, cfg := settleStandIn(t, fault{}, settleWith(0.25, true))
	var text bytes.Buffer
	rep, err := run(context.Background(), cfg, &text, s.readOnHand)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, text.String())
	}
	st := rep.Settlement
	if len(st.PayAnswers) != 1 || st.PayAnswers[0] != (Answer{Status: 204, Count: 10}) ||
		len(st.CancelAnswers) != 1 || st.CancelAnswers[0] != (Answer{Status: 200, Count: 30}) {
		t.Errorf("pay answers %+v, cancel answers %+v; want 204 x10, 200 x30", st.PayAnswers, st.CancelAnswers)
	}
	if st.PayLatency.Samples != 10 || st.CancelLatency.Samples != 30 ||
		st.PayLatency.P99Ms < st.PayLatency.P50Ms || st.CancelLatency.MaxMs < st.CancelLatency.P99Ms {
		t.Errorf("latency pay %+v cancel %+v: want 10 and 30 samples, ordered percentiles", st.PayLatency, st.CancelLatency)
	}
	if st.StartOnHand != 40 || st.PaidUnits != 10 || st.ReleasedUnits != 30 || st.Available != 30 {
		t.Errorf("settlement %+v: want on-hand from 40, 10 units paid, 30 released, 30 available", st)
	}
	if len(rep.Checks) != 11 {
		t.Errorf("%d checks, want 7 + 4", len(rep.Checks))
	}
	for _, want := range []string{"pay ratio 0.25 of 40 orders = 10 pay, 30 cancel", "pay answers", "  204", "cancel answers", "  200",
		"pay latency ms", "paid 10 orders = 10 units = ¥3,990.00 taken, cancelled 30 orders = 30 units released; available after 30",
		"on-hand: 40 before the sale, 30 after settling", "PASS  payments", "PASS  on-hand after settling", "/_local/pay", "result: PASS"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}

	s2, cfg := settleStandIn(t, fault{payFailEvery: 2, payFailStatus: 401}, settleWith(0.25, true))
	cfg.JSON = true
	var js bytes.Buffer
	if _, err := run(context.Background(), cfg, &js, s2.readOnHand); !errors.Is(err, ErrVerificationFailed) {
		t.Fatalf("run error = %v, want ErrVerificationFailed", err)
	}
	var got Report
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("decode JSON report: %v\n%s", err, js.String())
	}
	pays := got.Settlement.PayAnswers
	if len(pays) != 2 || pays[0] != (Answer{Status: 204, Count: 5}) || pays[1] != (Answer{Status: 401, Code: "FAIL", Count: 5}) {
		t.Errorf("JSON pay answers %+v, want 204 x5, 401 FAIL x5", pays)
	}
	if got.Passed || got.Settlement.PaidOrders != 5 || *got.Settlement.OnHand != 35 {
		t.Errorf("JSON report passed=%v paid=%d on-hand=%d, want false 5 35", got.Passed, got.Settlement.PaidOrders, *got.Settlement.OnHand)
	}
}

func TestRun_WithoutSettlingSendsNoPayOrCancel(t *testing.T) {
	t.Parallel() // its own stand-in server
	s, srv := newStandIn(t, "cup-01", 40, 0, fault{})
	cfg := testConfig(srv)
	cfg.JSON = true
	var out bytes.Buffer
	rep, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if _, pays, cancels := s.requests(); pays != 0 || cancels != 0 || rep.Settlement != nil || strings.Contains(out.String(), "settlement") {
		t.Errorf("pays %d cancels %d settlement %+v; want none, and no settlement in the JSON", pays, cancels, rep.Settlement)
	}
	if reads := s.onHandReads(); len(reads) != 0 {
		t.Errorf("on-hand read %d times without settling, want never", len(reads))
	}
}

func TestRun_OnHandReads(t *testing.T) {
	t.Parallel() // its own stand-in server
	t.Run("read through the merchant route as the local operator, before and after", func(t *testing.T) {
		t.Parallel()
		s, cfg := settleStandIn(t, fault{}, settleWith(0.5, true))
		rep, err := Run(context.Background(), cfg, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if reads := s.onHandReads(); !slices.Equal(reads, []string{"local-operator", "local-operator"}) {
			t.Errorf("GET /admin/skus/cup-01 sent with X-Operator-Id %q, want local-operator twice", reads)
		}
		if rep.Settlement.StartOnHand != 40 || rep.Settlement.OnHand == nil || *rep.Settlement.OnHand != 20 {
			t.Errorf("on-hand %d → %v, want 40 → 20", rep.Settlement.StartOnHand, rep.Settlement.OnHand)
		}
		assertVerdicts(t, rep, verdicts{checkOnHand: ResultPass})
	})
	t.Run("an API that does not show on-hand is a setup error naming the flags, nothing sold", func(t *testing.T) {
		t.Parallel()
		s, cfg := settleStandIn(t, fault{merchantForbidden: true}, settleWith(0.5, true))
		rep, err := Run(context.Background(), cfg, &bytes.Buffer{})
		wantSetupError(t, s, rep, err, "on-hand of sku cup-01 (GET /admin/skus/cup-01): unexpected status 403")
		if err != nil && (!strings.Contains(err.Error(), "-pay-ratio") || !strings.Contains(err.Error(), "-url")) {
			t.Errorf("the error does not name the flags: %v", err)
		}
	})
	t.Run("an unreachable API before the sale is a setup error", func(t *testing.T) {
		t.Parallel()
		s, cfg := settleStandIn(t, fault{}, settleWith(0.5, true))
		down := func(context.Context, string) (int, error) { return 0, errors.New("connection refused") }
		rep, err := run(context.Background(), cfg, &bytes.Buffer{}, down)
		wantSetupError(t, s, rep, err, "on-hand")
	})
	t.Run("unreadable after settling fails the on-hand check", func(t *testing.T) {
		t.Parallel()
		s, cfg := settleStandIn(t, fault{}, settleWith(0.5, true))
		reads := 0
		flaky := func(ctx context.Context, sku string) (int, error) {
			if reads++; reads > 1 {
				return 0, errors.New("connection refused")
			}
			return s.readOnHand(ctx, sku)
		}
		rep, err := run(context.Background(), cfg, &bytes.Buffer{}, flaky)
		if !errors.Is(err, ErrVerificationFailed) {
			t.Fatalf("run error = %v, want ErrVerificationFailed", err)
		}
		assertVerdicts(t, rep, verdicts{checkPayments: ResultPass, checkOnHand: ResultFail})
		if rep.Settlement.StartOnHand != 40 || rep.Settlement.OnHand != nil {
			t.Errorf("on-hand %v → %v, want 40 → absent", rep.Settlement.StartOnHand, rep.Settlement.OnHand)
		}
	})
}
