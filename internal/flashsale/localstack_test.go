package flashsale_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/flashsale"
	"github.com/stockguard/stockguard/internal/local"
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
			stack, err := local.Start(context.Background(), local.StackConfig{Template: "../../template.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			defer stack.Close()
			if err := stack.Seed(context.Background(), strings.NewReader(tc.seed)); err != nil {
				t.Fatal(err)
			}
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
