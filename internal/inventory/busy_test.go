package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/inventory"
)

// A retryable failure is ErrBusy and its cause; when the cause is the caller's context
// ending, the text says the request was cancelled (or ran out of time), never "store
// busy", and errors.Is finds the context's error.
func TestBusy_SaysWhenTheRequestEndedRatherThanTheStoreWasBusy(t *testing.T) {
	throttled := errors.New("ThrottlingException: rate exceeded")
	for _, c := range []struct {
		cause  error
		is     error
		says   string
		denies string
	}{
		{throttled, throttled, "read SKU q-1: store busy (ThrottlingException", ""},
		{fmt.Errorf("operation error DynamoDB: GetItem, %w", context.Canceled), context.Canceled, "read SKU q-1: request cancelled", "busy"},
		{fmt.Errorf("operation error DynamoDB: GetItem, %w", context.DeadlineExceeded), context.DeadlineExceeded, "read SKU q-1: no answer before the deadline", "busy"},
	} {
		err := inventory.Busy("read SKU q-1", c.cause)
		if !errors.Is(err, inventory.ErrBusy) || !errors.Is(err, c.is) || !strings.HasPrefix(err.Error(), c.says) ||
			c.denies != "" && strings.Contains(err.Error(), c.denies) {
			t.Errorf("Busy(%v) = %q; want ErrBusy and %v, saying %q", c.cause, err, c.is, c.says)
		}
		if inventory.Ended(err) != (c.cause != throttled) {
			t.Errorf("Ended(%q) = %v", err, inventory.Ended(err))
		}
	}
}
