package stockctl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// command is one stockctl command: how it is called, what it does (its route), an
// example, and its run. The global usage lists args; COMMAND -h prints all of it with
// the command's flags.
type command struct {
	name    string
	args    string // the arguments after the name, e.g. "SKU --shards N"
	about   string
	example string
	run     func(ctx context.Context, c *call, args []string) error
}

// commands are stockctl's commands, in the order the usage lists them.
var commands = []command{
	{"create", "--sku ID --name NAME --price FEN [--stock N] [--limit N] [--shards N] [--off-sale | --at TIME] [--queue] [--fair-window SECONDS] [--risk-threshold 0-4]",
		"Creates a SKU (POST /admin/skus): price in fen, initial on-hand units, units per buyer (0: no\n" +
			"limit), stock shards, on sale now or from --at (RFC 3339 UTC), or off sale (--off-sale,\n" +
			"not with --at: on-sale sets the start). --queue sells it through its waiting room (buyers\n" +
			"take a ticket and order once admitted); --fair-window (0-300 s, needs --queue) draws the\n" +
			"order of the arrivals in that many seconds after the sale starts;\n" +
			"--risk-threshold (1-4, 0: none) refuses buyers WeChat rates at or above it. The same\n" +
			"creation sent again answers 200 and changes nothing; different fields for an existing SKU\n" +
			"are 409 SKU_EXISTS.",
		`stockctl create --sku mug-04 --name "Enamel mug" --price 5900 --stock 20 --limit 2 --queue --fair-window 30`, create},
	{"adjust", "SKU --id ADJUSTMENT_ID --delta N --reason TEXT",
		"Restocks (--delta > 0) or writes off (--delta < 0) units of SKU (POST\n" +
			"/admin/skus/{skuId}/adjustments), recorded in its ledger with the reason and who did it.\n" +
			"--id is the idempotency key: the same adjustment again changes nothing; the same id with\n" +
			"another delta is 422 IDEMPOTENCY_KEY_REUSED. A write-off beyond the available units is\n" +
			"409 STOCK_OUT.",
		`stockctl adjust mug-04 --id restock-2026-11-10 --delta 30 --reason "delivery from the kiln"`, adjust},
	{"reshard", "SKU --shards N",
		"Spreads SKU's stock over N shards, 1-64 (PUT /admin/skus/{skuId}/shards), with MOVE ledger\n" +
			"entries; buyers keep buying meanwhile.",
		"stockctl reshard mug-04 --shards 4", reshard},
	{"on-sale", "SKU [--at TIME]",
		"Puts SKU on sale now, or from --at (RFC 3339 UTC) (PATCH /admin/skus/{skuId}); until then\n" +
			"orders are refused 409 SALE_NOT_STARTED.",
		"stockctl on-sale mug-04 --at 2026-11-11T10:00:00Z", onSale},
	{"off-sale", "SKU",
		"Takes SKU off sale (PATCH /admin/skus/{skuId}): new orders are refused 409 SKU_OFF_SALE.",
		"stockctl off-sale mug-04", offSale},
	{"queue", "SKU [--on|--off] [--fair-window SECONDS] [--risk-threshold 0-4]",
		"Changes SKU's waiting-room settings (PATCH /admin/skus/{skuId}), only those given: --on sells it\n" +
			"through its waiting room, --off directly (and clears the fair window unless given);\n" +
			"--fair-window (0-300 s, needs the queue) draws the order of the arrivals in that many\n" +
			"seconds after the sale starts; --risk-threshold (1-4, 0: none) refuses buyers WeChat rates\n" +
			"at or above it, with or without the queue. Orders see a change within 5 s. --off is\n" +
			"refused (409 SALE_IN_PROGRESS) while the SKU's queued sale is on: off-sale it first.",
		"stockctl queue mug-04 --on --fair-window 30 --risk-threshold 3", queueSettings},
	{"list", "[--after CURSOR]",
		"Lists the SKUs a page at a time (GET /admin/skus); the table ends with the cursor of the\n" +
			"next page, if any.",
		"stockctl list", list},
	{"get", "SKU",
		"Shows SKU (GET /admin/skus/{skuId}): status, price, limit, and available, reserved and\n" +
			"on-hand units, in total and per shard.",
		"stockctl get cup-01", get},
	{"ledger", "SKU [--after CURSOR]",
		"Shows SKU's stock ledger a page at a time (GET /admin/skus/{skuId}/ledger): every reservation,\n" +
			"commit, release, return, adjustment and move, with its units and who or what made it.",
		"stockctl ledger mug-04", ledger},
	{"orders", "ORDER_ID | --status PENDING_OVERDUE|REFUND_PENDING|REFUNDING [--after CURSOR]",
		"Shows one order with its owner and lines, its shipping and receipt (WAITING, or CONFIRMED\n" +
			"with when and how), refunds and after-sales (GET /admin/orders/{orderId}), or lists the orders\n" +
			"that need a look (GET /admin/orders?status=): PENDING past their payment time, paid after\n" +
			"release and waiting for their refund, or refunds under way.",
		"stockctl orders --status PENDING_OVERDUE", orders},
	{"refund", "ORDER_ID --reason TEXT [--line SKU:QTY ...] [--refund-id ID] [--no-restock]",
		"Refunds a PAID order, or the --line units of it (repeatable; without: all that is left),\n" +
			"or a REFUND_PENDING order whole (POST /admin/orders/{orderId}/refund): the units go back\n" +
			"in stock unless --no-restock (the goods are gone), then WeChat Pay returns the money.\n" +
			"--refund-id is the refund's idempotency key (without: derived from the lines): sending\n" +
			"it again refunds nothing twice; another request under it is refused.",
		`stockctl refund 01a22e5575f07d0ea5bc5c5688f0f062 --reason "one cup broken" --line cup-01:1 --refund-id rf-1`, refundOrder},
	{"refund-retry", "ORDER_ID OUT_REFUND_NO --reason TEXT",
		"Asks WeChat Pay again for a refund its refund API refused for good (the order shows its\n" +
			"error REFUSED …), once the cause is fixed (POST /admin/orders/{orderId}/refunds/{outRefundNo}/retry).",
		`stockctl refund-retry 01a22e5575f07d0ea5bc5c5688f0f062 01a22e5575f07d0ea5bc5c5688f0f062_R --reason "refund rights granted"`, resolveRefund("refund-retry", "retry")},
	{"refund-settled", "ORDER_ID OUT_REFUND_NO --reason TEXT",
		"Records a refund WeChat Pay refused, closed or marked abnormal as settled outside WeChat\n" +
			"Pay, the money returned by hand (POST /admin/orders/{orderId}/refunds/{outRefundNo}/settle).",
		`stockctl refund-settled 01a22e5575f07d0ea5bc5c5688f0f062 01a22e5575f07d0ea5bc5c5688f0f062_R --reason "paid back by bank transfer"`, resolveRefund("refund-settled", "settle")},
	{"aftersales", "approve|reject|received ORDER_ID AFTERSALE_ID [--reason TEXT]",
		"Decides a buyer's after-sale (POST /admin/orders/{orderId}/aftersales/{aftersaleId}/...):\n" +
			"approve (a refund is refunded at once, the goods staying with the buyer; a return-refund\n" +
			"waits for its goods), reject --reason (told to the buyer; also an approved return-refund\n" +
			"whose goods never came or whose units another refund took), or received: the goods of an\n" +
			"approved return-refund are back, in stock again, and its refund starts. Each step again\n" +
			"changes nothing; `stockctl orders ORDER_ID` lists the order's after-sales.",
		`stockctl aftersales received 01a22e5575f07d0ea5bc5c5688f0f062 as-1`, decideAftersale},
	{"ship", "ORDER_ID --shipment-id ID --type express|same-city|virtual|self-pickup [--carrier CODE --tracking NO] [--contact 189****1234] [--item SKU:QTY]...",
		"Ships a PAID order (POST /admin/orders/{orderId}/shipments) and uploads that to WeChat, which\n" +
			"holds the shop's money until it is: express needs --carrier (WeChat's express company code;\n" +
			"SF also a contact: --contact, a masked phone number, else the order address's phone masked)\n" +
			"and --tracking; --item (repeated) ships part of the order, in up to 15 express parcels;\n" +
			"without it, every unit not shipped yet (other types ship the whole order). --shipment-id is\n" +
			"the idempotency key: the same shipment again changes nothing; the id with another body is\n" +
			"422 IDEMPOTENCY_KEY_REUSED. An order not PAID is 409 ORDER_NOT_SHIPPABLE. `stockctl -o json\n" +
			"orders ORDER_ID` shows shipping.status: QUEUED, then UPLOADED.",
		`stockctl ship 01a22e5575f07d0ea5bc5c5688f0f062 --shipment-id parcel-1 --type express --carrier SF --tracking SF1234567890 --contact "189****1234"`, shipOrder},
	{"reconcile", "[--latest]",
		"Runs reconcile now (POST /admin/reconcile) and shows its report: whether the stock\n" +
			"counters, the ledger and the open orders agree, and every difference; --latest shows the\n" +
			"last report instead (GET /admin/reconcile/latest).",
		"stockctl reconcile", runReconcile},
	{"seed", "FILE",
		"Creates each SKU of a seed file, a JSON array of create bodies, through POST /admin/skus,\n" +
			"in order, after checking every entry's shape; it stops at the first refusal. Seeding again\n" +
			"is safe: an entry equal to its SKU's creation changes nothing.",
		"stockctl seed examples/seed.json", seed},
	{"plan", "(--orders N --page-views N [--skus N] | --sku ID:ORDERS:PAGEVIEWS ...) [--refusals N] [--pay-ratio R] [--refund-ratio R] [--refunds N] [--risk-checked-buyers N]",
		"Sizes a sale without calling the API: shards per SKU, what each item, index key, table,\n" +
			"route and quota carries at the peak (per second, all SKUs together, or each SKU's with\n" +
			"--sku), what binds first, what to deploy with and ask AWS for, the cost per million orders\n" +
			"with their refunds (--refund-ratio of them, 5 % unless given; no cost per order at\n" +
			"--orders 0) and per million refunds; with --risk-checked-buyers, the getUserRiskRank\n" +
			"calls the scalper check makes and how to check WeChat's daily quota covers them.\n" +
			"--sku (repeated) gives each SKU's own peaks instead of --skus, --orders and\n" +
			"--page-views, and is refused beside them; --refusals is then shared evenly among the\n" +
			"SKUs, and the other flags apply as they are. Its ids follow the API's SKU id rule.",
		"stockctl plan --orders 30000 --page-views 100000 --skus 10", func(_ context.Context, c *call, args []string) error {
			return planSale(c.out, c.json, args)
		}},
}

// lookup returns the command named name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// createBody is POST /admin/skus's body; unset fields take the API's defaults.
type createBody struct {
	SKU          string  `json:"skuId"`
	Name         string  `json:"name"`
	Price        int64   `json:"price"`
	Stock        *int    `json:"stock,omitempty"`
	LimitPerUser *int    `json:"limitPerUser,omitempty"`
	Shards       *int    `json:"shards,omitempty"`
	OnSale       *bool   `json:"onSale,omitempty"`
	SaleStartsAt *string `json:"saleStartsAt,omitempty"`
	queueBody
}

// queueBody is the waiting room's settings of both SKU bodies (docs/contract.md, "Merchant
// API"): queue, fairWindowSeconds (0-300) and riskThreshold (0-4); unset fields are not sent.
type queueBody struct {
	Queue             *bool `json:"queue,omitempty"`
	FairWindowSeconds *int  `json:"fairWindowSeconds,omitempty"`
	RiskThreshold     *int  `json:"riskThreshold,omitempty"`
}

// queueFlags defines --fair-window and --risk-threshold on fs; after parsing, set fills
// b with those given on the command line, so that a change sends only them. set's
// error: one outside the API's range (0 to inventory.MaxFairWindowSeconds, 0 to
// inventory.MaxRiskRank), a usage error naming it.
func queueFlags(fs *flag.FlagSet, b *queueBody) (set func() error) {
	window := fs.Int("fair-window", 0, "seconds after the sale starts whose arrivals are drawn, 0-300 (needs the queue)")
	risk := fs.Int("risk-threshold", 0, "refuse buyers WeChat rates at or above this, 1-4; 0 = no check")
	return func() error {
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "fair-window":
				b.FairWindowSeconds = window
			case "risk-threshold":
				b.RiskThreshold = risk
			}
		})
		switch {
		case *window < 0 || *window > inventory.MaxFairWindowSeconds:
			return usageError("%s: --fair-window must be 0 to %d seconds", fs.Name(), inventory.MaxFairWindowSeconds)
		case *risk < 0 || *risk > inventory.MaxRiskRank:
			return usageError("%s: --risk-threshold must be 0 to %d (0: no check)", fs.Name(), inventory.MaxRiskRank)
		}
		return nil
	}
}

// checkCreateCounts refuses create's --stock, --limit or --shards outside the API's
// range (NewSKU.Validate: 0 to inventory.MaxStock units, 1 to inventory.MaxShards
// shards): a usage error naming the flag.
func checkCreateCounts(stock, limit, shards int) error {
	for _, f := range []struct {
		name           string
		v, least, most int
	}{{"--stock", stock, 0, inventory.MaxStock}, {"--limit", limit, 0, inventory.MaxStock}, {"--shards", shards, 1, inventory.MaxShards}} {
		if f.v < f.least || f.v > f.most {
			return usageError("create: %s must be %d to %d, got %d", f.name, f.least, f.most, f.v)
		}
	}
	return nil
}

func create(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("create", flag.ContinueOnError)
	var b createBody
	fs.StringVar(&b.SKU, "sku", "", "SKU id")
	fs.StringVar(&b.Name, "name", "", "name shown to buyers")
	fs.Int64Var(&b.Price, "price", 0, "unit price in fen")
	stock, limit, shards := fs.Int("stock", 0, "initial units"), fs.Int("limit", 0, "units per user, 0 = none"), fs.Int("shards", 1, "stock shards")
	offSale, at := fs.Bool("off-sale", false, "create it off sale"), fs.String("at", "", "sale start, RFC 3339 UTC")
	queue := fs.Bool("queue", false, "sell it through its waiting room")
	setQueue := queueFlags(fs, &b.queueBody)
	if _, err := parse(fs, args, ""); err != nil {
		return err
	}
	if err := setQueue(); err != nil {
		return err
	}
	if *queue {
		b.Queue = queue
	} else if given(fs, "fair-window") { // the API's rule: a fair window draws the queue's arrivals
		return usageError("create: --fair-window needs --queue (it orders the waiting room's arrivals)")
	}
	switch {
	case b.SKU == "" || b.Name == "" || !given(fs, "price"):
		return usageError("create needs --sku, --name and --price")
	case b.Price < 1 || b.Price > inventory.MaxPrice: // the API's rule (NewSKU.Validate)
		return usageError("create: --price must be 1 to %d fen, got %d", int64(inventory.MaxPrice), b.Price)
	}
	if *offSale && given(fs, "at") { // on-sale sets the start (or clears it): one given here, even '', would never be used
		return usageError("create takes --off-sale or --at, not both: --at is when its sale starts, --off-sale creates it off sale (on-sale SKU --at TIME puts it on sale from TIME)")
	}
	err := inventory.CheckSKUID("--sku", b.SKU)
	if err != nil {
		return usageError("create: %v", err)
	}
	if b.SaleStartsAt, err = saleStart(fs, *at); err != nil {
		return err
	}
	if err := checkCreateCounts(*stock, *limit, *shards); err != nil {
		return err
	}
	b.Stock, b.LimitPerUser, b.Shards = stock, limit, shards
	if *offSale {
		b.OnSale = new(bool)
	}
	return c.send(ctx, "POST", "/admin/skus", b, about("skuId", b.SKU, printSKU))
}

func adjust(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("adjust", flag.ContinueOnError)
	id, delta, reason := fs.String("id", "", "adjustment id (the idempotency key)"), fs.Int("delta", 0, "units: > 0 restock, < 0 write-off"), fs.String("reason", "", "why")
	sku, err := parseSKU(fs, args)
	if err != nil {
		return err
	}
	if *id == "" || *delta == 0 || *reason == "" {
		return usageError("adjust needs --id, a non-zero --delta and --reason")
	}
	body := map[string]any{"adjustmentId": *id, "delta": *delta, "reason": *reason}
	return c.send(ctx, "POST", "/admin/skus/"+url.PathEscape(sku)+"/adjustments", body, answering(about("adjustmentId", *id, printAdjustment), otherAdjustment(sku, *delta)))
}

func reshard(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("reshard", flag.ContinueOnError)
	n := fs.Int("shards", 0, "shard count, 1-64")
	sku, err := parseSKU(fs, args)
	if err != nil {
		return err
	}
	if *n < 1 || *n > inventory.MaxShards {
		return usageError("reshard: --shards must be 1 to %d", inventory.MaxShards)
	}
	if err := c.send(ctx, "PUT", "/admin/skus/"+url.PathEscape(sku)+"/shards", map[string]int{"shards": *n}, about("skuId", sku, printReshard)); err != nil {
		return err
	}
	var r struct {
		Complete bool `json:"complete"`
	}
	if json.Unmarshal(c.answer, &r) == nil && !r.Complete {
		return fmt.Errorf("reshard %s: %w: shards past the target still hold units reserved by PENDING orders; run it again once they are paid or released", sku, errIncomplete)
	}
	return nil
}

func onSale(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("on-sale", flag.ContinueOnError)
	var at string
	fs.StringVar(&at, "at", "", "sale start, RFC 3339 UTC (default: now)")
	sku, err := parseSKU(fs, args)
	if err != nil {
		return err
	}
	start, err := saleStart(fs, at)
	if err != nil {
		return err
	}
	body := map[string]any{"onSale": true, "saleStartsAt": start} // nil: JSON null, on sale now
	return c.send(ctx, "PATCH", "/admin/skus/"+url.PathEscape(sku), body, about("skuId", sku, printSKU))
}

// saleStart is the sale start of fs's --at, at: nil when --at is not given (on sale
// now); given empty or blank (a failed $(date …) substitution), or not an RFC 3339
// time (now, a 13th month, a leading space), it is a usage error, never sent.
func saleStart(fs *flag.FlagSet, at string) (*string, error) {
	switch {
	case !given(fs, "at"):
		return nil, nil
	case strings.TrimSpace(at) == "":
		return nil, usageError("%s: --at is empty: give the sale's start (RFC 3339 UTC, e.g. 2026-11-11T10:00:00Z), or no --at for now", fs.Name())
	}
	if _, err := time.Parse(time.RFC3339, at); err != nil {
		return nil, usageError("%s: --at %q is not an RFC 3339 time: give the sale's start, e.g. 2026-11-11T10:00:00Z", fs.Name(), at)
	}
	return &at, nil
}

func offSale(ctx context.Context, c *call, args []string) error {
	sku, err := parseSKU(flag.NewFlagSet("off-sale", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	return c.send(ctx, "PATCH", "/admin/skus/"+url.PathEscape(sku), map[string]bool{"onSale": false}, about("skuId", sku, printSKU))
}

func queueSettings(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("queue", flag.ContinueOnError)
	var b queueBody
	on, off := fs.Bool("on", false, "sell it through its waiting room"), fs.Bool("off", false, "sell it directly")
	setQueue := queueFlags(fs, &b)
	sku, err := parseSKU(fs, args)
	if err != nil {
		return err
	}
	if err := setQueue(); err != nil {
		return err
	}
	switch {
	case *on && *off:
		return usageError("queue takes --on or --off, not both")
	case *off && b.FairWindowSeconds != nil: // the API's rule, as create's: a fair window draws the queue's arrivals
		return usageError("queue: --fair-window needs the queue (it orders the waiting room's arrivals), not --off")
	case *on || *off:
		b.Queue = on
	case b.FairWindowSeconds == nil && b.RiskThreshold == nil:
		return usageError("queue needs --on, --off, --fair-window or --risk-threshold")
	}
	return c.send(ctx, "PATCH", "/admin/skus/"+url.PathEscape(sku), b, about("skuId", sku, printSKU))
}

func list(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	after := fs.String("after", "", "cursor of the next page")
	if _, err := parse(fs, args, ""); err != nil {
		return err
	}
	path, err := paged("list", "/admin/skus", *after)
	if err != nil {
		return err
	}
	return c.send(ctx, "GET", path, nil, printSKUs)
}

func get(ctx context.Context, c *call, args []string) error {
	sku, err := parseSKU(flag.NewFlagSet("get", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	return c.send(ctx, "GET", "/admin/skus/"+url.PathEscape(sku), nil, about("skuId", sku, printSKU))
}

func ledger(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("ledger", flag.ContinueOnError)
	after := fs.String("after", "", "cursor of the next page")
	sku, err := parseSKU(fs, args)
	if err != nil {
		return err
	}
	path, err := paged("ledger", "/admin/skus/"+url.PathEscape(sku)+"/ledger", *after)
	if err != nil {
		return err
	}
	return c.send(ctx, "GET", path, nil, printLedger)
}

func orders(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("orders", flag.ContinueOnError)
	status, after := fs.String("status", "", "PENDING_OVERDUE, REFUND_PENDING or REFUNDING"), fs.String("after", "", "cursor")
	id := ""
	if len(args) > 0 && args[0] == "" {
		return usageError("orders: the order id is empty: give an order id, or --status")
	}
	if len(args) > 0 && args[0][0] != '-' {
		id = args[0]
	}
	if _, err := parse(fs, args, map[bool]string{true: "an order id", false: ""}[id != ""]); err != nil {
		return err
	}
	switch {
	case id != "" && given(fs, "after"): // one order has no pages
		return usageError("orders takes --after with --status only: it is the cursor of the next page of a list")
	case id != "" && *status == "":
		return c.send(ctx, "GET", "/admin/orders/"+url.PathEscape(id), nil, about("orderId", id, printOrder))
	case id == "" && !slices.Contains(orderStatuses, *status) && *status != "":
		return usageError("orders: --status must be %s, got %q", strings.Join(orderStatuses, ", "), *status)
	case id == "" && *status != "":
		path, err := paged("orders", "/admin/orders?status="+url.QueryEscape(*status), *after)
		if err != nil {
			return err
		}
		return c.send(ctx, "GET", path, nil, printOrders)
	case id != "":
		return usageError("orders takes an order id or --status, not both: the id shows that order, --status lists the orders in that state")
	}
	return usageError("orders needs an order id or --status")
}

// paged is path (its query, if any, begun) with the cursor after as its after
// parameter, left out when "" (the first page). A cursor holding anything but printable
// ASCII, which no page's table prints back (moreHint), is a usage error of the command
// name, nothing sent.
func paged(name, path, after string) (string, error) {
	switch {
	case strings.ContainsFunc(after, unprintableASCII):
		return "", usageError("%s: --after holds characters other than printable ASCII, as no cursor a page gives does: %q", name, after)
	case after == "":
		return path, nil
	case strings.Contains(path, "?"):
		return path + "&after=" + url.QueryEscape(after), nil
	}
	return path + "?after=" + url.QueryEscape(after), nil
}

// orderStatuses are the states GET /admin/orders?status= lists (docs/contract.md,
// "Merchant API").
var orderStatuses = []string{"PENDING_OVERDUE", "REFUND_PENDING", "REFUNDING"}

func runReconcile(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	latest := fs.Bool("latest", false, "show the last report instead of running now")
	if _, err := parse(fs, args, ""); err != nil {
		return err
	}
	method, path := "POST", "/admin/reconcile"
	if *latest {
		method, path = "GET", "/admin/reconcile/latest"
	}
	if err := c.send(ctx, method, path, nil, printReport); err != nil {
		return err
	}
	r, err := decode[report](c.answer)
	if err == nil && len(r.Differences)+len(r.RefundProblems) > 0 {
		return fmt.Errorf("reconcile: %w: %d differences, %d refund problems (RUNBOOK.md, ReconcileDifferencesAlarm)", errDifferences, len(r.Differences), len(r.RefundProblems))
	}
	return nil
}

// refundOrder refunds an order through POST /admin/orders/{orderId}/refund: its goods
// back in stock unless --no-restock, then the money through WeChat Pay.
func refundOrder(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("refund", flag.ContinueOnError)
	noRestock, reason := fs.Bool("no-restock", false, "keep the goods out of stock (they are gone)"), fs.String("reason", "", "why")
	refundID := fs.String("refund-id", "", "the refund's idempotency key")
	var lines []map[string]any
	fs.Var(skuQuantities(&lines), "line", "SKU:QTY to refund, repeatable (without: all that is left)")
	id, err := parse(fs, args, "an order id")
	if err != nil {
		return err
	}
	if *reason == "" {
		return usageError("refund needs --reason")
	}
	body := map[string]any{"restock": !*noRestock, "reason": *reason}
	if *refundID != "" {
		body["refundId"] = *refundID
	}
	if lines != nil {
		body["lines"] = lines
	}
	table := about("orderId", id, printOrder)
	if *refundID != "" {
		table = answering(table, withoutRefund("refundId", *refundID))
	}
	return c.send(ctx, "POST", "/admin/orders/"+url.PathEscape(id)+"/refund", body, table)
}

// skuQuantities is a repeated SKU:QTY flag (refund's --line, ship's --item), split at
// the last ':' (cutLast), each value appended to lines as {"skuId","qty"}. Errors: the
// SKU id breaks the API's rule, QTY is not a positive integer in decimal, or is past
// an int (out of range, with the bound).
func skuQuantities(lines *[]map[string]any) repeated {
	return func(v string) error {
		sku, qty, ok := cutLast(v)
		n, err := decimalInt(qty, strconv.IntSize)
		switch {
		case ok && sku != "" && err != nil && !errors.Is(err, errNotDecimal):
			return fmt.Errorf("%q: %w", v, err)
		case !ok || sku == "" || err != nil || n < 1:
			return fmt.Errorf("want SKU:QTY with QTY a positive integer, e.g. cup-01:2, got %q", v)
		}
		if err := inventory.CheckSKUID("its SKU id", sku); err != nil {
			return err
		}
		*lines = append(*lines, map[string]any{"skuId": sku, "qty": n})
		return nil
	}
}

// resolveRefund is the command name that records an operator's retry or settlement
// (what: "retry" or "settle") of one refund of an order.
func resolveRefund(name, what string) func(ctx context.Context, c *call, args []string) error {
	return func(ctx context.Context, c *call, args []string) error {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		reason := fs.String("reason", "", "why")
		if len(args) == 0 || strings.HasPrefix(args[0], "-") { // -h, or no order id
			if _, err := parse(fs, args, "an order id and an out_refund_no"); err != nil {
				return err
			}
		}
		id := args[0]
		no, err := parse(fs, args[1:], "an out_refund_no")
		if err != nil {
			return err
		}
		if *reason == "" {
			return usageError("%s needs --reason", fs.Name())
		}
		path := "/admin/orders/" + url.PathEscape(id) + "/refunds/" + url.PathEscape(no) + "/" + what
		return c.send(ctx, "POST", path, map[string]any{"reason": *reason}, answering(about("orderId", id, printOrder), withoutRefund("outRefundNo", no)))
	}
}

// parseSKU is parse for a command whose one positional argument is a SKU id, which must
// pass the rule the API applies to every skuId (inventory.CheckSKUID: 1-64 of
// [0-9A-Za-z_.:-], not "." or ".."): an id the API would refuse, or that a URL
// resolves away ("." and ".." name no path segment), is a usage error sent nowhere.
func parseSKU(fs *flag.FlagSet, args []string) (string, error) {
	sku, err := parse(fs, args, "a SKU id")
	if err != nil {
		return "", err
	}
	if err := inventory.CheckSKUID("the SKU id", sku); err != nil {
		return "", usageError("%s: %v", fs.Name(), err)
	}
	return sku, nil
}

// decideAftersale approves, rejects or receives one after-sale of an order.
func decideAftersale(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("aftersales", flag.ContinueOnError)
	reason := fs.String("reason", "", "why (reject: told to the buyer)")
	const want = "approve, reject or received, an order id and an after-sale id"
	if len(args) < 2 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[1], "-") { // -h, or too few
		if _, err := parse(fs, args, want); err != nil {
			return err
		}
		return usageError("aftersales needs %s", want)
	}
	step, id := args[0], args[1]
	if step != "approve" && step != "reject" && step != "received" {
		return usageError("aftersales: %q is not approve, reject or received", step)
	}
	as, err := parse(fs, args[2:], "an after-sale id")
	if err != nil {
		return err
	}
	var body any
	switch {
	case step == "reject" && *reason == "":
		return usageError("aftersales reject needs --reason")
	case step == "reject":
		body = map[string]any{"reason": *reason}
	case *reason != "":
		return usageError("aftersales %s takes no --reason", step)
	}
	path := "/admin/orders/" + url.PathEscape(id) + "/aftersales/" + url.PathEscape(as) + "/" + step
	return c.send(ctx, "POST", path, body, about("orderId", id, printOrder))
}

// shipOrder ships an order through POST /admin/orders/{orderId}/shipments.
func shipOrder(ctx context.Context, c *call, args []string) error {
	fs := flag.NewFlagSet("ship", flag.ContinueOnError)
	id, typ := fs.String("shipment-id", "", "the shipment's idempotency key"), fs.String("type", "", "express, same-city, virtual or self-pickup")
	carrier, tracking := fs.String("carrier", "", "WeChat's express company code, e.g. SF"), fs.String("tracking", "", "the tracking number")
	contact := fs.String("contact", "", "a masked phone number (SF), e.g. 189****1234")
	var items []map[string]any
	fs.Var(skuQuantities(&items), "item", "SKU:QTY, repeated: what the parcel holds (default: every unit not shipped yet)")
	order, err := parse(fs, args, "an order id")
	if err != nil {
		return err
	}
	if *id == "" || *typ == "" {
		return usageError("ship needs --shipment-id and --type")
	}
	switch inventory.Logistics(*typ) {
	case inventory.LogisticsExpress, inventory.LogisticsSameCity, inventory.LogisticsVirtual, inventory.LogisticsSelfPickup:
	default:
		return usageError("ship: --type must be express, same-city, virtual or self-pickup, got %q", *typ)
	}
	check := inventory.Shipment{ID: *id, Logistics: inventory.Logistics(*typ), Carrier: *carrier, TrackingNo: *tracking, Contact: *contact}
	if err := check.Check(); err != nil { // the API's own rule: a contact unmasked, express without a carrier…
		return usageError("ship: %v", err)
	}
	body := map[string]any{"shipmentId": *id, "type": *typ}
	for k, v := range map[string]string{"carrier": *carrier, "tracking": *tracking, "contact": *contact} {
		if v != "" {
			body[k] = v
		}
	}
	if len(items) > 0 {
		body["items"] = items
	}
	return c.send(ctx, "POST", "/admin/orders/"+url.PathEscape(order)+"/shipments", body, answering(about("orderId", order, printShipment), otherShipment(*id)))
}

// seed sends each entry of a seed file to POST /admin/skus, in order, stopping at the
// first refusal; entries created before by the same body are left as they are. Every
// entry's JSON shape is checked before any is sent.
func seed(ctx context.Context, c *call, args []string) error {
	file, err := parse(flag.NewFlagSet("seed", flag.ContinueOnError), args, "a seed file")
	if err != nil {
		return err
	}
	name := printable(file)
	data, err := readSeed(file)
	if err != nil {
		return fmt.Errorf("seed %s: %w", name, err)
	}
	entries, err := seedEntries(data)
	if err != nil {
		return fmt.Errorf("seed %s: %w", name, err)
	}
	for i, e := range entries {
		var b createBody
		json.Unmarshal(e, &b) // read before (seedEntries)
		if err := c.send(ctx, "POST", "/admin/skus", e, about("skuId", b.SKU, printSKULine)); err != nil {
			return fmt.Errorf("seed %s entry %d: %w", name, i+1, err) // entries count from 1, as people do
		}
	}
	return nil
}

const seedExample = `[{"skuId":"cup-01","name":"Cup","price":39900,"stock":100}]`

// seedEntries splits a seed file into its entries: it must be a JSON array of at least
// one object, whose create fields (createBody's) have JSON values of their types, each
// creating another SKU (skuId). The API checks the rest. Errors name entries counting
// from 1.
func seedEntries(data []byte) ([]json.RawMessage, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("not valid JSON (%v); the seed file must be a JSON array of SKUs like %s", err, seedExample)
		}
		return nil, fmt.Errorf("the seed file must be a JSON array of SKUs like %s", seedExample)
	}
	if len(entries) == 0 { // [] or null: a wrong or truncated file, likelier than a seed of nothing
		return nil, fmt.Errorf("it lists no SKUs; the seed file must be a JSON array of SKUs like %s", seedExample)
	}
	first := map[string]int{} // skuId → the index of the entry creating it
	for i, e := range entries {
		var b createBody
		var typeErr *json.UnmarshalTypeError
		switch err := json.Unmarshal(e, &b); {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return nil, fmt.Errorf("entry %d: %s; entries are SKUs like %s", i+1, wrongType(typeErr), seedExample)
		case err != nil || string(e) == "null":
			return nil, fmt.Errorf("entry %d is not a JSON object; entries are SKUs like %s", i+1, seedExample)
		}
		if err := entryFault(e); err != nil {
			return nil, fmt.Errorf("entry %d: %w; entries are SKUs like %s", i+1, err, seedExample)
		}
		if err := inventory.CheckSKUID("skuId", b.SKU); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		if j, twice := first[b.SKU]; twice {
			return nil, fmt.Errorf("entries %d and %d both create SKU %s: a seed file lists each SKU once", j+1, i+1, b.SKU)
		}
		first[b.SKU] = i
	}
	return entries, nil
}

// entryFault says what makes e, a seed entry that is a JSON object, no creation even
// though its fields' values have their types: a field given null (decoding leaves the
// field unset, a value the file did not mean), or a key an object in it names twice,
// letter case aside (decoding keeps the last: {"skuId":"a","skuId":"b"} creates b);
// nil when neither does.
func entryFault(e json.RawMessage) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(e, &fields); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if null(fields[k]) {
			return fmt.Errorf("%s is null: give its value, or leave the field out", printable(k))
		}
	}
	if key, err := twiceNamed(json.NewDecoder(bytes.NewReader(e))); key != "" || err != nil {
		return cmp.Or(err, fmt.Errorf("%q is given twice: each field once", printable(key)))
	}
	return nil
}

// twiceNamed reads one JSON value from dec and returns the first key an object in it
// names a second time, at any depth, letter case aside (encoding/json matches a field
// so); "" when none does.
func twiceNamed(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil || (tok != json.Delim('{') && tok != json.Delim('[')) {
		return "", err
	}
	seen := map[string]bool{}
	for dec.More() {
		if tok == json.Delim('{') {
			k, err := dec.Token()
			if err != nil {
				return "", err
			}
			key, _ := k.(string)
			if seen[strings.ToLower(key)] {
				return key, nil
			}
			seen[strings.ToLower(key)] = true
		}
		if key, err := twiceNamed(dec); key != "" || err != nil {
			return key, err
		}
	}
	_, err = dec.Token() // the closing '}' or ']'
	return "", err
}

// wrongType says which JSON field of a create body has a value of the wrong type and
// what it wants, by its JSON name: "riskThreshold must be an integer (got string)".
// (encoding/json names an embedded struct's field by its Go path, "queueBody.riskThreshold".)
func wrongType(e *json.UnmarshalTypeError) string {
	field := e.Field[strings.LastIndex(e.Field, ".")+1:]
	want := "a string"
	switch e.Type.Kind() {
	case reflect.Int, reflect.Int64:
		want = "an integer"
		if _, err := decimalInt(strings.TrimPrefix(e.Value, "number "), e.Type.Bits()); err != nil && !errors.Is(err, errNotDecimal) {
			return fmt.Sprintf("%s is %v", field, err) // "out of range: at most …"
		}
	case reflect.Bool:
		want = "true or false"
	}
	return fmt.Sprintf("%s must be %s (got %s)", field, want, e.Value)
}

// init adds completion, last: its script lists the commands, so it cannot be in their
// initialiser.
func init() {
	commands = append(commands, command{"completion", "bash|zsh|fish",
		"Prints the shell completion script of stockctl's commands and global flags for the shell.",
		"stockctl completion bash > /etc/bash_completion.d/stockctl   # or: source <(stockctl completion bash)", completion})
}

func completion(_ context.Context, c *call, args []string) error {
	shell, err := parse(flag.NewFlagSet("completion", flag.ContinueOnError), args, "a shell: bash, zsh or fish")
	if err != nil {
		return err
	}
	return writeCompletion(c.out, shell)
}
