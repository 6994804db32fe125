package flashsale_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/flashsale"
	"github.com/stockguard/stockguard/internal/stacktest"
)

// The sale the local stack must survive: 300 distinct buyers on 30 units, through the
// real HTTP path (gateway → createOrder handler → embedded DynamoDB).
func TestRun_AgainstTheLocalStackSellsExactlyTheStock(t *testing.T) {
	for _, tc := range []struct {
		name string
		seed string
	}{
		{"one shard", `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30}]`},
		{"four shards", `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30,"shards":4}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := stacktest.New(t, stacktest.Options{Seed: tc.seed, RealTime: true})
			api := httptest.NewServer(stack.API)
			defer api.Close()
			cfg := flashsale.DefaultConfig()
			cfg.BaseURL, cfg.Buyers, cfg.Concurrency = api.URL, 300, 50
			report, err := flashsale.Run(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !report.Passed || report.Created != 30 || report.EndStatus != "SOLD_OUT" || report.EndAvailable != 0 {
				t.Errorf("passed=%v created=%d end %s/%d; want a passing sale of exactly 30, SOLD_OUT", report.Passed, report.Created, report.EndStatus, report.EndAvailable)
			}
		})
	}
}

// Settling through the real stack: the first round(ratio × 30) orders pay through
// POST /_local/pay (a signed notification through payCallback), the rest cancel through
// closeOrder, and on-hand is read from the embedded DynamoDB with the project's store.
//
// Concurrency is 1: the local gateway invokes one lambda.Handler concurrently, and
// aws-lambda-go's Invoke returns bytes of a pooled buffer that it has already put back
// for the next invocation, so concurrent invocations race (-race sees it on about one
// run in a hundred, most often on the pay route). The concurrent sale is covered above.
func TestRun_AgainstTheLocalStackSettlesPaymentsAndCancels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		seed   string
		ratio  float64
		cancel bool
		paid   int
	}{
		{"half pay, one shard", `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30}]`, 0.5, true, 15},
		{"a third pay, four shards", `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30,"shards":4}]`, 1.0 / 3, true, 10},
		{"everyone pays", `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30}]`, 1, true, 30},
		{"nobody pays, everyone cancels", `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30,"shards":4}]`, 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := stacktest.New(t, stacktest.Options{Seed: tc.seed, RealTime: true})
			api := httptest.NewServer(stack.API)
			defer api.Close()
			cfg := flashsale.DefaultConfig()
			if stack.Tables != cfg.Tables {
				t.Fatalf("the local stack names its tables %+v, the default flags %+v", stack.Tables, cfg.Tables)
			}
			cfg.BaseURL, cfg.Buyers, cfg.Concurrency = api.URL, 100, 1
			cfg.PayRatio, cfg.CancelUnpaid, cfg.DynamoDBEndpoint = tc.ratio, tc.cancel, stack.DynamoDB.URL()
			var out strings.Builder
			report, err := flashsale.Run(context.Background(), cfg, &out)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			st := report.Settlement
			if report.Created != 30 || st == nil || st.Payers != tc.paid || st.PaidOrders != tc.paid || st.CancelledOrders != 30-tc.paid {
				t.Fatalf("created %d, settlement %+v; want 30 orders, %d paid, %d cancelled\n%s", report.Created, st, tc.paid, 30-tc.paid, out.String())
			}
			if st.Available != 30-tc.paid || st.StartOnHand == nil || *st.StartOnHand != 30 || st.OnHand == nil || *st.OnHand != 30-tc.paid {
				t.Errorf("after settling available %d, on-hand %v → %v; want %d, 30 → %d\n%s", st.Available, st.StartOnHand, st.OnHand, 30-tc.paid, 30-tc.paid, out.String())
			}
			for _, c := range report.Checks {
				if c.Result != flashsale.ResultPass {
					t.Errorf("%s: %s (%s), want PASS", c.Name, c.Result, c.Detail)
				}
			}
		})
	}
}

// Refunds after settling through the real stack (SQS, refund function, WeChat Pay
// stand-in): a share of the paid orders is refunded; on-hand and available come back by
// exactly those units and every refunded order reads REFUNDED.
func TestRun_AgainstTheLocalStackRefundsAShareOfThePaidOrders(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"cup-01","name":"cup","price":39900,"stock":30,"shards":4}]`, SQS: true, RealTime: true})
	stack.RunInBackground(t)
	api := httptest.NewServer(stack.API)
	defer api.Close()
	cfg := flashsale.DefaultConfig()
	cfg.BaseURL, cfg.Buyers, cfg.Concurrency = api.URL, 60, 1
	cfg.PayRatio, cfg.CancelUnpaid, cfg.RefundRatio = 0.5, true, 0.4
	cfg.DynamoDBEndpoint, cfg.Tables = stack.DynamoDB.URL(), stack.Tables
	var out strings.Builder
	report, err := flashsale.Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := report.Settlement
	if s.PaidOrders != 15 || s.Refunds != 6 || s.RefundedUnits != 6 || s.RefundedOrders != 6 || s.Available != 21 || *s.OnHand != 21 {
		t.Errorf("settlement %+v, want 15 paid, 6 refunded, 21 available and on hand\n%s", s, out.String())
	}
	stack.Check(t)
}
