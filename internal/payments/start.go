package payments

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
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// RoutePay is the route key of starting a payment (API Gateway RouteKey, see
// template.yaml). The closeOrder function serves it because it already holds the
// merchant API client (to query and close before releases): createOrder, on the hot
// path, never sees the merchant secret.
const RoutePay = "POST /orders/{orderId}/pay"

// NotifyPath is the path of the notify route (RouteNotify), the end of every
// notify_url.
const NotifyPath = "/payments/wechatpay/notify"

// errNoWeChatPay: a payment needs WeChat Pay, and no merchant client is configured.
var errNoWeChatPay = errors.New("no WeChat Pay merchant client configured")

// StartOptions tune Start. Zero values take the defaults.
type StartOptions struct {
	// NotifyBaseURL is the base URL of the notify route: a JSAPI order's notify_url is
	// NotifyBaseURL + NotifyPath. "" (the default): the base URL the buyer's pay request
	// reached (httpapi.BaseURL), so the API's own host, or the custom domain and
	// mapping the mini-program calls, without the template naming the API.
	NotifyBaseURL string
	// OpenIDClaim is the JWT claim holding the buyer's openid (the JSAPI payer);
	// default "sub" (stockguard's own login tokens).
	OpenIDClaim string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Start serves RoutePay (docs/contract.md, "POST /orders/{orderId}/pay").
type Start struct {
	store    Orders
	merchant Merchant
	log      *slog.Logger
	opts     StartOptions
}

// NewStart returns the pay route's handler over store, placing JSAPI orders with
// merchant (nil: the route answers 500) and logging to log.
func NewStart(store Orders, merchant Merchant, log *slog.Logger, opts StartOptions) *Start {
	if opts.OpenIDClaim == "" {
		opts.OpenIDClaim = "sub"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Start{store: store, merchant: merchant, log: log, opts: opts}
}

// Route serves one pay request: for the caller's PENDING order inside its payment
// window it reuses the stored prepay_id while it is valid
// (inventory.Order.ReusablePrepay) or places the JSAPI order ("JSAPI下单": out_trade_no
// = order id, amount in fen, payer.openid from the OpenIDClaim claim, notify_url,
// time_expire = expiresAt) and stores its prepay_id on the order (Orders.SetPrepay),
// then answers 200 with the signed wx.requestPayment parameters. A request context
// that gives no notify_url (see notifyURL) is answered 500 before anything is read or
// changed.
func (s *Start) Route(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	user, err := httpapi.UserID(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	notifyURL, err := s.notifyURL(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	openID, err := httpapi.Claim(req, s.opts.OpenIDClaim)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if s.merchant == nil {
		return events.APIGatewayV2HTTPResponse{}, errNoWeChatPay
	}
	order, err := s.store.Order(ctx, user, req.PathParameters["orderId"])
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	now := s.opts.Now()
	if err := order.CheckPayable(now); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	prepayID, ok := order.ReusablePrepay(now)
	if !ok {
		if prepayID, err = s.prepay(ctx, order, openID, notifyURL); err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
	}
	params, err := s.merchant.PaymentParams(ctx, prepayID, now)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, params), nil
}

// prepay places order's JSAPI order and stores its prepay_id. When the order left
// PENDING meanwhile (cancelled or released), the fresh WeChat Pay order is closed again
// (best effort: its time_expire bars payment anyway) and the answer is ErrNotPayable.
func (s *Start) prepay(ctx context.Context, order *inventory.Order, openID, notifyURL string) (string, error) {
	prepayID, err := s.merchant.PrepayJSAPI(ctx, wechatpay.JSAPIOrder{
		Description: "Order " + order.ID, OutTradeNo: order.ID, TimeExpire: order.ExpiresAt,
		NotifyURL: notifyURL, Total: order.Amount, Currency: order.Currency, PayerOpenID: openID,
	})
	if err != nil {
		return "", payError(order.ID, err)
	}
	err = s.store.SetPrepay(ctx, order, prepayID, s.opts.Now())
	if errors.Is(err, inventory.ErrNotPayable) {
		if cerr := s.merchant.CloseOrder(ctx, order.ID); cerr != nil {
			s.log.LogAttrs(ctx, slog.LevelWarn, "could not close the WeChat Pay order of an order that left PENDING",
				slog.String("orderId", order.ID), slog.String("error", cerr.Error()))
		}
	}
	return prepayID, err
}

// notifyURL is the notify_url of the JSAPI order a pay request starts:
// StartOptions.NotifyBaseURL + NotifyPath, or, without a base, the https URL the
// request itself reached (its domainName and any path before /orders/{orderId}/pay,
// see httpapi.BaseURL) + NotifyPath. The notify route is on the same API as the pay
// route (template.yaml), so that URL reaches it; deriving it here keeps the API's id
// out of the serving function's configuration, which would make the API and the
// function depend on each other (README, Deploy).
func (s *Start) notifyURL(req events.APIGatewayV2HTTPRequest) (string, error) {
	if s.opts.NotifyBaseURL != "" {
		return s.opts.NotifyBaseURL + NotifyPath, nil
	}
	base, err := httpapi.BaseURL(req, "/orders/"+req.PathParameters["orderId"]+"/pay")
	if err != nil {
		return "", fmt.Errorf("pay order: notify_url: %w", err)
	}
	return base + NotifyPath, nil
}

// payError turns a merchant API failure into the contract's answer: unreachable, 5xx
// and 429 → inventory.ErrBusy (503 BUSY, retry); the order paid or closed at WeChat Pay
// → inventory.ErrNotPayable (409); any other refusal, and answers that fail
// verification → inventory.ErrPaymentRefused (502). WeChat Pay's text stays in the
// wrapped error, which only the log shows.
func payError(orderID string, err error) error {
	var apiErr *wechatpay.APIError
	switch {
	case errors.Is(err, wechatpay.ErrUnavailable):
		return inventory.Busy("prepay order "+orderID, err)
	case errors.As(err, &apiErr) && (apiErr.Code == wechatpay.CodeOrderPaid || apiErr.Code == wechatpay.CodeOrderClosed):
		return fmt.Errorf("prepay order %s: %w (%w)", orderID, inventory.ErrNotPayable, err)
	default:
		return fmt.Errorf("prepay order %s: %w (%w)", orderID, inventory.ErrPaymentRefused, err)
	}
}
