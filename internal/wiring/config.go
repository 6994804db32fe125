package wiring

import (
	"net/url"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/wxapi"
)

// Config is every setting a function reads from its environment (template.yaml, each
// function's Environment); each function's loader (Load) reads the variables the
// template gives that function, and leaves the rest zero.
type Config struct {
	Tables dynamo.Tables // SKUS_TABLE, ORDERS_TABLE, STOCK_LOG_TABLE (login and alertChat: ORDERS_TABLE only)
	// PaymentTimeout is PAYMENT_TIMEOUT_SECONDS: how long an order stays PENDING.
	PaymentTimeout time.Duration
	// Shaping is ORDERS_PER_USER_SKU_PER_MINUTE: order requests one user may send for
	// one SKU per minute window, 0 (off) to inventory.MaxShapingPerMinute.
	Shaping inventory.Shaping
	// CloseQueueURL is CLOSE_QUEUE_URL: the close-order queue.
	CloseQueueURL string
	// RefundQueueURL is REFUND_QUEUE_URL: the refund queue (the money step).
	RefundQueueURL string
	// SecretARN is WECHATPAY_SECRET_ARN: the AWS Secrets Manager secret with the
	// merchant configuration and key, or the mini-program's app id and AppSecret
	// (wechatpay.Secret); its main reads it.
	SecretARN string
	// NotifyBaseURL is NOTIFY_BASE_URL, optional: the base URL (https, http only for
	// 127.0.0.1, the local stack; no query, no trailing slash) under which WeChat Pay
	// reaches the notify route, e.g. a custom domain. Unset: each payment's notify_url
	// is built from the pay request itself (payments.StartOptions.NotifyBaseURL).
	NotifyBaseURL string
	// OpenIDClaim is OPENID_CLAIM: the JWT claim holding the buyer's openid.
	OpenIDClaim string
	// UserRefundWindow is USER_REFUND_WINDOW: how long after paidAt a buyer may refund
	// (seconds or a duration such as "24h"; 0 turns buyers' refunds off).
	UserRefundWindow time.Duration
	// RefundNotifyURL is REFUND_NOTIFY_URL: the refund-notify route's absolute https
	// URL, the refunds' notify_url (http only for 127.0.0.1, the local stack).
	RefundNotifyURL string
	// RefundStuckAfter is REFUND_STUCK_SECONDS: how long a refund may stay REFUNDING
	// before the stuck pass asks WeChat Pay about it (and reconcile reports it).
	RefundStuckAfter time.Duration
	// RefundBackoff is how long a failed refund message waits before its second
	// delivery (refunds.Options.Backoff); not an environment variable: zero takes
	// the default.
	RefundBackoff time.Duration
	// Reconcile is reconcile's configuration, from reconcile.Settings (REPAIR_ENABLED,
	// REPAIR_WINDOW, REPAIR_TIMEZONE, ALERT_MIN_UNITS, ALERT_PERCENT,
	// OVERDUE_GRACE_SECONDS, FULL_CHECK_DAYS, ALERTS_TOPIC_ARN, REFUND_STUCK_SECONDS).
	Reconcile reconcile.Config
	// KeyID is SIGNING_KEY_ID: the KMS key that signs login tokens, also the JWK kid.
	KeyID string
	// OtherKeyID is OTHER_SIGNING_KEY_ID (jwks; optional, "" for none): the second KMS key
	// the JWK set publishes during a key rotation, the next signing key before login
	// signs with it or the previous one until its tokens have expired (README,
	// "Upgrading a deployed stack to RS256 tokens / rotating the signing key").
	OtherKeyID string
	// Issuer is TOKEN_ISSUER: the login tokens' iss, the JWT authorizer's issuer URL
	// (optional for jwks: unset, the URL each discovery request reached).
	Issuer string
	// Audience is TOKEN_AUDIENCE: the login tokens' aud, the mini-program app id.
	Audience string
	// ChatSecretARN is CHAT_SECRET_ARN: the Secrets Manager secret holding the chat
	// webhooks, {"webhooks":[{"kind","url","secret"?}]} (teamchat.ParseSecret).
	ChatSecretARN string
	// QuietPeriod is QUIET_PERIOD_SECONDS: the same alert goes to a webhook at most
	// once per period.
	QuietPeriod time.Duration
	// Runbook is RUNBOOK_URL: where alerts point for RUNBOOK.md, "RUNBOOK.md" or the
	// https URL of the file.
	Runbook string
	// WeChatQueueURL is WECHAT_QUEUE_URL: the WeChat queue (shipping uploads, subscribe
	// messages).
	WeChatQueueURL string
	// Notices are the subscribe messages' settings: PAY_REMINDER_TEMPLATE_ID,
	// REFUND_DONE_TEMPLATE_ID ("off": that message off), PAY_REMINDER_LEAD_SECONDS,
	// ORDER_PAGE.
	Notices notices.Config
	// OrderDetailPath is ORDER_DETAIL_PATH: the page WeChat's order center opens for an
	// order, containing wxapi.DetailPathPlaceholder; set at the wechat function's start.
	OrderDetailPath string
	// WeChatBackoff is how long failed WeChat queue work waits before its second
	// delivery (wxqueue.NewWorker); not an environment variable: zero takes the default.
	WeChatBackoff time.Duration
}

// setting reads one or more of Config's variables from get into c; an error names the
// first one missing or invalid (an *envvar.Error, or reconcile.Settings' error).
type setting func(get envvar.Lookup, c *Config) error

// required reads a variable that must be set into *dst.
func required(name, want string, dst func(*Config) *string) setting {
	return func(get envvar.Lookup, c *Config) (err error) {
		*dst(c), err = envvar.Required(get, name, want)
		return err
	}
}

// The settings, one per variable (or group of variables read together).
var (
	tables = func(get envvar.Lookup, c *Config) (err error) {
		c.Tables, err = envvar.Tables(get)
		return err
	}
	ordersTable    = required(envvar.OrdersTable, "the orders table name", func(c *Config) *string { return &c.Tables.Orders })
	paymentTimeout = func(get envvar.Lookup, c *Config) (err error) {
		c.PaymentTimeout, err = envvar.Seconds(get, "PAYMENT_TIMEOUT_SECONDS")
		return err
	}
	shaping = func(get envvar.Lookup, c *Config) (err error) {
		c.Shaping.PerMinute, err = envvar.Count(get, "ORDERS_PER_USER_SKU_PER_MINUTE", inventory.MaxShapingPerMinute)
		return err
	}
	closeQueue  = required("CLOSE_QUEUE_URL", "the close-order queue URL", func(c *Config) *string { return &c.CloseQueueURL })
	refundQueue = required("REFUND_QUEUE_URL", "the refund queue URL", func(c *Config) *string { return &c.RefundQueueURL })
	paySecret   = required("WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret", func(c *Config) *string { return &c.SecretARN })
	notifyBase  = func(get envvar.Lookup, c *Config) (err error) {
		c.NotifyBaseURL, err = envvar.CallbackBase(get, "NOTIFY_BASE_URL", "the base https URL of the notify route, without a trailing slash")
		return err
	}
	openIDClaim  = required("OPENID_CLAIM", "the JWT claim holding the buyer's openid, e.g. sub", func(c *Config) *string { return &c.OpenIDClaim })
	refundWindow = func(get envvar.Lookup, c *Config) (err error) {
		c.UserRefundWindow, err = envvar.Duration(get, "USER_REFUND_WINDOW")
		return err
	}
	refundNotify = func(get envvar.Lookup, c *Config) (err error) {
		c.RefundNotifyURL, err = envvar.CallbackURL(get, "REFUND_NOTIFY_URL", "the refund-notify route's absolute https URL")
		return err
	}
	refundStuck = func(get envvar.Lookup, c *Config) (err error) {
		c.RefundStuckAfter, err = envvar.Seconds(get, "REFUND_STUCK_SECONDS")
		return err
	}
	keyID    = required("SIGNING_KEY_ID", "the KMS key id of the token signing key", func(c *Config) *string { return &c.KeyID })
	issuer   = required("TOKEN_ISSUER", "the token issuer URL", func(c *Config) *string { return &c.Issuer })
	audience = required("TOKEN_AUDIENCE", "the mini-program app id", func(c *Config) *string { return &c.Audience })
	// issuerIfSet is TOKEN_ISSUER for the issuer's documents, where it may be unset.
	issuerIfSet = func(get envvar.Lookup, c *Config) error {
		c.Issuer = get("TOKEN_ISSUER")
		return nil
	}
	// otherKeyID is OTHER_SIGNING_KEY_ID, unset or empty outside a key rotation; the same
	// key as SIGNING_KEY_ID is refused (it would be published twice).
	otherKeyID = func(get envvar.Lookup, c *Config) error {
		c.OtherKeyID = get("OTHER_SIGNING_KEY_ID")
		if c.OtherKeyID != "" && c.OtherKeyID == c.KeyID {
			return &envvar.Error{Name: "OTHER_SIGNING_KEY_ID", Value: c.OtherKeyID, Want: "a key other than SIGNING_KEY_ID's (the other key of a rotation), or empty"}
		}
		return nil
	}
	chatSecret = required("CHAT_SECRET_ARN", "the ARN of the chat webhooks secret", func(c *Config) *string { return &c.ChatSecretARN })
	quiet      = func(get envvar.Lookup, c *Config) (err error) {
		c.QuietPeriod, err = envvar.Seconds(get, "QUIET_PERIOD_SECONDS")
		return err
	}
)

// wechatQueue reads WECHAT_QUEUE_URL.
var wechatQueue = required("WECHAT_QUEUE_URL", "the WeChat queue URL", func(c *Config) *string { return &c.WeChatQueueURL })

// noticeSettings reads the subscribe messages' settings: each template id ("off" turns
// that message off), the reminder's lead (seconds) and the order page; all required.
func noticeSettings(get envvar.Lookup, c *Config) (err error) {
	const want = `a subscribe-message template id, or "off"`
	for _, v := range []struct {
		name string
		dst  *string
	}{{"PAY_REMINDER_TEMPLATE_ID", &c.Notices.PayReminderTemplate}, {"REFUND_DONE_TEMPLATE_ID", &c.Notices.RefundDoneTemplate}} {
		if *v.dst, err = envvar.Required(get, v.name, want); err != nil {
			return err
		}
		if len(*v.dst) > 128 || strings.ContainsAny(*v.dst, " \t\r\n") {
			return &envvar.Error{Name: v.name, Value: *v.dst, Want: want}
		}
		if *v.dst == "off" {
			*v.dst = ""
		}
	}
	if c.Notices.Lead, err = envvar.Seconds(get, "PAY_REMINDER_LEAD_SECONDS"); err != nil {
		return err
	}
	c.Notices.Page, err = envvar.Required(get, "ORDER_PAGE", "the mini-program page of an order, the order id appended, e.g. pages/order/index?orderId=")
	return err
}

// detailPath reads ORDER_DETAIL_PATH, which must contain wxapi.DetailPathPlaceholder.
func detailPath(get envvar.Lookup, c *Config) (err error) {
	const want = "a mini-program page path containing ${商品订单号}"
	if c.OrderDetailPath, err = envvar.Required(get, "ORDER_DETAIL_PATH", want); err == nil && !strings.Contains(c.OrderDetailPath, wxapi.DetailPathPlaceholder) {
		err = &envvar.Error{Name: "ORDER_DETAIL_PATH", Value: c.OrderDetailPath, Want: want}
	}
	return err
}

// runbook reads RUNBOOK_URL: "RUNBOOK.md" or an https URL without query or fragment.
func runbook(get envvar.Lookup, c *Config) (err error) {
	const want = `"RUNBOOK.md" or the https URL of RUNBOOK.md, without query or fragment`
	if c.Runbook, err = envvar.Required(get, "RUNBOOK_URL", want); err != nil {
		return err
	}
	if u, perr := url.Parse(c.Runbook); c.Runbook != "RUNBOOK.md" && (perr != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "") {
		return &envvar.Error{Name: "RUNBOOK_URL", Value: c.Runbook, Want: want}
	}
	return nil
}

// reconcileSettings reads reconcile's variables, every one of which must be set, then
// parses them with reconcile.Settings.Config. A missing one is an *envvar.Error naming
// it; an invalid one an error from Settings.Config naming it.
func reconcileSettings(get envvar.Lookup, c *Config) (err error) {
	var s reconcile.Settings
	for _, v := range []struct {
		name, want string
		dst        *string
	}{
		{"REPAIR_ENABLED", "true or false", &s.RepairEnabled},
		{"REPAIR_WINDOW", "HH:MM-HH:MM", &s.RepairWindow},
		{"REPAIR_TIMEZONE", "an IANA time zone name, e.g. Asia/Shanghai", &s.RepairTimezone},
		{"ALERT_MIN_UNITS", "a positive number of units", &s.AlertMinUnits},
		{"ALERT_PERCENT", "a positive percentage", &s.AlertPercent},
		{"OVERDUE_GRACE_SECONDS", "a positive number of seconds", &s.OverdueGraceSeconds},
		{"FULL_CHECK_DAYS", "a positive number of days", &s.FullCheckDays},
		{"ALERTS_TOPIC_ARN", "the ARN of the alerts SNS topic", &s.AlertsTopicARN},
		{"REFUND_STUCK_SECONDS", "a positive number of seconds", &s.RefundStuckSeconds},
	} {
		if *v.dst, err = envvar.Required(get, v.name, v.want); err != nil {
			return err
		}
	}
	c.Reconcile, err = s.Config()
	return err
}

// Load reads the variables template.yaml gives the function from get (the main passes
// os.Getenv). It returns an error naming the first one missing or invalid (and a
// Config not to be used).
func (f Function) Load(get envvar.Lookup) (Config, error) {
	var c Config
	for _, read := range f.spec().settings {
		if err := read(get, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}
