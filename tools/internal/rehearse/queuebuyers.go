package rehearse

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	apigw "github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
)

// The queued sale's own steps (its buyers also order, prepay and pay: stepOrder,
// stepPrepay, stepPay).
const (
	stepJoin step = stepLatePay + 1 + iota // POST /skus/{skuId}/queue
	stepPoll                               // GET /queue/{ticket}
)

// queueBuyer is one buyer of the queued sale: no goroutine, a few strings.
type queueBuyer struct {
	arrived   time.Duration // since the sale's start
	ticket    string
	token     string // the ticket token the last poll carried (sent as Ticket-Token)
	admission string
	orderID   string
	position  int32
	tries     int8
	pays      bool // pays its order (else lets the hold run out)
	got       bool // has an order
}

// buyerRetries is how many times a buyer sends a request again after a 429 or 5xx
// (an error of the store), a second apart.
const buyerRetries = 3

// ticketAnswer is what a buyer reads of POST /skus/{skuId}/queue's and GET
// /queue/{ticket}'s answer (docs/contract.md).
type ticketAnswer struct {
	Ticket          string `json:"ticket"`
	Status          string `json:"status"`
	Position        *int   `json:"position"`
	NextPollSeconds int    `json:"nextPollSeconds"`
	Admission       string `json:"admission"`
	TicketToken     string `json:"ticketToken"`
}

// step plays buyer event ev at the clock's time.
func (q *queueSale) step(ev event) {
	b := &q.buyers[ev.buyer]
	user := "b" + strconv.Itoa(int(ev.buyer))
	switch ev.step {
	case stepJoin:
		req := buyerRequest(user, map[string]string{"skuId": queueSKU}, nil)
		resp, err := q.room.Take(q.ctxs["join"], req)
		q.rec.joins++
		q.ticketAnswered(ev, resp, err)
	case stepPoll:
		if q.line.isEnded(ev.buyer) {
			return // told SOLD_OUT by the line
		}
		var headers map[string]string
		if b.token != "" {
			headers = map[string]string{admission.TicketHeader: b.token}
		}
		resp, err := q.room.Poll(q.ctxs["poll"], buyerRequest(user, map[string]string{"ticket": b.ticket}, headers))
		q.rec.polls++
		q.ticketAnswered(ev, resp, err)
	case stepOrder:
		q.order(ev, b, user)
	case stepPrepay:
		status, _ := q.call(q.ctxs["pay"], http.MethodPost, "/orders/"+b.orderID+"/pay", user, nil, "")
		if status == http.StatusOK {
			q.push(ev.buyer, stepPay, time.Second)
		} else {
			q.rec.count("prepay refused " + strconv.Itoa(status))
		}
	case stepPay:
		q.pay(b)
	}
}

// buyerRequest is an API Gateway request of user (the JWT authorizer's sub claim)
// with path parameters and headers (lower case, as API Gateway delivers them).
func buyerRequest(user string, path, headers map[string]string) apigw.APIGatewayV2HTTPRequest {
	return apigw.APIGatewayV2HTTPRequest{PathParameters: path, Headers: headers, RequestContext: apigw.APIGatewayV2HTTPRequestContext{
		Authorizer: &apigw.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &apigw.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": user}},
		},
	}}
}

// push schedules buyer b's step st after d from now.
func (q *queueSale) push(b int32, st step, d time.Duration) {
	heap.Push(&q.queue, event{at: q.clk.since(q.start) + d, buyer: b, step: st})
}

// ticketAnswered handles a join's or a poll's answer: WAITING polls again after
// nextPollSeconds (never sooner), ADMITTED orders, SOLD_OUT and EXPIRED end. A
// refused request (the handler's error, as httpapi.Answer would answer it) is sent
// again a second later while retries are left.
func (q *queueSale) ticketAnswered(ev event, resp apigw.APIGatewayV2HTTPResponse, err error) {
	b := &q.buyers[ev.buyer]
	if err != nil {
		status := httpapi.Answer(err).StatusCode
		q.rec.count("ticket error " + strconv.Itoa(status))
		if (status == http.StatusTooManyRequests || status >= 500) && b.tries < buyerRetries {
			b.tries++
			q.push(ev.buyer, ev.step, time.Second)
		}
		return
	}
	b.tries = 0
	var a ticketAnswer
	if json.Unmarshal([]byte(resp.Body), &a) != nil {
		q.rec.count("ticket answer unreadable")
		return
	}
	if a.Ticket != "" {
		b.ticket = a.Ticket
	}
	if a.TicketToken != "" {
		b.token = a.TicketToken
	}
	if a.Position != nil {
		b.position = int32(*a.Position)
	}
	switch inventory.TicketStatus(a.Status) {
	case inventory.TicketWaiting:
		q.push(ev.buyer, stepPoll, time.Duration(max(a.NextPollSeconds, inventory.MinPollSeconds))*time.Second)
	case inventory.TicketAdmitted:
		b.admission = a.Admission
		q.rec.admitted++
		q.push(ev.buyer, stepOrder, 0)
	case inventory.TicketSoldOut:
		q.line.end(ev.buyer)
		q.rec.toldSoldOut = append(q.rec.toldSoldOut, q.clk.since(q.start))
	default:
		q.rec.count("ticket " + a.Status)
	}
}

// order places buyer b's order of one unit with its admission (POST /orders, through
// the local API: createOrder's own handler); the order is then paid PayAfter later
// or left to run out.
func (q *queueSale) order(ev event, b *queueBuyer, user string) {
	headers := map[string]string{"Admission-Token": b.admission, "Idempotency-Key": user + "-1"}
	status, body := q.call(q.ctxs["order"], http.MethodPost, "/orders", user, headers, `{"items":[{"skuId":"`+queueSKU+`","qty":1}]}`)
	if status == http.StatusTooManyRequests || status >= 500 {
		if b.tries < buyerRetries {
			b.tries++
			q.push(ev.buyer, stepOrder, time.Second)
			return
		}
	}
	if status != http.StatusCreated && status != http.StatusOK {
		q.rec.count("order refused " + errorCode(body, status))
		return
	}
	var o struct{ OrderID string }
	json.Unmarshal(body, &o)
	b.orderID, b.got, b.tries = o.OrderID, true, 0
	q.rec.used(int(b.position))
	q.rec.orders++
	if b.pays {
		q.push(ev.buyer, stepPrepay, q.cfg.PayAfter)
	}
}

// pay pays buyer b's order at the stand-in WeChat Pay, whose notification reaches
// payCallback through the local API; the payment of the last unit is the sell-out.
func (q *queueSale) pay(b *queueBuyer) {
	if _, err := q.stack.PayServer.Pay(q.ctxs["pay"], b.orderID, paytest.PayOptions{}); err != nil {
		if errors.Is(err, paytest.ErrNotPayable) || errors.Is(err, paytest.ErrNoOrder) {
			q.rec.count("payment refused")
		} else {
			q.rec.count("payment failed")
		}
		return
	}
	q.rec.paid++
	if q.rec.paid == q.cfg.Stock {
		q.rec.sellOut = q.clk.since(q.start)
	}
}

// call sends one request through the local API as user with headers and body, and
// returns the answer's status and body.
func (q *queueSale) call(ctx context.Context, method, path, user string, headers map[string]string, body string) (int, []byte) {
	req := newRequest(ctx, method, path, body)
	req.Header.Set("X-User-Id", user)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	q.stack.API.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}
