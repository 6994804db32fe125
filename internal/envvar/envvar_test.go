package envvar

import (
	"errors"
	"testing"
	"time"
)

func TestSeconds_AcceptsOnlyPositiveWholeSeconds(t *testing.T) {
	for value, want := range map[string]time.Duration{"1": time.Second, "900": 15 * time.Minute} {
		if got, err := Seconds(Map(map[string]string{"T": value}), "T"); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", value, got, err, want)
		}
	}
	for _, value := range []string{"", "0", "-1", "1.5", "15m", " 9"} {
		_, err := Seconds(Map(map[string]string{"T": value}), "T")
		var e *Error
		if !errors.As(err, &e) || e.Name != "T" || e.Value != value {
			t.Errorf("%q: %v, want an *Error naming T", value, err)
		}
	}
}

func TestTables_NamesTheFirstMissingTable(t *testing.T) {
	all := map[string]string{SKUsTable: "s", OrdersTable: "o", StockLogTable: "l"}
	if got, err := Tables(Map(all)); err != nil || got.SKUs != "s" || got.Orders != "o" || got.StockLog != "l" {
		t.Errorf("%+v %v", got, err)
	}
	for name := range all {
		vars := map[string]string{SKUsTable: "s", OrdersTable: "o", StockLogTable: "l"}
		vars[name] = ""
		var e *Error
		if _, err := Tables(Map(vars)); !errors.As(err, &e) || e.Name != name {
			t.Errorf("%s empty: %v", name, err)
		}
	}
}

func TestCount_AcceptsWholeNumbersUpToMax(t *testing.T) {
	for value, want := range map[string]int{"0": 0, "7": 7, "100": 100} {
		if got, err := Count(Map(map[string]string{"C": value}), "C", 100); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", value, got, err, want)
		}
	}
	for _, value := range []string{"", "-1", "101", "1.5", "ten"} {
		_, err := Count(Map(map[string]string{"C": value}), "C", 100)
		var e *Error
		if !errors.As(err, &e) || e.Name != "C" || e.Value != value {
			t.Errorf("%q: %v, want an *Error naming C", value, err)
		}
	}
}

func TestDuration_AcceptsSecondsOrADurationNotNegative(t *testing.T) {
	for value, want := range map[string]time.Duration{"0": 0, "3600": time.Hour, "24h": 24 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := Duration(Map(map[string]string{"W": value}), "W"); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", value, got, err, want)
		}
	}
	for _, value := range []string{"", "-1", "-1h", "1.5", "a day", "1 h"} {
		_, err := Duration(Map(map[string]string{"W": value}), "W")
		var e *Error
		if !errors.As(err, &e) || e.Name != "W" || e.Value != value {
			t.Errorf("%q: %v, want an *Error naming W", value, err)
		}
	}
}
