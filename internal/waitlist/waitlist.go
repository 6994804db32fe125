// Package waitlist serves the waitlist's buyer routes (docs/design.md, "Waiting
// room", "The waitlist"): joining a SKU's waitlist (POST /skus/{skuId}/waitlist),
// reading one's entry (GET) and leaving (DELETE). The units that come back after a
// sale reach the waitlist in the sweep's pass (closeOrder); a buyer who holds units
// orders them with the normal POST /orders.
package waitlist

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys of the waitlist (API Gateway RouteKey values, see template.yaml).
const (
	RouteJoin  = "POST /skus/{skuId}/waitlist"
	RouteGet   = "GET /skus/{skuId}/waitlist"
	RouteLeave = "DELETE /skus/{skuId}/waitlist"
)

// MaxBodyBytes bounds the body of RouteJoin.
const MaxBodyBytes = 1024

// Entries is what the waitlist's routes need of the store (dynamo.Store).
type Entries interface {
	// JoinWaitlist puts user on sku's waitlist, or returns their entry, and says if new.
	JoinWaitlist(ctx context.Context, user, sku string, subscribed bool) (inventory.WaitlistEntry, bool, error)
	// WaitlistEntryOf reads user's entry (inventory.ErrWaitlistNotFound: none).
	WaitlistEntryOf(ctx context.Context, user, sku string) (inventory.WaitlistEntry, error)
	// LeaveWaitlist deletes user's entry, giving a hold's units back.
	LeaveWaitlist(ctx context.Context, user, sku string) error
}

// RiskCheck is the scalper check (orders.RiskCheck.Check) of user, the caller of req,
// for sku: nil, a *inventory.SKUError wrapping inventory.ErrRiskRejected when WeChat
// rates the buyer at or above the SKU's riskThreshold, or the check's own error.
type RiskCheck func(ctx context.Context, req events.APIGatewayV2HTTPRequest, user string, sku ...string) error

// Routes serves RouteJoin, RouteGet and RouteLeave.
type Routes struct {
	store Entries
	now   func() time.Time
	risk  RiskCheck // nil: nobody is checked
}

// New returns the waitlist's routes over store, on the clock now (the store's).
func New(store Entries, now func() time.Time) *Routes { return &Routes{store: store, now: now} }

// WithRiskCheck makes r refuse an entry (RouteJoin) to a buyer check refuses
// (orders.RiskCheck.Check, docs/design.md, "The scalper check"); nil checks nobody.
func (r *Routes) WithRiskCheck(check RiskCheck) *Routes {
	r.risk = check
	return r
}

// entryJSON is the contract's waitlist entry (docs/contract.md, "POST
// /skus/{skuId}/waitlist"): quantity and holdExpiresAt (RFC 3339 UTC) only when HELD.
type entryJSON struct {
	SKU           string `json:"skuId"`
	Status        string `json:"status"`
	Quantity      int    `json:"quantity,omitempty"`
	HoldExpiresAt string `json:"holdExpiresAt,omitempty"`
}

// view is e as the contract shows it at now: a hold that ran out and has not been
// passed yet shows PASSED (it is not offered again, and no order can use it).
func view(e inventory.WaitlistEntry, now time.Time) entryJSON {
	out := entryJSON{SKU: e.SKU, Status: string(e.State)}
	switch {
	case e.Holds(now):
		out.Quantity, out.HoldExpiresAt = e.Units, e.HoldUntil.UTC().Format(time.RFC3339)
	case e.State == inventory.WaitHeld:
		out.Status = string(inventory.WaitPassed)
	}
	return out
}

const joinExample = `{"subscribed":true}`

// Join serves RouteJoin: body {"subscribed": true|false} (whether the buyer accepted
// the waitlist's one-time subscribe message); 201 with the new entry, 200 with the
// one the buyer already holds; 404 SKU_NOT_FOUND, 400 INVALID_REQUEST for any other
// body (nothing written); 403 RISK_REJECTED, nothing written, for a buyer the
// scalper check refuses (WithRiskCheck) who holds no entry (refusedHolder).
func (r *Routes) Join(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, sku, err := caller(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	var b struct {
		Subscribed *bool `json:"subscribed"`
	}
	if _, err := httpapi.DecodeFields(req, MaxBodyBytes, &b, joinExample, "subscribed"); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if b.Subscribed == nil {
		return events.APIGatewayV2HTTPResponse{}, inventory.InvalidError("field \"subscribed\" is required: true or false, as wx.requestSubscribeMessage answered; example: %s", joinExample)
	}
	if r.risk != nil {
		if err := r.risk(ctx, req, user, sku); err != nil {
			return r.refusedHolder(ctx, user, sku, err)
		}
	}
	e, fresh, err := r.store.JoinWaitlist(ctx, user, sku, *b.Subscribed)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	status := http.StatusOK
	if fresh {
		status = http.StatusCreated
	}
	return answer(status, view(e, r.now())), nil
}

// refusedHolder answers a join the scalper check refused with refusal, unless the
// buyer already holds an entry (joined before they were rated, or before the SKU got
// its threshold): that entry is answered as any join again is, 200, as POST /orders
// answers a refused copy of a keyed order placed before with its order. A hold it
// gets is used by no order: the order is checked again. Costs, on the refused path
// only: one strongly consistent read of the entry (1 read unit).
func (r *Routes) refusedHolder(ctx context.Context, user, sku string, refusal error) (events.APIGatewayV2HTTPResponse, error) {
	if !errors.Is(refusal, inventory.ErrRiskRejected) {
		return events.APIGatewayV2HTTPResponse{}, refusal
	}
	e, err := r.store.WaitlistEntryOf(ctx, user, sku)
	switch {
	case errors.Is(err, inventory.ErrWaitlistNotFound):
		return events.APIGatewayV2HTTPResponse{}, refusal
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return answer(http.StatusOK, view(e, r.now())), nil
}

// Get serves RouteGet: the caller's entry; 404 WAITLIST_NOT_FOUND without one.
func (r *Routes) Get(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, sku, err := caller(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	e, err := r.store.WaitlistEntryOf(ctx, user, sku)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return answer(http.StatusOK, view(e, r.now())), nil
}

// Leave serves RouteLeave: 204, the caller's entry gone (and a hold's units back on
// sale); 204 too when there was none.
func (r *Routes) Leave(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, sku, err := caller(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if err := r.store.LeaveWaitlist(ctx, user, sku); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusNoContent}, nil
}

// caller is the request's buyer and SKU id (its shape checked by httpapi before the
// route runs: 400 INVALID_REQUEST for an id no SKU can have).
func caller(req events.APIGatewayV2HTTPRequest) (string, string, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return "", "", err
	}
	return user, req.PathParameters["skuId"], nil
}

func answer(status int, e entryJSON) events.APIGatewayV2HTTPResponse {
	resp := httpapi.JSON(status, e)
	resp.Headers["Cache-Control"] = "no-store"
	return resp
}

// Passes is what the sweep's waitlist pass needs of the store (dynamo.Store).
type Passes interface {
	// WaitlistSKUs lists the SKUs that ever had a waitlist entry.
	WaitlistSKUs(ctx context.Context) ([]inventory.WaitlistSKU, error)
	// PassWaitlist runs one pass over sku's waitlist (soldOut: a pass found it sold out).
	PassWaitlist(ctx context.Context, sku string, soldOut bool) (inventory.WaitlistPass, error)
}

// Passer runs the waitlist's pass over every waitlisted SKU, on closeOrder's
// every-minute sweep, after its releases (so units released go to the waitlist in
// the same minute).
type Passer struct {
	store   Passes
	log     *slog.Logger
	granted func(ctx context.Context, e inventory.WaitlistEntry)
}

// NewPasser returns the pass over store, logging to log; granted (nil: none) is
// called for each new hold (its subscribe message).
func NewPasser(store Passes, log *slog.Logger, granted func(ctx context.Context, e inventory.WaitlistEntry)) *Passer {
	return &Passer{store: store, log: log, granted: granted}
}

// PassResult is what a sweep's waitlist pass did (JSON, in the sweep's result).
type PassResult struct {
	SKUs   int `json:"waitlistSkus"`   // waitlisted SKUs looked at
	Holds  int `json:"waitlistHolds"`  // holds given
	Units  int `json:"waitlistUnits"`  // units they hold
	Passed int `json:"waitlistPassed"` // holds that ran out and passed
	Failed int `json:"waitlistFailed"` // SKUs whose pass failed; the next sweep retries
}

// Pass runs PassWaitlist for every waitlisted SKU. A SKU whose pass fails is logged
// at error level and counted, and the others go on; the error is only for the list.
// Log lines carry SKU ids and counts, never a buyer.
func (p *Passer) Pass(ctx context.Context) (PassResult, error) {
	skus, err := p.store.WaitlistSKUs(ctx)
	if err != nil {
		return PassResult{}, err
	}
	var res PassResult
	for _, sku := range skus {
		res.SKUs++
		got, err := p.store.PassWaitlist(ctx, sku.SKU, sku.SoldOut)
		if err != nil {
			res.Failed++
			p.log.LogAttrs(ctx, inventory.FailureLevel(ctx, err), "waitlist pass failed", slog.String("skuId", sku.SKU), slog.String("error", err.Error()))
			continue
		}
		res.Holds += len(got.Granted)
		res.Units += got.Units
		res.Passed += got.Passed
		if len(got.Granted)+got.Passed > 0 {
			p.log.LogAttrs(ctx, slog.LevelInfo, "waitlist pass", slog.String("skuId", sku.SKU), slog.Int("waiting", got.Waiting),
				slog.Int("holds", len(got.Granted)), slog.Int("units", got.Units), slog.Int("passed", got.Passed))
		}
		for _, e := range got.Granted {
			if p.granted != nil {
				p.granted(ctx, e)
			}
		}
	}
	return res, nil
}
