package flashsale

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// standIn is a tiny in-memory stand-in for the contract routes this tool calls
// (GET /skus/{skuId}, POST /orders, GET /orders/{orderId}, POST /orders/{orderId}/cancel,
// the local-only POST /_local/pay/{orderId}, and the on-hand count of the merchant route
// GET /admin/skus/{skuId}), for this package's tests only. It is NOT a fake of
// DynamoDB or SQS and models none of the real store: one mutex serialises every
// decision, which is all it takes for the correct variant to be correct. A fault makes
// it misbehave on purpose, so the tests can show that each verification check catches
// what it claims to.
type standIn struct {
	sku   string
	fault fault

	mu        sync.Mutex
	available int
	onHand    int               // physical units: falls only when an order is paid
	pays      int               // POST /_local/pay decided so far
	operators []string          // X-Operator-Id of each GET /admin/skus/{skuId}
	cancels   int               // POST /orders/{orderId}/cancel decided so far
	limit     int               // units per user; 0 means no limit
	bought    map[string]int    // user → units held
	orders    map[string]order  // order id → order
	byKey     map[string]string // user + "\n" + Idempotency-Key → order id
	users     map[string]bool   // every identity seen on POST /orders
	tried     map[string]bool   // user + "\n" + Idempotency-Key already answered BUSY once
	posts     int               // POST /orders decided so far
	oversold  int               // orders sold beyond the stock (fault.oversell)
}

// fault is a deliberate bug of the stand-in; the zero value is a correct server.
type fault struct {
	oversell      int  // sell this many orders after stock ran out, and still read available 0
	stockOutEvery int  // answer STOCK_OUT to every n-th POST whatever the stock
	busyEvery     int  // answer 503 BUSY (nothing reserved) to every n-th POST
	busyFirst     bool // answer 503 BUSY (nothing reserved) to a key's first attempt
	failEvery     int  // reserve on every n-th POST, then answer 500 anyway
	hangFirst     bool // reserve on a key's first attempt, then answer only after the client gave up
	staleSKU      bool // GET /skus/{skuId} keeps reporting the starting stock
	forgetOrders  bool // GET /orders/{orderId} never finds an order
	offSale       bool // the SKU reads OFF_SALE

	payFailEvery     int  // answer every n-th pay with payFailStatus and a FAIL body, paying nothing
	payFailStatus    int  // e.g. 401 (signature not verified) or 500 (store failure)
	payIgnored       bool // answer every pay 204 but leave the order PENDING
	payKeepsOnHand   bool // mark orders PAID without committing on-hand
	payReleases      bool // mark orders PAID and also give their units back to available
	cancelFailEvery  int  // answer every n-th cancel with cancelFailStatus, cancelling nothing
	cancelFailStatus int
	cancelKeepsStock bool // mark orders CANCELLED without releasing their units

	merchantForbidden bool // answer GET /admin/skus/{skuId} 403, as a deployed API does to an unsigned request
}

// order is the stand-in's order record, also its JSON answer.
type order struct {
	OrderID string      `json:"orderId"`
	Status  string      `json:"status"`
	Items   []orderLine `json:"items"`
	owner   string
}

// reply is what a handler decided under the lock, written after it is released.
type reply struct {
	status  int
	body    any
	headers map[string]string
	hang    bool
}

const standInPrice = 39900

// newStandIn serves a stand-in selling stock units of sku and closes it with the test.
func newStandIn(t *testing.T, sku string, stock, limit int, f fault) (*standIn, *httptest.Server) {
	t.Helper()
	s := &standIn{sku: sku, fault: f, available: stock, onHand: stock, limit: limit,
		bought: map[string]int{}, orders: map[string]order{}, byKey: map[string]string{}, users: map[string]bool{}, tried: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /skus/{skuId}", s.getSKU)
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders/{orderId}", s.getOrder)
	mux.HandleFunc("POST /orders/{orderId}/cancel", s.cancel)
	mux.HandleFunc("POST /_local/pay/{orderId}", s.pay)
	mux.HandleFunc("GET /admin/skus/{skuId}", s.getAdminSKU)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *standIn) getSKU(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("skuId") != s.sku {
		write(w, r, reply{status: http.StatusNotFound, body: apiErr("SKU_NOT_FOUND")})
		return
	}
	s.mu.Lock()
	available := s.available
	if s.fault.staleSKU {
		available += s.soldUnits()
	}
	s.mu.Unlock()
	status := "ON_SALE"
	switch {
	case s.fault.offSale:
		status = "OFF_SALE"
	case available == 0:
		status = "SOLD_OUT"
	case available < 10:
		status = "LOW_STOCK"
	}
	write(w, r, reply{status: http.StatusOK, body: map[string]any{
		"skuId": s.sku, "name": "test cup", "price": standInPrice, "currency": "CNY", "status": status, "available": available,
	}})
}

// soldUnits sums the units of every order; the caller holds mu.
func (s *standIn) soldUnits() int {
	n := 0
	for _, o := range s.orders {
		n += o.Items[0].Qty
	}
	return n
}

func (s *standIn) createOrder(w http.ResponseWriter, r *http.Request) {
	user := userOf(r)
	var body struct {
		Items []orderLine `json:"items"`
	}
	switch {
	case user == "":
		write(w, r, reply{status: http.StatusUnauthorized, body: apiErr("UNAUTHORIZED")})
	case json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Items) != 1 || body.Items[0].Qty < 1:
		write(w, r, reply{status: http.StatusBadRequest, body: apiErr("INVALID_REQUEST")})
	case body.Items[0].SKUID != s.sku:
		write(w, r, reply{status: http.StatusNotFound, body: apiErr("SKU_NOT_FOUND")})
	default:
		write(w, r, s.decide(user, r.Header.Get("Idempotency-Key"), body.Items[0].Qty))
	}
}

// decide answers one POST /orders under the lock.
func (s *standIn) decide(user, key string, qty int) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[user] = true
	if id, ok := s.byKey[user+"\n"+key]; ok && key != "" {
		return reply{status: http.StatusOK, body: s.orders[id], headers: map[string]string{"Idempotent-Replayed": "true"}}
	}
	s.posts++
	f := s.fault
	first := !s.tried[user+"\n"+key]
	s.tried[user+"\n"+key] = true
	switch {
	case every(f.busyEvery, s.posts), f.busyFirst && key != "" && first:
		return reply{status: http.StatusServiceUnavailable, body: apiErr("BUSY"), headers: map[string]string{"Retry-After": "0"}}
	case every(f.stockOutEvery, s.posts):
		return reply{status: http.StatusConflict, body: apiErr("STOCK_OUT")}
	case s.limit > 0 && s.bought[user]+qty > s.limit:
		return reply{status: http.StatusConflict, body: apiErr("LIMIT_EXCEEDED")}
	case s.available < qty && s.oversold < f.oversell:
		s.oversold++
		s.available += qty // the bug: sell anyway, and hide it
	case s.available < qty:
		return reply{status: http.StatusConflict, body: apiErr("STOCK_OUT")}
	}
	o := s.reserve(user, key, qty)
	switch {
	case every(f.failEvery, s.posts):
		return reply{status: http.StatusInternalServerError, body: apiErr("INTERNAL")}
	case f.hangFirst && key != "":
		return reply{hang: true}
	}
	return reply{status: http.StatusCreated, body: o}
}

// reserve takes qty units and opens a PENDING order; the caller holds mu.
func (s *standIn) reserve(user, key string, qty int) order {
	s.available -= qty
	s.bought[user] += qty
	o := order{OrderID: fmt.Sprintf("ord-%06d", len(s.orders)+1), Status: "PENDING",
		Items: []orderLine{{SKUID: s.sku, Qty: qty}}, owner: user}
	s.orders[o.OrderID] = o
	if key != "" {
		s.byKey[user+"\n"+key] = o.OrderID
	}
	return o
}

func (s *standIn) getOrder(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.orders[r.PathValue("orderId")]
	s.mu.Unlock()
	if !ok || o.owner != userOf(r) || s.fault.forgetOrders {
		write(w, r, reply{status: http.StatusNotFound, body: apiErr("ORDER_NOT_FOUND")})
		return
	}
	write(w, r, reply{status: http.StatusOK, body: o})
}

// pay serves POST /_local/pay/{orderId} with the notify route's answers: 204 and the
// order PAID (on-hand committed) on success, a 4xx/5xx {"code":"FAIL"} otherwise. A pay
// for a CANCELLED order re-reserves the units if they are available, else the order
// becomes REFUND_PENDING (docs/contract.md, "POST /payments/wechatpay/notify").
func (s *standIn) pay(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rep := s.decidePay(r.PathValue("orderId"))
	s.mu.Unlock()
	write(w, r, rep)
}

func (s *standIn) decidePay(id string) reply {
	s.pays++
	f := s.fault
	o, ok := s.orders[id]
	switch {
	case !ok:
		return reply{status: http.StatusNotFound, body: payFail("unknown order")}
	case every(f.payFailEvery, s.pays):
		return reply{status: f.payFailStatus, body: payFail("injected failure")}
	case f.payIgnored:
		return reply{status: http.StatusNoContent}
	}
	qty := o.Items[0].Qty
	switch o.Status {
	case "PENDING":
		o.Status = "PAID"
		if !f.payKeepsOnHand {
			s.onHand -= qty
		}
		if f.payReleases {
			s.available += qty
		}
	case "CANCELLED":
		if s.available >= qty {
			s.available -= qty
			s.onHand -= qty
			o.Status = "PAID"
		} else {
			o.Status = "REFUND_PENDING"
		}
	}
	s.orders[id] = o
	return reply{status: http.StatusNoContent}
}

// cancel serves POST /orders/{orderId}/cancel: the owner's PENDING order becomes
// CANCELLED and its units are released once (200 with the order); CANCELLED answers 200
// again, PAID 409 ORDER_NOT_CANCELLABLE, anyone else 404 ORDER_NOT_FOUND.
func (s *standIn) cancel(w http.ResponseWriter, r *http.Request) {
	user := userOf(r)
	s.mu.Lock()
	rep := s.decideCancel(user, r.PathValue("orderId"))
	s.mu.Unlock()
	write(w, r, rep)
}

func (s *standIn) decideCancel(user, id string) reply {
	s.cancels++
	f := s.fault
	o, ok := s.orders[id]
	switch {
	case user == "":
		return reply{status: http.StatusUnauthorized, body: apiErr("UNAUTHORIZED")}
	case !ok || o.owner != user:
		return reply{status: http.StatusNotFound, body: apiErr("ORDER_NOT_FOUND")}
	case every(f.cancelFailEvery, s.cancels):
		return reply{status: f.cancelFailStatus, body: apiErr("INTERNAL")}
	case o.Status == "PAID":
		return reply{status: http.StatusConflict, body: apiErr("ORDER_NOT_CANCELLABLE")}
	case o.Status == "PENDING":
		o.Status = "CANCELLED"
		if !f.cancelKeepsStock {
			s.available += o.Items[0].Qty
			s.bought[user] -= o.Items[0].Qty
		}
		s.orders[id] = o
	}
	return reply{status: http.StatusOK, body: o}
}

// readOnHand is the stand-in's on-hand count, as GET /admin/skus/{skuId} answers it.
func (s *standIn) readOnHand(_ context.Context, sku string) (int, error) {
	if sku != s.sku {
		return 0, fmt.Errorf("sku %s: not found", sku)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onHand, nil
}

// getAdminSKU answers the merchant route GET /admin/skus/{skuId} with the SKU's onHand
// (and available), or API Gateway's 403 with fault.merchantForbidden.
func (s *standIn) getAdminSKU(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.operators = append(s.operators, r.Header.Get("X-Operator-Id"))
	s.mu.Unlock()
	if s.fault.merchantForbidden {
		write(w, r, reply{status: http.StatusForbidden, body: map[string]string{"message": "Forbidden"}})
		return
	}
	onHand, err := s.readOnHand(r.Context(), r.PathValue("skuId"))
	if err != nil {
		write(w, r, reply{status: http.StatusNotFound, body: apiErr("SKU_NOT_FOUND")})
		return
	}
	s.mu.Lock()
	available := s.available
	s.mu.Unlock()
	write(w, r, reply{status: http.StatusOK, body: map[string]any{"skuId": s.sku, "onHand": onHand, "available": available}})
}

// onHandReads returns the X-Operator-Id of every on-hand read so far.
func (s *standIn) onHandReads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.operators)
}

// ownersWith returns the owners of the orders in status, sorted.
func (s *standIn) ownersWith(status string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var owners []string
	for _, o := range s.orders {
		if o.Status == status {
			owners = append(owners, o.owner)
		}
	}
	slices.Sort(owners)
	return owners
}

// requests returns how many POST /orders, pays and cancels were decided.
func (s *standIn) requests() (posts, pays, cancels int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts, s.pays, s.cancels
}

// seenUsers returns how many identities ordered.
func (s *standIn) seenUsers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.users)
}

func every(n, i int) bool { return n > 0 && i%n == 0 }

// userOf is the caller's identity: the bearer token (deployed) or X-User-Id (local).
func userOf(r *http.Request) string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return "token:" + tok
	}
	return r.Header.Get("X-User-Id")
}

// payFail is the notify route's error body.
func payFail(message string) map[string]string {
	return map[string]string{"code": "FAIL", "message": message}
}

func apiErr(code string) map[string]string {
	return map[string]string{"code": code, "message": strings.ToLower(strings.ReplaceAll(code, "_", " "))}
}

// write sends rep (no body when rep.body is nil); a hanging reply waits until the
// client gives up (or a minute).
func write(w http.ResponseWriter, r *http.Request, rep reply) {
	if rep.hang {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	for k, v := range rep.headers {
		w.Header().Set(k, v)
	}
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_ = json.NewEncoder(w).Encode(rep.body)
}
