package rehearse

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// CloudFront's model asks the origin once per object per max-age (on the sale's
// clock), whatever the number of requests; requests that arrive while the object is
// being fetched wait for that fetch (request collapsing). Exact counts on a fake clock.
func TestEdge_OneOriginFetchPerObjectPerMaxAge(t *testing.T) {
	now := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := newEdge(4, clock) // max-age=1 lasts 4 s of real time
	var fetched atomic.Int32
	release := make(chan struct{})
	origin := func() (int, []byte, http.Header) {
		fetched.Add(1)
		<-release
		return http.StatusOK, []byte(`{"available":3}`), http.Header{"Cache-Control": {"public, max-age=1"}}
	}
	// 50 requests at once for one page: one fetch, 49 wait for it.
	var wg sync.WaitGroup
	var wentToOrigin atomic.Int32
	started := make(chan struct{})
	wg.Go(func() {
		close(started)
		if _, _, f := e.get("/skus/a", clock(), origin); f {
			wentToOrigin.Add(1)
		}
	})
	<-started
	for fetched.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	for range 49 {
		wg.Go(func() {
			status, body, f := e.get("/skus/a", clock(), origin)
			if f {
				wentToOrigin.Add(1)
			}
			if status != http.StatusOK || string(body) != `{"available":3}` {
				t.Errorf("collapsed request answered %d %s", status, body)
			}
		})
	}
	for {
		if _, hits := e.counts(); hits == 49 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if fetched.Load() != 1 || wentToOrigin.Load() != 1 {
		t.Fatalf("50 requests at once: %d origin fetches, want 1", fetched.Load())
	}
	// Fresh for max-age on the sale's clock: 3.9 s of real time at 4× is 0.975 s.
	advance(3900 * time.Millisecond)
	if o := e.fresh("/skus/a", clock()); o == nil {
		t.Error("0.975 s after the fetch: not fresh, want answered from the cache")
	}
	if _, _, f := e.get("/skus/b", clock(), origin); !f {
		t.Error("another SKU's page: answered from the cache, want a fetch of its own")
	}
	advance(100 * time.Millisecond)
	if o := e.fresh("/skus/a", clock()); o != nil {
		t.Error("1 s after the fetch: still fresh, want expired")
	}
	if _, _, f := e.get("/skus/a", clock(), origin); !f {
		t.Error("1 s after the fetch: answered from the cache, want a new fetch")
	}
	if fetches, hits := e.counts(); fetches != 3 || hits != 50 || fetched.Load() != 3 {
		t.Errorf("fetches %d (origin saw %d), hits %d; want 3 and 50", fetches, fetched.Load(), hits)
	}
}

// Only 200 answers are kept: a throttled or failed fetch is tried again by the next
// request.
func TestEdge_KeepsNoErrorAnswer(t *testing.T) {
	now := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	e := newEdge(1, func() time.Time { return now })
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		for range 2 {
			_, _, f := e.get("/skus/a", now, func() (int, []byte, http.Header) {
				return status, nil, http.Header{"Cache-Control": {"public, max-age=1"}}
			})
			if !f {
				t.Errorf("after a %d: answered from the cache, want a new fetch", status)
			}
		}
	}
}

// The cache policy's TTL of an answer (template.yaml, PageCachePolicy: minimum 0,
// default 1 s, maximum 2 s), as "Manage how long content stays in the cache
// (expiration)" describes it.
func TestTTL_FollowsTheCachePolicy(t *testing.T) {
	for _, tc := range []struct {
		cc   string
		want time.Duration
	}{
		{"public, max-age=1", time.Second},
		{"", edgeDefaultTTL},
		{"public, max-age=60", edgeMaxTTL},
		{"max-age=0", 0},
		{"no-store", 0},
		{"private, max-age=1", 0},
		{"max-age=1, s-maxage=2", 2 * time.Second},
		{"s-maxage=0, max-age=1", 0},
	} {
		if got := ttl(tc.cc); got != tc.want {
			t.Errorf("ttl(%q) = %v, want %v", tc.cc, got, tc.want)
		}
	}
}
