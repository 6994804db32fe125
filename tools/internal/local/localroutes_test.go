package local_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
)

// The local-only routes with an id in their path check it, and their body's size,
// as every gateway route does before anything is read or changed: an id no record can
// have is 400 INVALID_REQUEST naming the parameter (never sending the value back), a
// body over the route's limit 413 PAYLOAD_TOO_LARGE saying the limit; the order stays
// PENDING and a valid request still works after them. A head over the HTTP API's
// quota is 431 on them as on every route.
func TestLocalRoutes_CheckPathIDsAndBodySize(t *testing.T) {
	p := startPaying(t, "ivy", 1)
	long := strings.Repeat("a", 3000)
	big := `{"riskRank":1,"pad":"` + strings.Repeat(" ", 1<<20) + `"}`
	for _, c := range []struct {
		path, body string
		status     int
		code, says string
	}{
		{"/_local/pay/" + long, "", http.StatusBadRequest, "INVALID_REQUEST", "orderId must be "},
		{"/_local/pay/abc", "", http.StatusBadRequest, "INVALID_REQUEST", "orderId must be "},
		{"/_local/pay/" + p.id, big, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "body must not exceed 4096 bytes"},
		{"/_local/receipt/" + long, "", http.StatusBadRequest, "INVALID_REQUEST", "orderId must be "},
		{"/_local/receipt/" + p.id, big, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "body must not exceed 1024 bytes"},
		{"/_local/riskrank/" + long, `{"riskRank":1}`, http.StatusBadRequest, "INVALID_REQUEST", "openid must be "},
		{"/_local/riskrank/o%01x", `{"riskRank":1}`, http.StatusBadRequest, "INVALID_REQUEST", "openid must be "},
		{"/_local/riskrank/ivy", big, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "body must not exceed 1024 bytes"},
	} {
		ctx := openapitest.OutsideContract(context.Background(), "an id outside its form or a body over the limit, on purpose")
		status, body, _ := apiWith(ctx, p.stack, http.MethodPost, c.path, "", c.body)
		msg, _ := body["message"].(string)
		if status != c.status || body["code"] != c.code || !strings.HasPrefix(msg, c.says) || strings.Contains(msg, long[:40]) {
			t.Errorf("POST %.40s (%d bytes of body): %d %.200v, want %d %s %q", c.path, len(c.body), status, body, c.status, c.code, c.says)
		}
	}
	// A head over the HTTP API's quota is the gateway's 431 here too.
	req := httptest.NewRequest(http.MethodPost, "/_local/pay/"+p.id, nil)
	req.Header.Set("X-Pasted", strings.Repeat("t", local.MaxRequestHead))
	rec := httptest.NewRecorder()
	p.stack.API.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a %d-byte header: %d %s, want 431", local.MaxRequestHead, rec.Code, rec.Body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PENDING")
	if status, _, _ := api(p.stack, http.MethodPost, "/_local/riskrank/ivy", "", `{"riskRank":1}`); status != http.StatusNoContent {
		t.Errorf("a valid rank: %d, want 204", status)
	}
	if status, body := buyerPays(p.stack, p.id); status != http.StatusNoContent {
		t.Errorf("then paid: %d %v", status, body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PAID")
}

// A caller who hung up on POST /_local/invoke/{function} ends the run's context: the
// scheduled functions' failures then say the request was cancelled and are logged at
// warn, never as an error of the store (they said ERROR "store busy (context
// canceled)").
func TestLocalInvoke_ACallerWhoHungUpIsNoStoreError(t *testing.T) {
	stack, _, logs := payStack(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range []string{"closeOrder", "reconcile", "refund", "admitter"} {
		apiWith(ctx, stack, http.MethodPost, "/_local/invoke/"+f, "", "")
	}
	lines, err := logs.Lines()
	if err != nil {
		t.Fatal(err)
	}
	warned := 0
	for _, l := range lines {
		e, _ := l["error"].(string)
		switch {
		case l["level"] == "ERROR" || strings.Contains(e, inventory.ErrBusy.Error()):
			t.Errorf("logged %v %q: %.300s", l["level"], l["msg"], e)
		case l["level"] == "WARN" && strings.Contains(e, "request cancelled"):
			warned++
		}
	}
	if warned == 0 {
		t.Errorf("no warning says a run was cancelled: %d lines", len(lines))
	}
}

// A caller who hangs up on POST /_local/pay or /_local/receipt is no failure of the
// stack: it is warned, never an ERROR line (the notify route's store read failed
// on the cancelled context), and nothing is done.
func TestLocalRoutes_ACallerWhoHungUpIsWarnedNotAnError(t *testing.T) {
	p := startPaying(t, "ivy", 1)
	ctx, cancel := context.WithCancel(openapitest.OutsideContract(context.Background(), "the caller hung up"))
	cancel()
	for _, path := range []string{"/_local/pay/" + p.id, "/_local/receipt/" + p.id} {
		apiWith(ctx, p.stack, http.MethodPost, path, "", "")
	}
	lines, err := p.logs.Lines()
	if err != nil {
		t.Fatal(err)
	}
	warned := map[string]bool{}
	for _, l := range lines {
		switch {
		case l["level"] == "ERROR":
			t.Errorf("logged ERROR %q: %v", l["msg"], l)
		case l["level"] == "WARN" && strings.Contains(fmt.Sprint(l["error"]), "hung up"):
			warned[fmt.Sprint(l["msg"])] = true
		}
	}
	if !warned["local pay: the caller hung up"] || !warned["local receipt: the caller hung up"] {
		t.Errorf("warnings %v; want the pay and the receipt", warned)
	}
	wantStatus(t, p.stack, p.token, p.id, "PENDING")
}

// POST /_local/invoke/{function} takes no body: one over its limit is 413
// PAYLOAD_TOO_LARGE before anything runs (a 20 MB body ran the sweep); the sweep then
// still runs on an empty one.
func TestLocalInvoke_RefusesABigBodyBeforeRunning(t *testing.T) {
	p := startPaying(t, "ivy", 1)
	p.clock.Advance(16 * time.Minute) // past the order's expiry: a sweep would release it
	ctx := openapitest.OutsideContract(context.Background(), "a body over the limit, on purpose")
	status, body, _ := apiWith(ctx, p.stack, http.MethodPost, "/_local/invoke/closeOrder", "", strings.Repeat(" ", 20<<20))
	if msg, _ := body["message"].(string); status != http.StatusRequestEntityTooLarge || body["code"] != "PAYLOAD_TOO_LARGE" || !strings.HasPrefix(msg, "body must not exceed") {
		t.Errorf("a 20 MB body: %d %v, want 413 PAYLOAD_TOO_LARGE", status, body)
	}
	wantStatus(t, p.stack, p.token, p.id, "PENDING")
	sweep(t, p.stack)
	wantStatus(t, p.stack, p.token, p.id, "CANCELLED")
}
