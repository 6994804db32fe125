package waitlist_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// joinRoute is POST /skus/tee/waitlist as user: its status and body.
func joinRoute(t *testing.T, s *stacktest.Stack, user string) (int, map[string]any) {
	t.Helper()
	return s.Call(t, http.MethodPost, "/skus/tee/waitlist", user, nil, `{"subscribed":true}`)
}

// A buyer WeChat rates at the SKU's riskThreshold joins no waitlist: many joins at
// once are each refused 403 RISK_REJECTED naming the SKU, as POST /orders refuses
// them, with WeChat asked once and nothing written but the kept answer (no entry,
// no index entry, the SKU neither flagged nor listed for the pass). A buyer rated
// below the threshold joins.
func TestRiskCheck_RatedBuyerJoinsNoWaitlist(t *testing.T) {
	const joins = 16
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	s.SetRiskThreshold(t, "tee", 3)
	s.WxAPIServer.SetRiskRank("scalper", 4)
	s.WxAPIServer.SetRiskRank("fan", 2)
	s.RefusedAtOnce(t, joins, http.MethodPost, "/skus/tee/waitlist", "scalper", `{"subscribed":true}`, "tee")
	if code, out := joinRoute(t, s, "fan"); code != http.StatusCreated || out["status"] != "WAITING" {
		t.Errorf("fan's join: %d %v, want 201 WAITING", code, out)
	}
}

// A buyer who joined before the SKU got a threshold they are at keeps their entry: a
// join again answers it (200), as a keyed order placed before the threshold is
// answered again; a buyer without an entry is refused.
func TestRiskCheck_EntryJoinedBeforeTheThresholdIsAnsweredAgain(t *testing.T) {
	s := stacktest.New(t, stacktest.Options{Seed: seed})
	s.WxAPIServer.SetRiskRank("early", 4)
	s.WxAPIServer.SetRiskRank("late", 4)
	if code, out := joinRoute(t, s, "early"); code != http.StatusCreated {
		t.Fatalf("join before the threshold: %d %v", code, out)
	}
	s.SetRiskThreshold(t, "tee", 1)
	s.Clock.Advance(dynamo.DefaultCatalogTTL + time.Second) // createOrder's SKU cache reads the threshold
	if code, out := joinRoute(t, s, "early"); code != http.StatusOK || out["status"] != "WAITING" {
		t.Errorf("join again after the threshold: %d %v, want 200 WAITING", code, out)
	}
	if code, out := joinRoute(t, s, "late"); code != http.StatusForbidden || out["code"] != "RISK_REJECTED" {
		t.Errorf("a buyer without an entry: %d %v, want 403 RISK_REJECTED", code, out)
	}
	if n := s.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 2 {
		t.Errorf("WeChat asked %d times, want 2 (one per buyer)", n)
	}
}
