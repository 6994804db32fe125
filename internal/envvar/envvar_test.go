package envvar

import (
	"errors"
	"testing"
	"time"
)

// checkReader reads each value of the variable V with read: an accepted value must give
// its want, a refused one an *Error naming V and the value.
func checkReader[T comparable](t *testing.T, read func(Lookup, string) (T, error), accepted map[string]T, refused []string) {
	t.Helper()
	for value, want := range accepted {
		if got, err := read(Map(map[string]string{"V": value}), "V"); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", value, got, err, want)
		}
	}
	for _, value := range refused {
		_, err := read(Map(map[string]string{"V": value}), "V")
		var e *Error
		if !errors.As(err, &e) || e.Name != "V" || e.Value != value {
			t.Errorf("%q: %v, want an *Error naming V", value, err)
		}
	}
}

func TestSeconds_AcceptsOnlyPositiveWholeSeconds(t *testing.T) {
	checkReader(t, Seconds, map[string]time.Duration{"1": time.Second, "900": 15 * time.Minute},
		[]string{"", "0", "-1", "1.5", "15m", " 9"})
}

func TestCount_AcceptsWholeNumbersUpToMax(t *testing.T) {
	upTo100 := func(get Lookup, name string) (int, error) { return Count(get, name, 100) }
	checkReader(t, upTo100, map[string]int{"0": 0, "7": 7, "100": 100}, []string{"", "-1", "101", "1.5", "ten"})
}

func TestDuration_AcceptsSecondsOrADurationNotNegative(t *testing.T) {
	checkReader(t, Duration, map[string]time.Duration{"0": 0, "3600": time.Hour, "24h": 24 * time.Hour, "90m": 90 * time.Minute},
		[]string{"", "-1", "-1h", "1.5", "a day", "1 h"})
}

func TestCallbackURL_AcceptsHTTPSOrLoopbackHTTPWithoutQuery(t *testing.T) {
	read := func(get Lookup, name string) (string, error) { return CallbackURL(get, name, "a notify URL") }
	checkReader(t, read, map[string]string{
		"https://api.example.com/payments/wechatpay/notify": "https://api.example.com/payments/wechatpay/notify",
		"http://127.0.0.1:3000/payments/wechatpay/notify":   "http://127.0.0.1:3000/payments/wechatpay/notify",
	}, []string{"", "ftp://example.com/notify", "http://example.com/notify", "https://example.com/notify?x=1", "/notify"})
}

// CallbackBase is optional (unset or empty: ""), and when set a CallbackURL without a
// fragment or a trailing slash, so that appending a route path gives one URL.
func TestCallbackBase_IsOptionalAndEndsWithoutSlash(t *testing.T) {
	read := func(get Lookup, name string) (string, error) { return CallbackBase(get, name, "a base URL") }
	checkReader(t, read, map[string]string{
		"":                             "",
		"https://pay.example.com":      "https://pay.example.com",
		"https://pay.example.com/shop": "https://pay.example.com/shop",
		"http://127.0.0.1:3000":        "http://127.0.0.1:3000",
	}, []string{"https://pay.example.com/", "https://pay.example.com/shop/", "https://pay.example.com#x", "https://pay.example.com?a=1",
		"http://pay.example.com", "pay.example.com", "/shop"})
}
