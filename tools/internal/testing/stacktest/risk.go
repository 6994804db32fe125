package stacktest

import (
	"net/http"
	"strconv"
	"testing"
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

// SnapshotWithoutRiskItems deletes the kept risk answers, then returns Snapshot: what
// a refused request wrote beyond its buyer's answer shows against a Snapshot taken
// before it.
func (s *Stack) SnapshotWithoutRiskItems(t testing.TB) string {
	t.Helper()
	for _, it := range s.RiskItems(t) {
		s.Delete(t, s.Tables.Orders, it["pk"].(string))
	}
	return s.Snapshot(t)
}
