package refunds_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// These tests run the whole local stack: tables and queues from template.yaml, the
// functions wired as the template wires them, the stand-in WeChat Pay taking payments
// and refunds and sending signed, encrypted notifications through the notify routes.

const (
	cupsAndSaucer = `{"items":[{"skuId":"cup","qty":2},{"skuId":"saucer","qty":1}]}`
	amount        = 2*39900 + 12900
	saucer        = `{"items":[{"skuId":"saucer","qty":1}]}`
	waitLimit     = 30 * time.Second
)

var eventually = testkit.Eventually

// options is a stack with buyers' refunds open for window ("0": off), the SQS queues
// when sqs, and failed refund messages retried after a second (doubling).
func options(window string, sqs bool) stacktest.Options {
	return stacktest.Options{SQS: sqs, Stack: local.StackConfig{
		PaymentTimeout: time.Minute,
		Environment: func(function string, env map[string]string) {
			if function == "CloseOrderFunction" {
				env["USER_REFUND_WINDOW"] = window
			}
		},
		Refund: func(o *refunds.Options) { o.Backoff = time.Second },
	}}
}

// paid places the order body for user and pays it at the stand-in WeChat Pay (its
// JSAPI order started with POST /orders/{orderId}/pay); it returns the order id and
// the payment's transaction id.
func paid(t *testing.T, h *stacktest.Stack, user, body string) (string, string) {
	t.Helper()
	id := h.Order(t, user, body)
	if status, out := h.Call(t, http.MethodPost, "/orders/"+id+"/pay", user, nil, ""); status != http.StatusOK {
		t.Fatalf("pay: %d %v", status, out)
	}
	d, err := h.PayServer.Pay(context.Background(), id, paytest.PayOptions{})
	if err != nil || d.StatusCode != http.StatusNoContent {
		t.Fatalf("pay at WeChat Pay: %+v %v", d, err)
	}
	order := h.Lookup(t, id)
	if order.Status != inventory.StatusPaid {
		t.Fatalf("order %s after payment, want PAID", order.Status)
	}
	return id, order.TransactionID
}

// status is the order's status as stored.
func status(t *testing.T, h *stacktest.Stack, id string) inventory.Status {
	return h.Lookup(t, id).Status
}

func TestBuyerRefund_GoodsBackOnceThenMoneyOnce(t *testing.T) {
	h := stacktest.New(t, options("1h", true))
	h.RunInBackground(t)
	id, tx := paid(t, h, "buyer", cupsAndSaucer)
	if status, _ := h.Call(t, http.MethodPost, "/orders/"+id+"/refund", "somebody-else", nil, ""); status != http.StatusNotFound {
		t.Errorf("someone else's refund: %d, want 404", status)
	}
	var wg sync.WaitGroup
	answers := make([]int, 20)
	for i := range answers {
		wg.Go(func() { answers[i], _ = h.Call(t, http.MethodPost, "/orders/"+id+"/refund", "buyer", nil, "") })
	}
	wg.Wait()
	for _, a := range answers {
		if a != http.StatusAccepted && a != http.StatusOK {
			t.Errorf("answers %v, want 202 (or 200 once REFUNDED)", answers)
			break
		}
	}
	if ops := h.Ops(t, id); ops[string(inventory.OpReturn)] != 2 || ops[string(inventory.OpCommit)] != 2 {
		t.Errorf("ledger %v, want one RETURN per line (2)", ops)
	}
	if cup, saucer := h.OnHand(t, "cup"), h.Available(t, "saucer"); cup != 100 || saucer != 100 {
		t.Errorf("cup on-hand %d, saucer available %d, want 100 and 100", cup, saucer)
	}
	eventually(t, waitLimit, "order REFUNDED", func() bool { return status(t, h, id) == inventory.StatusRefunded })
	rec, ok := h.PayServer.Refund(inventory.OutRefundNo(id, 1))
	if refunded, _ := h.PayServer.Refunded(tx); !ok || rec.Requests != 1 || refunded != amount || rec.Amount.Refund != amount {
		t.Errorf("WeChat Pay: refund %+v (%v), %d fen refunded; want one request for %d fen", rec, ok, refunded, amount)
	}
	code, out := h.Call(t, http.MethodPost, "/orders/"+id+"/refund", "buyer", nil, "")
	if code != http.StatusOK || out["status"] != "REFUNDED" || out["refundAmount"] != float64(amount) || out["refundedAt"] == nil {
		t.Errorf("refund of a REFUNDED order: %d %v", code, out)
	}
	h.Check(t)
}

func TestBuyerRefund_RefusesWhatTheContractRefuses(t *testing.T) {
	h := stacktest.New(t, options("1h", false))
	id, _ := paid(t, h, "buyer", cupsAndSaucer)
	pending := h.Order(t, "buyer", saucer)
	cancelled := h.Order(t, "buyer", saucer)
	if code, out := h.Call(t, http.MethodPost, "/orders/"+cancelled+"/cancel", "buyer", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	before := h.Snapshot(t)
	for _, tc := range []struct {
		name, id, user string
		advance        time.Duration
		want           int
		code           string
	}{
		{"PENDING", pending, "buyer", 0, http.StatusConflict, "REFUND_NOT_ALLOWED"},
		{"CANCELLED", cancelled, "buyer", 0, http.StatusConflict, "REFUND_NOT_ALLOWED"},
		{"someone else's", id, "other", 0, http.StatusNotFound, "ORDER_NOT_FOUND"},
		{"unknown", "0123456789abcdef", "buyer", 0, http.StatusNotFound, "ORDER_NOT_FOUND"},
		{"no identity", id, "", 0, http.StatusUnauthorized, "UNAUTHORIZED"},
		{"past the window", id, "buyer", time.Hour, http.StatusConflict, "REFUND_NOT_ALLOWED"},
	} {
		h.Clock.Advance(tc.advance)
		api := h
		if tc.user == "" { // no identity: outside the contract's security, on purpose
			api = h.OutsideContract(tc.name)
		}
		if code, out := api.Call(t, http.MethodPost, "/orders/"+tc.id+"/refund", tc.user, nil, ""); code != tc.want || out["code"] != tc.code {
			t.Errorf("%s: %d %v, want %d %s", tc.name, code, out, tc.want, tc.code)
		}
	}
	// null is not "leave it out": {"lines": null} would otherwise refund everything.
	outside := h.OutsideContract("fields given as null, which the contract's schemas refuse")
	for _, body := range []string{`{"lines":null}`, `{"refundId":null}`, `{"refundId":"r1","lines":null}`} {
		if code, out := outside.Call(t, http.MethodPost, "/orders/"+id+"/refund", "buyer", nil, body); code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
			t.Errorf("%s: %d %v, want 400 INVALID_REQUEST", body, code, out)
		}
	}
	if code, out := adminRefund(t, outside, id, `{"restock":true,"reason":"returned","lines":null}`); code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" {
		t.Errorf("merchant refund with lines null: %d %v, want 400 INVALID_REQUEST", code, out)
	}
	if h.Snapshot(t) != before {
		t.Error("a refused refund changed the tables")
	}
	h.Check(t)
}

func TestBuyerRefund_OffByDefault(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, _ := paid(t, h, "buyer", cupsAndSaucer)
	if code, out := h.Call(t, http.MethodPost, "/orders/"+id+"/refund", "buyer", nil, ""); code != http.StatusConflict || out["code"] != "REFUND_NOT_ALLOWED" {
		t.Errorf("refund with the window 0: %d %v", code, out)
	}
}

// adminRefund refunds id through the merchant API and returns the answer.
func adminRefund(t *testing.T, h *stacktest.Stack, id, body string) (int, map[string]any) {
	t.Helper()
	return h.Call(t, http.MethodPost, "/admin/orders/"+id+"/refund", "", nil, body)
}

// WeChat Pay answering 5xx for a while: the message is retried with backoff until
// WeChat Pay takes the refund, which it then does once.
func TestRefund_RetriedThroughWeChatPayOutagesUntilTaken(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	id, tx := paid(t, h, "buyer", cupsAndSaucer)
	h.PayServer.FailNextAPI(3)
	h.RunInBackground(t)
	if code, out := adminRefund(t, h, id, `{"restock":false,"reason":"shipped, lost by the carrier"}`); code != http.StatusAccepted || out["status"] != "REFUNDING" {
		t.Fatalf("admin refund: %d %v", code, out)
	}
	eventually(t, waitLimit, "order REFUNDED", func() bool { return status(t, h, id) == inventory.StatusRefunded })
	// Each failure hides the message for the backoff of its receive count
	// (ApproximateReceiveCount, as the local SQS now counts it): 1 s doubling.
	var waits []string
	for _, l := range h.Logged(t, "msg", "refund request failed; it will be retried") {
		after, _ := l["after"].(float64) // slog's JSON: nanoseconds
		waits = append(waits, time.Duration(after).String())
	}
	if fmt.Sprint(waits) != "[1s 2s 4s]" {
		t.Errorf("failed requests logged with waits %v, want [1s 2s 4s]", waits)
	}
	if rec, _ := h.PayServer.Refund(inventory.OutRefundNo(id, 1)); rec.Requests != 1 {
		t.Errorf("%d refund requests taken, want 1", rec.Requests)
	}
	if refunded, _ := h.PayServer.Refunded(tx); refunded != amount {
		t.Errorf("%d fen refunded, want %d", refunded, amount)
	}
	if ops := h.Ops(t, id); ops[string(inventory.OpReturn)] != 0 || h.OnHand(t, "cup") != 98 {
		t.Errorf("a refund without restock: ledger %v, cup on-hand %d, want no RETURN and 98", ops, h.OnHand(t, "cup"))
	}
	if order := h.Lookup(t, id); len(order.Refunds) != 1 || order.Refunds[0].By != local.LocalOperatorARN || order.Refunds[0].Reason != "shipped, lost by the carrier" {
		t.Errorf("recorded as %+v", order.Refunds)
	}
	h.Check(t)
}

// successNotice is WeChat Pay's REFUND.SUCCESS for the refund of order id.
func successNotice(h *stacktest.Stack, id, tx string, fen int64, now time.Time) wechatpay.Refund {
	return wechatpay.Refund{
		MchID: local.LocalMchID, OutTradeNo: id, TransactionID: tx, OutRefundNo: inventory.OutRefundNo(id, 1),
		RefundID: "50000000000000000000000000001", Status: wechatpay.RefundSuccess, UserReceivedAccount: "支付用户零钱",
		SuccessTime: now, Amount: wechatpay.RefundAmount{Refund: fen, Total: amount, PayerTotal: amount, PayerRefund: fen},
	}
}

// refundNotify sends a refund notification built by platform for r through the route.
func refundNotify(t *testing.T, h *stacktest.Stack, platform *paytest.Platform, r wechatpay.Refund) (int, map[string]any) {
	t.Helper()
	headers, body, err := platform.NotifyRefund(r, h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return h.Call(t, http.MethodPost, "/payments/wechatpay/refund-notify", "", headers, string(body))
}

func TestRefundNotify_RejectsWhatIsNotTheRefundAndTakesTheRightOneOnce(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, tx := paid(t, h, "buyer", cupsAndSaucer)
	other, otherTx := paid(t, h, "other", cupsAndSaucer)
	if code, out := adminRefund(t, h, id, `{"restock":true,"reason":"returned"}`); code != http.StatusAccepted {
		t.Fatalf("admin refund: %d %v", code, out)
	}
	forger, err := paytest.NewPlatform(local.LocalMchID, local.LocalAppID)
	if err != nil {
		t.Fatal(err)
	}
	forger.Serial = h.Payments.Serial
	now := h.Clock.Now()
	genuine := successNotice(h, id, tx, amount, now)
	otherAmount, otherOrder, notRefunding, unknown := genuine, genuine, successNotice(h, other, otherTx, amount, now), genuine
	otherAmount.Amount.Refund, otherAmount.Amount.PayerRefund = amount-1, amount-1
	otherTotal := genuine
	otherTotal.Amount.Total, otherTotal.Amount.PayerTotal = amount+100, amount+100
	otherOrder.OutTradeNo = other
	unknown.OutRefundNo = "0123456789abcdef_R"
	before := h.Snapshot(t)
	for _, tc := range []struct {
		name     string
		platform *paytest.Platform
		r        wechatpay.Refund
		want     int
	}{
		{"forged", forger, genuine, http.StatusUnauthorized},
		{"another amount", h.Payments, otherAmount, http.StatusBadRequest},
		{"another payment total", h.Payments, otherTotal, http.StatusBadRequest},
		{"another order", h.Payments, otherOrder, http.StatusBadRequest},
		{"an order not being refunded", h.Payments, notRefunding, http.StatusNotFound},
		{"unknown out_refund_no", h.Payments, unknown, http.StatusNotFound},
	} {
		if code, out := refundNotify(t, h, tc.platform, tc.r); code != tc.want || out["code"] != "FAIL" {
			t.Errorf("%s: %d %v, want %d FAIL", tc.name, code, out, tc.want)
		}
	}
	if h.Snapshot(t) != before {
		t.Fatal("a rejected refund notification changed the tables")
	}
	var refundedAt string
	for i := range 3 { // the notification, then WeChat Pay's resends of it
		if code, out := refundNotify(t, h, h.Payments, genuine); code != http.StatusNoContent {
			t.Fatalf("genuine notification %d: %d %v", i, code, out)
		}
		order := h.Lookup(t, id)
		if order.Status != inventory.StatusRefunded || order.Refunds[0].RefundedAt == nil || order.RefundedAmount() != amount {
			t.Fatalf("after notification %d: %+v", i, order)
		}
		if at := order.Refunds[0].RefundedAt.String(); refundedAt != "" && at != refundedAt {
			t.Errorf("refundedAt moved from %s to %s on a replay", refundedAt, at)
		} else {
			refundedAt = at
		}
	}
	abnormal := genuine
	abnormal.Status = wechatpay.RefundAbnormal
	if code, _ := refundNotify(t, h, h.Payments, abnormal); code != http.StatusNoContent || status(t, h, id) != inventory.StatusRefunded {
		t.Errorf("ABNORMAL after SUCCESS: %d, order %s", code, status(t, h, id))
	}
	h.Check(t)
}

func TestRefundNotify_ClosedOrAbnormalKeepsRefundingAndRaisesTheAlarm(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.PayServer.SetRefundOutcome(wechatpay.RefundAbnormal)
	h.RunInBackground(t)
	id, _ := paid(t, h, "buyer", cupsAndSaucer)
	if code, out := adminRefund(t, h, id, `{"restock":true,"reason":"returned"}`); code != http.StatusAccepted {
		t.Fatalf("admin refund: %d %v", code, out)
	}
	eventually(t, waitLimit, "refundError set", func() bool { return h.Lookup(t, id).Refunds[0].Error != "" })
	// The metric and the log line follow the write that sets refundError.
	eventually(t, waitLimit, "RefundAbnormal counted", func() bool { return len(h.Logged(t, "RefundAbnormal", 1.0)) > 0 })
	if order := h.Lookup(t, id); order.Status != inventory.StatusRefunding || order.Refunds[0].Error != "ABNORMAL" {
		t.Errorf("order %s with refunds %+v, want REFUNDING with ABNORMAL", order.Status, order.Refunds)
	}
	if alarms := h.Logged(t, "RefundAbnormal", 1.0); len(alarms) != 1 {
		t.Errorf("%d RefundAbnormal metrics, want 1", len(alarms))
	}
	if errs := h.Logged(t, "msg", "WeChat Pay did not refund: return the money by hand"); len(errs) != 1 || errs[0]["level"] != "ERROR" {
		t.Errorf("error log lines %v, want one", errs)
	}
	// The refund succeeds after all: its error goes, so nobody settles it by hand too.
	order := h.Lookup(t, id)
	if code, out := refundNotify(t, h, h.Payments, successNotice(h, id, order.TransactionID, amount, h.Clock.Now())); code != http.StatusNoContent {
		t.Fatalf("SUCCESS after ABNORMAL: %d %v", code, out)
	}
	if order := h.Lookup(t, id); order.Status != inventory.StatusRefunded || order.Refunds[0].Error != "" {
		t.Errorf("after SUCCESS: order %s with refunds %+v, want REFUNDED without an error", order.Status, order.Refunds)
	}
	h.Check(t)
}

// The money owed back with no person involved: a payment that reached a released
// order after its units were sold (REFUND_PENDING), and a second payment of a paid
// order, refunded by its own transaction, never the first.
func TestAutomaticRefunds_LatePaymentWithoutStockAndSecondPayment(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	h.RunInBackground(t)
	twice, first := paid(t, h, "twice", cupsAndSaucer)
	if d, err := h.PayServer.Pay(context.Background(), twice, paytest.PayOptions{Again: true}); err != nil || d.StatusCode != http.StatusNoContent {
		t.Fatalf("second payment: %+v %v", d, err)
	}
	// The second payment's refund settles before the late payment's lost notification
	// and failing API below, which would otherwise also hit it on a slow machine.
	var extra inventory.Refund
	eventually(t, waitLimit, "second payment REFUNDED", func() bool {
		for _, it := range h.Scan(t, h.Tables.Orders) {
			if it["kind"] == "EXTRA_PAYMENT" && it["orderId"] == twice && it["status"] == "REFUNDED" {
				extra = inventory.Refund{OutRefundNo: it["outRefundNo"].(string), TransactionID: it["transactionId"].(string)}
				return true
			}
		}
		return false
	})
	// late pays at WeChat Pay, but the notification is lost and WeChat Pay cannot be
	// asked when its window ends: its units are released and sold to others.
	late := h.Order(t, "late", `{"items":[{"skuId":"saucer","qty":1}]}`)
	if code, out := h.Call(t, http.MethodPost, "/orders/"+late+"/pay", "late", nil, ""); code != http.StatusOK {
		t.Fatalf("pay: %d %v", code, out)
	}
	h.PayServer.SetDropNotifications(true)
	if _, err := h.PayServer.Pay(context.Background(), late, paytest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	h.PayServer.SetDropNotifications(false)
	h.PayServer.SetFailAPI(true)
	h.Clock.Advance(2 * time.Minute)
	var sweep map[string]any
	h.RunScheduled(t, "closeOrder", &sweep)
	h.PayServer.SetFailAPI(false)
	for i := 0; status(t, h, late) == inventory.StatusCancelled && h.Available(t, "saucer") > 0; i++ {
		h.Order(t, "buyer-"+string(rune('a'+i%26))+string(rune('a'+i/26)), `{"items":[{"skuId":"saucer","qty":1}]}`)
	}
	if d, err := h.PayServer.Resend(context.Background(), late); err != nil || d.StatusCode != http.StatusNoContent {
		t.Fatalf("resent payment notification: %+v %v", d, err)
	}
	eventually(t, waitLimit, "late order REFUNDED", func() bool { return status(t, h, late) == inventory.StatusRefunded })
	if o := h.Lookup(t, twice); o.Status != inventory.StatusPaid || o.TransactionID != first {
		t.Errorf("the twice-paid order: %s by %s, want PAID by %s", o.Status, o.TransactionID, first)
	}
	if got, _ := h.PayServer.Refunded(first); got != 0 {
		t.Errorf("%d fen of the first payment refunded, want 0", got)
	}
	if got, _ := h.PayServer.Refunded(extra.TransactionID); got != amount || extra.OutRefundNo != inventory.ExtraOutRefundNo(twice, extra.TransactionID) {
		t.Errorf("second payment %+v: %d fen refunded, want %d", extra, got, amount)
	}
	lateTx := h.Lookup(t, late).TransactionID
	if got, _ := h.PayServer.Refunded(lateTx); got != 12900 || h.Ops(t, late)[string(inventory.OpReturn)] != 0 {
		t.Errorf("late payment: %d fen refunded, ledger %v; want 12900 and no RETURN", got, h.Ops(t, late))
	}
	h.Check(t)
}

// purge takes every message off the refund queue, as if they had been lost.
func purge(t *testing.T, h *stacktest.Stack) int {
	t.Helper()
	client := local.NewSQSClient(h.SQS.URL())
	n := 0
	for {
		out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(h.Queues["RefundQueue"]), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return n
		}
		for _, m := range out.Messages {
			if _, err := client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(h.Queues["RefundQueue"]), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
}

// A lost refund message and a lost refund notification: the stuck pass asks WeChat
// Pay about refunds REFUNDING past the bound, requests the one it never received and
// records the one it finished.
func TestStuckPass_RequestsLostRefundsAndSettlesLostNotifications(t *testing.T) {
	h := stacktest.New(t, options("0", true))
	id, _ := paid(t, h, "buyer", cupsAndSaucer)
	if code, out := adminRefund(t, h, id, `{"restock":true,"reason":"returned"}`); code != http.StatusAccepted {
		t.Fatalf("admin refund: %d %v", code, out)
	}
	if n := purge(t, h); n != 1 {
		t.Fatalf("%d refund messages, want 1", n)
	}
	var res refunds.StuckResult
	h.RunScheduled(t, "refund", &res)
	if res != (refunds.StuckResult{DurationMs: res.DurationMs}) {
		t.Errorf("stuck pass inside the bound: %+v, want nothing found", res)
	}
	h.Clock.Advance(31 * time.Minute)
	h.RunScheduled(t, "refund", &res)
	if res.Found != 1 || res.Requeued != 1 || res.Stuck != 1 || res.Refunded != 0 {
		t.Errorf("stuck pass: %+v, want 1 found, requeued, still stuck", res)
	}
	if m := h.Logged(t, "RefundingStuck", 1.0); len(m) != 1 {
		t.Errorf("RefundingStuck metrics %v, want one of 1", m)
	}
	h.PayServer.SetDropNotifications(true)
	h.RunInBackground(t)
	eventually(t, waitLimit, "refund SUCCESS at WeChat Pay", func() bool {
		rec, ok := h.PayServer.Refund(inventory.OutRefundNo(id, 1))
		return ok && rec.Status == wechatpay.RefundSuccess
	})
	if got := status(t, h, id); got != inventory.StatusRefunding {
		t.Fatalf("order %s with its notification dropped, want REFUNDING", got)
	}
	h.RunScheduled(t, "refund", &res)
	if res.Found != 1 || res.Refunded != 1 || res.Stuck != 0 || status(t, h, id) != inventory.StatusRefunded {
		t.Errorf("stuck pass: %+v, order %s; want it REFUNDED", res, status(t, h, id))
	}
	h.Check(t)
}

// refundMessages is an SQS batch of n copies of the refund message for outRefundNo.
func refundMessages(outRefundNo string, n int) events.SQSEvent {
	var ev events.SQSEvent
	for i := range n {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: fmt.Sprint("m-", i), Body: `{"outRefundNo":"` + outRefundNo + `"}`, EventSource: "aws:sqs",
			EventSourceARN: "arn:aws:sqs:" + local.Region + ":" + local.AccountID + ":RefundQueue",
		})
	}
	return ev
}

// The refund notification racing the refund API's answer, and duplicate messages
// before and after it: WeChat Pay refunds once, the order turns REFUNDED once.
func TestRefund_NotificationBeforeTheAnswerAndDuplicateMessages(t *testing.T) {
	h := stacktest.New(t, options("0", false))
	id, tx := paid(t, h, "buyer", cupsAndSaucer)
	h.PayServer.SetRefundOutcome(wechatpay.RefundProcessing) // hold it: the answer is PROCESSING
	if code, out := adminRefund(t, h, id, `{"restock":true,"reason":"returned"}`); code != http.StatusAccepted {
		t.Fatalf("admin refund: %d %v", code, out)
	}
	no := inventory.OutRefundNo(id, 1)
	var resp events.SQSEventResponse
	h.Invoke(t, "RefundFunction", refundMessages(no, 10), &resp)
	if len(resp.BatchItemFailures) != 0 || status(t, h, id) != inventory.StatusRefunding {
		t.Fatalf("duplicates while WeChat Pay holds the refund: %v, order %s", resp.BatchItemFailures, status(t, h, id))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if d, err := h.PayServer.SettleRefund(context.Background(), no, wechatpay.RefundSuccess); err != nil || d.StatusCode != http.StatusNoContent {
			t.Errorf("notification: %+v %v", d, err)
		}
	})
	wg.Go(func() {
		var resp events.SQSEventResponse
		h.Invoke(t, "RefundFunction", refundMessages(no, 5), &resp)
		if len(resp.BatchItemFailures) != 0 {
			t.Errorf("duplicates racing the notification: %v", resp.BatchItemFailures)
		}
	})
	wg.Wait()
	order := h.Lookup(t, id)
	if order.Status != inventory.StatusRefunded || order.RefundedAmount() != amount {
		t.Fatalf("order %+v, want REFUNDED", order)
	}
	h.Invoke(t, "RefundFunction", refundMessages(no, 3), &resp) // late duplicates: dropped
	if d, err := h.PayServer.ResendRefund(context.Background(), no); err != nil || d.StatusCode != http.StatusNoContent {
		t.Errorf("resent notification: %+v %v", d, err)
	}
	if again := h.Lookup(t, id); !again.Refunds[0].RefundedAt.Equal(*order.Refunds[0].RefundedAt) {
		t.Errorf("refundedAt moved from %v to %v", order.Refunds[0].RefundedAt, again.Refunds[0].RefundedAt)
	}
	if got, _ := h.PayServer.Refunded(tx); got != amount {
		t.Errorf("%d fen refunded, want %d once", got, amount)
	}
	if ops := h.Ops(t, id); ops[string(inventory.OpReturn)] != 2 {
		t.Errorf("ledger %v, want one RETURN per line", ops)
	}
	h.Check(t)
}
