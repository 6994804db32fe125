package wiring

import (
	"time"

	"github.com/stockguard/stockguard/internal/envvar"
)

// A Setting reads one variable (or a group read together) from get into the
// configuration it was made for; an error names the first one missing or invalid (an
// *envvar.Error, or the error of the capability's own parser naming it).
type Setting func(get envvar.Lookup) error

// Read reads settings from get in order (a function's Load passes the main's
// os.Getenv through) and returns the first error.
func Read(get envvar.Lookup, settings ...Setting) error {
	for _, read := range settings {
		if err := read(get); err != nil {
			return err
		}
	}
	return nil
}

// Into is the setting that stores what read returns in *dst.
func Into[T any](dst *T, read func(envvar.Lookup) (T, error)) Setting {
	return func(get envvar.Lookup) (err error) {
		*dst, err = read(get)
		return err
	}
}

// Required is the variable name, which must be set; want says what it holds.
func Required(dst *string, name, want string) Setting {
	return func(get envvar.Lookup) (err error) {
		*dst, err = envvar.Required(get, name, want)
		return err
	}
}

// Optional is the variable name, "" when unset.
func Optional(dst *string, name string) Setting {
	return func(get envvar.Lookup) error {
		*dst = get(name)
		return nil
	}
}

// Seconds is the variable name, a positive whole number of seconds.
func Seconds(dst *time.Duration, name string) Setting {
	return Into(dst, func(get envvar.Lookup) (time.Duration, error) { return envvar.Seconds(get, name) })
}

// The variables more than one function reads, each with what it holds.

// CloseQueueURL is CLOSE_QUEUE_URL: the close-order queue.
func CloseQueueURL(dst *string) Setting {
	return Required(dst, "CLOSE_QUEUE_URL", "the close-order queue URL")
}

// RefundQueueURL is REFUND_QUEUE_URL: the refund queue (the money step).
func RefundQueueURL(dst *string) Setting {
	return Required(dst, "REFUND_QUEUE_URL", "the refund queue URL")
}

// WeChatQueueURL is WECHAT_QUEUE_URL: the WeChat queue (shipping uploads, subscribe
// messages).
func WeChatQueueURL(dst *string) Setting {
	return Required(dst, "WECHAT_QUEUE_URL", "the WeChat queue URL")
}

// PaySecret is WECHATPAY_SECRET_ARN: the AWS Secrets Manager secret with the merchant
// configuration and keys (wechatpay.Secret).
func PaySecret(dst *string) Setting {
	return Required(dst, "WECHATPAY_SECRET_ARN", "the ARN of the WeChat Pay merchant secret")
}

// AppSecret is WECHAT_APP_SECRET_ARN: the AWS Secrets Manager secret with the
// mini-program's app id and AppSecret alone (secret.App), which the functions that
// call WeChat's login and server API read instead of the merchant secret.
func AppSecret(dst *string) Setting {
	return Required(dst, "WECHAT_APP_SECRET_ARN", "the ARN of the mini-program's app secret")
}

// OrdersTable is ORDERS_TABLE alone, for the functions that use no other table.
func OrdersTable(dst *string) Setting {
	return Required(dst, envvar.OrdersTable, "the orders table name")
}

// KeyID is SIGNING_KEY_ID: the KMS key that signs login tokens, also the JWK kid.
func KeyID(dst *string) Setting {
	return Required(dst, "SIGNING_KEY_ID", "the KMS key id of the token signing key")
}
