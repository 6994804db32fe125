package waitroom_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/waitroom"
)

// start is the sale's start the tickets of this test are of.
var start = time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC)

// tickets is a waitroom.Tickets of one queued SKU whose sale starts at start, holding
// at most the ticket given, and counting the takes that reach it.
type tickets struct {
	held  *inventory.Ticket
	takes int
}

func (s *tickets) TakeTicket(_ context.Context, user, sku string) (inventory.Ticket, bool, error) {
	s.takes++
	return inventory.Ticket{ID: inventory.TicketID(user, sku, start), SKU: sku, User: user, ArrivedAt: start}, true, nil
}

func (s *tickets) TicketOf(_ context.Context, user, id string) (inventory.Ticket, error) {
	if s.held == nil || s.held.User != user || s.held.ID != id {
		return inventory.Ticket{}, inventory.ErrTicketNotFound
	}
	return *s.held, nil
}

func (s *tickets) QueueSKUOf(context.Context, string) (inventory.QueueSKU, error) {
	return inventory.QueueSKU{Queue: inventory.QueueSettings{Queue: true}, SaleStartsAt: start, Shards: 1}, nil
}

func (s *tickets) FreshQueueSKUOf(ctx context.Context, sku string) (inventory.QueueSKU, error) {
	return s.QueueSKUOf(ctx, sku)
}

func (s *tickets) FrontierOf(context.Context, string) (inventory.Frontier, int64, error) {
	return inventory.Frontier{}, 0, nil
}

func (s *tickets) ReindexTicket(context.Context, string, time.Time) error { return nil }

// The scalper check decides a take before anything is written: a refused buyer
// without the sale's ticket gets the refusal, one who holds it (taken before) gets it
// again (202), and any other error of the check is the take's.
func TestTake_TheScalperCheckComesBeforeTheTicket(t *testing.T) {
	refused := &inventory.SKUError{Err: inventory.ErrRiskRejected, SKU: "drop"}
	mine := &inventory.Ticket{ID: inventory.TicketID("u", "drop", start), SKU: "drop", User: "u", ArrivedAt: start}
	earlier := &inventory.Ticket{ID: inventory.TicketID("u", "drop", start.Add(-time.Hour)), SKU: "drop", User: "u", ArrivedAt: start}
	for _, tc := range []struct {
		name       string
		check      error
		held       *inventory.Ticket
		wantStatus int
		wantErr    error
		wantTakes  int
	}{
		{"rated, no ticket", refused, nil, 0, inventory.ErrRiskRejected, 0},
		{"rated, a ticket of an earlier sale", refused, earlier, 0, inventory.ErrRiskRejected, 0},
		{"rated, the sale's ticket from before", refused, mine, http.StatusAccepted, nil, 0},
		{"rank below the threshold", nil, nil, http.StatusAccepted, nil, 1},
		{"no openid claim", httpapi.ErrUnauthorized, mine, 0, httpapi.ErrUnauthorized, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &tickets{held: tc.held}
			checks := 0
			room := waitroom.NewRoom(store, nil, func() time.Time { return start }).WithRiskCheck(func(_ context.Context, _ events.APIGatewayV2HTTPRequest, user string, skus ...string) error {
				checks++
				if user != "u" || len(skus) != 1 || skus[0] != "drop" {
					t.Errorf("checked %q for %v, want u for [drop]", user, skus)
				}
				return tc.check
			})
			req := events.APIGatewayV2HTTPRequest{PathParameters: map[string]string{"skuId": "drop"}}
			req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "u"}}}
			resp, err := room.Take(context.Background(), req)
			if !errors.Is(err, tc.wantErr) || resp.StatusCode != tc.wantStatus {
				t.Errorf("Take: %d %v, want %d %v", resp.StatusCode, err, tc.wantStatus, tc.wantErr)
			}
			if store.takes != tc.wantTakes || checks != 1 {
				t.Errorf("%d takes written, %d checks, want %d and 1", store.takes, checks, tc.wantTakes)
			}
		})
	}
}
