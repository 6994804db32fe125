package waitlist_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/waitlist"
)

// entries is a waitlist.Entries that holds at most one entry, the one given, and
// counts the joins that reach it.
type entries struct {
	held  *inventory.WaitlistEntry
	joins int
}

func (s *entries) JoinWaitlist(_ context.Context, user, sku string, _ bool) (inventory.WaitlistEntry, bool, error) {
	s.joins++
	return inventory.WaitlistEntry{User: user, SKU: sku, State: inventory.WaitWaiting}, true, nil
}

func (s *entries) WaitlistEntryOf(context.Context, string, string) (inventory.WaitlistEntry, error) {
	if s.held == nil {
		return inventory.WaitlistEntry{}, inventory.ErrWaitlistNotFound
	}
	return *s.held, nil
}

func (s *entries) LeaveWaitlist(context.Context, string, string) error { return nil }

// The scalper check decides a join before anything is written: a refused buyer
// without an entry gets the refusal, one who holds an entry from before gets it
// (200), any other error of the check is the join's; a bad body is refused before
// the check asks.
func TestJoin_TheScalperCheckComesBeforeTheEntry(t *testing.T) {
	refused := &inventory.SKUError{Err: inventory.ErrRiskRejected, SKU: "tee"}
	held := &inventory.WaitlistEntry{User: "u", SKU: "tee", State: inventory.WaitWaiting}
	for _, tc := range []struct {
		name       string
		body       string
		check      error
		held       *inventory.WaitlistEntry
		wantStatus int
		wantErr    error
		wantJoins  int
		wantChecks int
	}{
		{"rated, no entry", `{"subscribed":true}`, refused, nil, 0, inventory.ErrRiskRejected, 0, 1},
		{"rated, an entry from before", `{"subscribed":true}`, refused, held, http.StatusOK, nil, 0, 1},
		{"rank below the threshold", `{"subscribed":true}`, nil, nil, http.StatusCreated, nil, 1, 1},
		{"no openid claim", `{"subscribed":true}`, httpapi.ErrUnauthorized, held, 0, httpapi.ErrUnauthorized, 0, 1},
		{"bad body", `{}`, refused, nil, 0, inventory.ErrInvalidRequest, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &entries{held: tc.held}
			checks := 0
			routes := waitlist.New(store, time.Now).WithRiskCheck(func(_ context.Context, _ events.APIGatewayV2HTTPRequest, user string, sku ...string) error {
				checks++
				if user != "u" || len(sku) != 1 || sku[0] != "tee" {
					t.Errorf("checked %q for %v, want u for [tee]", user, sku)
				}
				return tc.check
			})
			req := events.APIGatewayV2HTTPRequest{Body: tc.body, PathParameters: map[string]string{"skuId": "tee"}}
			req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "u"}}}
			resp, err := routes.Join(context.Background(), req)
			if !errors.Is(err, tc.wantErr) || resp.StatusCode != tc.wantStatus {
				t.Errorf("Join: %d %v, want %d %v", resp.StatusCode, err, tc.wantStatus, tc.wantErr)
			}
			if store.joins != tc.wantJoins || checks != tc.wantChecks {
				t.Errorf("%d joins written, %d checks, want %d and %d", store.joins, checks, tc.wantJoins, tc.wantChecks)
			}
		})
	}
}
