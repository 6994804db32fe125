package stock_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/stock"
)

// shelf is an in-test stock.Reader: what the public routes' cache does with reads is
// a rule of its own, apart from how DynamoDB answers them (the store's reads are
// tested in package dynamo).
type shelf struct {
	mu        sync.Mutex
	available int
	fail      error
	reads     atomic.Int32
	gate      chan struct{} // when set, a read waits for it
}

func (s *shelf) SKU(_ context.Context, id string) (*inventory.SKU, error) {
	s.reads.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	return &inventory.SKU{ID: id, Name: "cup", Price: 100, Currency: "CNY", OnSale: true, Shards: 1, OnHand: 10, Available: s.available}, nil
}

func (s *shelf) SKUsOnSale(ctx context.Context, _ string) ([]*inventory.SKUDetail, string, []string, error) {
	sku, err := s.SKU(ctx, "cup")
	if err != nil {
		return nil, "", nil, err
	}
	return []*inventory.SKUDetail{{SKU: *sku}}, "", nil, nil
}

func show(t *testing.T, p *stock.Public) (status string, available int) {
	t.Helper()
	resp, err := p.Show(context.Background(), events.APIGatewayV2HTTPRequest{PathParameters: map[string]string{"skuId": "cup"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Headers["Cache-Control"]; got != "public, max-age=1" {
		t.Errorf("Cache-Control %q", got)
	}
	var v struct {
		Status    string `json:"status"`
		Available int    `json:"available"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &v); err != nil {
		t.Fatal(err)
	}
	return v.Status, v.Available
}

// One read per SKU per second: within the second the answer is the read's, after it
// a new read; so SOLD_OUT shows at most 1 s after the last unit went, and what is
// shown was held by the shards when read.
func TestPublic_AnswersFromAReadAtMostOneSecondOld(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := t0
	s := &shelf{available: 1}
	p := stock.NewPublic(s, func() time.Time { return now })
	if st, n := show(t, p); st != "LOW_STOCK" || n != 1 {
		t.Errorf("first view %s %d", st, n)
	}
	s.mu.Lock()
	s.available = 0 // the last unit goes
	s.mu.Unlock()
	now = t0.Add(stock.MaxStale - time.Millisecond)
	if st, n := show(t, p); st != "LOW_STOCK" || n != 1 || s.reads.Load() != 1 {
		t.Errorf("within the second: %s %d after %d reads, want the first read's answer", st, n, s.reads.Load())
	}
	now = t0.Add(stock.MaxStale)
	if st, n := show(t, p); st != "SOLD_OUT" || n != 0 || s.reads.Load() != 2 {
		t.Errorf("a second on: %s %d after %d reads, want SOLD_OUT from a second read", st, n, s.reads.Load())
	}
	resp, err := p.List(context.Background(), events.APIGatewayV2HTTPRequest{})
	if err != nil || resp.Headers["Cache-Control"] != "public, max-age=1" || s.reads.Load() != 3 {
		t.Errorf("list: %v %v after %d reads (the list is its own answer)", resp.Headers, err, s.reads.Load())
	}
}

// Concurrent views of one SKU while its answer is being read wait for that one read.
func TestPublic_ConcurrentViewsShareOneRead(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := &shelf{available: 7, gate: make(chan struct{})}
	p := stock.NewPublic(s, func() time.Time { return now })
	const views = 64
	var wg sync.WaitGroup
	for range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, n := show(t, p); n != 7 {
				t.Errorf("available %d, want 7", n)
			}
		}()
	}
	for s.reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(s.gate)
	wg.Wait()
	if got := s.reads.Load(); got != 1 {
		t.Errorf("%d views made %d reads, want 1", views, got)
	}
}

// A failed read is answered to the views that waited for it and is not kept: the
// next view reads again.
func TestPublic_KeepsNoFailure(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := &shelf{available: 2, fail: inventory.ErrBusy}
	p := stock.NewPublic(s, func() time.Time { return now })
	_, err := p.Show(context.Background(), events.APIGatewayV2HTTPRequest{PathParameters: map[string]string{"skuId": "cup"}})
	if !errors.Is(err, inventory.ErrBusy) {
		t.Errorf("failed read: %v", err)
	}
	s.mu.Lock()
	s.fail = nil
	s.mu.Unlock()
	if _, n := show(t, p); n != 2 || s.reads.Load() != 2 {
		t.Errorf("after a failure: %d available after %d reads, want 2 and 2", n, s.reads.Load())
	}
}
