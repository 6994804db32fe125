package dynamo_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// deadlineMidWrite makes the first TransactWriteItems request meet the invocation's
// deadline: the handler reads the request, cancels the caller's context (cancel) and
// waits until the client has given up; then land runs it against the server (before
// the cancel when early). Other requests pass through. Arm it after seeding.
type deadlineMidWrite struct {
	cancel context.CancelFunc
	first  atomic.Bool // set when armed
	early  bool
	land   func(next http.Handler, r *http.Request)
}

// arm sets the context the first transaction cancels and arms d.
func (d *deadlineMidWrite) arm(cancel context.CancelFunc) {
	d.cancel = cancel
	d.first.Store(true)
}

func (d *deadlineMidWrite) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") || !d.first.CompareAndSwap(true, false) {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		late := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		late.Header = r.Header
		if d.early {
			d.land(next, late)
		}
		d.cancel()
		<-r.Context().Done()
		if !d.early {
			d.land(next, late)
		}
	})
}

// checkOneOrder fails t unless exactly one PENDING order, one RESERVE entry and one
// unit fewer available (of stock 5) show the single reservation of one cup.
func checkOneOrder(t *testing.T, e *env) {
	t.Helper()
	b := e.books(t, "cup")
	if b.pendingOrders != 1 || b.reserveEntries != 1 || b.available != 4 {
		t.Errorf("books: %d pending orders, %d RESERVE entries, %d available; want 1, 1, 4", b.pendingOrders, b.reserveEntries, b.available)
	}
}

// The deadline fires while the order transaction is in flight and the server applies
// it: the SDK gives up, so the outcome is unknown. Reserve sends the same input again
// under the same ClientRequestToken, which answers the first copy's result: the order,
// not BUSY, even though every read after the deadline fails.
func TestReserve_DeadlineAfterAppliedWriteAnswersTheOrder(t *testing.T) {
	if stacktest.OnMoto() {
		t.Skip("moto_server 5.2.1 ignores TransactWriteItems' ClientRequestToken (its dynamodb responses never read it), " +
			"so it refuses the resend's put where DynamoDB answers the first copy's result (API Reference, TransactWriteItems); " +
			"the AWS documentation decides, and the embedded server follows it")
	}
	order, err := reserveThroughDeadline(t, false)
	if err != nil || order == nil {
		t.Fatalf("Reserve = %v, %v; want the order (BUSY=%v)", order, err, errors.Is(err, inventory.ErrBusy))
	}
}

// As above, but the store then fails the repeat too: the outcome stays unknown, and
// Reserve answers an error that is not BUSY ("nothing changed"), as one order holds
// the unit.
func TestReserve_OutcomeStillUnknownIsNotBusy(t *testing.T) {
	if _, err := reserveThroughDeadline(t, true); err == nil || errors.Is(err, inventory.ErrBusy) {
		t.Fatalf("Reserve error = %v; want an outcome-unknown error, not BUSY", err)
	}
}

// reserveThroughDeadline reserves one cup (stock 5) while the deadline fires during
// the order transaction, which the server applies; after that every read fails, and
// so does every write when writesDown. It checks the books show one order.
func reserveThroughDeadline(t *testing.T, writesDown bool) (*inventory.Order, error) {
	var down atomic.Bool
	d := &deadlineMidWrite{early: true, land: func(next http.Handler, r *http.Request) {
		next.ServeHTTP(httptest.NewRecorder(), r)
		down.Store(true)
	}}
	wrap := func(next http.Handler) http.Handler {
		inner := d.wrap(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			target := r.Header.Get("X-Amz-Target")
			write := strings.HasSuffix(target, ".TransactWriteItems")
			read := slices.ContainsFunc([]string{".GetItem", ".TransactGetItems", ".BatchGetItem", ".Query"}, func(op string) bool { return strings.HasSuffix(target, op) })
			if down.Load() && (read || write && writesDown) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"slow"}`)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	e := newEnv(t, dynamo.Options{}, wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	ctx, cancel := context.WithCancel(context.Background())
	d.arm(cancel)
	order, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	down.Store(false)
	checkOneOrder(t, e)
	return order, err
}

// The deadline fires before the server runs the order transaction, and the first
// copy lands only after Reserve has answered (DynamoDB may apply a request whose
// client gave up). The resend under the same token applies the reservation once; the
// late copy then changes nothing: one order, and Reserve answered it.
func TestReserve_LateFirstCopyOfTheOrderWriteChangesNothing(t *testing.T) {
	answered, landed := make(chan struct{}), make(chan struct{})
	d := &deadlineMidWrite{land: func(next http.Handler, r *http.Request) {
		<-answered
		next.ServeHTTP(httptest.NewRecorder(), r)
		close(landed)
	}}
	e := newEnv(t, dynamo.Options{}, d.wrap, inventory.NewSKU{Delivery: inventory.DeliveryNone, ID: "cup", Stock: 5})
	ctx, cancel := context.WithCancel(context.Background())
	d.arm(cancel)
	order, _, err := e.store.Reserve(ctx, inventory.ReserveRequest{UserID: "u", Cart: cart(t, inventory.Line{SKU: "cup", Qty: 1})})
	close(answered)
	<-landed
	if err != nil || order == nil {
		t.Fatalf("Reserve = %v, %v; want the order (BUSY=%v)", order, err, errors.Is(err, inventory.ErrBusy))
	}
	checkOneOrder(t, e)
}
