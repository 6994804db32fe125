package closeorder

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/lambdaevent"
)

// RouteCancelOrder is the route key of the user's cancel (API Gateway RouteKey, see
// template.yaml).
const RouteCancelOrder = "POST /orders/{orderId}/cancel"

// Config is closeOrder's configuration, read from its environment by LoadConfig.
type Config struct {
	Tables        dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	CloseQueueURL string        // CLOSE_QUEUE_URL: where early messages are sent again
	// SecretARN is WECHATPAY_SECRET_ARN: the AWS Secrets Manager secret with the
	// merchant configuration and key (see wechatpay.ClientConfigFromSecret).
	SecretARN string
	// NotifyBaseURL is NOTIFY_BASE_URL, optional: the base URL (https, http only for
	// 127.0.0.1, the local stack; no query, no trailing slash) under which WeChat Pay
	// reaches the notify route, e.g. a custom domain. Unset: each payment's
	// notify_url is built from the pay request itself (see Options.NotifyBaseURL).
	NotifyBaseURL string
	// OpenIDClaim is OPENID_CLAIM: the JWT claim holding the buyer's openid.
	OpenIDClaim string
	// RefundQueueURL is REFUND_QUEUE_URL: where buyers' refunds are sent for the
	// money step.
	RefundQueueURL string
	// UserRefundWindow is USER_REFUND_WINDOW: how long after paidAt a buyer may refund
	// (seconds or a duration such as "24h"; 0, the default, turns buyers' refunds off).
	UserRefundWindow time.Duration
}

// LoadConfig reads closeOrder's variables (template.yaml, CloseOrderFunction). It
// returns an *envvar.Error naming the first one missing or invalid (and a Config not
// to be used).
func LoadConfig(get envvar.Lookup) (c Config, err error) {
	if c.Tables, err = envvar.Tables(get); err != nil {
		return c, err
	}
	if c.CloseQueueURL, err = envvar.Required(get, "CLOSE_QUEUE_URL", "the close-order queue URL"); err != nil {
		return c, err
	}
	if c.SecretARN, err = envvar.Required(get, "WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret"); err != nil {
		return c, err
	}
	if c.NotifyBaseURL, err = envvar.CallbackBase(get, "NOTIFY_BASE_URL", "the base https URL of the notify route, without a trailing slash"); err != nil {
		return c, err
	}
	if c.OpenIDClaim, err = envvar.Required(get, "OPENID_CLAIM", "the JWT claim holding the buyer's openid, e.g. sub"); err != nil {
		return c, err
	}
	if c.RefundQueueURL, err = envvar.Required(get, "REFUND_QUEUE_URL", "the refund queue URL"); err != nil {
		return c, err
	}
	c.UserRefundWindow, err = envvar.Duration(get, "USER_REFUND_WINDOW")
	return c, err
}

// Function is the closeOrder Lambda handler: it tells its three event shapes apart
// and hands each to the right code.
type Function struct {
	closer *Closer
	api    *httpapi.Handler
}

// NewFunction returns closeOrder's handler: closer takes SQS batches and scheduled
// sweeps, and POST /orders/{orderId}/cancel cancels through closer's store, logging
// one JSON line per request to log.
func NewFunction(closer *Closer, log *slog.Logger) *Function {
	return &Function{closer: closer, api: httpapi.New(FunctionName, log, map[string]httpapi.Route{
		RouteCancelOrder: closer.cancelOrder,
		RoutePayOrder:    closer.payOrder,
		RouteRefundOrder: closer.refundOrder,
	})}
}

// cancelOrder serves POST /orders/{orderId}/cancel (CONTRACT.md): the owner's PENDING
// order is settled with WeChat Pay when it has a WeChat Pay order (found paid: the
// payment is recorded and the answer is 409 ORDER_NOT_CANCELLABLE; WeChat Pay not
// reachable: 503 BUSY, nothing released), then cancelled and its stock released once;
// the order is answered as it stands.
func (c *Closer) cancelOrder(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	order, err := c.ownOrder(ctx, req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if order.Status == inventory.StatusPending {
		paid, err := c.settle(ctx, order)
		switch {
		case paid && err == nil:
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("cancel order %s: paid at WeChat Pay: %w", order.ID, inventory.ErrNotCancellable)
		case err != nil:
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("cancel order %s: %w (%w)", order.ID, inventory.ErrBusy, err)
		}
	}
	order, _, err = c.store.CancelOrder(ctx, order)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return httpapi.JSON(http.StatusOK, httpapi.Order(order)), nil
}

// Invoke handles one event: an SQS batch returns an events.SQSEventResponse; an API
// Gateway HTTP API request for the cancel route an events.APIGatewayV2HTTPResponse; an
// EventBridge scheduled event a SweepResult. Any other event or route is refused with
// a *lambdaevent.NotServedError, and nothing is changed.
func (f *Function) Invoke(ctx context.Context, event json.RawMessage) (any, error) {
	switch kind := lambdaevent.KindOf(event); kind {
	case lambdaevent.SQS:
		return lambdaevent.Serve(ctx, FunctionName, kind, event, f.closer.HandleSQS)
	case lambdaevent.HTTP:
		return lambdaevent.Serve(ctx, FunctionName, kind, event, f.api.Handle)
	case lambdaevent.Scheduled:
		return f.closer.Sweep(ctx)
	default:
		return nil, &lambdaevent.NotServedError{Function: FunctionName, Kind: kind}
	}
}
