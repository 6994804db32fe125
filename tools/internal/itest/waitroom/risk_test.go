package waitroom_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/wxapi"
)

// A buyer WeChat rates at the riskThreshold of a queued SKU takes no ticket: many
// takes at once are each refused 403 RISK_REJECTED naming the SKU, as POST /orders
// refuses them, with WeChat asked once and nothing written but the kept answer (no
// ticket, so nothing in the admitter's index either). A buyer rated below the
// threshold takes a ticket, as does the refused buyer for a SKU without one.
func TestRiskCheck_RatedBuyerTakesNoTicket(t *testing.T) {
	const takes = 16
	s := newStack(t)
	s.SetRiskThreshold(t, "drop", 3)
	s.WxAPIServer.SetRiskRank("scalper", 3)
	s.WxAPIServer.SetRiskRank("fan", 2)
	if kept := s.RefusedAtOnce(t, takes, http.MethodPost, "/skus/drop/queue", "scalper", "", "drop"); len(kept) != 1 || kept[0]["rank"] != 3.0 {
		t.Errorf("kept answers %v, want one of rank 3", kept)
	}
	take(t, s, "fan", "drop")
	if code, out := s.Call(t, http.MethodPatch, "/admin/skus/mug", "", nil, `{"queue":true}`); code != http.StatusOK {
		t.Fatalf("put mug in the queue: %d %v", code, out)
	}
	if code, out := s.Call(t, http.MethodPost, "/skus/mug/queue", "scalper", nil, ""); code != http.StatusAccepted {
		t.Errorf("scalper's take of mug, without a threshold: %d %v, want 202", code, out)
	}
}

// A buyer who took a ticket before the SKU got a threshold they are at keeps it: a
// take again answers that ticket (202, the same id), as a keyed order placed before
// the threshold is answered again; a buyer without a ticket is refused.
func TestRiskCheck_TicketTakenBeforeTheThresholdIsAnsweredAgain(t *testing.T) {
	s := newStack(t)
	s.WxAPIServer.SetRiskRank("early", 4)
	s.WxAPIServer.SetRiskRank("late", 4)
	first := take(t, s, "early", "drop")
	s.SetRiskThreshold(t, "drop", 2)
	s.Clock.Advance(dynamo.DefaultCatalogTTL + time.Second) // createOrder's SKU cache reads the threshold
	if code, out := s.Call(t, http.MethodPost, "/skus/drop/queue", "early", nil, ""); code != http.StatusAccepted || out["ticket"] != first {
		t.Errorf("take again after the threshold: %d %v, want 202 with ticket %s", code, out, first)
	}
	if code, out := s.Call(t, http.MethodPost, "/skus/drop/queue", "late", nil, ""); code != http.StatusForbidden || out["code"] != "RISK_REJECTED" {
		t.Errorf("a buyer without a ticket: %d %v, want 403 RISK_REJECTED", code, out)
	}
	if n := s.WxAPIServer.Calls(wxapi.PathGetUserRiskRank); n != 2 {
		t.Errorf("WeChat asked %d times, want 2 (one per buyer)", n)
	}
}
