package waitroom_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// readLine reads GET /skus/{sku}/line as an anonymous viewer (no X-User-Id, no token:
// as CloudFront forwards it) and returns the status, the Cache-Control header and the
// body.
func readLine(t *testing.T, s *stacktest.Stack, sku string) (int, string, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.API.ServeHTTP(rec, httptest.NewRequest("GET", "/skus/"+sku+"/line", nil))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("line of %s: %d %q: %v", sku, rec.Code, rec.Body.String(), err)
	}
	return rec.Code, rec.Header().Get("Cache-Control"), out
}

// lineStatus is the status a buyer at position reads from the line document, by the
// contract's rule (docs/contract.md, "GET /skus/{skuId}/line").
func lineStatus(line map[string]any, position int) string {
	switch {
	case num(line["admittedThrough"]) >= position:
		return "ADMITTED"
	case line["soldOut"] == true:
		return "SOLD_OUT"
	}
	return "WAITING"
}

// writeUnits is the write units model has seen consumed, over every operation.
func writeUnits(model *ddblimits.Model) float64 {
	var sum float64
	for _, c := range model.Stats() {
		sum += c.WriteUnits
	}
	return sum
}

// meteredStack is the waiting room's stack with every DynamoDB request metered.
func meteredStack(t *testing.T) (*stacktest.Stack, *ddblimits.Model) {
	model := ddblimits.New(ddblimits.Config{RoundTrip: time.Microsecond})
	s := stacktest.New(t, stacktest.Options{Seed: seed, Stack: local.StackConfig{
		DynamoDBOptions: []func(*dynamodb.Options){model.ClientOptions},
	}})
	return s, model
}

// The line document answers anyone, without identity, the SKU's frontier with the
// public caching header; a SKU without a waiting room is 409, an unknown one 404
// (both with that header too), a malformed id 400; and none of it writes anything.
func TestLine_AnswersAnyoneTheFrontierAndWritesNothing(t *testing.T) {
	s, model := meteredStack(t)
	alice := take(t, s, "alice", "drop")
	take(t, s, "bob", "drop")
	admit(t, s, "drop", alice, 1, 1, false)
	before, units := s.Snapshot(t), writeUnits(model)

	code, cache, out := readLine(t, s, "drop")
	want := map[string]any{"skuId": "drop", "admittedThrough": 1.0, "soldOut": false, "placed": 0.0, "admissionsPerSecond": 200.0}
	if code != http.StatusOK || cache != "public, max-age=1" || fmt.Sprint(out) != fmt.Sprint(want) {
		t.Errorf("line of drop: %d %q %v; want 200 %q %v", code, cache, out, "public, max-age=1", want)
	}
	// The refusals are kept 1 s too (CloudFront keeps an error without max-age for
	// its error caching minimum TTL): a SKU put in the queue is seen within 1 s.
	if code, cache, out := readLine(t, s, "mug"); code != http.StatusConflict || out["code"] != "QUEUE_NOT_ENABLED" || out["skuId"] != "mug" || cache != "public, max-age=1" {
		t.Errorf("line of mug (no waiting room): %d %q %v", code, cache, out)
	}
	if code, cache, out := readLine(t, s, "nothing"); code != http.StatusNotFound || out["code"] != "SKU_NOT_FOUND" || cache != "public, max-age=1" {
		t.Errorf("line of an unknown SKU: %d %q %v", code, cache, out)
	}
	if code, out := s.OutsideContract("malformed sku id").Call(t, "GET", "/skus/x%23y/line", "", nil, ""); code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
		t.Errorf("malformed SKU id: %d %v", code, out)
	}
	if s.Snapshot(t) != before || writeUnits(model) != units {
		t.Errorf("reading the line wrote %.1f units", writeUnits(model)-units)
	}
}

// N buyers wait with positions 1..N while 2 are admitted; then the SKU sells out.
// Every buyer polls the line document, all at once, each 3 times a second of the
// store's clock: before the sell-out each reads the status its ticket's poll answers,
// after it every buyer not admitted reads SOLD_OUT, and none of the N × 6 polls
// wrote a single unit.
func TestLine_EveryWaitingBuyerReadsTheSellOutWithoutAWrite(t *testing.T) {
	const n = 24
	s, model := meteredStack(t)
	tickets := make([]string, n)
	for i := range tickets {
		tickets[i] = take(t, s, fmt.Sprintf("buyer-%02d", i), "drop")
	}
	for i := n - 1; i >= 1; i-- {
		admit(t, s, "drop", tickets[i], i+1, 0, false)
	}
	admit(t, s, "drop", tickets[0], 1, 2, false)
	pollAll := func() []string {
		t.Helper()
		statuses := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				for range 3 {
					code, _, line := readLine(t, s, "drop")
					if code != http.StatusOK {
						t.Errorf("buyer %d: %d %v", i, code, line)
						return
					}
					statuses[i] = lineStatus(line, i+1)
				}
			})
		}
		wg.Wait()
		return statuses
	}

	units := writeUnits(model)
	for i, got := range pollAll() {
		_, ticket := s.Call(t, "GET", "/queue/"+tickets[i], fmt.Sprintf("buyer-%02d", i), nil, "")
		if got != ticket["status"] {
			t.Errorf("buyer %d before the sell-out: the line says %s, the ticket %v", i, got, ticket["status"])
		}
	}
	units = writeUnits(model) - units
	admit(t, s, "drop", tickets[0], 1, 2, true) // the last unit went: sold out
	before := writeUnits(model)
	soldOut := 0
	for i, got := range pollAll() {
		want := "SOLD_OUT"
		if i < 2 {
			want = "ADMITTED"
		}
		if got != want {
			t.Errorf("buyer %d after the sell-out: the line says %s, want %s", i, got, want)
		}
		if got == "SOLD_OUT" {
			soldOut++
		}
	}
	if soldOut != n-2 {
		t.Errorf("%d buyers read SOLD_OUT, want %d", soldOut, n-2)
	}
	if units != 0 || writeUnits(model) != before {
		t.Errorf("polls wrote %.1f units before the sell-out and %.1f after; want none", units, writeUnits(model)-before)
	}
}
