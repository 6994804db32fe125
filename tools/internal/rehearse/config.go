package rehearse

import (
	"fmt"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/stockctl/plan"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/quotas"
)

// Config is one sale. Durations and rates are at 1× (the real services' time). The
// sale's fields must be set (Defaults has tools/cmd/rehearse's); the zero value of a
// technical one (Template, MinSlowdown, RealRate, SQSRoundTrip, WeChatPayRoundTrip, Prices) takes
// Defaults'.
type Config struct {
	// Template is the path of template.yaml.
	Template string

	// SKUs on sale, each with Stock units over Shards stock shards (0: as many as
	// inventory.ShardsForPeak plans for the SKU's expected peak, see PeakOrders), at
	// most LimitPerUser units per buyer (0: no limit).
	SKUs, Stock, Shards, LimitPerUser int

	// Buyers arrive over Over: Spike of them in its first tenth, the rest evenly
	// over all of it, each for one SKU chosen at random.
	Buyers int
	Over   time.Duration
	Spike  float64
	// PageViews is how many times each buyer opens the SKU's page (GET
	// /skus/{skuId}), Think apart; after the last view the buyer taps buy unless the
	// page showed the SKU sold out. 0: the buyer taps buy without looking.
	PageViews int
	Think     time.Duration
	// Of the buyers who get an order, PayRatio pay within PayAfter (on average; the
	// payment starts with POST /orders/{orderId}/pay, then the buyer pays at WeChat
	// Pay), CancelRatio cancel it, LateRatio pay only after it expired (a
	// notification WeChat Pay delivers after the release), and the rest abandon it
	// to its expiry (PaymentTimeout).
	PayRatio, CancelRatio, LateRatio float64
	PayAfter                         time.Duration
	PaymentTimeout                   time.Duration
	// Retries is how many times a buyer sends a request again after 429, 500 or
	// 503 BUSY (Think apart).
	Retries int
	// Seed seeds the buyers.
	Seed uint64

	// Slowdown is the clock scale s of every model (0: chosen so that the peak
	// admitted load is RealRate requests per real second, at least MinSlowdown).
	Slowdown, MinSlowdown, RealRate float64

	// Model is the DynamoDB model's configuration (partition and table limits, round
	// trip, transaction hold); its Slowdown, Keys and Indexes are set by Run.
	Model ddblimits.Config
	// SQSRoundTrip is the round trip of every SQS call.
	SQSRoundTrip time.Duration
	// Gateway is API Gateway's account throttle; StageRate and StageBurst, when
	// positive, are the template's ApiThrottleRateLimit and ApiThrottleBurstLimit
	// (the stage's default route throttle) for this sale.
	Gateway               quotas.GatewayConfig
	StageRate, StageBurst int
	// Lambda is Lambda's account concurrency, scaling rate and cold start; Reserved,
	// when set, replaces the template's reserved concurrency of the functions it names
	// (logical id → executions) in the model, to rehearse what the planner advises.
	Lambda   quotas.LambdaConfig
	Reserved map[string]int
	// Warm is how many createOrder execution environments are warm when the sale
	// starts (provisioned concurrency, or a warm-up); 0 starts cold. WarmClose is
	// closeOrder's (the template's CloseOrderProvisioned), for the prepays; at most
	// its reserved concurrency, as Lambda allows ("Configuring provisioned
	// concurrency for a function").
	Warm, WarmClose int
	// WeChatPayRoundTrip is how long each call of the stand-in WeChat Pay's merchant
	// API takes on top of its own work (the prepay's JSAPI 下单, a release's query and
	// close): plan.Design.WeChatPaySeconds by default, an assumption.
	WeChatPayRoundTrip time.Duration
	// CloudFront has buyers read the page through the model of template.yaml's
	// PageDistribution (see edge): one cache in front of GET /skus/{skuId} that asks
	// the API once per object per max-age. false: they read it from the API.
	CloudFront bool
	// Prices are the on-demand prices the cost is computed with.
	Prices plan.Prices
}

// Defaults is the configuration a zero Config takes field by field.
var Defaults = Config{
	Template: "template.yaml",
	SKUs:     10, Stock: 1000, LimitPerUser: 1,
	Buyers: 20000, Over: 10 * time.Second, Spike: 0.8,
	PageViews: 2, Think: time.Second, CloudFront: true,
	PayRatio: 0.7, CancelRatio: 0.1, LateRatio: 0.02,
	PayAfter: 5 * time.Second, PaymentTimeout: 30 * time.Second,
	Retries:     2,
	Seed:        1,
	MinSlowdown: 2, RealRate: 500,
	SQSRoundTrip:       8 * time.Millisecond,
	WeChatPayRoundTrip: time.Duration(plan.Today().WeChatPaySeconds * float64(time.Second)),
	Lambda:             quotas.LambdaConfig{ColdStart: 100 * time.Millisecond},
	Prices:             plan.DefaultPrices,
}

// withDefaults fills the zero fields of c from Defaults.
func (c Config) withDefaults() Config {
	d := Defaults
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setD := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	if c.Template == "" {
		c.Template = d.Template
	}
	setF(&c.MinSlowdown, d.MinSlowdown)
	setF(&c.RealRate, d.RealRate)
	setD(&c.SQSRoundTrip, d.SQSRoundTrip)
	setD(&c.WeChatPayRoundTrip, d.WeChatPayRoundTrip)
	if c.Prices == (plan.Prices{}) {
		c.Prices = d.Prices
	}
	return c
}

// Check returns an error naming the first field (as its tools/cmd/rehearse flag) that
// is out of range, nil when c can be run.
func (c Config) Check() error {
	c = c.withDefaults()
	if err := c.checkSale(); err != nil {
		return err
	}
	if err := c.checkBuyers(); err != nil {
		return err
	}
	if err := c.checkQuotas(); err != nil {
		return err
	}
	if err := c.Prices.Check(); err != nil {
		return err
	}
	return nil
}

// badFlag is the error of a value out of range, naming its tools/cmd/rehearse flag.
func badFlag(flag, format string, args ...any) error {
	return fmt.Errorf("-%s: %s", flag, fmt.Sprintf(format, args...))
}

// checkSale checks what the merchant decides: the SKUs, their stock, shards and
// per-user limit.
func (c Config) checkSale() error {
	switch {
	case c.SKUs < 1 || c.SKUs > 1000:
		return badFlag("skus", "must be 1 to 1,000")
	case c.LimitPerUser < 0:
		return badFlag("limit", "must not be negative")
	}
	return checkStock(c.Stock, c.Shards)
}

// checkStock checks a SKU's stock and shards (0: planned).
func checkStock(stock, shards int) error {
	switch {
	case stock < 1:
		return badFlag("stock", "must be at least 1")
	case shards < 0 || shards > inventory.MaxShards:
		return badFlag("shards", "must be 0 (planned) to %d", inventory.MaxShards)
	}
	return nil
}

// checkBuyers checks how the buyers arrive and behave.
func (c Config) checkBuyers() error {
	switch {
	case c.Buyers < 1 || c.Buyers > 10_000_000:
		return badFlag("buyers", "must be 1 to 10,000,000")
	case c.Over <= 0:
		return badFlag("over", "must be positive")
	case c.Spike < 0 || c.Spike > 1:
		return badFlag("spike", "must be 0 to 1")
	case c.PageViews < 0 || c.PageViews > 100:
		return badFlag("page-views", "must be 0 to 100")
	case c.Think < 0:
		return badFlag("think", "must not be negative")
	case c.PayRatio < 0 || c.PayRatio > 1:
		return badFlag("pay-ratio", "must be 0 to 1")
	case c.CancelRatio < 0 || c.CancelRatio > 1:
		return badFlag("cancel-ratio", "must be 0 to 1")
	case c.LateRatio < 0 || c.LateRatio > 1:
		return badFlag("late-ratio", "must be 0 to 1")
	case c.PayRatio+c.CancelRatio+c.LateRatio > 1+1e-9:
		return badFlag("pay-ratio", "-pay-ratio + -cancel-ratio + -late-ratio must be at most 1")
	case c.PaymentTimeout < time.Second:
		return badFlag("payment-timeout", "must be at least 1s")
	case c.PayAfter <= 0 || c.PayAfter*3/2 >= c.PaymentTimeout:
		return badFlag("pay-after", "must be positive and 1.5× it below -payment-timeout")
	case c.Retries < 0 || c.Retries > 10:
		return badFlag("retries", "must be 0 to 10")
	}
	return nil
}

// checkQuotas checks the clock, the AWS quotas and the template settings a sale
// overrides.
func (c Config) checkQuotas() error {
	switch {
	case c.Slowdown != 0 && c.Slowdown < 1:
		return badFlag("slowdown", "must be 0 (chosen) or at least 1")
	case c.RealRate <= 0:
		return badFlag("real-rate", "must be positive")
	case c.StageRate < 0 || c.StageBurst < 0:
		return badFlag("stage-rate", "-stage-rate and -stage-burst must not be negative")
	case c.Gateway.Rate < 0 || c.Gateway.Burst < 0:
		return badFlag("api-rate", "-api-rate and -api-burst must not be negative")
	case c.Lambda.AccountConcurrency < 0:
		return badFlag("lambda-concurrency", "must not be negative")
	case c.Lambda.ColdStart < 0:
		return badFlag("cold-start", "must not be negative")
	case c.Model.WriteUnits < 0:
		return badFlag("partition-wcu", "must not be negative")
	case c.Model.TableWriteUnits < 0 || c.Model.TableReadUnits < 0:
		return badFlag("table-wcu", "-table-wcu and -table-rcu must not be negative")
	case c.Model.WarmWriteUnits < 0 || c.Model.WarmReadUnits < 0:
		return badFlag("warm-wcu", "-warm-wcu and -warm-rcu must not be negative")
	case c.Model.IndexWarmWriteUnits < 0:
		return badFlag("index-warm-wcu", "must not be negative")
	case c.Model.IsolateAfter < 0:
		return badFlag("isolate-after", "must not be negative")
	case c.Warm < 0:
		return badFlag("warm", "must not be negative")
	case c.WarmClose < 0:
		return badFlag("warm-close", "must not be negative")
	case c.WeChatPayRoundTrip < 0:
		return badFlag("wechatpay-rtt", "must not be negative")
	}
	if err := c.Gateway.Check(); err != nil {
		return badFlag("api-burst", "%v", err)
	}
	for name, n := range c.Reserved {
		if n < 0 {
			return badFlag("reserved", "%s=%d: must not be negative", name, n)
		}
	}
	return nil
}

// PeakBuyers is the highest arrival rate of buyers, per second at 1×: the spike's.
func (c Config) PeakBuyers() float64 {
	c = c.withDefaults()
	spiked := c.Spike*float64(c.Buyers)/(c.Over.Seconds()/10) + (1-c.Spike)*float64(c.Buyers)/c.Over.Seconds()
	return spiked
}

// PeakOrders is the expected peak of orders per second per SKU that the planner
// sizes shards for when Shards is 0: every buyer of the spike orders, spread evenly
// over the SKUs (a planner's upper bound; the stock may run out before).
func (c Config) PeakOrders() float64 {
	c = c.withDefaults()
	return c.PeakBuyers() / float64(c.SKUs)
}
