package orders

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/singleflight"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// The scalper check of POST /orders, POST /skus/{skuId}/queue and POST
// /skus/{skuId}/waitlist (docs/design.md, "Waiting room", "The scalper check"): a
// buyer who orders, queues for or waits for a SKU with a riskThreshold is rated once
// by WeChat's getUserRiskRank, the answer kept per buyer for a day, and refused 403
// RISK_REJECTED when the rank is at or above the threshold (QueueSettings.CheckRisk).

// Risk check timings.
const (
	// RiskAskTimeout bounds one question to WeChat, in seconds: a buyer waits at
	// most this long for the check before being let through.
	RiskAskTimeout = 2 * time.Second
	// RiskUnknownSeconds is how long an instance lets a buyer through without asking
	// again after WeChat gave no rank (an errcode, a timeout): an outage costs a
	// WeChat call per buyer and instance per minute, not per order.
	RiskUnknownSeconds = 60
	// RiskCopySeconds is how long an instance reuses a rank it read or got, in
	// seconds, without reading the kept item again.
	RiskCopySeconds = 3600
	// maxRiskKept bounds the answers one instance keeps; past it the map starts over.
	maxRiskKept = 100_000
)

// RiskAsker asks WeChat for the risk rank of the buyer openid whose request came from
// clientIP (getUserRiskRank, scene 1, marketing fraud). Its error texts must not
// quote the openid or the address; a nil error with an answer not Known is no rank.
type RiskAsker func(ctx context.Context, openid, clientIP string) (inventory.RiskAnswer, error)

// RiskStore is what the scalper check needs of the store (dynamo.Store): the
// thresholds of the SKUs asked for (from the catalog cache the reservation, the
// ticket and the waitlist entry read), and the buyer's kept answer.
type RiskStore interface {
	RiskThresholds(ctx context.Context, skus []string) (map[string]int, error)
	RiskAnswer(ctx context.Context, user string) (inventory.RiskAnswer, bool, error)
	KeepRiskAnswer(ctx context.Context, user string, a inventory.RiskAnswer) error
}

// RiskCheck is the scalper check of one function instance. Safe for concurrent use.
type RiskCheck struct {
	store    RiskStore
	ask      RiskAsker
	log      *slog.Logger
	function string
	claim    string // the JWT claim holding the buyer's openid
	now      func() time.Time

	group singleflight.Group // one question per buyer at a time in this instance
	mu    sync.Mutex
	kept  map[string]keptRisk // user → answer, this instance's copy
}

type keptRisk struct {
	answer inventory.RiskAnswer
	until  time.Time
}

// NewRiskCheck returns the scalper check over store, asking ask about the openid in
// the JWT claim openIDClaim ("" means sub), logging to log with metrics whose Function
// dimension is function, on the clock now.
func NewRiskCheck(store RiskStore, ask RiskAsker, openIDClaim string, log *slog.Logger, function string, now func() time.Time) *RiskCheck {
	return &RiskCheck{store: store, ask: ask, claim: cmp.Or(openIDClaim, "sub"), log: log, function: function, now: now, kept: map[string]keptRisk{}}
}

// WithRiskCheck makes r check buyers of SKUs with a riskThreshold with rc before
// reserving; nil checks nobody.
func (r *Checkout) WithRiskCheck(rc *RiskCheck) *Checkout {
	r.risk = rc
	return r
}

// Check refuses user, the caller of req, a request for skus (an order's cart, a
// waiting-room ticket, a waitlist entry) when one of them has a riskThreshold at or
// below the buyer's rank: a *inventory.SKUError wrapping inventory.ErrRiskRejected.
// SKUs without a threshold cost nothing beyond the catalog cache the route reads
// anyway. For the others the answer comes from this instance's copy, else the kept
// item (one GetItem), else WeChat (then kept: one PutItem); concurrent requests of
// one buyer in an instance ask once. WeChat is told the buyer's openid (req's openid
// claim) and address (API Gateway's requestContext.http.sourceIp); neither is
// logged. A failure reading the kept answer asks WeChat; WeChat giving no rank lets
// the buyer through (counted as RiskUnknown): a WeChat outage must not refuse buyers
// while stock remains. Its errors: the thresholds' read (the route's own read),
// UNAUTHORIZED without the openid claim, or a *inventory.SKUError wrapping
// inventory.ErrRiskRejected (counted as RiskRejected).
func (rc *RiskCheck) Check(ctx context.Context, req events.APIGatewayV2HTTPRequest, user string, skus ...string) error {
	thresholds, err := rc.store.RiskThresholds(ctx, skus)
	if err != nil {
		return err
	}
	if len(thresholds) == 0 {
		return nil
	}
	openid, err := httpapi.Claim(req, rc.claim)
	if err != nil {
		return err
	}
	a := rc.answer(ctx, user, openid, req.RequestContext.HTTP.SourceIP)
	for _, sku := range skus {
		if err := (inventory.QueueSettings{RiskThreshold: thresholds[sku]}).CheckRisk(sku, a); err != nil {
			metric.Emit(ctx, rc.log, rc.function, metric.RiskRejected.Of(1))
			return err
		}
	}
	return nil
}

// skusOf is cart's SKU ids, in its order.
func skusOf(cart inventory.Cart) []string {
	ids := make([]string, len(cart))
	for i, l := range cart {
		ids[i] = l.SKU
	}
	return ids
}

// answer is the buyer's risk answer: this instance's copy, the kept item, or WeChat's.
func (rc *RiskCheck) answer(ctx context.Context, user, openid, clientIP string) inventory.RiskAnswer {
	if a, ok := rc.copyOf(user); ok {
		return a
	}
	v, _, _ := rc.group.Do(user, func() (any, error) {
		if a, ok := rc.copyOf(user); ok { // an earlier flight just kept it
			return a, nil
		}
		if a, ok, err := rc.store.RiskAnswer(ctx, user); err == nil && ok {
			rc.keep(user, a, rc.now().Add(RiskCopySeconds*time.Second))
			return a, nil
		}
		// The question outlives a caller that gives up: the buyers behind it share it.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RiskAskTimeout)
		defer cancel()
		a, err := rc.ask(actx, openid, clientIP)
		if err != nil || !a.Known {
			reason := "no rank"
			if err != nil {
				reason = err.Error()
			}
			rc.log.LogAttrs(ctx, slog.LevelWarn, "risk check without a rank; the buyer is let through", slog.String("reason", reason))
			metric.Emit(ctx, rc.log, rc.function, metric.RiskUnknown.Of(1))
			a = inventory.RiskAnswer{}
			rc.keep(user, a, rc.now().Add(RiskUnknownSeconds*time.Second))
			return a, nil
		}
		if err := rc.store.KeepRiskAnswer(actx, user, a); err != nil {
			rc.log.LogAttrs(ctx, slog.LevelWarn, "risk answer not kept; the next instance asks again", slog.String("error", err.Error()))
		}
		rc.keep(user, a, rc.now().Add(RiskCopySeconds*time.Second))
		return a, nil
	})
	return v.(inventory.RiskAnswer)
}

// copyOf returns this instance's unexpired copy of user's answer.
func (rc *RiskCheck) copyOf(user string) (inventory.RiskAnswer, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	k, ok := rc.kept[user]
	if !ok || !rc.now().Before(k.until) {
		return inventory.RiskAnswer{}, false
	}
	return k.answer, true
}

// keep keeps this instance's copy of user's answer until until.
func (rc *RiskCheck) keep(user string, a inventory.RiskAnswer, until time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.kept) >= maxRiskKept {
		clear(rc.kept)
	}
	rc.kept[user] = keptRisk{a, until}
}
