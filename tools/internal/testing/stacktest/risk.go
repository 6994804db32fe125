package stacktest

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wxapi"
)

// SetRiskThreshold gives sku the scalper check's riskThreshold (0 to 4; 0: no check)
// through PATCH /admin/skus/{skuId}, failing t unless the answer shows it. An
// instance that has the SKU record in its catalog cache sees it within
// dynamo.DefaultCatalogTTL.
func (s *Stack) SetRiskThreshold(t testing.TB, sku string, threshold int) {
	t.Helper()
	code, out := s.Call(t, http.MethodPatch, "/admin/skus/"+sku, "", nil, `{"riskThreshold":`+strconv.Itoa(threshold)+`}`)
	if code != http.StatusOK || out["riskThreshold"] != float64(threshold) {
		t.Fatalf("set the riskThreshold of %s to %d: %d %v", sku, threshold, code, out)
	}
}

// RiskItems returns the buyers' kept risk answers (kind RISK) in the orders table.
func (s *Stack) RiskItems(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range s.Scan(t, s.Tables.Orders) {
		if it["kind"] == "RISK" {
			out = append(out, it)
		}
	}
	return out
}

// RefusedAtOnce sends n copies of the request method path body as user at once and
// fails t unless each is answered 403 RISK_REJECTED naming sku, WeChat's
// getUserRiskRank was asked once for them all, and nothing was written but kept risk
// answers. It returns the answers kept, then deletes them; call it while none is
// kept.
func (s *Stack) RefusedAtOnce(t testing.TB, n int, method, path, user, body, sku string) []map[string]any {
	t.Helper()
	before, asked := s.Snapshot(t), s.WxAPIServer.Calls(wxapi.PathGetUserRiskRank)
	var refused atomic.Int64
	testkit.Parallel(n, func(int) {
		code, out := s.Call(t, method, path, user, nil, body)
		if code == http.StatusForbidden && out["code"] == "RISK_REJECTED" && out["skuId"] == sku {
			refused.Add(1)
		} else {
			t.Errorf("%s %s as %s: %d %v, want 403 RISK_REJECTED for %s", method, path, user, code, out, sku)
		}
	})
	if got := refused.Load(); got != int64(n) {
		t.Errorf("%d of %d %s %s refused", got, n, method, path)
	}
	if got := s.WxAPIServer.Calls(wxapi.PathGetUserRiskRank) - asked; got != 1 {
		t.Errorf("WeChat asked %d times, want 1", got)
	}
	kept := s.RiskItems(t)
	for _, it := range kept {
		s.Delete(t, s.Tables.Orders, it["pk"].(string))
	}
	if after := s.Snapshot(t); after != before {
		t.Errorf("refused requests wrote more than the kept answer:\nbefore %s\nafter  %s", before, after)
	}
	return kept
}
