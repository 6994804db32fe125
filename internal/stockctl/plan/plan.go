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
//     (tools/internal/ddblimits, "Throughput default quotas"), and a new on-demand table
//     or global secondary index only its warm throughput at once, 4,000 writes and
//     12,000 reads a second, unless pre-warmed ("Understanding DynamoDB warm
//     throughput"): the plan advises TableWarmWriteUnits, TableWarmReadUnits and
//     IndexWarmWriteUnits, and prices them;
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
	"strconv"
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
	// A POST /orders refused after its SKU sold out reads the SKU record strongly
	// (RefusalRecordReads, read units on the skus table, all on that SKU's record item)
	// and, keyed, the key's order (RefusalOrderReads on the orders table: a copy of the
	// request may have opened it), and writes nothing (docs/design.md, "Sell-out: the
	// SKU record says sold out"); it runs createOrder RefusalSeconds.
	RefusalRecordReads, RefusalOrderReads, RefusalSeconds float64
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
	// GB-seconds: what the rehearsal's model measures; the prepay's includes
	// WeChatPaySeconds.
	OrderSeconds, PageSeconds, PrepaySeconds, PaymentSeconds, ReleaseSeconds float64
	// WeChatPaySeconds is one round trip of WeChat Pay's merchant API (the prepay's
	// JSAPI 下单, POST /v3/pay/transactions/jsapi; the query and close of a release)
	// from the functions' region: an assumption, WeChat Pay publishes no latency. Its
	// servers are in mainland China and the template's region is us-east-1, about
	// 180 ms apart over the Pacific on a kept connection. The rehearsal's stand-in
	// takes it on every merchant API call (tools/cmd/rehearse -wechatpay-rtt).
	WeChatPaySeconds float64
	// Memory of createOrder, closeOrder and payCallback in MB (template.yaml).
	CreateOrderMB, CloseOrderMB, PayCallbackMB float64
	// Reserved concurrency of closeOrder and payCallback (template.yaml's defaults),
	// of all the other functions that reserve some (reconcile 1, the admitter 2, the
	// alert chat 2), and the close-order queue's maximum concurrency, which takes
	// closeOrder's.
	CloseOrderReserved, PayCallbackReserved, OtherReserved, QueueConcurrency int
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
	// LoginsPerOrder is how many logins that sign a new token each order brings: its
	// buyer signs in once for the sale (a repeat login within the hour is answered
	// from the kept token and signs nothing).
	LoginsPerOrder float64

	// CloudWatch Logs: LogBytesPerInvocation is what one invocation logs, the
	// function's own JSON lines (412 bytes an invocation, measured on the local stack
	// over the README's buy, pay and cancel walkthrough with -log-format json: 30,491
	// bytes over 74 invocations) and Lambda's platform.start and platform.report
	// records of the JSON log format (526 bytes with their tracing field; "Lambda
	// JSON log format", system log level INFO); AccessLogBytesPerRequest is API
	// Gateway's access log line of one request (the template's AccessLogSettings
	// format with a WeChat mini-program's user agent: 566 bytes).
	LogBytesPerInvocation, AccessLogBytesPerRequest float64
	// X-Ray: with Tracing Active and no sampling rule in the template, X-Ray's
	// default rule records the first request each second (XRayReservoirPerSecond)
	// and XRaySampled of the others ("Visualize Lambda function invocations using
	// AWS X-Ray", "Configuring sampling rules"); each sampled invocation is one trace
	// (an HTTP API traces nothing itself).
	XRaySampled, XRayReservoirPerSecond float64
	// PreWarmedTables is how many tables TableWarmWriteUnits and TableWarmReadUnits
	// pre-warm (template.yaml: SkusTable, OrdersTable, StockLogTable); KMSKeys the
	// customer managed keys the stack keeps (template.yaml: the orders table's
	// OrdersTableKey, which encrypts the buyers' addresses at rest; the alerts topic's
	// AlertsKey; the login signing key, and a fourth during a signing-key rotation).
	// DynamoDB's symmetric requests to the table's key ($0.03 per 10,000) are left out:
	// DynamoDB asks KMS again only after 5 minutes without use (AWS KMS Developer
	// Guide, "How Amazon DynamoDB uses AWS KMS").
	PreWarmedTables, KMSKeys int
	// PreWarmedIndexes is how many global secondary indexes IndexWarmWriteUnits
	// pre-warms (template.yaml: the sale's hot ones, OrdersTable's PendingByExpiry and
	// OrdersByUser and StockLogTable's LedgerByShard; RefundingBySince keeps
	// DynamoDB's own 4,000, 2,000 refunds a second). An index has its own warm
	// throughput, a new on-demand one's that of a new table ("Understanding DynamoDB
	// warm throughput"), and every index entry an order writes is a write of it.
	// OrdersByUserEntriesPerOrder is the entries an order writes to OrdersByUser (one,
	// KEYS_ONLY: put with the order, never rewritten).
	PreWarmedIndexes            int
	OrdersByUserEntriesPerOrder float64
	// ProvisionedMinutes is how long createOrder's provisioned concurrency is kept
	// configured for a sale when the plan advises it: an assumption (set before the
	// sale, removed after it), billed for at least 5 minutes.
	ProvisionedMinutes float64

	// A refund's life, as internal/refunds runs a buyer's refund of a paid one-line
	// order of one unit whose goods go back to stock:
	//   - its start (POST /orders/{orderId}/refund, closeOrder, RefundStartSeconds)
	//     reads the order (1 read unit) and writes one transaction of the order, its
	//     REFUNDING marker, the purchase counter, the shard and the RETURN entry (2
	//     units each) with the marker's RefundingBySince entry and the entry's
	//     LedgerByShard one (1 each): 12; it sends the refund message;
	//   - the refund function (the refund queue) reads the order (1), asks WeChat
	//     Pay's refund API (APIv3 退款申请) and checks its answer, PROCESSING, against
	//     the order read again (1), writing nothing;
	//   - WeChat Pay's refund notification (POST /payments/wechatpay/refund-notify,
	//     payCallback) reads the order (1) and writes the order and the marker's delete
	//     (2 each) with the index entry's delete (1): 5; it queues the buyer's notice;
	//   - the notice (the WeChat queue, the wechat function) reads the refund's order
	//     twice (2), claims the notice (a put, 1) and sends WeChat's subscribe message.
	// RefundWrites (18) and RefundReads (6, strongly consistent) are their units;
	// RefundAPIRequests the two API requests; RefundInvocations the four invocations
	// and RefundSQSRequests the two messages sent, received and deleted (6: refunds
	// are few, so each batch is taken as one message). WeChat Pay charges no fee per
	// API call and WeChat none per subscribe message: they cost their round trip,
	// WeChatPaySeconds each (the subscribe message's assumed alike), billed as the
	// refund and wechat functions' duration. RefundStepSeconds is each function's own
	// time besides; RefundMB the refund and wechat functions' memory (template.yaml).
	RefundWrites, RefundReads, RefundAPIRequests, RefundInvocations, RefundSQSRequests float64
	RefundStartSeconds, RefundStepSeconds, RefundMB                                    float64
}

// RefundUsage is what refunds refunds use over their whole life (Design's refund
// fields): their units, requests, invocations, GB-seconds, logs and traces.
func (x Design) RefundUsage(refunds float64) Usage {
	gbSeconds := (x.RefundStartSeconds*x.CloseOrderMB + x.RefundStepSeconds*x.PayCallbackMB +
		2*(x.RefundStepSeconds+x.WeChatPaySeconds)*x.RefundMB) / 1024
	invocations, requests := x.RefundInvocations*refunds, x.RefundAPIRequests*refunds
	return Usage{
		WriteRequestUnits: x.RefundWrites * refunds, ReadRequestUnits: x.RefundReads * refunds,
		LambdaRequests: invocations, LambdaGBSeconds: gbSeconds * refunds,
		APIRequests: requests, SQSRequests: x.RefundSQSRequests * refunds,
		LogBytes: x.LogBytes(invocations, requests), XRayTraces: invocations * x.XRaySampled,
	}
}

// MinProvisionedSeconds is the least provisioned concurrency is billed for: 5
// minutes ("AWS Lambda pricing", "Provisioned Concurrency").
const MinProvisionedSeconds = 300

// ProvisionedGBSeconds is what envs environments of memoryMB provisioned for seconds
// are billed for, in GB-seconds: at least MinProvisionedSeconds.
func ProvisionedGBSeconds(envs int, memoryMB, seconds float64) float64 {
	if envs <= 0 {
		return 0
	}
	return float64(envs) * memoryMB / 1024 * max(seconds, MinProvisionedSeconds)
}

// LogBytes is what invocations Lambda invocations and apiRequests API requests
// ingest into CloudWatch Logs.
func (x Design) LogBytes(invocations, apiRequests float64) float64 {
	return invocations*x.LogBytesPerInvocation + apiRequests*x.AccessLogBytesPerRequest
}

// XRayTraces is the traces X-Ray's default rule records of invocations Lambda
// invocations over seconds.
func (x Design) XRayTraces(invocations, seconds float64) float64 {
	reservoir := min(invocations, x.XRayReservoirPerSecond*seconds)
	return reservoir + (invocations-reservoir)*x.XRaySampled
}

// PreWarmUsage is what pre-warming every table of the design to write and read units a
// second raises: the units above a new on-demand table's (NewTableWriteUnits,
// NewTableReadUnits), per table.
func (x Design) PreWarmUsage(write, read float64) Usage {
	n := float64(x.PreWarmedTables)
	return Usage{WarmWriteUnits: n * max(write-NewTableWriteUnits, 0), WarmReadUnits: n * max(read-NewTableReadUnits, 0)}
}

// IndexPreWarmUsage is what pre-warming every hot index of the design to write units
// a second raises: the units above a new on-demand index's (NewTableWriteUnits), per
// index; their read warm throughput stays DynamoDB's own.
func (x Design) IndexPreWarmUsage(write float64) Usage {
	return Usage{WarmWriteUnits: float64(x.PreWarmedIndexes) * max(write-NewTableWriteUnits, 0)}
}

// LoginUsage is what logins logins use: the signing ones (a new token: one kms:Sign
// each, and the kept token written) or those answered from the kept token.
func (x Design) LoginUsage(logins float64, signed bool) Usage {
	u := Usage{
		WriteRequestUnits: x.LoginWrites * logins, ReadRequestUnits: x.LoginReads * logins,
		LambdaRequests: logins, LambdaGBSeconds: x.LoginSeconds * x.LoginMB / 1024 * logins,
		APIRequests: logins, LogBytes: x.LogBytes(logins, logins), XRayTraces: logins * x.XRaySampled,
	}
	if signed {
		u.KMSRSARequests = logins
	} else {
		u.WriteRequestUnits -= logins
	}
	return u
}

// Add is u and v together.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		WriteRequestUnits: u.WriteRequestUnits + v.WriteRequestUnits, ReadRequestUnits: u.ReadRequestUnits + v.ReadRequestUnits,
		WarmWriteUnits: u.WarmWriteUnits + v.WarmWriteUnits, WarmReadUnits: u.WarmReadUnits + v.WarmReadUnits,
		LambdaRequests: u.LambdaRequests + v.LambdaRequests, LambdaGBSeconds: u.LambdaGBSeconds + v.LambdaGBSeconds,
		ProvisionedGBSeconds: u.ProvisionedGBSeconds + v.ProvisionedGBSeconds,
		APIRequests:          u.APIRequests + v.APIRequests, SQSRequests: u.SQSRequests + v.SQSRequests,
		KMSRSARequests: u.KMSRSARequests + v.KMSRSARequests, LogBytes: u.LogBytes + v.LogBytes, XRayTraces: u.XRayTraces + v.XRayTraces,
	}
}

// Today is the design as it is.
func Today() Design {
	return Design{
		CreateWrites: 11, PrepayWrites: 1, PaymentWrites: 8, ReleaseWrites: 10,
		PrepayReads: 1, PaymentReads: 2,
		RefusalRecordReads: 1, RefusalOrderReads: 1, RefusalSeconds: 0.010,
		ShardWritesPerOrder:  4,
		IndexEntriesPerOrder: 2,
		PendingByExpiryKeys:  128,
		SQSRequestsPerOrder:  1.2,
		OrderSeconds:         0.030, PageSeconds: 0.010, PrepaySeconds: 0.200, PaymentSeconds: 0.020, ReleaseSeconds: 0.020,
		WeChatPaySeconds: 0.180,
		CreateOrderMB:    256, CloseOrderMB: 256, PayCallbackMB: 128,
		CloseOrderReserved: 20, PayCallbackReserved: 20, OtherReserved: 5, QueueConcurrency: 10,
		StageRate:   500,
		LoginWrites: 3, LoginReads: 0.5, LoginSeconds: 0.150, LoginMB: 256, LoginsPerOrder: 1,
		LogBytesPerInvocation: 412 + 526, AccessLogBytesPerRequest: 566,
		XRaySampled: 0.05, XRayReservoirPerSecond: 1,
		PreWarmedTables: 3, KMSKeys: 3, ProvisionedMinutes: 30,
		PreWarmedIndexes: 3, OrdersByUserEntriesPerOrder: 1,
		RefundingKeys: 16, RefundIndexEntries: 2, RefundOrderWrites: 8,
		RefundWrites: 18, RefundReads: 6, RefundAPIRequests: 2, RefundInvocations: 4, RefundSQSRequests: 6,
		RefundStartSeconds: 0.030, RefundStepSeconds: 0.020, RefundMB: 256,
	}
}

// SKU is what a merchant expects of one SKU at the peak, per second.
type SKU struct {
	ID         string  `json:"skuId"`
	Orders     float64 `json:"ordersPerSecond"`
	PageViews  float64 `json:"pageViewsPerSecond"`
	ShardsWant int     `json:"shardsWant"` // 0: sized by inventory.ShardsForPeak
	// Refusals is the POST /orders requests refused STOCK_OUT a second at the peak:
	// with demand above the stock, the buyers who saw the page before the sell-out and
	// order after it (about the arrival rate for a second or two after it).
	Refusals float64 `json:"refusalsPerSecond,omitempty"`
}

// Demand is a sale to plan: its SKUs, the share of orders paid (the rest are
// released), the share of orders refunded over their life (RefundRatio, at most
// PayRatio: only a paid order is refunded; it prices the refunds per order), and the
// refunds started per second at the peak, all SKUs together (automatic ones of
// payments that came after the stock went, buyers' and the shop's; it loads
// RefundingBySince's keys and the orders table).
type Demand struct {
	SKUs        []SKU   `json:"skus"`
	PayRatio    float64 `json:"payRatio"`
	RefundRatio float64 `json:"refundRatio"`
	Refunds     float64 `json:"refundsPerSecond"`
	// RiskCheckedBuyers is how many buyers are expected in one day to order, queue for
	// or join the waitlist of a SKU with a riskThreshold (the scalper check runs at all
	// three); 0: none (no check planned).
	RiskCheckedBuyers int `json:"riskCheckedBuyers"`
}

// Evenly is a demand of orders, page views and refusals (POST /orders refused
// STOCK_OUT) per second in total, spread evenly over skus SKUs named sku-000 on.
func Evenly(skus int, orders, pageViews, refusals, payRatio float64) Demand {
	d := Demand{PayRatio: payRatio}
	n := float64(skus)
	for i := range skus {
		d.SKUs = append(d.SKUs, SKU{ID: fmt.Sprintf("sku-%03d", i), Orders: orders / n, PageViews: pageViews / n, Refusals: refusals / n})
	}
	return d
}

// Load is what one limit must carry at the peak.
type Load struct {
	// Limit names it as the rehearsal's throttles do, e.g. "index
	// OrdersTable.PendingByExpiry P<k> (each of 128)".
	Limit string `json:"limit"`
	// Peak is the load at the peak and Ceiling what the limit serves, in Unit.
	Peak    float64 `json:"peak"`
	Ceiling float64 `json:"ceiling"`
	Unit    string  `json:"unit"`
	// Setting is what to set or ask AWS for when the peak passes the ceiling: "" when
	// it cannot be raised (a partition) or need not be.
	Setting string `json:"setting"`
}

// Utilisation is Peak / Ceiling.
func (l Load) Utilisation() float64 { return l.Peak / l.Ceiling }

// SKUPlan is one SKU's part of a plan.
type SKUPlan struct {
	SKU
	Shards int `json:"shards"`
	// Uncarried, when set, says that the SKU's peak is past what its shards carry
	// with Shards already inventory.MaxShards, the most a SKU has: no setting carries
	// the sale as asked, and it says what would.
	Uncarried *Uncarried `json:"uncarried,omitempty"`
}

// Uncarried is what would carry a SKU's peak past what the most shards carry: a
// waiting room in front of POST /orders that admits at most AdmitOrders orders a
// second (the waiting room of issue 38: the SKU's queue), or the SKU's stock split into SplitInto SKUs,
// each sized by inventory.ShardsForPeak. CarriedOrders is the most orders a second
// its shards carry at their partitions' ceiling; AdmitOrders the planned load of
// inventory.MaxShards shards (inventory.ShardsForPeak's headroom).
type Uncarried struct {
	CarriedOrders float64 `json:"carriedOrdersPerSecond"`
	AdmitOrders   float64 `json:"admitOrdersPerSecond"`
	SplitInto     int     `json:"splitInto"`
}

// uncarried is what would carry a SKU of peak orders a second on shards shards, nil
// when they carry it (fewer than the most shards, or the most carry the peak).
func uncarried(orders float64, shards int, x Design) *Uncarried {
	carried := float64(shards) * PartitionWriteUnits / x.ShardWritesPerOrder
	if shards < inventory.MaxShards || orders <= carried {
		return nil
	}
	admit := float64(inventory.MaxShards * inventory.ShardCeilingOrdersPerSecond / inventory.ShardHeadroom)
	return &Uncarried{CarriedOrders: carried, AdmitOrders: admit, SplitInto: int(math.Ceil(orders / admit))}
}

// Setting is what the plan advises for a load on the SKU's shards past their ceiling.
func (u *Uncarried) Setting() string {
	return fmt.Sprintf("none carries it: already %d shards, the most; a waiting room (issue 38) admitting %.0f orders/s, or split the SKU into %d SKUs",
		inventory.MaxShards, u.AdmitOrders, u.SplitInto)
}

// Plan is a sale's plan. Its JSON (stockctl -o json plan) has camelCase keys, as the
// API's and the rehearsal's report; what it costs is in US dollars, under usd… keys.
type Plan struct {
	Demand Demand    `json:"demand"`
	SKUs   []SKUPlan `json:"skus"`
	// Loads are every limit's load, most utilised first: Loads[0] binds first.
	Loads []Load `json:"loads"`
	// StageRate is the ApiThrottleRateLimit to deploy with (the busiest route's peak
	// with headroom, never below the template's default: the limit holds every route,
	// also those the plan does not count, such as login and GET /orders), AccountRate
	// the API Gateway throttle to ask for (10,000 when that suffices),
	// AccountConcurrency the Lambda concurrency to ask for, CloseOrderReserved and
	// PayCallbackReserved the reservations to set.
	StageRate           float64 `json:"stageRate"`
	AccountRate         float64 `json:"accountRate"`
	AccountConcurrency  int     `json:"accountConcurrency"`
	CloseOrderReserved  int     `json:"closeOrderReserved"`
	PayCallbackReserved int     `json:"payCallbackReserved"`
	// What one order's life uses, with its page views' reads, requests and
	// invocations (its buyer's login and its refunds apart): all 0 when the demand
	// has no orders.
	WriteUnitsPerOrder        float64 `json:"writeUnitsPerOrder"`
	ReadUnitsPerOrder         float64 `json:"readUnitsPerOrder"`
	APIRequestsPerOrder       float64 `json:"apiRequestsPerOrder"`
	LambdaInvocationsPerOrder float64 `json:"lambdaInvocationsPerOrder"`
	LambdaGBSecondsPerOrder   float64 `json:"lambdaGBSecondsPerOrder"`
	SQSPerOrder               float64 `json:"sqsRequestsPerOrder"`
	// WriteUnitsPerRefund and ReadUnitsPerRefund are what a refund's life uses
	// (Design.RefundWrites, RefundReads).
	WriteUnitsPerRefund float64 `json:"writeUnitsPerRefund"`
	ReadUnitsPerRefund  float64 `json:"readUnitsPerRefund"`
	// WarmWriteUnits and WarmReadUnits are the warm throughput to pre-warm the tables
	// to before the sale (template parameters TableWarmWriteUnits and
	// TableWarmReadUnits), units per second: the busiest table's peak with headroom,
	// 0 when a new on-demand table's NewTableWriteUnits and NewTableReadUnits carry it.
	WarmWriteUnits float64 `json:"warmWriteUnits"`
	WarmReadUnits  float64 `json:"warmReadUnits"`
	// IndexWarmWriteUnits is the write warm throughput to pre-warm the hot indexes to
	// (template parameter IndexWarmWriteUnits), units per second: the busiest index's
	// entries a second at the peak with headroom, 0 when a new on-demand index's
	// NewTableWriteUnits carry it. IndexWrites is each hot index's entries a second
	// at the peak.
	IndexWarmWriteUnits float64      `json:"indexWarmWriteUnits"`
	IndexWrites         []IndexWrite `json:"indexWrites"`
	// ProvisionedConcurrency is the createOrder environments to keep provisioned
	// through the sale (template parameter CreateOrderProvisioned) when Lambda's
	// scaling rate would not start them in time (0 when it would), for
	// Design.ProvisionedMinutes. CloseOrderProvisioned is closeOrder's
	// (CloseOrderProvisioned), for the prepays that follow the first orders within
	// seconds; never above CloseOrderReserved, as Lambda requires ("Configuring
	// provisioned concurrency for a function").
	ProvisionedConcurrency int     `json:"provisionedConcurrency"`
	CloseOrderProvisioned  int     `json:"closeOrderProvisioned"`
	ProvisionedMinutes     float64 `json:"provisionedMinutes"`
	// Cost is what a million orders cost with their page views, their buyers' logins
	// and their refunds (Demand.RefundRatio of them), line by line, fixed costs apart;
	// nil when the demand has no orders (a plan of page views alone has no cost per
	// order). RefundCost is the refunds' part of it.
	Cost       *Cost `json:"usdPerMillionOrders,omitempty"`
	RefundCost *Cost `json:"usdRefundsPerMillionOrders,omitempty"`
	// FixedPerSale is what one sale costs whatever its orders: the provisioned
	// concurrency and the pre-warming advised. KMSKeysPerMonth is the customer managed
	// keys' monthly fee, whatever the sales.
	FixedPerSale    Cost    `json:"usdFixedPerSale"`
	KMSKeysPerMonth float64 `json:"usdKmsKeysPerMonth"`
	// IndexPreWarming is the indexes' part of FixedPerSale.PreWarming.
	IndexPreWarming float64 `json:"usdIndexPreWarming"`
	// LoginCost is what a million logins that sign a new token cost (one kms:Sign to
	// an RSA 2048 key each), ReusedLoginCost a million answered from the kept token,
	// RefundCostEach a million refunds over their whole life.
	LoginCost       Cost `json:"usdPerMillionNewTokenLogins"`
	ReusedLoginCost Cost `json:"usdPerMillionKeptTokenLogins"`
	RefundCostEach  Cost `json:"usdPerMillionRefunds"`
	// RiskCheck is what the scalper check asks of WeChat's daily quota; nil when the
	// demand has no RiskCheckedBuyers.
	RiskCheck *RiskCheck `json:"riskCheck,omitempty"`
}

// RiskQuotaPage is WeChat's page of getApiQuota (查询 API 调用额度: POST
// https://api.weixin.qq.com/cgi-bin/openapi/quota/get?access_token=…, body
// {"cgi_path": "…"}, answering quota.daily_limit, used and remain for today).
const RiskQuotaPage = "https://developers.weixin.qq.com/doc/offiaccount/openApi/get_api_quota.html"

// RiskCheck is the scalper check's share of a sale: Calls getUserRiskRank calls in
// a day (one per buyer: createOrder keeps each answer a day, docs/design.md, "The
// scalper check"), which the mini-program account's daily quota of
// /wxa/getuserriskrank must cover: its remain, read with QuotaRequest (getApiQuota,
// RiskQuotaPage), at least Calls on the sale's day. Calls is a floor: while WeChat
// answers without a rank, each buyer is asked again once a minute per instance.
type RiskCheck struct {
	Calls        int    `json:"getUserRiskRankCalls"`
	QuotaRequest string `json:"quotaRequest"`
	QuotaPage    string `json:"quotaPage"`
}

// Advice is r as the plan prints it: the calls, and the quota to check before the
// sale, with the request that reads it ($ACCESS_TOKEN: the mini-program's access
// token, e.g. from stable_token).
func (r *RiskCheck) Advice() string {
	return fmt.Sprintf("Scalper check: %d getUserRiskRank calls (one per buyer of a SKU with a riskThreshold, kept a day; more while WeChat answers without a rank). The mini-program's daily quota of /wxa/getuserriskrank must cover them: on the sale's day, quota.remain of getApiQuota must be at least %d: %s (%s).",
		r.Calls, r.Calls, r.QuotaRequest, r.QuotaPage)
}

// riskCheck is the RiskCheck of buyers buyers a day, nil for none.
func riskCheck(buyers int) *RiskCheck {
	if buyers <= 0 {
		return nil
	}
	return &RiskCheck{
		Calls:        buyers,
		QuotaRequest: `curl -s -X POST "https://api.weixin.qq.com/cgi-bin/openapi/quota/get?access_token=$ACCESS_TOKEN" -d '{"cgi_path":"/wxa/getuserriskrank"}'`,
		QuotaPage:    RiskQuotaPage,
	}
}

// USDPerMillionOrders is Cost.Total, and false when the demand has no orders.
func (p Plan) USDPerMillionOrders() (float64, bool) {
	if p.Cost == nil {
		return 0, false
	}
	return p.Cost.Total, true
}

// Make plans demand d on design x at prices p.
func Make(d Demand, x Design, p Prices) Plan {
	pl := Plan{Demand: d}
	t := pl.planSKUs(x)
	pl.addIndexAndTableLoads(x, t)
	pl.planWarmThroughput()
	pl.planIndexWarmThroughput(x, t)
	pl.planAPIGateway(x, t)
	pl.planLambda(x, t)
	pl.rankLoads()
	pl.costPerOrder(x, t, p)
	pl.FixedPerSale = p.Cost(x.PreWarmUsage(pl.WarmWriteUnits, pl.WarmReadUnits).Add(x.IndexPreWarmUsage(pl.IndexWarmWriteUnits)).Add(Usage{
		ProvisionedGBSeconds: ProvisionedGBSeconds(pl.ProvisionedConcurrency, x.CreateOrderMB, x.ProvisionedMinutes*60) +
			ProvisionedGBSeconds(pl.CloseOrderProvisioned, x.CloseOrderMB, x.ProvisionedMinutes*60),
	}))
	pl.KMSKeysPerMonth = float64(x.KMSKeys) * p.KMSKeyMonths
	pl.IndexPreWarming = p.Cost(x.IndexPreWarmUsage(pl.IndexWarmWriteUnits)).PreWarming
	pl.ProvisionedMinutes = x.ProvisionedMinutes
	pl.LoginCost, pl.ReusedLoginCost = loginCosts(x, p)
	pl.RefundCostEach = p.Cost(x.RefundUsage(1e6))
	pl.WriteUnitsPerRefund, pl.ReadUnitsPerRefund = x.RefundWrites, x.RefundReads
	pl.RiskCheck = riskCheck(d.RiskCheckedBuyers)
	return pl
}

// loginCosts prices a million logins of design x at p: signing a new token, and
// answering the kept one.
func loginCosts(x Design, p Prices) (signed, reused Cost) {
	const million = 1e6
	return p.Cost(x.LoginUsage(million, true)), p.Cost(x.LoginUsage(million, false))
}

// totals are a demand's peak summed over its SKUs, per second: orders, page views,
// and the read units of those page views (each reads the SKU record and its shards).
type totals struct {
	orders, views, viewReads, refusals float64
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
		un := uncarried(s.Orders, shards, x)
		pl.SKUs = append(pl.SKUs, SKUPlan{SKU: s, Shards: shards, Uncarried: un})
		reshard := "more shards (reshard)"
		if un != nil {
			reshard = un.Setting()
		}
		t.orders += s.Orders
		t.views += s.PageViews
		// Each environment serving the page reads it at most once a second.
		pageReads := min(s.PageViews, math.Ceil(s.PageViews*x.PageSeconds))
		t.viewReads += pageReads * float64(1+shards)
		t.refusals += s.Refusals
		pl.Loads = append(pl.Loads,
			Load{Limit: fmt.Sprintf("item SkusTable %s#shard#n (each of %d)", s.ID, shards), Peak: s.Orders * x.ShardWritesPerOrder / float64(shards), Ceiling: PartitionWriteUnits, Unit: "WU/s",
				Setting: reshard},
			Load{Limit: fmt.Sprintf("item SkusTable %s (and each shard), read by each page environment once a second", s.ID), Peak: pageReads, Ceiling: PartitionReadUnits, Unit: "RU/s",
				Setting: "a partition: a CDN in front of the page"},
			Load{Limit: fmt.Sprintf("index StockLogTable.LedgerByShard %s#n (each of %d)", s.ID, shards), Peak: s.Orders * x.IndexEntriesPerOrder / float64(shards), Ceiling: PartitionWriteUnits, Unit: "WU/s",
				Setting: reshard},
		)
		if s.Refusals > 0 {
			pl.Loads = append(pl.Loads, Load{Limit: fmt.Sprintf("item SkusTable %s, read strongly by each refusal after the sell-out", s.ID), Peak: s.Refusals * x.RefusalRecordReads, Ceiling: PartitionReadUnits, Unit: "RU/s",
				Setting: "a partition: sell through the waiting room (queue: true), whose line tells the buyers SOLD_OUT instead of refusing their orders"})
		}
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
		Load{Limit: "table SkusTable reads", Peak: t.viewReads + t.refusals*x.RefusalRecordReads, Ceiling: TableRequestUnits, Unit: "RRU/s", Setting: "a per-table quota increase"},
		Load{Limit: "table OrdersTable reads", Peak: orders*paid*(x.PrepayReads+x.PaymentReads) + t.refusals*x.RefusalOrderReads, Ceiling: TableRequestUnits, Unit: "RRU/s", Setting: "a per-table quota increase"},
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

// IndexWrite is one global secondary index's writes at the peak: Index names it as
// Table.Index, WriteUnits is its write units (entries under 1 KB) a second.
type IndexWrite struct {
	Index      string  `json:"index"`
	WriteUnits float64 `json:"writeUnitsPerSecond"`
}

// planIndexWarmThroughput sets the write warm throughput to pre-warm the hot indexes
// to: each index entry is a write of its index, which throttles the base write past
// the index's warm throughput as past a key's partition ("Understanding GSI write
// throttling and back-pressure in DynamoDB"). PendingByExpiry and LedgerByShard take
// IndexEntriesPerOrder entries an order, OrdersByUser OrdersByUserEntriesPerOrder.
func (pl *Plan) planIndexWarmThroughput(x Design, t totals) {
	pl.IndexWrites = []IndexWrite{
		{"OrdersTable.PendingByExpiry", t.orders * x.IndexEntriesPerOrder},
		{"StockLogTable.LedgerByShard", t.orders * x.IndexEntriesPerOrder},
		{"OrdersTable.OrdersByUser", t.orders * x.OrdersByUserEntriesPerOrder},
	}
	busiest := 0.0
	for _, w := range pl.IndexWrites {
		busiest = max(busiest, w.WriteUnits)
	}
	if busiest > NewTableWriteUnits {
		pl.IndexWarmWriteUnits = math.Ceil(busiest * Headroom)
	}
}

// indexWritesText is ws as "PendingByExpiry 60000, LedgerByShard 60000, …".
func indexWritesText(ws []IndexWrite) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		_, index, _ := strings.Cut(w.Index, ".")
		parts[i] = fmt.Sprintf("%s %.0f", index, w.WriteUnits)
	}
	return strings.Join(parts, ", ")
}

// planAPIGateway sets the stage and account rates to deploy with and ask for, and
// adds the loads on API Gateway's account throttle and the two busy routes: POST
// /orders, and per paid order the prepay and the notification.
func (pl *Plan) planAPIGateway(x Design, t totals) {
	orders, views := t.orders, t.views
	api := views + orders*(1+2*pl.Demand.PayRatio) + t.refusals
	busiest := max(views, orders+t.refusals)
	pl.StageRate = max(x.StageRate, math.Ceil(busiest*Headroom))
	pl.AccountRate = max(AccountRequestsPerSecond, math.Ceil(api*Headroom))
	pl.Loads = append(pl.Loads,
		Load{Limit: "API Gateway account", Peak: api, Ceiling: AccountRequestsPerSecond, Unit: "requests/s", Setting: fmt.Sprintf("ask for %.0f requests/s", pl.AccountRate)},
		Load{Limit: "API Gateway route GET /skus/{skuId}", Peak: views, Ceiling: x.StageRate, Unit: "requests/s", Setting: fmt.Sprintf("ApiThrottleRateLimit=%.0f", pl.StageRate)},
		Load{Limit: "API Gateway route POST /orders", Peak: orders + t.refusals, Ceiling: x.StageRate, Unit: "requests/s", Setting: fmt.Sprintf("ApiThrottleRateLimit=%.0f", pl.StageRate)},
	)
}

// planLambda sets the reserved concurrency of closeOrder and payCallback and the
// account concurrency to ask for (concurrency is rate × duration), and adds the
// loads on them and on Lambda's scaling rate.
func (pl *Plan) planLambda(x Design, t totals) {
	paid := pl.Demand.PayRatio
	released := 1 - paid
	orders, views := t.orders, t.views
	createC := orders*x.OrderSeconds + views*x.PageSeconds + t.refusals*x.RefusalSeconds
	prepayC := orders * paid * x.PrepaySeconds
	closeC := prepayC + orders*released*x.ReleaseSeconds + float64(x.QueueConcurrency) + 1
	payC := orders * paid * x.PaymentSeconds
	pl.CloseOrderReserved = int(math.Ceil(closeC * Headroom))
	pl.PayCallbackReserved = int(math.Ceil(max(payC*Headroom, float64(x.PayCallbackReserved))))
	pl.CloseOrderReserved = max(pl.CloseOrderReserved, x.CloseOrderReserved)
	if prepayC > scaledIn10s {
		pl.CloseOrderProvisioned = min(int(math.Ceil(prepayC*Headroom)), pl.CloseOrderReserved)
	}
	need := createC*Headroom + float64(pl.CloseOrderReserved+pl.PayCallbackReserved+x.OtherReserved) + 100 // Lambda keeps 100 unreserved
	pl.AccountConcurrency = max(AccountConcurrency, int(math.Ceil(need)))
	if createC > scaledIn10s {
		pl.ProvisionedConcurrency = int(math.Ceil(createC * Headroom))
	}
	pl.Loads = append(pl.Loads,
		Load{Limit: "Lambda CreateOrderFunction (the unreserved concurrency)", Peak: createC, Ceiling: AccountConcurrency - float64(x.CloseOrderReserved+x.PayCallbackReserved+x.OtherReserved), Unit: "concurrent", Setting: fmt.Sprintf("ask for %d concurrent executions", pl.AccountConcurrency)},
		Load{Limit: "Lambda CloseOrderFunction (reserved)", Peak: closeC, Ceiling: float64(x.CloseOrderReserved), Unit: "concurrent", Setting: fmt.Sprintf("ReservedConcurrentExecutions: %d", pl.CloseOrderReserved)},
		Load{Limit: "Lambda PayCallbackFunction (reserved)", Peak: payC, Ceiling: float64(x.PayCallbackReserved), Unit: "concurrent", Setting: fmt.Sprintf("ReservedConcurrentExecutions: %d", pl.PayCallbackReserved)},
		Load{Limit: "Lambda scaling rate (createOrder's environments in the first 10 s)", Peak: createC, Ceiling: scaledIn10s, Unit: "environments",
			Setting: fmt.Sprintf("fixed: provision %d environments before the sale (CreateOrderProvisioned=%d)", pl.ProvisionedConcurrency, pl.ProvisionedConcurrency)},
		Load{Limit: "Lambda scaling rate (closeOrder's prepays in the first 10 s)", Peak: prepayC, Ceiling: scaledIn10s, Unit: "environments",
			Setting: fmt.Sprintf("fixed: provision %d environments before the sale (CloseOrderProvisioned=%d)", pl.CloseOrderProvisioned, pl.CloseOrderProvisioned)},
	)
}

// scaledIn10s is how many environments of a function Lambda starts in a sale's first
// 10 seconds: 1,000 every 10 seconds ("Lambda scaling behavior").
const scaledIn10s = 1000

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
// its page views' reads, requests and invocations, its logs and traces, its buyer's
// login, its share of refunds) and what a million cost at p, line by line; nothing
// when the demand has no orders.
func (pl *Plan) costPerOrder(x Design, t totals, p Prices) {
	paid := pl.Demand.PayRatio
	released := 1 - paid
	orders, views := t.orders, t.views
	if orders <= 0 {
		return // no orders: no cost per order
	}
	pl.WriteUnitsPerOrder = x.CreateWrites + paid*(x.PrepayWrites+x.PaymentWrites) + released*x.ReleaseWrites
	viewsPerOrder := views / orders
	pl.ReadUnitsPerOrder = paid*(x.PrepayReads+x.PaymentReads) + t.viewReads/orders
	pl.APIRequestsPerOrder = 1 + 2*paid + viewsPerOrder
	pl.LambdaInvocationsPerOrder = 1 + paid*2 + released/10 + viewsPerOrder // releases come in batches of 10
	pl.LambdaGBSecondsPerOrder = x.OrderSeconds*x.CreateOrderMB/1024 + viewsPerOrder*x.PageSeconds*x.CreateOrderMB/1024 +
		paid*(x.PrepaySeconds*x.CloseOrderMB/1024+x.PaymentSeconds*x.PayCallbackMB/1024) + released*x.ReleaseSeconds*x.CloseOrderMB/1024
	pl.SQSPerOrder = x.SQSRequestsPerOrder
	const million = 1e6
	invocations, requests := pl.LambdaInvocationsPerOrder*million, pl.APIRequestsPerOrder*million
	order := Usage{
		WriteRequestUnits: pl.WriteUnitsPerOrder * million, ReadRequestUnits: pl.ReadUnitsPerOrder * million,
		LambdaRequests: invocations, LambdaGBSeconds: pl.LambdaGBSecondsPerOrder * million,
		APIRequests: requests, SQSRequests: pl.SQSPerOrder * million,
		LogBytes: x.LogBytes(invocations, requests), XRayTraces: invocations * x.XRaySampled,
	}
	refunds := x.RefundUsage(pl.Demand.RefundRatio * million)
	refundCost := p.Cost(refunds)
	all := p.Cost(order.Add(x.LoginUsage(x.LoginsPerOrder*million, true)).Add(refunds))
	pl.Cost, pl.RefundCost = &all, &refundCost
}

// Binding is the limit that binds first (the most utilised), and whether it binds at
// the peak at all.
func (p Plan) Binding() (Load, bool) {
	if len(p.Loads) == 0 {
		return Load{}, false
	}
	return p.Loads[0], p.Loads[0].Peak > p.Loads[0].Ceiling
}

// writeUncarried prints, for each SKU its shards cannot carry, what would.
func (p Plan) writeUncarried(w io.Writer) {
	for _, s := range p.SKUs {
		if u := s.Uncarried; u != nil {
			fmt.Fprintf(w, "%s CANNOT BE CARRIED AS ASKED: %.0f orders/s is past the %.0f that %d shards, the most a SKU has, carry at their partitions' ceiling; no setting or quota raises it. What would carry it: a waiting room (issue 38) that admits %.0f orders/s (its shards' planned load), or split the SKU into %d SKUs.\n",
				s.ID, s.Orders, u.CarriedOrders, s.Shards, u.AdmitOrders, u.SplitInto)
		}
	}
}

// figure prints a peak, a rate or a percentage for people: whole above 10, one decimal
// below (0.5, 2.3; 4 rather than 4.0), and "<0.1" for a figure above 0 that one decimal
// would round to 0, so that a load is never shown as a misleading 0.
func figure(v float64) string {
	switch {
	case v == 0 || v >= 10 || v < 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v < 0.05:
		return "<0.1"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// Write prints the plan as tables: shards per SKU, every limit's load against its
// ceiling (what binds first on top), what to set and ask for, and the cost.
func (p Plan) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SKU\tpeak orders/s\tpeak page views/s\tshards\t")
	for _, s := range p.SKUs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t\n", s.ID, figure(s.Orders), figure(s.PageViews), s.Shards)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "limit\tpeak\tceiling\tused\tto carry the peak")
	for _, l := range p.Loads {
		fmt.Fprintf(tw, "%s\t%s %s\t%.0f\t%s%%\t%s\n", l.Limit, figure(l.Peak), l.Unit, l.Ceiling, figure(100*l.Utilisation()), l.Setting)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	p.writeUncarried(w)
	b, over := p.Binding()
	verb := "binds first, under its ceiling"
	if over {
		verb = "binds first, PAST its ceiling"
	}
	fmt.Fprintf(w, "%s %s (%s%%).\n", b.Limit, verb, figure(100*b.Utilisation()))
	p.writeSettings(w)
	if c := p.Cost; c != nil {
		fmt.Fprintf(w, "Cost: $%.2f per million orders with their page views, their buyers' logins and their refunds (DynamoDB $%.2f: %.1f write and %.1f read units per order's life; Lambda requests $%.2f and GB-seconds $%.2f; API Gateway $%.2f; SQS $%.2f; KMS signing $%.2f; CloudWatch Logs $%.2f; X-Ray $%.2f).\n",
			c.Total, c.DynamoDB, p.WriteUnitsPerOrder, p.ReadUnitsPerOrder, c.LambdaRequests, c.LambdaGBSeconds, c.APIGateway, c.SQS, c.KMS, c.Logs, c.XRay)
		fmt.Fprintf(w, "Refunds: $%.2f of it, %.1f%% of the orders refunded (--refund-ratio %g).\n", p.RefundCost.Total, 100*p.Demand.RefundRatio, p.Demand.RefundRatio)
	} else {
		fmt.Fprintln(w, "Cost: no cost per order: the plan has no orders (--orders 0), so nothing is divided by them; the fixed cost and the cost per login and per refund below still hold.")
	}
	r := p.RefundCostEach
	fmt.Fprintf(w, "Refund: $%.2f per million refunds over their life (DynamoDB $%.2f: %.0f write and %.0f read units each; Lambda $%.2f: WeChat Pay's refund call and WeChat's notice free but billed as their round trips' time; API Gateway $%.2f; SQS $%.2f; logs and traces $%.2f).\n",
		r.Total, r.DynamoDB, p.WriteUnitsPerRefund, p.ReadUnitsPerRefund, r.Lambda(), r.APIGateway, r.SQS, r.Logs+r.XRay)
	f := p.FixedPerSale
	fmt.Fprintf(w, "Fixed: $%.2f per sale, whatever its orders (provisioned concurrency $%.2f: %d createOrder and %d closeOrder environments for %.0f minutes; pre-warming $%.2f, of which the indexes $%.2f); KMS keys $%.2f a month.\n",
		f.Total, f.ProvisionedConcurrency, p.ProvisionedConcurrency, p.CloseOrderProvisioned, p.ProvisionedMinutes, f.PreWarming, p.IndexPreWarming, p.KMSKeysPerMonth)
	if r := p.RiskCheck; r != nil {
		fmt.Fprintln(w, r.Advice())
	}
	l := p.LoginCost
	_, err := fmt.Fprintf(w, "Login: $%.2f per million new tokens (KMS $%.2f: one RSA 2048 kms:Sign each; DynamoDB $%.2f; Lambda $%.2f; API Gateway $%.2f; logs and traces $%.2f); $%.2f per million answered from the kept token.\n",
		l.Total, l.KMS, l.DynamoDB, l.Lambda(), l.APIGateway, l.Logs+l.XRay, p.ReusedLoginCost.Total)
	return err
}

// writeSettings writes the plan's deploy lines: the parameters and quotas to set,
// the provisioned environments shortly before the sale, the pre-warming a day before.
func (p Plan) writeSettings(w io.Writer) {
	fmt.Fprintf(w, "Deploy with ApiThrottleRateLimit=%.0f CloseOrderReserved=%d PayCallbackReserved=%d; ask AWS for an API Gateway throttle of %.0f requests/s and %d concurrent Lambda executions.\n",
		p.StageRate, p.CloseOrderReserved, p.PayCallbackReserved, p.AccountRate, p.AccountConcurrency)
	if p.ProvisionedConcurrency+p.CloseOrderProvisioned > 0 {
		fmt.Fprintf(w, "Shortly before the sale, deploy with CreateOrderProvisioned=%d CloseOrderProvisioned=%d, and with 0 after it: Lambda starts at most %d new environments of a function every 10 seconds (\"Lambda scaling behavior\"), and provisioned ones are billed per GB-second, used or not: the fixed cost below.\n",
			p.ProvisionedConcurrency, p.CloseOrderProvisioned, scaledIn10s)
	}
	if p.WarmWriteUnits > 0 {
		fmt.Fprintf(w, "Pre-warm the tables at least 24 hours before the sale: deploy with TableWarmWriteUnits=%.0f TableWarmReadUnits=%.0f (a new on-demand table serves %d writes and %d reads a second at once, and at most twice its previous peak within 30 minutes: \"Pre-warming a table for on-demand capacity mode\"); raising it is billed once (\"Understanding DynamoDB warm throughput\"): the fixed cost below.\n",
			p.WarmWriteUnits, p.WarmReadUnits, NewTableWriteUnits, NewTableReadUnits)
	}
	if p.IndexWarmWriteUnits > 0 {
		fmt.Fprintf(w, "Pre-warm the indexes too, at the same time: deploy with IndexWarmWriteUnits=%.0f (%s index writes a second at the peak; a new on-demand index, like a table, serves %d at once, and its writes past that throttle the orders' own: \"Understanding GSI write throttling and back-pressure\"); billed once as the tables' are: the fixed cost below.\n",
			p.IndexWarmWriteUnits, indexWritesText(p.IndexWrites), NewTableWriteUnits)
	}
}
