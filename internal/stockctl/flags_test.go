package stockctl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// A flag that takes one value given twice is a usage error naming it, with nothing
// sent (the flag package kept the last: `create --sku a --sku b` created b), the
// global flags' too; the flags made to repeat (--line, --item, plan's --sku) still do,
// and a command's usage still names each flag's type.
func TestRun_RefusesASingleValueFlagGivenTwice(t *testing.T) {
	srv, paths := fakeAPI(t)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"create", "--sku", "a", "--sku", "b", "--name", "Cup", "--price", "100"}, "--sku"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price=100", "-price", "200"}, "--price"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "100", "--off-sale", "--off-sale"}, "--off-sale"},
		{[]string{"adjust", "cup-01", "--id", "a1", "--delta", "1", "--delta", "-1", "--reason", "r"}, "--delta"},
		{[]string{"refund", "0123456789abcdef", "--reason", "a", "--reason", "b"}, "--reason"},
		{[]string{"plan", "--orders", "1", "--orders", "2", "--page-views", "1"}, "--orders"},
		{[]string{"--region", "ap-east-1", "get", "cup-01", "--region", "cn-north-1"}, "--region"},
		{[]string{"-o", "json", "get", "cup-01", "-o=table"}, "-o"},
		{[]string{"--endpoint", srv.URL, "get", "cup-01"}, "--endpoint"},
	} {
		code, out, errOut := run(append([]string{"--endpoint", srv.URL}, c.args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.flag+" given twice") {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2 saying %s given twice", c.args, code, out, errOut, c.flag)
		}
	}
	if len(*paths) != 0 {
		t.Errorf("a flag given twice was sent: %q", *paths)
	}
	for _, args := range [][]string{
		{"refund", "0123456789abcdef", "--reason", "r", "--line", "a:1", "--line", "b:1"},
		{"ship", "0123456789abcdef", "--shipment-id", "p1", "--type", "virtual", "--item", "a:1", "--item", "b:2"},
		{"plan", "--sku", "a:1:1", "--sku", "b:1:1"},
	} {
		if code, _, errOut := run(append([]string{"--endpoint", srv.URL}, args...), nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK {
			t.Errorf("%q: exit %d, err %q; want the repeated flag taken", args, code, errOut)
		}
	}
	if code, out, _ := run([]string{"create", "-h"}, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK || !strings.Contains(out, "-price int") || !strings.Contains(out, "-sku string") {
		t.Errorf("create -h: exit %d, out %q; want the flags with their types", code, out)
	}
}

// create's --at is when its sale starts and --off-sale creates it off sale, with no
// start (on-sale sets one, or clears it): together they contradict each other, a
// usage error naming both, nothing sent. Each alone is taken.
func TestRun_CreateRefusesOffSaleWithAStart(t *testing.T) {
	srv, paths := fakeAPI(t)
	create := []string{"--endpoint", srv.URL, "create", "--sku", "mug-04", "--name", "Mug", "--price", "5900"}
	for _, at := range []string{"2026-11-11T10:00:00Z", ""} { // --at '' is --at given too
		code, out, errOut := run(append(create, "--off-sale", "--at", at), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "--off-sale or --at, not both") || len(*paths) != 0 {
			t.Errorf("--off-sale --at %q: exit %d, out %q, err %q, sent %q; want exit 2 naming both, nothing sent", at, code, out, errOut, *paths)
		}
	}
	for _, extra := range [][]string{{"--off-sale"}, {"--at", "2026-11-11T10:00:00Z"}, {"--off-sale=false", "--at", "2026-11-11T10:00:00Z"}} {
		if code, _, errOut := run(append(create, extra...), nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK {
			t.Errorf("%q: exit %d, err %q; want it taken", extra, code, errOut)
		}
	}
}

// A number is read as people write it, in decimal: Go's other forms (1_000, 0x10,
// 0o17, 0b1, 0x1p4) and a leading + are refused, exit 2 naming the flag, nothing sent,
// and a leading zero is no octal (the flag package's base 0 read --price 0100 as 64
// fen).
func TestRun_ReadsNumbersInDecimalOnly(t *testing.T) {
	srv, bodies := recordingAPI(t)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"plan", "--sku", "a:1_000:1"}, "-sku"},
		{[]string{"plan", "--sku", "a:1:0x1p4"}, "-sku"},
		{[]string{"plan", "--orders", "1_000", "--page-views", "1"}, "-orders"},
		{[]string{"plan", "--orders", "1", "--page-views", "0x1p4"}, "-page-views"},
		{[]string{"plan", "--orders", "1", "--page-views", "1", "--refunds", "0x1p4"}, "-refunds"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "1_000"}, "-price"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "100", "--stock", "0x10"}, "-stock"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "100", "--limit", "0o17"}, "-limit"},
		{[]string{"adjust", "cup-01", "--id", "a1", "--delta", "0b1", "--reason", "r"}, "-delta"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "+5"}, "-price"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "100", "--stock=+7"}, "-stock"},
		{[]string{"plan", "--orders", "+1", "--page-views", "1"}, "-orders"},
		{[]string{"plan", "--sku", "a:+1:1"}, "-sku"},
		{[]string{"refund", "0123456789abcdef", "--reason", "r", "--line", "a:+1"}, "-line"},
		{[]string{"ship", "0123456789abcdef", "--shipment-id", "p1", "--type", "virtual", "--item", "a:+1"}, "-item"},
	} {
		code, out, errOut := run(append([]string{"--endpoint", srv.URL}, c.args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.flag) {
			t.Errorf("%q: exit %d, out %.80q, err %q; want exit 2 naming %s", c.args, code, out, errOut, c.flag)
		}
	}
	if len(*bodies) != 0 {
		t.Errorf("a number not in decimal was sent: %q", *bodies)
	}
	code, _, errOut := run([]string{"--endpoint", srv.URL, "create", "--sku", "a", "--name", "Cup", "--price", "0100", "--stock=7"}, nil, new([]stockctl.ConfigOptions))
	if code != stockctl.ExitOK || len(*bodies) != 1 || !strings.Contains((*bodies)[0], `"price":100,"stock":7`) {
		t.Errorf("--price 0100 --stock=7: exit %d, err %q, sent %q; want price 100, stock 7", code, errOut, *bodies)
	}
}

// An integer past what its flag holds is said to be out of range, with the bound it
// passed, not "not a decimal number": exit 2, nothing sent.
func TestRun_SaysAnIntegerPastItsFlagsRangeIsOutOfRange(t *testing.T) {
	srv, bodies := recordingAPI(t)
	const huge = "123456789012345678901234"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", huge}, "-price: out of range: at most 9223372036854775807"},
		{[]string{"create", "--sku", "a", "--name", "Cup", "--price", "100", "--stock", huge}, "-stock: out of range: at most 9223372036854775807"},
		{[]string{"adjust", "cup-01", "--id", "a1", "--delta", "-" + huge, "--reason", "r"}, "-delta: out of range: at least -9223372036854775808"},
		{[]string{"refund", "o1", "--reason", "r", "--line", "a:99999999999999999999"}, "-line: \"a:99999999999999999999\": out of range: at most 9223372036854775807"},
		{[]string{"ship", "o1", "--shipment-id", "p1", "--type", "virtual", "--item", "a:b:" + huge}, "-item: \"a:b:" + huge + "\": out of range: at most 9223372036854775807"},
	} {
		code, out, errOut := run(append([]string{"--endpoint", srv.URL}, c.args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "not a decimal number") {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2 saying %q", c.args, code, out, errOut, c.want)
		}
	}
	if len(*bodies) != 0 {
		t.Errorf("a number out of range was sent: %q", *bodies)
	}
}

// A --price outside the API's rule (1 to 1,000,000,000 fen) is refused naming the rule,
// nothing sent: --price 0 used to be told it needs --price; one not given still is.
func TestRun_CreateNamesThePriceRule(t *testing.T) {
	srv, bodies := recordingAPI(t)
	create := []string{"--endpoint", srv.URL, "create", "--sku", "a", "--name", "Cup"}
	for _, price := range []string{"0", "-0", "-5", "1000000001"} {
		code, out, errOut := run(append(create, "--price", price), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "--price must be 1 to 1000000000 fen") || strings.Contains(errOut, "needs") {
			t.Errorf("--price %s: exit %d, out %q, err %q; want exit 2 naming the price rule", price, code, out, errOut)
		}
	}
	if code, _, errOut := run(create, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitUsage || !strings.Contains(errOut, "create needs --sku, --name and --price") {
		t.Errorf("no --price: exit %d, err %q; want exit 2 saying it needs --price", code, errOut)
	}
	if len(*bodies) != 0 {
		t.Errorf("a price out of its rule was sent: %q", *bodies)
	}
	if code, _, errOut := run(append(create, "--price", "1000000000"), nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK || len(*bodies) != 1 {
		t.Errorf("--price 1000000000: exit %d, err %q; want it sent", code, errOut)
	}
}

// An empty --at (a failed $(date …) substitution) is no start time: create and on-sale
// refuse it, exit 2 naming --at, nothing sent; it used to be left out of the body (or
// sent as null), putting the SKU on sale now.
func TestRun_RefusesAnEmptySaleStart(t *testing.T) {
	srv, bodies := recordingAPI(t)
	for _, args := range [][]string{
		{"create", "--sku", "a", "--name", "Cup", "--price", "1", "--at", ""},
		{"create", "--sku", "a", "--name", "Cup", "--price", "1", "--at="},
		{"create", "--sku", "a", "--name", "Cup", "--price", "1", "--at", " "},
		{"on-sale", "a", "--at", ""},
		{"on-sale", "a", "--at="},
	} {
		code, out, errOut := run(append([]string{"--endpoint", srv.URL}, args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "--at") {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2 naming --at", args, code, out, errOut)
		}
	}
	if len(*bodies) != 0 {
		t.Errorf("an empty --at was sent: %q", *bodies)
	}
	if code, _, errOut := run([]string{"--endpoint", srv.URL, "on-sale", "a"}, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK || len(*bodies) != 1 {
		t.Errorf("on-sale without --at: exit %d, err %q; want it sent", code, errOut)
	}
}

// An order id and --status are two ways to call orders (one order, or a list): both
// given is a usage error saying they cannot be combined, not that one is missing.
func TestRun_OrdersTakesAnIDOrAStatusNotBoth(t *testing.T) {
	srv, bodies := recordingAPI(t)
	code, out, errOut := run([]string{"--endpoint", srv.URL, "orders", "o1", "--status", "REFUNDING"}, nil, new([]stockctl.ConfigOptions))
	if code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "an order id or --status, not both") || len(*bodies) != 0 {
		t.Errorf("orders o1 --status REFUNDING: exit %d, out %q, err %q, sent %q; want exit 2 saying not both", code, out, errOut, *bodies)
	}
	if code, _, errOut := run([]string{"--endpoint", srv.URL, "orders"}, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitUsage || !strings.Contains(errOut, "orders needs an order id or --status") {
		t.Errorf("orders: exit %d, err %q; want exit 2 saying what it needs", code, errOut)
	}
}

// A number outside the API's range for its field (docs/contract.md, "Merchant API":
// shards 1-64, stock and limitPerUser 0 to inventory.MaxStock, fairWindowSeconds
// 0-300, riskThreshold 0-4) is refused before anything is sent, exit 2 naming the
// flag and its range; plan takes at most 10,000 --sku, as --skus.
func TestRun_RefusesNumbersOutsideTheAPIsRanges(t *testing.T) {
	srv, bodies := recordingAPI(t)
	create := []string{"create", "--sku", "a", "--name", "Cup", "--price", "1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(create, "--shards", "-1"), "--shards must be 1 to 64"},
		{append(create, "--shards", "0"), "--shards must be 1 to 64"},
		{append(create, "--shards", "99999"), "--shards must be 1 to 64"},
		{append(create, "--stock", "-1"), "--stock must be 0 to"},
		{append(create, "--limit", "-1"), "--limit must be 0 to"},
		{append(create, "--queue", "--fair-window", "-1"), "--fair-window must be 0 to 300"},
		{append(create, "--queue", "--fair-window", "301"), "--fair-window must be 0 to 300"},
		{append(create, "--risk-threshold", "5"), "--risk-threshold must be 0 to 4"},
		{[]string{"queue", "a", "--fair-window", "-1"}, "--fair-window must be 0 to 300"},
		{[]string{"queue", "a", "--risk-threshold", "-1"}, "--risk-threshold must be 0 to 4"},
	} {
		code, out, errOut := run(append([]string{"--endpoint", srv.URL}, c.args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2 with %q", c.args, code, out, errOut, c.want)
		}
	}
	if len(*bodies) != 0 {
		t.Errorf("numbers outside the API's ranges were sent: %q", *bodies)
	}
	args := []string{"plan"}
	for i := range 10001 {
		args = append(args, "--sku", fmt.Sprintf("s%d:1:1", i))
	}
	if code, out, errOut := run(args, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "10,000") {
		t.Errorf("plan with 10,001 --sku: exit %d, out %.100q, err %q; want exit 2 naming the cap", code, out, errOut)
	}
}
