// Package plan sizes a sale: from the peak orders and page views per second a
// merchant expects per SKU, what every limit on the path must carry, where the first
// one binds, what to set and what to ask AWS for, and what a million orders cost. It
// is pure arithmetic over Design, the costs of today's design, which the whole-sale
// rehearsal (tools/internal/rehearse) measures; shard counts come from
// inventory.ShardsForPeak, the one rule POST /admin/skus sizes SKUs by too.
//
// The limits (each cited where the model of it lives):
//   - a partition serves 1,000 write units and 3,000 read units a second
//     (tools/internal/ddblimits): every shard item, the SKU record, and every index key
//     (LedgerByShard: one key per shard, written with it; PendingByExpiry: 128 keys
//     for all SKUs; RefundingBySince: 16 keys for all refunds under way; OrdersByUser:
//     one key per buyer);
//   - a table serves 40,000 read and 40,000 write request units a second by default
//     (tools/internal/ddblimits, "Throughput default quotas");
//   - API Gateway's account throttle, 10,000 requests a second by default, and the
//     stage's route throttle, the template's ApiThrottleRateLimit (tools/internal/quotas);
//   - Lambda's account concurrency, 1,000 by default, and the reserved concurrency of
//     closeOrder and payCallback (tools/internal/quotas).
package plan

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stockguard/stockguard/internal/inventory"
)

// Partition and quota figures the plan checks loads against (the sources are in the
// package doc and tools/internal/ddblimits, tools/internal/quotas).
const (
	PartitionWriteUnits      = 1000
	PartitionReadUnits       = 3000
	TableRequestUnits        = 40000
	AccountRequestsPerSecond = 10000
	AccountConcurrency       = 1000
)

// spreadIndex is what an index key past its ceiling needs: a partition cannot be
// raised.
const spreadIndex = "a partition: spread the index's writes over more keys"

// Headroom is how far below a ceiling the plan asks each setting or quota to put the
// peak: what it recommends carries Headroom × the peak (the shard rule has its own,
// inventory.ShardHeadroom).
const Headroom = 1.25

// Design is what today's design costs per operation and how its keys spread, for a
// one-line order of one unit with an Idempotency-Key on a SKU with a per-user limit
// (as the mini-program orders), every item under 1 KB. The units are counted from
// the transactions internal/dynamo sends (transactional writes 2 units per item,
// plain 1, strongly consistent reads 1; each ledger entry is written to
// LedgerByShard, each PENDING order to PendingByExpiry, each order to OrdersByUser, 1
// unit per index entry) and the rehearsal measures the same (its test checks them).
type Design struct {
	// Write units of each step of an order's life, base items and index entries:
	// the reservation (order, purchase counter, shard, RESERVE
	// entry; PendingByExpiry, LedgerByShard, OrdersByUser), the prepay (the order's
	// prepay_id), the payment (order, shard, COMMIT entry; the PendingByExpiry entry
	// removed and the ledger index entry) and a release (order, shard, purchase
	// counter, RELEASE entry; the same two index writes).
	CreateWrites, PrepayWrites, PaymentWrites, ReleaseWrites float64
	// Read units: the prepay reads the order, the payment reads the order.
	PrepayReads, PaymentReads float64
	// ShardWritesPerOrder is the write units an order's life puts on its shard item:
	// the reservation and its payment or release, 2 each.
	ShardWritesPerOrder float64
	// IndexEntriesPerOrder is how many entries an order's life writes to each index
	// key space: two ledger entries (RESERVE, then COMMIT or RELEASE) to
	// LedgerByShard under the order's shard, the PENDING entry put and removed on
	// PendingByExpiry.
	IndexEntriesPerOrder float64
	// PendingByExpiryKeys is the keys PendingByExpiry spreads all SKUs' writes over
	// (dynamo.PendingBuckets); LedgerByShard's keys are the shards.
	PendingByExpiryKeys int
	// RefundingKeys is the keys RefundingBySince spreads the refunds under way over
	// (dynamo.RefundBuckets), RefundIndexEntries the entries a refund writes there (its
	// marker put when it starts, deleted when it ends), and RefundOrderWrites the write
	// units a refund takes on the orders table: at its start the order and the marker,
	// at its result the order and the marker's delete, 2 each in a transaction (an
	// order's item under 1 KB: a short reason; see docs/design.md, "Refunds on the
	// order's item"), besides the purchase counter a restocking refund gives back.
	RefundingKeys                         int
	RefundIndexEntries, RefundOrderWrites float64
	// A page view (GET /skus/{skuId}) is answered from an answer at most 1 s old kept
	// by the createOrder environment (stock.MaxStale): each environment serving the
	// page reads the SKU record and every shard item, strongly consistent (1 read unit
	// each), at most once a second.
	// API requests of an order's life besides POST /orders: the prepay and the
	// payment notification (paid orders), the cancel (cancelled ones).
	// SQS: one close-order message per order request, received and deleted in
	// batches of up to 10.
	SQSRequestsPerOrder float64
	// Invocation durations at 1× (seconds), for concurrency (rate × duration) and
	// GB-seconds: what the rehearsal's model measures, plus for the prepay the WeChat
	// Pay round trip, which the rehearsal does not model (an assumption).
	OrderSeconds, PageSeconds, PrepaySeconds, PaymentSeconds, ReleaseSeconds float64
	// Memory of createOrder, closeOrder and payCallback in MB (template.yaml).
	CreateOrderMB, CloseOrderMB, PayCallbackMB float64
	// Reserved concurrency of closeOrder, payCallback and reconcile (template.yaml),
	// and the close-order queue's maximum concurrency, which takes closeOrder's.
	CloseOrderReserved, PayCallbackReserved, ReconcileReserved, QueueConcurrency int
	// StageRate is the template's ApiThrottleRateLimit default: every route's rate.
	StageRate float64
	// A login (POST /auth/wechat) that signs a new token writes the two attempt
	// counters and the kept token (LoginWrites, 1 unit each), reads the buyer's kept
	// token once, eventually consistent (LoginReads, half a unit), and signs once
	// through KMS; one answered from the kept token writes the counters only
	// (LoginWrites − 1) and signs nothing (README, "KMS signing per login"). LoginSeconds
	// is an assumption (WeChat's jscode2session and kms:Sign round trips); LoginMB
	// the login function's memory (template.yaml).
	LoginWrites, LoginReads, LoginSeconds, LoginMB float64
}

// Today is the design as it is.
func Today() Design {
	return Design{
		CreateWrites: 11, PrepayWrites: 1, PaymentWrites: 8, ReleaseWrites: 10,
		PrepayReads: 1, PaymentReads: 2,
		ShardWritesPerOrder:  4,
		IndexEntriesPerOrder: 2,
		PendingByExpiryKeys:  128,
		SQSRequestsPerOrder:  1.2,
		OrderSeconds:         0.030, PageSeconds: 0.010, PrepaySeconds: 0.200, PaymentSeconds: 0.020, ReleaseSeconds: 0.020,
		CreateOrderMB: 256, CloseOrderMB: 256, PayCallbackMB: 128,
		CloseOrderReserved: 20, PayCallbackReserved: 20, ReconcileReserved: 1, QueueConcurrency: 10,
		StageRate:   500,
		LoginWrites: 3, LoginReads: 0.5, LoginSeconds: 0.150, LoginMB: 256,
		RefundingKeys: 16, RefundIndexEntries: 2, RefundOrderWrites: 8,
	}
}

// SKU is what a merchant expects of one SKU at the peak, per second.
type SKU struct {
	ID         string
	Orders     float64
	PageViews  float64
	ShardsWant int // 0: sized by inventory.ShardsForPeak
}

// Demand is a sale to plan: its SKUs, the share of orders paid (the rest are
// released), and the refunds started per second at the peak, all SKUs together
// (automatic ones of payments that came after the stock went, buyers' and the shop's).
type Demand struct {
	SKUs     []SKU
	PayRatio float64
	Refunds  float64
}

// Evenly is a demand of orders and page views per second in total, spread evenly
// over skus SKUs named sku-000 on.
func Evenly(skus int, orders, pageViews, payRatio float64) Demand {
	d := Demand{PayRatio: payRatio}
	for i := range skus {
		d.SKUs = append(d.SKUs, SKU{ID: fmt.Sprintf("sku-%03d", i), Orders: orders / float64(skus), PageViews: pageViews / float64(skus)})
	}
	return d
}

// Load is what one limit must carry at the peak.
type Load struct {
	// Limit names it as the rehearsal's throttles do, e.g. "index
	// OrdersTable.PendingByExpiry P<k> (each of 128)".
	Limit string
	// Peak is the load at the peak and Ceiling what the limit serves, in Unit.
	Peak, Ceiling float64
	Unit          string
	// Setting is what to set or ask AWS for when the peak passes the ceiling: "" when
	// it cannot be raised (a partition) or need not be.
	Setting string
}

// Utilisation is Peak / Ceiling.
func (l Load) Utilisation() float64 { return l.Peak / l.Ceiling }

// SKUPlan is one SKU's part of a plan.
type SKUPlan struct {
	SKU
	Shards int
}

// Plan is a sale's plan.
type Plan struct {
	Demand Demand
	SKUs   []SKUPlan
	// Loads are every limit's load, most utilised first: Loads[0] binds first.
	Loads []Load
	// StageRate is the ApiThrottleRateLimit to deploy with (the busiest route's peak
	// with headroom, never below the template's default: the limit holds every route,
	// also those the plan does not count, such as login and GET /orders), AccountRate
	// the API Gateway throttle to ask for (10,000 when that suffices),
	// AccountConcurrency the Lambda concurrency to ask for, CloseOrderReserved and
	// PayCallbackReserved the reservations to set.
	StageRate, AccountRate                                          float64
	AccountConcurrency, CloseOrderReserved, PayCallbackReserved     int
	WriteUnitsPerOrder, ReadUnitsPerOrder, APIRequestsPerOrder      float64
	LambdaInvocationsPerOrder, LambdaGBSecondsPerOrder, SQSPerOrder float64
	// WarmWriteUnits and WarmReadUnits are the warm throughput to pre-warm the tables
	// to before the sale (template parameters TableWarmWriteUnits and
	// TableWarmReadUnits), units per second: the busiest table's peak with headroom,
	// 0 when a new on-demand table's NewTableWriteUnits and NewTableReadUnits carry it.
	WarmWriteUnits, WarmReadUnits float64
	// USDPerMillionOrders is what a million orders cost with their page views.
	USDPerMillionOrders float64
	Cost                Cost // of a million orders
	// LoginCost is what a million logins that sign a new token cost (one kms:Sign to
	// an RSA 2048 key each), ReusedLoginCost a million answered from the kept token.
	LoginCost, ReusedLoginCost Cost
}

// Make plans demand d on design x at prices p.
func Make(d Demand, x Design, p Prices) Plan {
	pl := Plan{Demand: d}
	t := pl.planSKUs(x)
	pl.addIndexAndTableLoads(x, t)
	pl.planWarmThroughput()
	pl.planAPIGateway(x, t)
	pl.planLambda(x, t)
	pl.rankLoads()
	pl.costPerOrder(x, t, p)
	pl.LoginCost, pl.ReusedLoginCost = loginCosts(x, p)
	return pl
}

// loginCosts prices a million logins of design x at p: signing a new token, and
// answering the kept one.
func loginCosts(x Design, p Prices) (signed, reused Cost) {
	const million = 1e6
	login := Usage{
		WriteRequestUnits: x.LoginWrites * million, ReadRequestUnits: x.LoginReads * million,
		LambdaRequests: million, LambdaGBSeconds: x.LoginSeconds * x.LoginMB / 1024 * million,
		APIRequests: million, KMSRSARequests: million,
	}
	signed = p.Cost(login)
	login.WriteRequestUnits -= million
	login.KMSRSARequests = 0
	return signed, p.Cost(login)
}

// totals are a demand's peak summed over its SKUs, per second: orders, page views,
// and the read units of those page views (each reads the SKU record and its shards).
type totals struct {
	orders, views, viewReads float64
}

// planSKUs sizes each SKU's shards, adds the loads on its own partitions (its shard
// items, its record read by page views, its LedgerBySku keys) and returns the
// demand's totals.
func (pl *Plan) planSKUs(x Design) totals {
	var t totals
	for _, s := range pl.Demand.SKUs {
		shards := s.ShardsWant
		if shards <= 0 {
			shards = inventory.ShardsForPeak(int(math.Ceil(s.Orders)))
		}
		pl.SKUs = append(pl.SKUs, SKUPlan{SKU: s, Shards: shards})
		t.orders += s.Orders
		t.views += s.PageViews
		// Each environment serving the page reads it at most once a second.
		pageReads := min(s.PageViews, math.Ceil(s.PageViews*x.PageSeconds))
		t.viewReads += pageReads * float64(1+shards)
		pl.Loads = append(pl.Loads,
			Load{Limit: fmt.Sprintf("item SkusTable %s#shard#n (each of %d)", s.ID, shards), Peak: s.Orders * x.ShardWritesPerOrder / float64(shards), Ceiling: PartitionWriteUnits, Unit: "WU/s",
				Setting: "more shards (reshard)"},
			Load{Limit: fmt.Sprintf("item SkusTable %s (and each shard), read by each page environment once a second", s.ID), Peak: pageReads, Ceiling: PartitionReadUnits, Unit: "RU/s",
				Setting: "a partition: a CDN in front of the page"},
			Load{Limit: fmt.Sprintf("index StockLogTable.LedgerByShard %s#n (each of %d)", s.ID, shards), Peak: s.Orders * x.IndexEntriesPerOrder / float64(shards), Ceiling: PartitionWriteUnits, Unit: "WU/s",
				Setting: "more shards (reshard)"},
		)
	}
	return t
}

// addIndexAndTableLoads adds the loads all SKUs share: the keys of PendingByExpiry
// and RefundingBySince, and each table's write and read quotas.
func (pl *Plan) addIndexAndTableLoads(x Design, t totals) {
	paid := pl.Demand.PayRatio
	released := 1 - paid
	orders := t.orders
	pl.Loads = append(pl.Loads,
		Load{Limit: fmt.Sprintf("index OrdersTable.PendingByExpiry P<k> (each of %d)", x.PendingByExpiryKeys), Peak: orders * x.IndexEntriesPerOrder / float64(x.PendingByExpiryKeys), Ceiling: PartitionWriteUnits, Unit: "WU/s",
			Setting: spreadIndex},
		Load{Limit: fmt.Sprintf("index OrdersTable.RefundingBySince R<k> (each of %d)", x.RefundingKeys), Peak: pl.Demand.Refunds * x.RefundIndexEntries / float64(x.RefundingKeys), Ceiling: PartitionWriteUnits, Unit: "WU/s",
			Setting: spreadIndex},
		Load{Limit: "table SkusTable writes", Peak: orders * x.ShardWritesPerOrder, Ceiling: TableRequestUnits, Unit: "WRU/s", Setting: "a per-table quota increase"},
		Load{Limit: "table SkusTable reads", Peak: t.viewReads, Ceiling: TableRequestUnits, Unit: "RRU/s", Setting: "a per-table quota increase"},
		// The orders table takes the order and counter (4), the
		// prepay (1), the payment's order update (2) or the release's order and
		// counter (4), and each refund's order and marker; the ledger two
		// transactional entries (4).
		Load{Limit: "table OrdersTable writes", Peak: orders*(4+paid*(x.PrepayWrites+2)+released*4) + pl.Demand.Refunds*x.RefundOrderWrites, Ceiling: TableRequestUnits, Unit: "WRU/s", Setting: "a per-table quota increase"},
		Load{Limit: "table StockLogTable writes", Peak: orders * 4, Ceiling: TableRequestUnits, Unit: "WRU/s", Setting: "a per-table quota increase"},
	)
}

// The warm throughput of a new on-demand table, units per second: what it serves at
// once, and at most twice its previous peak within 30 minutes ("Pre-warming a table
// for on-demand capacity mode",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html).
const (
	NewTableWriteUnits = 4000
	NewTableReadUnits  = 12000
)

// planWarmThroughput sets the warm throughput to pre-warm the tables to: a sale's first
// second comes at its peak, which a table past its warm throughput throttles
// ("Understanding DynamoDB warm throughput"). It reads the table loads
// addIndexAndTableLoads added.
func (pl *Plan) planWarmThroughput() {
	var write, read float64
	for _, l := range pl.Loads {
		switch {
		case strings.HasPrefix(l.Limit, "table ") && strings.HasSuffix(l.Limit, " writes"):
			write = max(write, l.Peak)
		case strings.HasPrefix(l.Limit, "table ") && strings.HasSuffix(l.Limit, " reads"):
			read = max(read, l.Peak)
		}
	}
	if write <= NewTableWriteUnits && read <= NewTableReadUnits {
		return
	}
	pl.WarmWriteUnits = max(NewTableWriteUnits, math.Ceil(write*Headroom))
	pl.WarmReadUnits = max(NewTableReadUnits, math.Ceil(read*Headroom))
}

// planAPIGateway sets the stage and account rates to deploy with and ask for, and
// adds the loads on API Gateway's account throttle and the two busy routes: POST
// /orders, and per paid order the prepay and the notification.
func (pl *Plan) planAPIGateway(x Design, t totals) {
	orders, views := t.orders, t.views
	api := views + orders*(1+2*pl.Demand.PayRatio)
	busiest := max(views, orders)
	pl.StageRate = max(x.StageRate, math.Ceil(busiest*Headroom))
	pl.AccountRate = max(AccountRequestsPerSecond, math.Ceil(api*Headroom))
	pl.Loads = append(pl.Loads,
		Load{Limit: "API Gateway account", Peak: api, Ceiling: AccountRequestsPerSecond, Unit: "requests/s", Setting: fmt.Sprintf("ask for %.0f requests/s", pl.AccountRate)},
		Load{Limit: "API Gateway route GET /skus/{skuId}", Peak: views, Ceiling: x.StageRate, Unit: "requests/s", Setting: fmt.Sprintf("ApiThrottleRateLimit=%.0f", pl.StageRate)},
		Load{Limit: "API Gateway route POST /orders", Peak: orders, Ceiling: x.StageRate, Unit: "requests/s", Setting: fmt.Sprintf("ApiThrottleRateLimit=%.0f", pl.StageRate)},
	)
}

// planLambda sets the reserved concurrency of closeOrder and payCallback and the
// account concurrency to ask for (concurrency is rate × duration), and adds the
// loads on them and on Lambda's scaling rate.
func (pl *Plan) planLambda(x Design, t totals) {
	paid := pl.Demand.PayRatio
	released := 1 - paid
	orders, views := t.orders, t.views
	createC := orders*x.OrderSeconds + views*x.PageSeconds
	closeC := orders*paid*x.PrepaySeconds + orders*released*x.ReleaseSeconds + float64(x.QueueConcurrency) + 1
	payC := orders * paid * x.PaymentSeconds
	pl.CloseOrderReserved = int(math.Ceil(closeC * Headroom))
	pl.PayCallbackReserved = int(math.Ceil(max(payC*Headroom, float64(x.PayCallbackReserved))))
	pl.CloseOrderReserved = max(pl.CloseOrderReserved, x.CloseOrderReserved)
	need := createC*Headroom + float64(pl.CloseOrderReserved+pl.PayCallbackReserved+x.ReconcileReserved) + 100 // Lambda keeps 100 unreserved
	pl.AccountConcurrency = max(AccountConcurrency, int(math.Ceil(need)))
	pl.Loads = append(pl.Loads,
		Load{Limit: "Lambda CreateOrderFunction (the unreserved concurrency)", Peak: createC, Ceiling: AccountConcurrency - float64(x.CloseOrderReserved+x.PayCallbackReserved+x.ReconcileReserved), Unit: "concurrent", Setting: fmt.Sprintf("ask for %d concurrent executions", pl.AccountConcurrency)},
		Load{Limit: "Lambda CloseOrderFunction (reserved)", Peak: closeC, Ceiling: float64(x.CloseOrderReserved), Unit: "concurrent", Setting: fmt.Sprintf("ReservedConcurrentExecutions: %d", pl.CloseOrderReserved)},
		Load{Limit: "Lambda PayCallbackFunction (reserved)", Peak: payC, Ceiling: float64(x.PayCallbackReserved), Unit: "concurrent", Setting: fmt.Sprintf("ReservedConcurrentExecutions: %d", pl.PayCallbackReserved)},
		Load{Limit: "Lambda scaling rate (createOrder's environments in the first 10 s)", Peak: createC, Ceiling: 1000, Unit: "environments",
			Setting: "fixed: warm environments before the sale (provisioned concurrency)"},
	)
}

// rankLoads clears the setting of every load carried as it is and sorts the loads
// most utilised first (stable: ties keep their order).
func (pl *Plan) rankLoads() {
	for i, l := range pl.Loads {
		if l.Peak <= l.Ceiling {
			pl.Loads[i].Setting = "" // carried as it is
		}
	}
	slices.SortStableFunc(pl.Loads, func(a, b Load) int {
		switch ua, ub := a.Utilisation(), b.Utilisation(); {
		case ua > ub:
			return -1
		case ua < ub:
			return 1
		}
		return 0
	})
}

// costPerOrder sets what one order uses (its life's units, paid or released, and
// its page views' reads, requests and invocations) and what a million cost at p.
func (pl *Plan) costPerOrder(x Design, t totals, p Prices) {
	paid := pl.Demand.PayRatio
	released := 1 - paid
	orders, views := t.orders, t.views
	pl.WriteUnitsPerOrder = x.CreateWrites + paid*(x.PrepayWrites+x.PaymentWrites) + released*x.ReleaseWrites
	viewsPerOrder := 0.0
	if orders > 0 {
		viewsPerOrder = views / orders
		pl.ReadUnitsPerOrder = paid*(x.PrepayReads+x.PaymentReads) + t.viewReads/orders
	}
	pl.APIRequestsPerOrder = 1 + 2*paid + viewsPerOrder
	pl.LambdaInvocationsPerOrder = 1 + paid*2 + released/10 + viewsPerOrder // releases come in batches of 10
	pl.LambdaGBSecondsPerOrder = x.OrderSeconds*x.CreateOrderMB/1024 + viewsPerOrder*x.PageSeconds*x.CreateOrderMB/1024 +
		paid*(x.PrepaySeconds*x.CloseOrderMB/1024+x.PaymentSeconds*x.PayCallbackMB/1024) + released*x.ReleaseSeconds*x.CloseOrderMB/1024
	pl.SQSPerOrder = x.SQSRequestsPerOrder
	const million = 1e6
	pl.Cost = p.Cost(Usage{
		WriteRequestUnits: pl.WriteUnitsPerOrder * million, ReadRequestUnits: pl.ReadUnitsPerOrder * million,
		LambdaRequests: pl.LambdaInvocationsPerOrder * million, LambdaGBSeconds: pl.LambdaGBSecondsPerOrder * million,
		APIRequests: pl.APIRequestsPerOrder * million, SQSRequests: pl.SQSPerOrder * million,
	})
	pl.USDPerMillionOrders = pl.Cost.Total()
}

// Binding is the limit that binds first (the most utilised), and whether it binds at
// the peak at all.
func (p Plan) Binding() (Load, bool) {
	if len(p.Loads) == 0 {
		return Load{}, false
	}
	return p.Loads[0], p.Loads[0].Peak > p.Loads[0].Ceiling
}

// Write prints the plan as tables: shards per SKU, every limit's load against its
// ceiling (what binds first on top), what to set and ask for, and the cost.
func (p Plan) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SKU\tpeak orders/s\tpeak page views/s\tshards\t")
	for _, s := range p.SKUs {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%d\t\n", s.ID, s.Orders, s.PageViews, s.Shards)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "limit\tpeak\tceiling\tused\tto carry the peak")
	for _, l := range p.Loads {
		fmt.Fprintf(tw, "%s\t%.0f %s\t%.0f\t%.0f%%\t%s\n", l.Limit, l.Peak, l.Unit, l.Ceiling, 100*l.Utilisation(), l.Setting)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b, over := p.Binding()
	verb := "binds first, under its ceiling"
	if over {
		verb = "binds first, PAST its ceiling"
	}
	fmt.Fprintf(w, "\n%s %s (%.0f%%).\n", b.Limit, verb, 100*b.Utilisation())
	fmt.Fprintf(w, "Deploy with ApiThrottleRateLimit=%.0f; ask AWS for an API Gateway throttle of %.0f requests/s and %d concurrent Lambda executions; reserve %d for closeOrder and %d for payCallback.\n",
		p.StageRate, p.AccountRate, p.AccountConcurrency, p.CloseOrderReserved, p.PayCallbackReserved)
	if p.WarmWriteUnits > 0 {
		fmt.Fprintf(w, "Pre-warm the tables at least 24 hours before the sale: deploy with TableWarmWriteUnits=%.0f TableWarmReadUnits=%.0f (a new on-demand table serves %d writes and %d reads a second at once, and at most twice its previous peak within 30 minutes: \"Pre-warming a table for on-demand capacity mode\"); raising it is billed (\"Amazon DynamoDB pricing\"), not in the cost below.\n",
			p.WarmWriteUnits, p.WarmReadUnits, NewTableWriteUnits, NewTableReadUnits)
	}
	fmt.Fprintf(w, "Cost: $%.2f per million orders with their page views (DynamoDB $%.2f: %.1f write and %.1f read units per order; Lambda $%.2f; API Gateway $%.2f; SQS $%.2f).\n",
		p.USDPerMillionOrders, p.Cost.DynamoDB, p.WriteUnitsPerOrder, p.ReadUnitsPerOrder, p.Cost.Lambda, p.Cost.APIGateway, p.Cost.SQS)
	l := p.LoginCost
	_, err := fmt.Fprintf(w, "Login: $%.2f per million new tokens (KMS $%.2f: one RSA 2048 kms:Sign each; DynamoDB $%.2f; Lambda $%.2f; API Gateway $%.2f); $%.2f per million answered from the kept token.\n",
		l.Total(), l.KMS, l.DynamoDB, l.Lambda, l.APIGateway, p.ReusedLoginCost.Total())
	return err
}
