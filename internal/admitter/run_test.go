package admitter

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// stuckStore lists one queued SKU on sale and never answers for its detail until
// the caller's context ends, noting that context's deadline: a store slower than the
// invocation. Nothing else is reached.
type stuckStore struct {
	Store
	mu        sync.Mutex
	deadlines []time.Time
}

func (s *stuckStore) SKUsOnSale(context.Context, string) ([]*inventory.SKUDetail, string, []string, error) {
	return []*inventory.SKUDetail{{SKU: inventory.SKU{ID: "drop", Queue: inventory.QueueSettings{Queue: true}}}}, "", nil, nil
}

func (s *stuckStore) SKUDetail(ctx context.Context, _ string) (*inventory.SKUDetail, error) {
	d, _ := ctx.Deadline()
	s.mu.Lock()
	s.deadlines = append(s.deadlines, d)
	s.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

// A tick the store holds up is cut releaseBudget before the invocation's deadline,
// so the run ends it and answers rather than Lambda ending the invocation; the next
// tick is not started, since the longest tick no longer fits before StopBefore.
func TestRun_CutsATickTheStoreHoldsBeforeTheInvocationEnds(t *testing.T) {
	store := &stuckStore{}
	a := New(store, slog.New(slog.DiscardHandler), time.Now)
	deadline := time.Now().Add(StopBefore + Tick + 50*time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	r, err := a.Run(ctx)
	if err != nil || r.Ticks != 1 || r.Errors != 1 || r.SKUs != 1 {
		t.Errorf("Run = %+v, %v; want 1 tick, 1 failed, 1 SKU", r, err)
	}
	if want := deadline.Add(-releaseBudget); len(store.deadlines) != 1 || !store.deadlines[0].Equal(want) {
		t.Errorf("the store was asked with deadlines %v, want one: %v (releaseBudget before the invocation's)", store.deadlines, want)
	}
}
