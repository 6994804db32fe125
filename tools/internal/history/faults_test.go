package history_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Fault kinds injected on the DynamoDB wire.
const (
	faultDropped  = "response dropped after apply"
	faultThrottle = "throttle"
	faultServer   = "5xx"
	faultConflict = "TransactionConflict"
	faultLatency  = "latency"
)

// faults is a DynamoDB server middleware that injects faults, drawn from a seeded
// source, into a fraction of the requests, and counts them by kind. With brokenRelease
// set it also gives one extra unit back on the first release it sees (the bug a
// history must catch).
type faults struct {
	mu     sync.Mutex
	rng    *rand.Rand
	counts map[string]int
	on     atomic.Bool
	scale  float64 // the fault rates are multiplied by it

	brokenRelease atomic.Bool
	broken        atomic.Bool // the extra unit was given back
}

func newFaults(seed uint64) *faults {
	return &faults{rng: rand.New(rand.NewPCG(seed, 0xfa17)), counts: map[string]int{}, scale: 1}
}

// draw picks a fault (or "") for a request of op.
func (f *faults) draw(op string) (string, time.Duration) {
	if !f.on.Load() {
		return "", 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.rng.Float64() / f.scale
	kind := ""
	switch {
	case p < 0.03:
		kind = faultDropped
	case p < 0.06:
		kind = faultThrottle
	case p < 0.08:
		kind = faultServer
	case p < 0.13 && op == "TransactWriteItems":
		kind = faultConflict
	case p < 0.25:
		kind = faultLatency
	}
	if kind != "" {
		f.counts[kind]++
	}
	return kind, time.Duration(f.rng.IntN(8)+1) * time.Millisecond
}

// snapshot returns the counts by kind.
func (f *faults) snapshot() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Header.Get("X-Amz-Target")
		op := target[bytes.LastIndexByte([]byte(target), '.')+1:]
		body, _ := io.ReadAll(r.Body)
		kind, wait := f.draw(op)
		applied := kind == "" || kind == faultLatency || kind == faultDropped
		if applied && op == "TransactWriteItems" && f.brokenRelease.Load() && !f.broken.Load() {
			if changed, ok := giveOneMore(body); ok && f.broken.CompareAndSwap(false, true) {
				f.serveBroken(w, r, next, changed, kind == faultDropped)
				return
			}
		}
		setBody(r, body)
		switch kind {
		case faultLatency:
			time.Sleep(wait)
		case faultDropped:
			next.ServeHTTP(httptest.NewRecorder(), r) // applied; the answer is lost
			awsError(w, http.StatusInternalServerError, "InternalServerError", "")
			return
		case faultThrottle:
			awsError(w, http.StatusBadRequest, "ThrottlingException", "")
			return
		case faultServer:
			awsError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "")
			return
		case faultConflict:
			awsError(w, http.StatusBadRequest, "TransactionCanceledException", conflictReasons(body))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveBroken sends the release rewritten to give one unit too many; if DynamoDB
// refused it, the next release is rewritten instead.
func (f *faults) serveBroken(w http.ResponseWriter, r *http.Request, next http.Handler, body []byte, drop bool) {
	setBody(r, body)
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		f.broken.Store(false)
	}
	if drop {
		awsError(w, http.StatusInternalServerError, "InternalServerError", "")
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func setBody(r *http.Request, body []byte) {
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
}

// awsError writes a DynamoDB JSON-protocol error (extra: more JSON members, or "").
func awsError(w http.ResponseWriter, status int, code, extra string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	if extra != "" {
		extra = "," + extra
	}
	io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#`+code+`","message":"injected"`+extra+`}`)
}

// conflictReasons is the CancellationReasons member of a TransactWriteItems refused
// for a conflict on its first action (DynamoDB API Reference, TransactWriteItems).
func conflictReasons(body []byte) string {
	var in struct{ TransactItems []json.RawMessage }
	json.Unmarshal(body, &in)
	reasons := make([]map[string]string, max(len(in.TransactItems), 1))
	for i := range reasons {
		reasons[i] = map[string]string{"Code": "None"}
	}
	reasons[0] = map[string]string{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
	out, _ := json.Marshal(reasons)
	return `"CancellationReasons":` + string(out)
}

var addPlaceholder = regexp.MustCompile(`(#\w+) (:\w+)`)

// giveOneMore rewrites a release's TransactWriteItems (one with a RELEASE ledger
// entry) so that its first shard update gives one unit more back to available than
// the ledger entry records. It reports false for other requests.
func giveOneMore(body []byte) ([]byte, bool) {
	var in map[string]any
	if json.Unmarshal(body, &in) != nil || !bytes.Contains(body, []byte(`"RELEASE"`)) {
		return nil, false
	}
	items, _ := in["TransactItems"].([]any)
	for _, it := range items {
		upd, _ := it.(map[string]any)["Update"].(map[string]any)
		if upd == nil {
			continue
		}
		names, _ := upd["ExpressionAttributeNames"].(map[string]any)
		values, _ := upd["ExpressionAttributeValues"].(map[string]any)
		expr, _ := upd["UpdateExpression"].(string)
		for _, m := range addPlaceholder.FindAllStringSubmatch(expr, -1) {
			v, _ := values[m[2]].(map[string]any)
			if names[m[1]] != "available" || v == nil {
				continue
			}
			q, err := strconv.Atoi(v["N"].(string))
			if err != nil || q <= 0 {
				continue
			}
			v["N"] = strconv.Itoa(q + 1)
			out, err := json.Marshal(in)
			return out, err == nil
		}
	}
	return nil, false
}
