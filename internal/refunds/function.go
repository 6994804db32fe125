package refunds

import (
	"context"
	"encoding/json"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
)

// Config is the refund function's configuration, read from its environment by
// LoadConfig.
type Config struct {
	Tables         dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE
	RefundQueueURL string        // REFUND_QUEUE_URL: where refunds never requested go again
	// SecretARN is WECHATPAY_SECRET_ARN: the AWS Secrets Manager secret with the
	// merchant configuration and key (see wechatpay.ClientConfigFromSecret).
	SecretARN string
	// NotifyURL is REFUND_NOTIFY_URL: the refund-notify route's absolute https URL,
	// the refunds' notify_url (http only for 127.0.0.1, the local stack).
	NotifyURL string
	// StuckAfter is REFUND_STUCK_SECONDS: how long a refund may stay REFUNDING before
	// the stuck pass asks WeChat Pay about it.
	StuckAfter time.Duration
}

// LoadConfig reads the refund function's variables (template.yaml, RefundFunction).
// It returns an *envvar.Error naming the first one missing or invalid (and a Config
// not to be used).
func LoadConfig(get envvar.Lookup) (c Config, err error) {
	if c.Tables, err = envvar.Tables(get); err != nil {
		return c, err
	}
	if c.RefundQueueURL, err = envvar.Required(get, "REFUND_QUEUE_URL", "the refund queue URL"); err != nil {
		return c, err
	}
	if c.SecretARN, err = envvar.Required(get, "WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret"); err != nil {
		return c, err
	}
	if c.NotifyURL, err = envvar.CallbackURL(get, "REFUND_NOTIFY_URL", "the refund-notify route's absolute https URL"); err != nil {
		return c, err
	}
	c.StuckAfter, err = envvar.Seconds(get, "REFUND_STUCK_SECONDS")
	return c, err
}

// Invoke is the refund function's Lambda handler: an SQS batch of refund messages
// returns an events.SQSEventResponse (HandleSQS); an EventBridge scheduled event runs
// the stuck pass and returns its StuckResult. Any other event is refused with a
// *lambdaevent.NotServedError, and nothing is changed.
func (r *Refunder) Invoke(ctx context.Context, event json.RawMessage) (any, error) {
	switch kind := lambdaevent.KindOf(event); kind {
	case lambdaevent.SQS:
		return lambdaevent.Serve(ctx, FunctionName, kind, event, r.HandleSQS)
	case lambdaevent.Scheduled:
		return r.Stuck(ctx)
	default:
		return nil, &lambdaevent.NotServedError{Function: FunctionName, Kind: kind}
	}
}
