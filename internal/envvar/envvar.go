// Package envvar parses and validates the environment variables template.yaml sets
// for the functions, once, at start. It never reads the environment itself: a
// function's main passes os.Getenv, and the local stack and tests pass the template's
// variables as a Lookup, so every setting is checked by the same code wherever it
// comes from. Every error is an *Error naming the variable.
package envvar

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Lookup returns the value of the variable name, "" when it is not set: os.Getenv,
// or Map's lookup.
type Lookup func(name string) string

// Map is a Lookup over vars.
func Map(vars map[string]string) Lookup {
	return func(name string) string { return vars[name] }
}

// Variables every function reads: the three table names (template.yaml, !Ref of each
// AWS::DynamoDB::Table).
const (
	SKUsTable     = "SKUS_TABLE"
	OrdersTable   = "ORDERS_TABLE"
	StockLogTable = "STOCK_LOG_TABLE"
)

// Error is a missing or invalid variable: its name, its value as found, and what it
// should hold.
type Error struct {
	Name  string // e.g. PAYMENT_TIMEOUT_SECONDS
	Value string // as found; "" when missing
	Want  string // e.g. "a positive whole number of seconds"
}

// Error names the variable, the value found and what was wanted.
func (e *Error) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("environment variable %s is missing or empty: want %s", e.Name, e.Want)
	}
	return fmt.Sprintf("environment variable %s=%q: want %s", e.Name, e.Value, e.Want)
}

// Required returns the value of name, or an *Error when it is empty. want says what
// the value is, for the message.
func Required(get Lookup, name, want string) (string, error) {
	v := get(name)
	if v == "" {
		return "", &Error{Name: name, Want: want}
	}
	return v, nil
}

// Seconds reads name as a positive whole number of seconds.
func Seconds(get Lookup, name string) (time.Duration, error) {
	v := get(name)
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, &Error{Name: name, Value: v, Want: "a positive whole number of seconds"}
	}
	return time.Duration(n) * time.Second, nil
}

// Count reads name as a whole number from 0 to max.
func Count(get Lookup, name string, max int) (int, error) {
	v := get(name)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > max {
		return 0, &Error{Name: name, Value: v, Want: fmt.Sprintf("a whole number from 0 to %d", max)}
	}
	return n, nil
}

// Duration reads name as a span of time of at least 0: a whole number of seconds
// ("3600", "0") or a Go duration ("1h", "90m"). Empty is an *Error.
func Duration(get Lookup, name string) (time.Duration, error) {
	v := get(name)
	d, err := time.ParseDuration(v)
	if n, aerr := strconv.Atoi(v); aerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d < 0 {
		return 0, &Error{Name: name, Value: v, Want: `a whole number of seconds or a duration such as "24h", at least 0`}
	}
	return d, nil
}

// CallbackURL reads name as the absolute URL WeChat Pay calls back (a notify_url):
// https, or http only for 127.0.0.1 (the local stack), with a host and no query.
// want says what it is, for the message.
func CallbackURL(get Lookup, name, want string) (string, error) {
	v, err := Required(get, name, want)
	if err != nil {
		return "", err
	}
	if u, perr := url.Parse(v); perr != nil || u.Host == "" || u.RawQuery != "" ||
		(u.Scheme != "https" && !(u.Scheme == "http" && u.Hostname() == "127.0.0.1")) {
		return "", &Error{Name: name, Value: v, Want: want}
	}
	return v, nil
}

// CallbackBase reads name as an optional base URL that WeChat Pay's callbacks are
// built on (a route path is appended to it): "" when the variable is unset or empty;
// otherwise CallbackURL's rules, and neither a fragment nor a trailing slash. want says
// what it is, for the message.
func CallbackBase(get Lookup, name, want string) (string, error) {
	if get(name) == "" {
		return "", nil
	}
	v, err := CallbackURL(get, name, want)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(v, "/") || strings.Contains(v, "#") {
		return "", &Error{Name: name, Value: v, Want: want}
	}
	return v, nil
}

// TemplateID reads name, a WeChat subscribe-message template id (at most 128
// characters, no white space) or "off", which it returns as "": the message is off.
func TemplateID(get Lookup, name string) (string, error) {
	const want = `a subscribe-message template id, or "off"`
	v, err := Required(get, name, want)
	switch {
	case err != nil:
		return "", err
	case len(v) > 128 || strings.ContainsAny(v, " \t\r\n"):
		return "", &Error{Name: name, Value: v, Want: want}
	case v == "off":
		return "", nil
	}
	return v, nil
}
