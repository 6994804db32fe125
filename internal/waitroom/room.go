// Package waitroom serves the waiting room's buyer routes (docs/design.md, "Waiting
// room"): taking a ticket (POST /skus/{skuId}/queue), polling it (GET
// /queue/{ticket}), whose ADMITTED answer carries the admission token (package
// admission) that POST /orders for the SKU then needs, and the SKU's public line
// document (GET /skus/{skuId}/line), which every waiting buyer reads through the CDN.
package waitroom

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Route keys of the waiting room (API Gateway RouteKey values, see template.yaml).
const (
	RouteTake = "POST /skus/{skuId}/queue"
	RoutePoll = "GET /queue/{ticket}"
	RouteLine = "GET /skus/{skuId}/line"
)

// Tickets is what the waiting room's routes need of the store (dynamo.Store).
type Tickets interface {
	// TakeTicket gives user a ticket for sku, or the one they hold, and says if new.
	TakeTicket(ctx context.Context, user, sku string) (inventory.Ticket, bool, error)
	// TicketOf reads user's ticket id (inventory.ErrTicketNotFound for anyone else's).
	TicketOf(ctx context.Context, user, id string) (inventory.Ticket, error)
	// QueueSKUOf reads what a poll needs of sku (cached per instance).
	QueueSKUOf(ctx context.Context, sku string) (inventory.QueueSKU, error)
	// FreshQueueSKUOf reads it strongly consistent.
	FreshQueueSKUOf(ctx context.Context, sku string) (inventory.QueueSKU, error)
	// FrontierOf reads sku's admission frontier (cached per instance) and its version.
	FrontierOf(ctx context.Context, sku string) (inventory.Frontier, int64, error)
	// ReindexTicket moves ticket id, without a position and arrived at arrived, to
	// a new arrival time (now) in the admitter's index.
	ReindexTicket(ctx context.Context, id string, arrived time.Time) error
}

// RiskCheck is the scalper check (orders.RiskCheck.Check, docs/design.md, "The
// scalper check") of user, the caller of req, for skus: nil, or a *inventory.SKUError
// wrapping inventory.ErrRiskRejected when WeChat rates the buyer at or above a SKU's
// riskThreshold, or the check's own error (the SKU record's read, UNAUTHORIZED).
type RiskCheck func(ctx context.Context, req events.APIGatewayV2HTTPRequest, user string, skus ...string) error

// Room serves RouteTake, RoutePoll and RouteLine.
type Room struct {
	store Tickets
	keys  *admission.Keys
	now   func() time.Time
	risk  RiskCheck // nil: nobody is checked
}

// NewRoom returns the waiting room's routes over store, minting admissions with
// keys, on the clock now (the store's).
func NewRoom(store Tickets, keys *admission.Keys, now func() time.Time) *Room {
	return &Room{store: store, keys: keys, now: now}
}

// WithRiskCheck makes r refuse a ticket (RouteTake) to a buyer check refuses; nil
// checks nobody.
func (r *Room) WithRiskCheck(check RiskCheck) *Room {
	r.risk = check
	return r
}

// ticketJSON is the contract's ticket (docs/contract.md, "POST /skus/{skuId}/queue"
// and "GET /queue/{ticket}"). Position is null until the admitter places the ticket
// in line; EstimatedWaitSeconds is null but while WAITING with a position or, not
// placed yet, once the admitter has read the line (inventory.TicketView.Estimated).
type ticketJSON struct {
	Ticket               string `json:"ticket"`
	SKU                  string `json:"skuId"`
	Status               string `json:"status"`
	Position             *int   `json:"position"`
	EstimatedWaitSeconds *int   `json:"estimatedWaitSeconds"`
	// NextPollSeconds is how long to wait before polling again (WAITING only).
	NextPollSeconds int `json:"nextPollSeconds,omitempty"`
	// Admission is the Admission-Token of POST /orders (ADMITTED only), valid until
	// AdmissionExpiresAt (RFC 3339 UTC).
	Admission          string `json:"admission,omitempty"`
	AdmissionExpiresAt string `json:"admissionExpiresAt,omitempty"`
	// TicketToken is the ticket's signed value (once it has a position), which later
	// polls send in their Ticket-Token header so the ticket is not read again.
	TicketToken string `json:"ticketToken,omitempty"`
}

// Take serves RouteTake: the caller's ticket for the SKU (202; the same ticket again
// for a buyer who holds one) with its status as a poll answers it; 404 SKU_NOT_FOUND,
// 409 QUEUE_NOT_ENABLED for a SKU without a waiting room; 403 RISK_REJECTED, nothing
// written, for a buyer the scalper check refuses (WithRiskCheck) who holds no ticket
// of the sale (refusedHolder).
func (r *Room) Take(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	sku := req.PathParameters["skuId"] // checked by httpapi
	if r.risk != nil {
		if err := r.risk(ctx, req, user, sku); err != nil {
			return r.refusedHolder(ctx, user, sku, err)
		}
	}
	t, _, err := r.store.TakeTicket(ctx, user, sku)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.answer(ctx, http.StatusAccepted, t, true)
}

// refusedHolder answers a take the scalper check refused with refusal, unless the
// buyer already holds the sale's ticket (taken before they were rated, or before the
// SKU got its threshold): that ticket is answered as any take again is, 202, as POST
// /orders answers a refused copy of a keyed order placed before with its order. The
// poll answers that ticket anyway; its admission buys nothing, as the order is
// checked again. Costs, on the refused path only: the SKU record (catalog cache) and
// one eventually consistent read of the ticket (0.5 read units).
func (r *Room) refusedHolder(ctx context.Context, user, sku string, refusal error) (events.APIGatewayV2HTTPResponse, error) {
	if !errors.Is(refusal, inventory.ErrRiskRejected) {
		return events.APIGatewayV2HTTPResponse{}, refusal
	}
	q, err := r.store.QueueSKUOf(ctx, sku)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	t, err := r.store.TicketOf(ctx, user, inventory.TicketID(user, sku, q.SaleStartsAt))
	switch {
	case errors.Is(err, inventory.ErrTicketNotFound):
		return events.APIGatewayV2HTTPResponse{}, refusal
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.answer(ctx, http.StatusAccepted, t, true)
}

// Poll serves RoutePoll: the status of the caller's ticket (docs/contract.md, "GET
// /queue/{ticket}"); 404 TICKET_NOT_FOUND for an unknown ticket or another buyer's.
// It writes nothing: it reads the SKU's frontier (cached per instance) and the
// ticket (eventually consistent, 0.5 read units), unless the request's Ticket-Token
// header carries a ticket token of this caller and ticket (admission.Keys.CheckTicket):
// then the ticket is the token's and is not read. A token that does not check is
// ignored: the ticket is read as without one, and so is a token's ticket of another
// sale than the SKU record's (its arrival decides: saleOf). The one write: a ticket read without a
// position that the admitter missed (inventory.LineState.Missed) is indexed again
// (ReindexTicket, 3 write units, at most once per inventory.RescueAfter).
func (r *Room) Poll(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	id := req.PathParameters["ticket"]
	if token, ok := req.Headers[admission.TicketHeader]; ok {
		if t, err := r.keys.CheckTicket(token, user, id, r.now()); err == nil {
			if sku, err := r.store.QueueSKUOf(ctx, t.SKU); err == nil && t.OfSale(sku.SaleStartsAt) {
				return r.answer(ctx, http.StatusOK, t, false)
			}
		}
	}
	t, err := r.store.TicketOf(ctx, user, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return r.answer(ctx, http.StatusOK, t, true)
}

// lineJSON is the contract's line document (docs/contract.md, "GET
// /skus/{skuId}/line"): the same for every buyer of the SKU.
type lineJSON struct {
	SKU string `json:"skuId"`
	// AdmittedThrough is the last position admitted (0: none): a buyer at a position
	// up to it reads its ticket (RoutePoll) for the admission.
	AdmittedThrough int `json:"admittedThrough"`
	// SoldOut: nothing available nor held by a PENDING order; a buyer not admitted
	// stops waiting (SOLD_OUT).
	SoldOut bool `json:"soldOut"`
	// Placed is the positions given so far, 1..Placed.
	Placed int `json:"placed"`
	// AdmissionsPerSecond is the SKU's admission rate (inventory.AdmissionRatePerSecond),
	// from which a buyer at position p estimates its wait as
	// ceil((p − AdmittedThrough) / AdmissionsPerSecond) seconds, as RoutePoll does.
	AdmissionsPerSecond int `json:"admissionsPerSecond"`
}

// Line serves RouteLine: the admission frontier of the SKU's current sale as every
// waiting buyer needs it (docs/contract.md, "GET /skus/{skuId}/line"; a frontier of
// an earlier sale, before the admitter replaced it, reads as the new sale's:
// inventory.Frontier.ForSale), from the frontier a poll reads
// (FrontierOf, cached per instance for dynamo.FrontierCacheTTL, 500 ms) and the SKU
// record (cached), with Cache-Control httpapi.PublicCacheControl, so that CloudFront
// answers every buyer's read of it from its cache (template.yaml PageDistribution).
// No identity is needed and nothing is written. 404 SKU_NOT_FOUND and 409
// QUEUE_NOT_ENABLED (inventory.ErrQueueNotEnabled, a SKU without a waiting room) carry
// the same header: CloudFront keeps an error answer for the greater of its max-age
// and the distribution's error caching minimum TTL, 10 s unless set ("Control how
// long CloudFront caches errors",
// https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/custom-error-pages-expiration.html;
// "How CloudFront processes HTTP 4xx and 5xx status codes from your origin",
// https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/HTTPStatusCodes.html),
// so with template.yaml's 0 for 404 a SKU put in the queue is seen within 1 s, not 10.
// Other errors (400, 5xx) carry none.
func (r *Room) Line(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	resp, err := r.line(ctx, req.PathParameters["skuId"]) // checked by httpapi
	if errors.Is(err, inventory.ErrSKUNotFound) || errors.Is(err, inventory.ErrQueueNotEnabled) {
		resp, err = httpapi.Answer(err), nil
	}
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	resp.Headers["Cache-Control"] = httpapi.PublicCacheControl
	return resp, nil
}

// line is Line's answer for SKU id, without its Cache-Control.
func (r *Room) line(ctx context.Context, id string) (events.APIGatewayV2HTTPResponse, error) {
	sku, err := r.store.QueueSKUOf(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if !sku.Queue.Queue {
		return events.APIGatewayV2HTTPResponse{}, &inventory.SKUError{Err: inventory.ErrQueueNotEnabled, SKU: id}
	}
	kept, _, err := r.store.FrontierOf(ctx, id)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	f := kept.ForSale(sku.SaleStartsAt, r.now()) // the current sale's, before the admitter wrote it
	return httpapi.JSON(http.StatusOK, lineJSON{SKU: id, AdmittedThrough: f.Admitted(), SoldOut: f.SoldOut,
		Placed: f.Line.Placed, AdmissionsPerSecond: inventory.AdmissionRatePerSecond(sku.Shards)}), nil
}

// saleOf is the SKU record a poll of t decides on: the catalog cache's (up to
// Options.CatalogTTL, 5 s, old), but when it names another sale than t's and may be
// behind it (inventory.Ticket.SaleSettled), read again strongly consistent, 1 read
// unit, so that a ticket of a sale the cache has not seen yet is not answered
// EXPIRED. That is at a sale change only: the read refreshes the instance's cache,
// after which the new sale's tickets match it and the last sale's are settled by it
// while it lasts.
func (r *Room) saleOf(ctx context.Context, t inventory.Ticket) (inventory.QueueSKU, error) {
	sku, err := r.store.QueueSKUOf(ctx, t.SKU)
	if err != nil || t.OfSale(sku.SaleStartsAt) || t.SaleSettled(sku.Known) {
		return sku, err
	}
	return r.store.FreshQueueSKUOf(ctx, t.SKU)
}

// answer is t's status (inventory.QueueSKU.View of saleOf's record), with an admission token when it is
// ADMITTED, as status; with mint (t was read from the store), also its ticket token
// once it has a position. A poll answered from a ticket token gets no new one, so a
// token expires TicketTokenSeconds after the read it came from, never later.
func (r *Room) answer(ctx context.Context, status int, t inventory.Ticket, mint bool) (events.APIGatewayV2HTTPResponse, error) {
	sku, err := r.saleOf(ctx, t)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	kept, _, err := r.store.FrontierOf(ctx, t.SKU)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	f := kept.ForSale(sku.SaleStartsAt, r.now())
	v := sku.View(f, t, r.now())
	if mint && t.OfSale(sku.SaleStartsAt) && v.Status != inventory.TicketExpired && t.Position == 0 && f.Line.Missed(t.ArrivedAt) {
		// A failed rescue changes nothing: the next poll tries again. A ticket of
		// another sale is never rescued into this one's line.
		_ = r.store.ReindexTicket(ctx, t.ID, t.ArrivedAt)
	}
	out := ticketJSON{Ticket: t.ID, SKU: t.SKU, Status: string(v.Status), NextPollSeconds: v.NextPollSeconds}
	if t.Position > 0 {
		out.Position = &v.Position
		if mint {
			if out.TicketToken, err = r.keys.MintTicket(t, r.now()); err != nil {
				return events.APIGatewayV2HTTPResponse{}, err
			}
		}
	}
	if v.Estimated {
		out.EstimatedWaitSeconds = &v.EstimatedWaitSeconds
	}
	if v.Status == inventory.TicketAdmitted {
		token, err := r.keys.Mint(inventory.Admission{User: t.User, SKU: t.SKU, Ticket: t.ID, Position: t.Position, Expires: v.AdmissionExpires})
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		out.Admission, out.AdmissionExpiresAt = token, v.AdmissionExpires.UTC().Format(time.RFC3339)
	}
	resp := httpapi.JSON(status, out)
	resp.Headers["Cache-Control"] = "no-store"
	return resp, nil
}
