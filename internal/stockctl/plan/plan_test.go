package plan_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/stockctl/plan"
)

// load finds the load whose limit starts with prefix.
func load(t *testing.T, p plan.Plan, prefix string) plan.Load {
	t.Helper()
	for _, l := range p.Loads {
		if strings.HasPrefix(l.Limit, prefix) {
			return l
		}
	}
	t.Fatalf("no load %q in %+v", prefix, p.Loads)
	return plan.Load{}
}

func TestMake_LoadsAndWhatBindsFirst(t *testing.T) {
	for _, tc := range []struct {
		name        string
		demand      plan.Demand
		shards      int
		ledgerByKey float64 // LedgerByShard write units/s per key (a shard's)
		pendingKey  float64 // PendingByExpiry write units/s per key
		binding     string
		past        bool
		stageRate   float64
	}{
		{
			// Today's template carries 500 requests/s per route, and closeOrder's 20
			// reserved (10 for the queue, 1 for the sweep) start about 45 payments/s
			// when WeChat Pay takes 200 ms: the payments bind before the page.
			name: "a small sale", demand: plan.Evenly(10, 1000, 3000, 0, 0.7),
			shards: inventory.ShardsForPeak(100), ledgerByKey: 100 * 2 / float64(inventory.ShardsForPeak(100)), pendingKey: 1000 * 2 / 128.0,
			binding: "Lambda CloseOrderFunction", past: true, stageRate: 3750,
		},
		{
			// A shop's everyday traffic: the template's 500/s per route stays, since it
			// also holds the routes the plan does not count (login, GET /orders).
			name: "a trickle", demand: plan.Evenly(1, 1, 1, 0, 0.7),
			shards: inventory.ShardsForPeak(1), ledgerByKey: 1 * 2 / float64(inventory.ShardsForPeak(1)), pendingKey: 1 * 2 / 128.0,
			binding: "Lambda CloseOrderFunction", past: false, stageRate: 500,
		},
		{
			// 8,000 orders/s filled the 16 keys of the time-ordered ledger index the
			// design had; a ledger key is now a shard's, and takes half its writes.
			name: "the old index ceiling", demand: plan.Evenly(10, 8000, 0, 0, 0.7),
			shards: inventory.ShardsForPeak(800), ledgerByKey: 800 * 2 / float64(inventory.ShardsForPeak(800)), pendingKey: 8000 * 2 / 128.0,
			binding: "Lambda CloseOrderFunction", past: true, stageRate: 10000,
		},
		{
			// 30,000 orders/s over 10 SKUs: no index key past its ceiling; closeOrder's
			// reservation far past.
			name: "30,000 orders/s over 10 SKUs, 100,000 page views/s", demand: plan.Evenly(10, 30000, 100000, 0, 0.7),
			shards: inventory.ShardsForPeak(3000), ledgerByKey: 3000 * 2 / float64(inventory.ShardsForPeak(3000)), pendingKey: 30000 * 2 / 128.0,
			binding: "Lambda CloseOrderFunction", past: true, stageRate: 125000,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.Make(tc.demand, plan.Today(), plan.DefaultPrices)
			for _, s := range p.SKUs {
				if s.Shards != tc.shards {
					t.Errorf("%s: %d shards, want %d (inventory.ShardsForPeak)", s.ID, s.Shards, tc.shards)
				}
			}
			ledger := load(t, p, "index StockLogTable.LedgerByShard")
			if math.Abs(ledger.Peak-tc.ledgerByKey) > 1e-9 {
				t.Errorf("LedgerByShard per key %.1f WU/s, want %.1f", ledger.Peak, tc.ledgerByKey)
			}
			if shard := load(t, p, "item SkusTable sku-000#shard#n"); ledger.Peak > shard.Peak {
				t.Errorf("a ledger key takes %.1f WU/s, more than its shard's %.1f", ledger.Peak, shard.Peak)
			}
			got := load(t, p, "index OrdersTable.PendingByExpiry").Peak
			if got != tc.pendingKey {
				t.Errorf("PendingByExpiry per key %.1f WU/s, want %.1f", got, tc.pendingKey)
			}
			// The one index key space not bounded by the shards stays below them, so a
			// burst meets a shard's ceiling first.
			if shard := load(t, p, "item SkusTable sku-000#shard#n"); got > shard.Peak {
				t.Errorf("a PendingByExpiry key takes %.1f WU/s, more than a shard's %.1f", got, shard.Peak)
			}
			for _, l := range p.Loads {
				if strings.HasPrefix(l.Limit, "index ") && l.Peak > l.Ceiling {
					t.Errorf("%s past its ceiling: %.0f of %.0f", l.Limit, l.Peak, l.Ceiling)
				}
			}
			b, past := p.Binding()
			if !strings.HasPrefix(b.Limit, tc.binding) || past != tc.past {
				t.Errorf("binds first: %q (past %t), want %q (past %t)", b.Limit, past, tc.binding, tc.past)
			}
			if p.StageRate != tc.stageRate {
				t.Errorf("ApiThrottleRateLimit %v, want %v", p.StageRate, tc.stageRate)
			}
			for i := 1; i < len(p.Loads); i++ {
				if p.Loads[i].Utilisation() > p.Loads[i-1].Utilisation() {
					t.Errorf("loads not most utilised first at %d: %+v after %+v", i, p.Loads[i], p.Loads[i-1])
				}
			}
		})
	}
}

func TestMake_PerOrderCostOfTodaysDesign(t *testing.T) {
	p := plan.Make(plan.Evenly(10, 1000, 2000, 0, 0.7), plan.Today(), plan.DefaultPrices)
	// 11 to reserve; paid: 1 prepay + 8 payment; released: 10.
	if want := 11 + 0.7*9 + 0.3*10; math.Abs(p.WriteUnitsPerOrder-want) > 1e-9 {
		t.Errorf("%.2f write units per order, want %.2f", p.WriteUnitsPerOrder, want)
	}
	// 200 page views/s per SKU, 10 ms each: 2 environments, each reading the SKU
	// record and its one shard once a second (4 read units/s per SKU, 40 for 1,000
	// orders/s); paid orders read the order at the prepay and the payment.
	if want := 40.0/1000 + 0.7*3; math.Abs(p.ReadUnitsPerOrder-want) > 1e-9 {
		t.Errorf("%.2f read units per order, want %.2f", p.ReadUnitsPerOrder, want)
	}
	// With the buyer's login: 3 write units and 0.5 read units.
	wantDynamo := (p.WriteUnitsPerOrder+3)*0.625 + (p.ReadUnitsPerOrder+0.5)*0.125
	if total, ok := p.USDPerMillionOrders(); math.Abs(p.Cost.DynamoDB-wantDynamo) > 1e-9 || !ok || total <= p.Cost.DynamoDB {
		t.Errorf("cost %+v, DynamoDB want $%.4f per million orders", p.Cost, wantDynamo)
	}
}

func TestMake_RaisesOnlyWhatThePeakPasses(t *testing.T) {
	p := plan.Make(plan.Evenly(1, 20, 100, 0, 0.7), plan.Today(), plan.DefaultPrices)
	for _, l := range p.Loads {
		if l.Peak <= l.Ceiling && l.Setting != "" {
			t.Errorf("%s under its ceiling asks for %q", l.Limit, l.Setting)
		}
	}
	if p.AccountRate != plan.AccountRequestsPerSecond || p.AccountConcurrency != plan.AccountConcurrency || p.CloseOrderReserved != 20 {
		t.Errorf("a small sale asks for %.0f requests/s, %d concurrency, closeOrder %d; want the defaults", p.AccountRate, p.AccountConcurrency, p.CloseOrderReserved)
	}
	if p.ProvisionedConcurrency != 0 || p.CloseOrderProvisioned != 0 {
		t.Errorf("a small sale provisions %d createOrder and %d closeOrder environments; want none", p.ProvisionedConcurrency, p.CloseOrderProvisioned)
	}
}

// A sale's prepays come seconds after its first orders, faster than Lambda's scaling
// rate (1,000 environments a function every 10 s) starts closeOrder's environments:
// the plan provisions them, within closeOrder's reserved concurrency (Lambda refuses
// more), and the deploy lines name the template's parameters.
func TestMake_ProvisionsCloseOrderForThePrepaysWithinItsReservation(t *testing.T) {
	x := plan.Today()
	p := plan.Make(plan.Evenly(10, 30000, 100000, 0, 0.9), x, plan.DefaultPrices)
	prepays := 30000 * 0.9 * x.PrepaySeconds
	if float64(p.CloseOrderProvisioned) < prepays || p.CloseOrderProvisioned > p.CloseOrderReserved {
		t.Errorf("closeOrder: %d provisioned, %d reserved; want at least the %.0f concurrent prepays, within the reservation", p.CloseOrderProvisioned, p.CloseOrderReserved, prepays)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("CloseOrderReserved=%d PayCallbackReserved=%d", p.CloseOrderReserved, p.PayCallbackReserved),
		fmt.Sprintf("CreateOrderProvisioned=%d CloseOrderProvisioned=%d, and with 0 after it", p.ProvisionedConcurrency, p.CloseOrderProvisioned),
		"Lambda scaling rate (closeOrder's prepays in the first 10 s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan does not say %q:\n%s", want, out.String())
		}
	}
}

// The planner's PendingByExpiry keys are the store's buckets.
func TestToday_PendingByExpiryKeysAreTheStoresBuckets(t *testing.T) {
	if got := plan.Today().PendingByExpiryKeys; got != dynamo.PendingBuckets {
		t.Errorf("the planner spreads PendingByExpiry over %d keys, the store over %d", got, dynamo.PendingBuckets)
	}
}

// The planner's RefundingBySince keys are the store's buckets.
func TestToday_RefundingKeysAreTheStoresBuckets(t *testing.T) {
	if got := plan.Today().RefundingKeys; got != dynamo.RefundBuckets {
		t.Errorf("the planner spreads RefundingBySince over %d keys, the store over %d", got, dynamo.RefundBuckets)
	}
}

// Refunds under way are counted per RefundingBySince key: each refund puts its marker
// and deletes it (2 writes), spread over the 16 keys, so 8,000 refunds a second fill a
// key (one key took 500); past that the plan says the index must spread further. Their
// order and marker writes count on the orders table.
func TestMake_CountsRefundWritesPerRefundingKey(t *testing.T) {
	for _, tc := range []struct {
		refunds, perKey float64
		past            bool
	}{{0, 0, false}, {500, 62.5, false}, {8000, 1000, false}, {12000, 1500, true}} {
		d := plan.Evenly(10, 1000, 1000, 0, 0.7)
		d.Refunds = tc.refunds
		p := plan.Make(d, plan.Today(), plan.DefaultPrices)
		l := load(t, p, "index OrdersTable.RefundingBySince R<k> (each of 16)")
		if l.Peak != tc.perKey || (l.Peak > l.Ceiling) != tc.past || (l.Setting != "") != tc.past {
			t.Errorf("%.0f refunds/s: %+v, want %.1f WU/s a key, past %v", tc.refunds, l, tc.perKey, tc.past)
		}
		none := plan.Make(plan.Evenly(10, 1000, 1000, 0, 0.7), plan.Today(), plan.DefaultPrices)
		if got, want := load(t, p, "table OrdersTable writes").Peak-load(t, none, "table OrdersTable writes").Peak, tc.refunds*8; math.Abs(got-want) > 1e-9 {
			t.Errorf("%.0f refunds/s add %.0f WRU/s on the orders table, want %.0f", tc.refunds, got, want)
		}
	}
}

// A million logins that sign a new token cost a million kms:Sign requests to the RSA
// 2048 key at $0.03 per 10,000 (AWS KMS pricing), with 3 write and 0.5 read units, a
// Lambda invocation and an API request each; one answered from the kept token signs
// nothing and writes one unit less.
func TestMake_LoginCostsOneRSASignPerNewToken(t *testing.T) {
	p := plan.Make(plan.Evenly(1, 10, 10, 0, 0.7), plan.Today(), plan.DefaultPrices)
	signed, reused := p.LoginCost, p.ReusedLoginCost
	if math.Abs(signed.KMS-3.00) > 1e-9 || reused.KMS != 0 {
		t.Errorf("KMS per million logins: %.4f new, %.4f reused; want 3.00 and 0", signed.KMS, reused.KMS)
	}
	if want := 3*0.625 + 0.5*0.125; math.Abs(signed.DynamoDB-want) > 1e-9 || math.Abs(reused.DynamoDB-(want-0.625)) > 1e-9 {
		t.Errorf("DynamoDB per million logins: %.4f new, %.4f reused; want %.4f and %.4f", signed.DynamoDB, reused.DynamoDB, want, want-0.625)
	}
	if signed.APIGateway != 1.00 || signed.Lambda() <= 0.20 || signed.Lambda() != reused.Lambda() {
		t.Errorf("API Gateway %.2f, Lambda %.4f new and %.4f reused", signed.APIGateway, signed.Lambda(), reused.Lambda())
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil || !strings.Contains(out.String(), "Login: $7.59 per million new tokens (KMS $3.00") {
		t.Errorf("plan output %v:\n%s", err, out.String())
	}
}

// A sale's first second comes at its peak: the plan advises pre-warming the tables
// when the busiest table's peak is past what a new on-demand table serves at once
// (4,000 write and 12,000 read units a second, "Pre-warming a table for on-demand
// capacity mode"), to that peak with headroom; a sale a new table carries gets none.
func TestMake_AdvisesPreWarmingPastANewTable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		demand      plan.Demand
		write, read float64 // 0: no pre-warming
	}{
		{"a trickle", plan.Evenly(1, 1, 1, 0, 0.7), 0, 0},
		{"a small sale", plan.Evenly(10, 100, 300, 0, 0.7), 0, 0},
		{"30,000 orders/s over 10 SKUs", plan.Evenly(10, 30000, 100000, 0, 0.7), -1, -1},
	} {
		p := plan.Make(tc.demand, plan.Today(), plan.DefaultPrices)
		var out strings.Builder
		if err := p.Write(&out); err != nil {
			t.Fatal(err)
		}
		advised := strings.Contains(out.String(), "Pre-warm the tables")
		if tc.write == 0 {
			if p.WarmWriteUnits != 0 || p.WarmReadUnits != 0 || advised {
				t.Errorf("%s: warm %v/%v, advised %v; want no pre-warming", tc.name, p.WarmWriteUnits, p.WarmReadUnits, advised)
			}
			continue
		}
		var write, read float64
		for _, l := range p.Loads {
			if strings.HasPrefix(l.Limit, "table ") && strings.HasSuffix(l.Limit, " writes") {
				write = max(write, l.Peak)
			}
			if strings.HasPrefix(l.Limit, "table ") && strings.HasSuffix(l.Limit, " reads") {
				read = max(read, l.Peak)
			}
		}
		if p.WarmWriteUnits != math.Ceil(write*plan.Headroom) || p.WarmReadUnits != max(12000, math.Ceil(read*plan.Headroom)) || !advised {
			t.Errorf("%s: warm %v WU/s, %v RU/s (advised %v); want the busiest table's %v and %v with headroom", tc.name, p.WarmWriteUnits, p.WarmReadUnits, advised, write, read)
		}
		t.Logf("%s: pre-warm to %.0f WU/s, %.0f RU/s", tc.name, p.WarmWriteUnits, p.WarmReadUnits)
	}
}

// One SKU past what the most shards carry (100,000 orders/s: 6,250 write units a
// second on each of 64 shard items) is a sale no setting carries: the plan says so
// and what would (a waiting room admitting the shards' planned rate, or the SKU split),
// never "more shards" at the most shards. Just under the ceiling (15,000 orders/s on 64
// shards, 938 WU/s each) is carried.
func TestMake_OneSKUPastTheMostShardsCannotBeCarriedAsAsked(t *testing.T) {
	p := plan.Make(plan.Evenly(1, 100000, 1, 0, 0.7), plan.Today(), plan.DefaultPrices)
	u := p.SKUs[0].Uncarried
	if p.SKUs[0].Shards != inventory.MaxShards || u == nil || u.CarriedOrders != 16000 || u.AdmitOrders != 12800 || u.SplitInto != 8 {
		t.Fatalf("100,000 orders/s on one SKU: %d shards, uncarried %+v; want 64 shards carrying 16,000, a waiting room at 12,800, a split into 8", p.SKUs[0].Shards, u)
	}
	for _, l := range p.Loads {
		if strings.Contains(l.Setting, "more shards") {
			t.Errorf("%s advises %q at the most shards", l.Limit, l.Setting)
		}
	}
	if s := load(t, p, "item SkusTable sku-000#shard#n").Setting; !strings.Contains(s, "a waiting room (issue 38)") || !strings.Contains(s, "split the SKU into 8 SKUs") {
		t.Errorf("the shard items' setting %q; want the waiting room and the split", s)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sku-000 CANNOT BE CARRIED AS ASKED", "a waiting room (issue 38) that admits 12800 orders/s", "split the SKU into 8 SKUs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, out.String())
		}
	}
	for _, orders := range []float64{12000, 15000} {
		if p := plan.Make(plan.Evenly(1, orders, 1, 0, 0.7), plan.Today(), plan.DefaultPrices); p.SKUs[0].Uncarried != nil {
			t.Errorf("%.0f orders/s on %d shards: uncarried %+v; want carried", orders, p.SKUs[0].Shards, p.SKUs[0].Uncarried)
		}
	}
}

// The bill has every line (DynamoDB, Lambda requests and GB-seconds, API Gateway,
// SQS, KMS signing at the buyer's login, CloudWatch Logs, X-Ray) per million orders,
// and the fixed cost of one sale apart: createOrder's and closeOrder's provisioned concurrency, billed
// whether used or not for ProvisionedMinutes (5 at least), and the tables'
// pre-warming, once per table for the units above a new table's. A sale Lambda's
// scaling and a new table carry has no fixed cost.
func TestMake_CostsEveryLineAndTheFixedCostOfASaleApart(t *testing.T) {
	x, prices := plan.Today(), plan.DefaultPrices
	p := plan.Make(plan.Evenly(10, 30000, 100000, 0, 0.7), x, prices)
	c := *p.Cost
	const million = 1e6
	invocations, requests := p.LambdaInvocationsPerOrder*million+million, p.APIRequestsPerOrder*million+million // with the logins
	for _, line := range []struct {
		name      string
		got, want float64
	}{
		{"KMS", c.KMS, 3.00},
		{"CloudWatch Logs", c.Logs, (invocations*(412+526) + requests*566) / (1 << 30) * 0.50},
		{"X-Ray", c.XRay, invocations * 0.05 / million * 5.00},
		{"Lambda requests", c.LambdaRequests, invocations / million * 0.20},
		{"provisioned concurrency per order", c.ProvisionedConcurrency, 0},
		{"pre-warming per order", c.PreWarming, 0},
		{"total", c.Total, c.DynamoDB + c.LambdaRequests + c.LambdaGBSeconds + c.APIGateway + c.SQS + c.KMS + c.Logs + c.XRay},
		{"USDPerMillionOrders", func() float64 { v, _ := p.USDPerMillionOrders(); return v }(), c.Total},
	} {
		if math.Abs(line.got-line.want) > 1e-6 || line.want < 0 {
			t.Errorf("%s: $%.6f per million orders, want $%.6f", line.name, line.got, line.want)
		}
	}
	if c.Logs <= 0 || c.XRay <= 0 || c.SQS <= 0 || c.APIGateway <= 0 || c.LambdaGBSeconds <= 0 {
		t.Errorf("a line is missing: %+v", c)
	}
	f := p.FixedPerSale
	if p.ProvisionedConcurrency <= 1000 || p.CloseOrderProvisioned <= 1000 || p.WarmWriteUnits <= 4000 {
		t.Fatalf("30,000 orders/s: %d createOrder and %d closeOrder environments provisioned, tables warmed to %.0f WU/s; want all three", p.ProvisionedConcurrency, p.CloseOrderProvisioned, p.WarmWriteUnits)
	}
	wantPC := float64(p.ProvisionedConcurrency+p.CloseOrderProvisioned) * 256 / 1024 * x.ProvisionedMinutes * 60 * 0.0000033334
	wantWarm := 3*((p.WarmWriteUnits-4000)*0.00065+(p.WarmReadUnits-12000)*0.00013) + 3*(p.IndexWarmWriteUnits-4000)*0.00065
	if math.Abs(f.ProvisionedConcurrency-wantPC) > 1e-6 || math.Abs(f.PreWarming-wantWarm) > 1e-6 || math.Abs(f.Total-wantPC-wantWarm) > 1e-6 || f.DynamoDB != 0 {
		t.Errorf("fixed per sale %+v; want provisioned concurrency $%.4f and pre-warming $%.4f", f, wantPC, wantWarm)
	}
	if p.KMSKeysPerMonth != 3 { // the orders table's, the alerts topic's, the signing key
		t.Errorf("KMS keys $%.2f a month; want 3 keys at $1", p.KMSKeysPerMonth)
	}
	if got := plan.ProvisionedGBSeconds(10, 1024, 60); got != 10*300 {
		t.Errorf("10 GB provisioned for a minute: %.0f GB-seconds billed; want 5 minutes' 3,000", got)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CloudWatch Logs $", "X-Ray $", "KMS signing $3.00", "Fixed: $", "provisioned concurrency $", "pre-warming $", "KMS keys $3.00 a month"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, out.String())
		}
	}
	if small := plan.Make(plan.Evenly(1, 20, 100, 0, 0.7), x, prices); small.FixedPerSale.Total != 0 || small.ProvisionedConcurrency != 0 {
		t.Errorf("a small sale's fixed cost %+v, %d environments provisioned; want none", small.FixedPerSale, small.ProvisionedConcurrency)
	}
}

// A refund's life (internal/refunds: its start, the refund function's request to
// WeChat Pay, the notification, the buyer's notice) costs 18 write and 6 read units,
// 2 API requests, 4 invocations, 6 SQS requests and two round trips of Lambda time;
// a million orders of which RefundRatio are refunded carry that share of it, and the
// plan prints it as a line of its own.
func TestMake_PricesTheRefundsOfTheOrders(t *testing.T) {
	x, prices := plan.Today(), plan.DefaultPrices
	d := plan.Evenly(10, 1000, 2000, 0, 0.7)
	none := plan.Make(d, x, prices)
	d.RefundRatio = 0.05
	p := plan.Make(d, x, prices)
	each := p.RefundCostEach
	const million = 1e6
	gbSeconds := (0.030*256 + 0.020*128 + 2*(0.020+0.180)*256) / 1024
	for _, line := range []struct {
		name      string
		got, want float64
	}{
		{"DynamoDB", each.DynamoDB, 18*0.625 + 6*0.125},
		{"Lambda requests", each.LambdaRequests, 4 * 0.20},
		{"Lambda GB-seconds", each.LambdaGBSeconds, gbSeconds * million * 0.0000133334},
		{"API Gateway", each.APIGateway, 2 * 1.00},
		{"SQS", each.SQS, 6 * 0.40},
		{"KMS", each.KMS, 0},
		{"the refunds' part of a million orders", p.RefundCost.Total, 0.05 * each.Total},
		{"a million orders with their refunds", p.Cost.Total, none.Cost.Total + 0.05*each.Total},
	} {
		if math.Abs(line.got-line.want) > 1e-6 {
			t.Errorf("%s: $%.6f, want $%.6f", line.name, line.got, line.want)
		}
	}
	if p.WriteUnitsPerRefund != 18 || p.ReadUnitsPerRefund != 6 {
		t.Errorf("a refund's life: %.0f write and %.0f read units; want 18 and 6", p.WriteUnitsPerRefund, p.ReadUnitsPerRefund)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"their refunds (DynamoDB", "Refunds: $", "5.0% of the orders refunded (--refund-ratio 0.05)", "per million refunds over their life (DynamoDB $12.00: 18 write and 6 read units each"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, out.String())
		}
	}
}

// A demand of page views alone has no cost per order: the plan says so instead of
// dividing by no orders, and its JSON has no usdPerMillionOrders.
func TestMake_NoOrdersHasNoCostPerOrder(t *testing.T) {
	p := plan.Make(plan.Evenly(1, 0, 5000, 0, 0.7), plan.Today(), plan.DefaultPrices)
	if total, ok := p.USDPerMillionOrders(); ok || p.Cost != nil || p.RefundCost != nil || p.ReadUnitsPerOrder != 0 || p.APIRequestsPerOrder != 0 {
		t.Errorf("no orders: $%.2f per million orders (%v), %+v", total, ok, p)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Cost: no cost per order: the plan has no orders (--orders 0)") || strings.Contains(out.String(), "per million orders") {
		t.Errorf("the plan of no orders:\n%s", out.String())
	}
}

// Each order writes 2 entries to PendingByExpiry and to LedgerByShard and 1 to
// OrdersByUser: at 30,000 orders/s the busiest index takes 60,000 writes a second, far
// past a new on-demand index's 4,000, so the plan advises pre-warming the three hot
// indexes to that with headroom (IndexWarmWriteUnits) and prices it once per index
// in the fixed cost; a sale a new index carries advises none.
func TestMake_AdvisesPreWarmingTheHotIndexes(t *testing.T) {
	p := plan.Make(plan.Evenly(10, 30000, 100000, 0, 0.7), plan.Today(), plan.DefaultPrices)
	want := []plan.IndexWrite{{Index: "OrdersTable.PendingByExpiry", WriteUnits: 60000}, {Index: "StockLogTable.LedgerByShard", WriteUnits: 60000}, {Index: "OrdersTable.OrdersByUser", WriteUnits: 30000}}
	if !slices.Equal(p.IndexWrites, want) || p.IndexWarmWriteUnits != 75000 {
		t.Errorf("index writes %v, pre-warm to %.0f; want %v and 75000", p.IndexWrites, p.IndexWarmWriteUnits, want)
	}
	if wantCost := 3 * (75000 - 4000) * 0.00065; math.Abs(p.IndexPreWarming-wantCost) > 1e-9 {
		t.Errorf("index pre-warming $%.4f, want $%.4f", p.IndexPreWarming, wantCost)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deploy with IndexWarmWriteUnits=75000", "PendingByExpiry 60000, LedgerByShard 60000, OrdersByUser 30000", "of which the indexes $138.45"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, out.String())
		}
	}
	small := plan.Make(plan.Evenly(1, 1500, 100, 0, 0.7), plan.Today(), plan.DefaultPrices)
	if small.IndexWarmWriteUnits != 0 || small.IndexPreWarming != 0 || strings.Contains(func() string { var b strings.Builder; _ = small.Write(&b); return b.String() }(), "IndexWarmWriteUnits") {
		t.Errorf("1,500 orders/s (3,000 index writes a second): pre-warm indexes to %.0f for $%.2f; want none", small.IndexWarmWriteUnits, small.IndexPreWarming)
	}
}

// Refusals after a sell-out cost no write but each reads its SKU's record strongly
// and its key's order: the plan counts them on the record's item, the two tables'
// reads, POST /orders and createOrder. 90,000 refusals a second over 10 SKUs (demand
// far above the stock: the buyers arriving in the second after the sell-out) put
// 9,000 read units a second on each record, past its partition's 3,000: the plan says
// so and names the waiting room, which tells its buyers SOLD_OUT from the line.
func TestMake_CountsTheRefusalsAfterTheSellOut(t *testing.T) {
	x := plan.Today()
	none := plan.Make(plan.Evenly(10, 30000, 100000, 0, 0.7), x, plan.DefaultPrices)
	p := plan.Make(plan.Evenly(10, 30000, 100000, 90000, 0.7), x, plan.DefaultPrices)
	loads := func(p plan.Plan) map[string]plan.Load {
		m := map[string]plan.Load{}
		for _, l := range p.Loads {
			m[l.Limit] = l
		}
		return m
	}
	before, after := loads(none), loads(p)
	record := after["item SkusTable sku-003, read strongly by each refusal after the sell-out"]
	if record.Peak != 9000 || record.Ceiling != plan.PartitionReadUnits || !strings.Contains(record.Setting, "waiting room") {
		t.Errorf("the record's refusal reads %+v; want 9,000 RU/s of 3,000, the waiting room advised", record)
	}
	if _, ok := before["item SkusTable sku-003, read strongly by each refusal after the sell-out"]; ok {
		t.Error("a plan without refusals has a load of refusals")
	}
	for _, c := range []struct {
		limit string
		more  float64
	}{
		{"table SkusTable reads", 90000 * x.RefusalRecordReads},
		{"table OrdersTable reads", 90000 * x.RefusalOrderReads},
		{"API Gateway route POST /orders", 90000},
		{"API Gateway account", 90000},
		{"Lambda CreateOrderFunction (the unreserved concurrency)", 90000 * x.RefusalSeconds},
	} {
		if got := after[c.limit].Peak - before[c.limit].Peak; math.Abs(got-c.more) > 1e-6 {
			t.Errorf("%s: refusals add %.1f, want %.1f", c.limit, got, c.more)
		}
	}
	if p.WarmReadUnits <= none.WarmReadUnits {
		t.Errorf("warm read units %.0f with refusals, %.0f without; want more with", p.WarmReadUnits, none.WarmReadUnits)
	}
}
