package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/httpapi"
	"github.com/stockguard/stockguard/internal/inventory"
)

// The payment and login errors map to their contract answers, and the text they wrap
// (WeChat's messages) never reaches the body.
func TestAnswer_PaymentAndLoginErrors(t *testing.T) {
	secret := "WeChat says: 商户号不存在 mch 1900000001"
	for _, tc := range []struct {
		err        error
		status     int
		code       string
		retryAfter bool
	}{
		{fmt.Errorf("pay: %w (%s)", inventory.ErrNotPayable, secret), 409, "ORDER_NOT_PAYABLE", false},
		{fmt.Errorf("pay: %w (%s)", inventory.ErrPaymentRefused, secret), 502, "PAYMENT_REFUSED", false},
		{fmt.Errorf("pay: %w (%s)", inventory.ErrBusy, secret), 503, "BUSY", true},
		// A request cut short by its context still answers 503 BUSY (its error says it
		// was cancelled, not that the store was busy; see inventory.Busy).
		{inventory.Busy("read SKU", fmt.Errorf("%s: %w", secret, context.Canceled)), 503, "BUSY", true},
		{inventory.Busy("prepay order", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded)), 503, "BUSY", true},
		{fmt.Errorf("login: %w (%s)", inventory.ErrRateLimited, secret), 429, "RATE_LIMITED", true},
		{fmt.Errorf("login: %w (%w)", httpapi.ErrUnauthorized, errors.New(secret)), 401, "UNAUTHORIZED", false},
	} {
		resp := httpapi.Answer(tc.err)
		if resp.StatusCode != tc.status || !strings.Contains(resp.Body, `"code":"`+tc.code+`"`) {
			t.Errorf("%v: %d %s, want %d %s", tc.err, resp.StatusCode, resp.Body, tc.status, tc.code)
		}
		if strings.Contains(resp.Body, "商户号") || strings.Contains(resp.Body, "1900000001") {
			t.Errorf("%v: body leaks the wrapped text: %s", tc.err, resp.Body)
		}
		if got := resp.Headers["Retry-After"] != ""; got != tc.retryAfter {
			t.Errorf("%v: Retry-After %q", tc.err, resp.Headers["Retry-After"])
		}
	}
}
