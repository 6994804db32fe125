package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Busy is the error of an attempt named what that changed nothing and may be retried,
// cause saying why: it wraps ErrBusy (answered 503 BUSY with Retry-After, "nothing was
// changed, please retry") and cause. When cause is the caller's context ending
// (Ended: the client hung up, or a deadline passed) the text says so instead of "store
// busy", since the store did nothing wrong, and errors.Is(err, context.Canceled) or
// context.DeadlineExceeded holds, so that a log can tell the two apart. The answer an
// API caller gets stays 503 BUSY either way.
func Busy(what string, cause error) error {
	if Ended(cause) {
		return &endedError{what: what, cause: cause}
	}
	return fmt.Errorf("%s: %w (%w)", what, ErrBusy, cause)
}

// Ended reports whether err comes from its context ending: cancelled (an HTTP client
// that hung up ends its request's context, https://pkg.go.dev/net/http#Request.Context)
// or past its deadline (an invocation's timeout, or a budget a caller set).
func Ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// FailureLevel is the log level of err, a failure of work done under ctx: warn when ctx
// has ended and err is that ending (Ended: the work was cut short because its client
// hung up or its time ran out, which is no fault of the store nor anything to repair),
// error otherwise.
func FailureLevel(ctx context.Context, err error) slog.Level {
	if ctx.Err() != nil && Ended(err) {
		return slog.LevelWarn
	}
	return slog.LevelError
}

// endedError is Busy's error for a cause that is a context ending.
type endedError struct {
	what  string
	cause error
}

func (e *endedError) Error() string {
	if errors.Is(e.cause, context.Canceled) {
		return fmt.Sprintf("%s: request cancelled before an answer (%v)", e.what, e.cause)
	}
	return fmt.Sprintf("%s: no answer before the deadline (%v)", e.what, e.cause)
}

// Unwrap makes the error both ErrBusy, for the API's answer, and its cause.
func (e *endedError) Unwrap() []error { return []error{ErrBusy, e.cause} }
