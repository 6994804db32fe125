package shipping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/wxapi"
)

// Route keys of the mini-program's message push (消息推送; no JWT: WeChat signs it).
const (
	RouteMessagesCheck = "GET /wechat/messages"  // the URL check when the push is configured
	RouteMessages      = "POST /wechat/messages" // the pushed events
)

// MaxMessageBytes bounds a pushed message's body; WeChat's events are well under 2 KiB.
const MaxMessageBytes = 64 << 10

// ReceiptRecorder is what the message push needs of the store (dynamo.OrderStore).
type ReceiptRecorder interface {
	ConfirmReceipt(ctx context.Context, id, transactionID string, r inventory.Receipt) (*inventory.Order, bool, error)
}

// Messages serves the mini-program's message push (docs/contract.md, "GET and POST
// /wechat/messages"; package wxapi, push.go, for WeChat's pages): a push's body over
// MaxMessageBytes is refused 413 first; every request is verified against the message
// Token (signature, timestamp) before its body is parsed and refused 401 otherwise,
// changing nothing; the URL check answers its echostr; a
// trade_manage_order_settlement push that reports the receipt confirmed records it on
// the order its merchant_trade_no (out_trade_no) names (inventory.Order.ConfirmReceipt),
// once; every other push, and a settlement naming no order of ours or another payment
// than the order's, is acknowledged ("success") and logged, never with personal data.
// A store failure answers 500 and WeChat retries ("消息推送": at most three times). Supported: 明文模式 and 兼容模式
// (the plain fields are read; Encrypt is not decrypted), JSON or XML; a 安全模式 push
// (Encrypt alone) is refused 400.
type Messages struct {
	token  func(context.Context) string
	orders ReceiptRecorder
	log    *slog.Logger
	now    func() time.Time
}

// NewMessages returns the message push's handler: token returns the message push's
// Token, current at each request ("" refuses every request), receipts recorded on
// orders, logging to log, now the clock of the timestamp check (nil: time.Now).
func NewMessages(token func(context.Context) string, orders ReceiptRecorder, log *slog.Logger, now func() time.Time) *Messages {
	if now == nil {
		now = time.Now
	}
	return &Messages{token: token, orders: orders, log: log, now: now}
}

// fail is a refusal of a push with status and a short message (the function's answer
// for its WeChat routes: {"code":"FAIL","message"}), logged at warn.
func fail(status int, message string, err error) *httpapi.Failure {
	return &httpapi.Failure{Status: status, Code: "FAIL", Message: message, Level: slog.LevelWarn, Err: err}
}

// verify checks req's query string against the token.
func (m *Messages) verify(ctx context.Context, req events.APIGatewayV2HTTPRequest) (wxapi.PushQuery, error) {
	q := req.QueryStringParameters
	pq := wxapi.PushQuery{Signature: q["signature"], Timestamp: q["timestamp"], Nonce: q["nonce"], Echostr: q["echostr"]}
	token := m.token(ctx)
	if token == "" {
		m.log.LogAttrs(ctx, slog.LevelError, "message push refused: the merchant secret has no messageToken")
	}
	if err := wxapi.VerifyPush(token, pq, m.now()); err != nil {
		return pq, fail(http.StatusUnauthorized, "signature verification failed", err)
	}
	return pq, nil
}

// text is a 200 answer of body as plain text.
func text(body string) events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusOK, Body: body,
		Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}}
}

// Check serves RouteMessagesCheck: WeChat's URL check ("消息推送": "若确认此次GET请求
// 来自微信服务器，请原样返回echostr参数内容"), 200 with echostr once verified.
func (m *Messages) Check(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	q, err := m.verify(ctx, req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if q.Echostr == "" {
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusBadRequest, "echostr missing", errors.New("URL check without echostr"))
	}
	return text(q.Echostr), nil
}

// Push serves RouteMessages: one pushed message, verified, then read (see Messages).
// A body over MaxMessageBytes is refused 413 before the signature is checked, as on
// WeChat Pay's notification routes (notify.Verified) and every route of the API: a
// refusal that costs nothing comes first, and WeChat's page sets no order of its own
// ("消息推送", https://developers.weixin.qq.com/miniprogram/dev/framework/server-ability/message-push.html:
// a push is checked by its signature; nothing is said of a body's size).
func (m *Messages) Push(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	body, err := httpapi.Body(req, MaxMessageBytes)
	switch {
	case errors.Is(err, httpapi.ErrBodyTooLarge):
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("body must not exceed %d bytes", MaxMessageBytes), err)
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusBadRequest, "malformed body (bad base64, or not UTF-8)", err)
	}
	if _, err := m.verify(ctx, req); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	p, err := wxapi.ParsePush(body)
	switch {
	case errors.Is(err, wxapi.ErrPushEncrypted):
		m.log.LogAttrs(ctx, slog.LevelError, "encrypted message push refused: set the mini-program's message push to 明文模式 or 兼容模式")
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusBadRequest, "encrypted messages (安全模式) are not supported", err)
	case err != nil:
		return events.APIGatewayV2HTTPResponse{}, fail(http.StatusBadRequest, "malformed message", err)
	}
	httpapi.Annotate(ctx, slog.String("msgType", clip(p.MsgType)), slog.String("event", clip(p.Event)))
	if !p.Confirmed() {
		// Other events, and the settlement push sent when shipping completed (no
		// confirmation yet): nothing to record.
		httpapi.Annotate(ctx, slog.String("result", "ignored"))
		return text(wxapi.PushSuccess), nil
	}
	result, err := m.confirm(ctx, p)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	httpapi.Annotate(ctx, slog.String("result", result))
	return text(wxapi.PushSuccess), nil
}

// confirmedAt is WeChat's confirm_receive_time (Unix seconds), or now when it names
// no time or one later than now and the timestamp check's window (a clock WeChat's
// signature vouches for cannot be ahead of ours by more).
func confirmedAt(unix int64, now time.Time) time.Time {
	at := time.Unix(unix, 0).UTC()
	if unix <= 0 || at.After(now.Add(wxapi.MaxPushSkew)) {
		return now.UTC()
	}
	return at
}

// confirm records the receipt p reports and says what came of it: "recorded",
// "replayed" (recorded before), or why nothing was: "unknown order", "other payment".
func (m *Messages) confirm(ctx context.Context, p *wxapi.Push) (string, error) {
	r := inventory.Receipt{ConfirmedAt: confirmedAt(p.ConfirmReceiveTime, m.now()), Method: ReceiptMethod(p.ConfirmReceiveMethod)}
	id := p.MerchantTradeNo
	_, recorded, err := m.orders.ConfirmReceipt(ctx, id, p.TransactionID, r)
	if inventory.ValidOrderID(id) {
		httpapi.Annotate(ctx, slog.String("outTradeNo", id))
	}
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		// A signed settlement of a payment that is not one of ours (another system
		// sharing the mini-program, or an order deleted): acknowledged, so that WeChat
		// stops pushing it; the order id only is logged.
		m.log.LogAttrs(ctx, slog.LevelWarn, "settlement for an unknown order", slog.Bool("validOrderId", inventory.ValidOrderID(id)))
		return "unknown order", nil
	case errors.Is(err, inventory.ErrOtherPayment):
		m.log.LogAttrs(ctx, slog.LevelWarn, "settlement names another payment than the order's (a second payment, or an order never paid): nothing recorded", slog.String("outTradeNo", id))
		return "other payment", nil
	case errors.Is(err, inventory.ErrNothingShipped):
		m.log.LogAttrs(ctx, slog.LevelWarn, "settlement of an order with no shipment recorded: nothing recorded", slog.String("outTradeNo", id))
		return "not shipped", nil
	case err != nil:
		return "", fmt.Errorf("record the receipt of %s: %w", id, err)
	case recorded:
		return "recorded", nil
	}
	return "replayed", nil
}

// ReceiptMethod is WeChat's confirm_receive_method in the contract's words:
// ConfirmManual the buyer, ConfirmAuto automatic, anything else ReceiptUnknown.
func ReceiptMethod(m wxapi.ConfirmMethod) inventory.ReceiptMethod {
	switch m {
	case wxapi.ConfirmManual:
		return inventory.ReceiptByBuyer
	case wxapi.ConfirmAuto:
		return inventory.ReceiptAuto
	}
	return inventory.ReceiptUnknown
}

// clip bounds a pushed name for the log line.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}
