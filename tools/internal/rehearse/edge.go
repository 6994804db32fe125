package rehearse

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// edge is the model of CloudFront in front of the public GET routes (template.yaml's
// PageDistribution): one cache that every buyer's page view reaches first, as if all
// of CloudFront's edges sent their misses through one Origin Shield ("Use Amazon
// CloudFront Origin Shield"; CloudFront API Reference, OriginShield: "When it's
// enabled, CloudFront routes all requests through Origin Shield"; the model leaves out
// the edges' own caches, which only take more views off the shield). It follows the
// distribution's cache policy:
//
//   - an answer is cached for the max-age of its Cache-Control, within the policy's
//     minimum and maximum TTL, and for the policy's default TTL without one ("Manage
//     how long content stays in the cache (expiration)"), counted from when the
//     shield received it, on the sale's clock; the public answers carry max-age=1;
//   - the cache key is the path and the query string (the policy forwards only
//     after=, which GET /skus pages with: "Understand cache policies");
//   - requests for an object that is being fetched wait for that fetch instead of
//     each going to the origin (request collapsing, described in "Use Amazon
//     CloudFront Origin Shield");
//   - only 200 answers are kept: the distribution's custom error responses cache
//     5xx for 0 s ("Control how long CloudFront caches errors"), and the model keeps
//     no other error either (API Gateway's 429 is not among the codes CloudFront
//     caches, "How CloudFront processes HTTP 4xx and 5xx status codes from your
//     origin").
//
// A view the cache answers costs no API Gateway request, no Lambda invocation and no
// read; its latency is taken as 0 (an edge's own few milliseconds are left out).
type edge struct {
	slow float64          // the sale's clock scale: TTLs last slow times longer in real time
	now  func() time.Time // real time

	mu      sync.Mutex
	objects map[string]*object
	fetches int // requests sent to the origin
	hits    int // views answered from the cache, waits for a fetch included
}

// object is one cache entry: its answer once fetched (done closed), and until when
// (real time) it may be answered without asking the origin.
type object struct {
	done    chan struct{}
	status  int
	body    []byte
	expires time.Time
}

// The cache policy's TTLs (template.yaml, PageCachePolicy).
const (
	edgeMinTTL     = 0
	edgeDefaultTTL = time.Second
	edgeMaxTTL     = 2 * time.Second
)

// newEdge returns an empty cache on a clock slow times slower than the real
// services', reading real time from now.
func newEdge(slow float64, now func() time.Time) *edge {
	return &edge{slow: slow, now: now, objects: map[string]*object{}}
}

// fresh returns the object cached for key when it may be answered at now without a
// fetch and is already fetched, nil otherwise (counted as a hit when found).
func (e *edge) fresh(key string, now time.Time) *object {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.objects[key]
	if o == nil || !o.ready() || !now.Before(o.expires) {
		return nil
	}
	e.hits++
	return o
}

// get answers key at now: from the cache when fresh, after the fetch under way when
// one is, else by calling fetch (the origin) and keeping a 200 answer for its TTL.
// It reports whether this request went to the origin.
func (e *edge) get(key string, now time.Time, fetch func() (int, []byte, http.Header)) (status int, body []byte, fetched bool) {
	e.mu.Lock()
	o := e.objects[key]
	if o != nil && (!o.ready() || now.Before(o.expires)) {
		e.hits++
		e.mu.Unlock()
		<-o.done
		return o.status, o.body, false
	}
	o = &object{done: make(chan struct{})}
	e.objects[key] = o
	e.fetches++
	e.mu.Unlock()

	status, body, header := fetch()
	o.status, o.body = status, body
	if status == http.StatusOK {
		o.expires = e.now().Add(time.Duration(float64(ttl(header.Get("Cache-Control"))) * e.slow))
	} // other answers expire at once: the next request fetches again
	close(o.done)
	return status, body, true
}

// ready reports whether o's fetch is done.
func (o *object) ready() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// ttl is how long a 200 answer with Cache-Control cc is cached, at 1×: its max-age
// (s-maxage first, as CloudFront reads it) within the policy's minimum and maximum,
// the default TTL without one; no-store, no-cache and private are not cached when the
// minimum TTL is 0.
func ttl(cc string) time.Duration {
	age := time.Duration(-1)
	for _, d := range strings.Split(cc, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch name {
		case "no-store", "no-cache", "private":
			return edgeMinTTL
		case "s-maxage", "max-age":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && (name == "s-maxage" || age < 0) {
				age = time.Duration(n) * time.Second
			}
		}
	}
	if age < 0 {
		return edgeDefaultTTL
	}
	return min(max(age, edgeMinTTL), edgeMaxTTL)
}

// counts returns the origin fetches and the hits so far.
func (e *edge) counts() (fetches, hits int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fetches, e.hits
}
