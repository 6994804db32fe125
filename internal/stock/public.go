package stock

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// MaxStale is how old a public answer may be: the shards it shows were read at most
// this long before it is answered (docs/design.md, "The public page"). The answers say
// so to HTTP caches too: Cache-Control "public, max-age=1".
const MaxStale = time.Second

// Reader is what the public SKU routes need of the store (dynamo.Store): one SKU with
// its stock summed over its shards, and a page of the SKUs on sale.
type Reader interface {
	SKU(ctx context.Context, id string) (*inventory.SKU, error)
	SKUsOnSale(ctx context.Context, after string) (skus []*inventory.SKUDetail, next string, unreadable []string, err error)
}

// Public serves RouteShow and RoutePublicList from answers at most MaxStale old: each
// distinct request (a SKU, a page) is read from the store at most once per MaxStale
// per function instance, concurrent requests for it waiting for that one read.
type Public struct {
	store Reader
	now   func() time.Time

	mu      sync.Mutex
	answers map[string]*cached
}

// cached is one answer and when its read started; done is closed once it is filled.
type cached struct {
	at   time.Time
	done chan struct{}
	resp events.APIGatewayV2HTTPResponse
	err  error
}

// NewPublic returns the public SKU routes over store on the clock now (the store's: a
// sale start and an answer's age are judged by one clock).
func NewPublic(store Reader, now func() time.Time) *Public {
	return &Public{store: store, now: now, answers: map[string]*cached{}}
}

// publicJSON is the contract's SKU representation (docs/contract.md, "GET /skus/{skuId}").
type publicJSON struct {
	SKU       string `json:"skuId"`
	Name      string `json:"name"`
	Price     int64  `json:"price"` // fen
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	Available int    `json:"available"`
	// SaleStartsAt is when orders open (RFC 3339 UTC), when the SKU has a start time.
	SaleStartsAt string `json:"saleStartsAt,omitempty"`
	// Delivery is "express" (an order of it needs an address) or "none".
	Delivery string `json:"delivery"`
	// LimitPerUser is the most units one buyer may hold over their open and paid
	// orders (a cart shows it before checkout; beyond it POST /orders answers
	// LIMIT_EXCEEDED); absent when the merchant set no limit.
	LimitPerUser int `json:"limitPerUser,omitempty"`
	// Queue says the SKU sells through the waiting room: take a ticket (POST
	// /skus/{skuId}/queue) and order with its admission.
	Queue bool `json:"queue"`
}

func publicView(sku *inventory.SKU, now time.Time) publicJSON {
	v := publicJSON{
		SKU: sku.ID, Name: sku.Name, Price: sku.Price, Currency: sku.Currency,
		Status: string(sku.Status(now)), Available: sku.Sellable(now),
		Delivery: sku.Delivery, LimitPerUser: sku.LimitPerUser, Queue: sku.Queue.Queue,
	}
	if !sku.SaleStartsAt.IsZero() {
		v.SaleStartsAt = sku.SaleStartsAt.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// publicPage is one page of RoutePublicList.
type publicPage struct {
	SKUs []publicJSON `json:"skus"`
	Next string       `json:"next,omitempty"` // the after= of the next page; absent on the last
}

// Show serves RouteShow: the SKU's sale status and what is sellable (conservative:
// never above what its shards held when they were read, at most MaxStale before; 0
// when SOLD_OUT); an unknown SKU is 404 SKU_NOT_FOUND.
func (p *Public) Show(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	id := req.PathParameters["skuId"] // checked by httpapi
	return p.answer(ctx, "sku "+id, func(ctx context.Context, now time.Time) (events.APIGatewayV2HTTPResponse, error) {
		sku, err := p.store.SKU(ctx, id)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return httpapi.JSON(http.StatusOK, publicView(sku, now)), nil
	})
}

// List serves RoutePublicList: a page of the SKUs on sale or upcoming (?after= the
// previous page's next), each as Show answers it.
func (p *Public) List(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	after := req.QueryStringParameters["after"]
	return p.answer(ctx, "page "+after, func(ctx context.Context, now time.Time) (events.APIGatewayV2HTTPResponse, error) {
		skus, next, unreadable, err := p.store.SKUsOnSale(ctx, after)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		noteUnreadable(ctx, unreadable)
		out := publicPage{SKUs: make([]publicJSON, len(skus)), Next: next}
		for i, d := range skus {
			out.SKUs[i] = publicView(&d.SKU, now)
		}
		return httpapi.JSON(http.StatusOK, out), nil
	})
}

// answer answers key from an answer read less than MaxStale ago, or reads it with
// read (one read per key at a time; the others wait for it) and keeps it. Errors are
// answered to the requests that waited for the read and not kept.
func (p *Public) answer(ctx context.Context, key string, read func(context.Context, time.Time) (events.APIGatewayV2HTTPResponse, error)) (events.APIGatewayV2HTTPResponse, error) {
	now := p.now()
	p.mu.Lock()
	c, ok := p.answers[key]
	if !ok || now.Sub(c.at) >= MaxStale || now.Before(c.at) {
		p.forget(now)
		c = &cached{at: now, done: make(chan struct{})}
		p.answers[key] = c
		p.mu.Unlock()
		c.resp, c.err = read(ctx, now)
		close(c.done)
		if c.err != nil {
			p.mu.Lock()
			if p.answers[key] == c {
				delete(p.answers, key)
			}
			p.mu.Unlock()
		}
	} else {
		p.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return events.APIGatewayV2HTTPResponse{}, ctx.Err()
		}
	}
	if c.err != nil {
		return events.APIGatewayV2HTTPResponse{}, c.err
	}
	resp := c.resp
	resp.Headers = map[string]string{"Content-Type": "application/json", "Cache-Control": httpapi.PublicCacheControl}
	return resp, nil
}

// forget drops the answers older than MaxStale (p.mu held), so the cache holds only
// what was asked in the last second.
func (p *Public) forget(now time.Time) {
	for k, c := range p.answers {
		if now.Sub(c.at) >= MaxStale {
			select {
			case <-c.done:
				delete(p.answers, k)
			default: // still being read: its readers hold it
			}
		}
	}
}
