package stockctl

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/stockctl/plan"
)

// skuFlags collects repeated --sku ID:ORDERS:PAGEVIEWS flags.
type skuFlags []plan.SKU

// Set adds the SKU of one --sku value.
func (s *skuFlags) Set(v string) error {
	// The last two ':' end the id: a SKU id may hold ':', a number cannot.
	rest, viewsText, ok1 := cutLast(v)
	id, ordersText, ok2 := cutLast(rest)
	if !ok1 || !ok2 || id == "" {
		return fmt.Errorf("%q is not ID:ORDERS:PAGEVIEWS", v)
	}
	if err := inventory.CheckSKUID("its SKU id", id); err != nil {
		return fmt.Errorf("%q: %w", v, err)
	}
	orders, err1 := decimalFloat(ordersText)
	views, err2 := decimalFloat(viewsText)
	if err1 != nil || err2 != nil || !peak(orders) || !peak(views) {
		return fmt.Errorf("%q: orders and page views must be numbers from 0 to %d, in decimal, %s", v, maxPeak, minPeakRule)
	}
	if orders == 0 && views == 0 { // as --orders 0 --page-views 0: nothing to size
		return fmt.Errorf("%q: at least one of its orders and page views must be above 0", v)
	}
	for _, sku := range *s {
		if sku.ID == id {
			return fmt.Errorf("%q: SKU %s given twice", v, sku.ID)
		}
	}
	*s = append(*s, plan.SKU{ID: id, Orders: orders, PageViews: views})
	return nil
}

// cutLast splits a SKU:N flag value at its last ':' (a SKU id may hold ':'; the
// number after it cannot): before and after it, and whether there was one.
func cutLast(v string) (before, after string, found bool) {
	i := strings.LastIndex(v, ":")
	if i < 0 {
		return v, "", false
	}
	return v[:i], v[i+1:], true
}

// maxPeak is the most orders or page views per second plan takes (all SKUs
// together): a thousand times API Gateway's default account quota, far past any sale
// it sizes; beyond it the advice's integers would overflow.
const maxPeak = 10_000_000

// minPeak is the least peak above 0 plan takes, a thousandth a second (3.6 an hour):
// below it the figures per order (page views per order and what they cost) would
// pass any float64, infinite, and say nothing of a sale anyway.
const minPeak = 0.001

// minPeakRule says minPeak in a usage error.
const minPeakRule = "one above 0 at least 0.001"

// peak reports whether v is a peak plan takes: 0, or a number from minPeak to maxPeak
// (NaN and infinities are not).
func peak(v float64) bool { return v == 0 || v >= minPeak && v <= maxPeak }

// maxSKUs is the most SKUs plan sizes, by --skus or by --sku.
const maxSKUs = 10_000

// maxRiskBuyers is the most buyers --risk-checked-buyers takes: a billion, more than
// use WeChat in a day.
const maxRiskBuyers = 1_000_000_000

// DefaultRefundRatio is plan's --refund-ratio when none is given: 5 % of orders
// refunded over their life (late payments after a sell-out, buyers' refunds within the
// window, after-sales), an assumption; a shop that knows its own rate gives it.
const DefaultRefundRatio = 0.05

// given reports whether any of the flags names was set on fs's command line.
func given(fs *flag.FlagSet, names ...string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || slices.Contains(names, f.Name) })
	return set
}

// planSale runs "plan": sizes a sale from the peaks given (internal/stockctl/plan)
// without calling the API, and prints the plan (or its JSON).
func planSale(out io.Writer, asJSON bool, args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	skus := fs.Int("skus", 1, "SKUs sharing --orders and --page-views evenly")
	orders := fs.Float64("orders", 0, "peak orders per second, all SKUs together")
	views := fs.Float64("page-views", 0, "peak page views (GET /skus/{skuId}) per second, all SKUs together")
	refusals := fs.Float64("refusals", 0, "peak POST /orders refused STOCK_OUT per second, all SKUs together (with demand above the stock: about the buyers arriving in the second after the sell-out); each reads its SKU's record and its key's order")
	payRatio := fs.Float64("pay-ratio", 0.7, "share of orders paid (the rest are released)")
	refunds := fs.Float64("refunds", 0, "peak refunds started per second, all SKUs together (RefundingBySince's keys)")
	refundRatio := fs.Float64("refund-ratio", DefaultRefundRatio, "share of orders refunded over their life, at most --pay-ratio (prices the refunds per order)")
	riskBuyers := fs.Int("risk-checked-buyers", 0, "buyers expected in a day to order, queue for or join the waitlist of SKUs with a riskThreshold (the scalper check): each costs one getUserRiskRank call against the account's daily quota")
	var each skuFlags
	fs.Var(repeated(each.Set), "sku", "ID:ORDERS:PAGEVIEWS, one SKU's peaks per second (repeat; instead of --skus, --orders and --page-views, not with them)")
	if _, err := parse(fs, args, ""); err != nil {
		return err
	}
	switch {
	case len(each) > 0 && given(fs, "skus", "orders", "page-views"):
		return usageError("plan: --sku gives each SKU's own orders and page views; give --sku or --skus, --orders and --page-views, not both")
	case *skus < 1 || *skus > maxSKUs:
		return usageError("plan: --skus must be 1 to 10,000")
	case len(each) > maxSKUs:
		return usageError("plan: at most 10,000 --sku, as --skus, got %d", len(each))
	case !peak(*orders) || !peak(*views) || !peak(*refunds) || !peak(*refusals):
		return usageError("plan: --orders, --page-views, --refusals and --refunds must be numbers from 0 to %d, %s", maxPeak, minPeakRule)
	case !(*payRatio >= 0 && *payRatio <= 1):
		return usageError("plan: --pay-ratio must be 0 to 1")
	case !given(fs, "refund-ratio") && *refundRatio > *payRatio:
		return usageError("plan: --refund-ratio must be 0 to --pay-ratio (%g): only a paid order is refunded; --refund-ratio is %g unless given: give one, e.g. --refund-ratio 0", *payRatio, DefaultRefundRatio)
	case !(*refundRatio >= 0 && *refundRatio <= *payRatio):
		return usageError("plan: --refund-ratio must be 0 to --pay-ratio (%g): only a paid order is refunded", *payRatio)
	case *riskBuyers < 0 || *riskBuyers > maxRiskBuyers:
		return usageError("plan: --risk-checked-buyers must be 0 to %d", maxRiskBuyers)
	case len(each) == 0 && !(given(fs, "orders") && given(fs, "page-views")):
		return usageError("plan needs --orders and --page-views (both, 0 for none), or --sku")
	case len(each) == 0 && *orders == 0 && *views == 0:
		return usageError("plan: at least one of --orders and --page-views must be above 0")
	}
	d := plan.Evenly(*skus, *orders, *views, *refusals, *payRatio)
	if len(each) > 0 {
		d = plan.Demand{SKUs: each, PayRatio: *payRatio}
		for i := range d.SKUs {
			d.SKUs[i].Refusals = *refusals / float64(len(each))
		}
	}
	d.Refunds, d.RefundRatio, d.RiskCheckedBuyers = *refunds, *refundRatio, *riskBuyers
	p := plan.Make(d, plan.Today(), plan.DefaultPrices)
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil { // a figure past float64 (json: unsupported value: +Inf), never printed
		return usageError("plan: these figures give a plan past what plan computes (%v)", err)
	}
	if asJSON {
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	}
	return p.Write(out)
}
