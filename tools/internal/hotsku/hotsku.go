// Package hotsku measures how many orders per second one hot SKU can take, by running
// the real createOrder path (API Gateway event → apigw handler → dynamo.Store → SDK)
// through ddblimits, the model of DynamoDB's per-item limits, in front of the embedded
// DynamoDB, with the close-order message sent to the embedded SQS through a modelled
// round trip. A Point is one SKU split over some shards under an offered load of
// buyers arriving at random (Poisson); Run plays it and checks the outcome: no unit
// oversold, no false STOCK_OUT (a STOCK_OUT answered while the shards together still
// held the units), every order answered 201 backed by its order item, its RESERVE
// ledger entry and a reserved unit on the shard the entry names, and nothing written
// for an order that was refused.
//
// Two ways of reserving are compared:
//   - Transaction, today's createOrder: one TransactWriteItems per order with the
//     conditional shard update, the order and the ledger entry.
//   - Conditional, the way of the articles the project grew from: a conditional
//     UpdateItem of one shard (available >= q), then the order and its ledger entry
//     in one TransactWriteItems of their own, the shard given back if that fails.
//     It lives only here, on the SDK directly (see conditional.go).
//
// Rates and latencies are reported at 1×: the model runs Slowdown times slower than
// real DynamoDB, so that a small machine can offer tens of thousands of orders per
// model second; Run converts back. Completed orders are verified and then deleted from
// the embedded tables as the run goes, because the embedded server copies whole tables
// in every transaction and would otherwise slow down with every order.
package hotsku

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/wiring/function/createorder"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// Strategy is a way of reserving stock for an order.
type Strategy string

// Strategies compared by the sweep.
const (
	// Transaction is createOrder as it is: one TransactWriteItems per order.
	Transaction Strategy = "transaction"
	// Conditional is a conditional UpdateItem of a shard, then the order and ledger
	// writes, compensated on failure.
	Conditional Strategy = "conditional"
)

// SKU is the id of the hot SKU every point sells; Price its price in fen.
const (
	SKU   = "hot-01"
	Price = 9900
)

// Env is what outlives one point: the template, and the embedded SQS server with the
// close-order queue (goaws allows one per process). Build it with NewEnv.
type Env struct {
	template string
	tpl      *sam.Template
	sqs      *local.SQSServer
	queueURL string
}

// NewEnv reads template (template.yaml) and, with sqs, starts the embedded SQS server
// and creates the template's queues on it. Close it when done.
func NewEnv(ctx context.Context, template string, withSQS bool) (*Env, error) {
	tpl, err := sam.Load(template)
	if err != nil {
		return nil, err
	}
	e := &Env{template: template, tpl: tpl}
	if !withSQS {
		return e, nil
	}
	if e.sqs, err = local.StartSQS(ctx, "127.0.0.1:0", local.SQSOptions{}); err != nil {
		return nil, err
	}
	queues, err := tpl.Queues()
	if err != nil {
		e.Close()
		return nil, err
	}
	qs := make([]local.Queue, len(queues))
	for i, q := range queues {
		qs[i] = local.Queue{Name: q.Name, Attributes: q.Attributes}
	}
	urls, err := local.CreateQueues(ctx, local.NewSQSClient(e.sqs.URL()), qs)
	if err != nil {
		e.Close()
		return nil, err
	}
	if e.queueURL = urls["CloseOrderQueue"]; e.queueURL == "" {
		e.Close()
		return nil, errors.New("template has no CloseOrderQueue")
	}
	return e, nil
}

// Close stops the SQS server.
func (e *Env) Close() error {
	if e.sqs == nil {
		return nil
	}
	return e.sqs.Close()
}

// Point is one run: a strategy, a shard count and an offered load.
type Point struct {
	Strategy Strategy
	Shards   int     // stock shard items of the SKU, 1..64
	Offered  float64 // buyers arriving per second at 1× (Poisson), each ordering 1 unit
	// Duration is how long buyers keep arriving, at 1×.
	Duration time.Duration
	// Stock is the SKU's initial units; 0 means twice what the buyers ask for, so that
	// the SKU never sells out and every STOCK_OUT is false.
	Stock int
	// Model configures ddblimits (RoundTrip, TransactionHold, Slowdown, ...).
	Model ddblimits.Config
	// SQSRoundTrip is the round trip of the close-order send at 1×; default 8 ms.
	SQSRoundTrip time.Duration
	// Seed seeds the arrivals.
	Seed uint64
}

// Result is what a point measured, rates and latencies at 1×.
type Result struct {
	Point
	Arrivals int // buyers who arrived
	Orders   int // answered 201
	StockOut int // answered 409 STOCK_OUT
	Busy     int // answered 503 BUSY
	Failed   int // any other answer
	// PerSecond is the orders per second answered 201 in the steady part of the run:
	// those completed from a fifth of Duration after the first arrival to its end.
	PerSecond float64
	P50, P99  time.Duration
	// DynamoDB requests seen by the model (retries included), how many it refused, and
	// how many writes it applied but answered InternalServerError (LoseAnswerEvery).
	Requests, Conflicts, Throttles, Lost int
	// ByOperation breaks the requests down by DynamoDB operation.
	ByOperation map[string]ddblimits.Counts
	// Checks; each must be 0.
	FalseStockOut int // STOCK_OUT while the shards together held the unit
	Oversold      int // units promised beyond the stock or beyond what the shards reserved
	Unbacked      int // 201 answers whose order or ledger entry is missing or wrong
	Orphans       int // order items or RESERVE entries written for refused orders
	Leaked        int // units reserved on shards that no order holds
	// Lag is the worst lateness of an arrival against its schedule, at 1×: when it is
	// not small against Model.RoundTrip, the machine could not keep up with the point.
	Lag time.Duration
}

// outcome is one buyer's answer.
type outcome struct {
	start, end time.Time
	status     int
	code       string
	orderID    string
}

// Run plays p and checks its outcome. The error is for a run that could not be set
// up or checked, not for a failed check (those are counted in Result).
func Run(ctx context.Context, env *Env, p Point) (Result, error) {
	p = p.withDefaults()
	stack, err := local.Start(ctx, local.StackConfig{Template: env.template})
	if err != nil {
		return Result{}, err
	}
	defer stack.Close()
	model, buyer, err := prepare(ctx, env, p, stack)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clean := newJanitor(stack.DB, stack.Tables)
	go clean.run(ctx)
	outcomes, start, lag := offer(ctx, p, buyer, clean)
	checked, err := clean.finish(ctx)
	if err != nil {
		return Result{}, err
	}
	slow := p.Model.Slowdown
	r := Result{Point: p, Lag: time.Duration(float64(lag) / slow)}
	r.summarise(outcomes, start, slow)
	r.ByOperation = model.Stats()
	for _, c := range r.ByOperation {
		r.Requests += c.Requests
		r.Conflicts += c.Conflicts
		r.Throttles += c.Throttles
		r.Lost += c.Lost
	}
	if err := r.check(ctx, stack.DB, stack.Tables, checked, outcomes); err != nil {
		return Result{}, err
	}
	return r, nil
}

// withDefaults fills the zero fields of p: an 8 ms SQS round trip, the model's
// defaults (for the report), and twice the stock the offered load could buy.
func (p Point) withDefaults() Point {
	if p.SQSRoundTrip <= 0 {
		p.SQSRoundTrip = 8 * time.Millisecond
	}
	p.Model = ddblimits.New(p.Model).Config()
	if p.Stock <= 0 {
		p.Stock = int(math.Ceil(2*p.Offered*p.Duration.Seconds())) + p.Shards
	}
	return p
}

// prepare creates the hot SKU on stack and returns the limits model in front of it
// and the buyers that order through the model, with a warm fleet: Offered × 100 ms
// of containers (at 1×, what the fleet needs when orders take 100 ms) have read the
// SKU record before the first buyer, with the model off; the fleet grows cold beyond
// that.
func prepare(ctx context.Context, env *Env, p Point, stack *local.Stack) (*ddblimits.Model, *buyers, error) {
	if _, err := dynamo.New(stack.DB, stack.Tables, dynamo.Options{}).EnsureSKU(ctx, inventory.NewSKU{
		ID: SKU, Name: "hot SKU", Price: Price, Stock: p.Stock, Shards: p.Shards,
	}); err != nil {
		return nil, nil, err
	}
	tables, err := env.tpl.Tables()
	if err != nil {
		return nil, nil, err
	}
	cfg := p.Model
	cfg.Keys = ddblimits.KeysOf(tables)
	model := ddblimits.New(cfg)
	db := local.NewDynamoDBClient(stack.DynamoDB.URL(), dynamo.ClientOptions, model.ClientOptions)
	var queue *closeq.Queue
	if env.sqs != nil {
		client := local.NewSQSClient(env.sqs.URL(), func(o *sqs.Options) {
			o.HTTPClient = ddblimits.Delay(nil, p.SQSRoundTrip, cfg.Slowdown)
		})
		queue = closeq.New(client, env.queueURL, nil)
	}
	buyer := newBuyers(p, db, stack.Tables, queue)
	model.Bypass(true)
	err = buyer.warm(ctx, int(math.Ceil(p.Offered*0.1)))
	model.Bypass(false)
	return model, buyer, err
}

// offer sends buyers at random (Poisson) times at p.Offered per second (slowed by the
// model's clock) for p.Duration, each placing one order, and returns their outcomes,
// when the first could start, and how far behind schedule a buyer started at worst.
func offer(ctx context.Context, p Point, buyer *buyers, clean *janitor) ([]outcome, time.Time, time.Duration) {
	var (
		mu       sync.Mutex
		outcomes []outcome
		wg       sync.WaitGroup
		lag      time.Duration
	)
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	realRate := p.Offered / p.Model.Slowdown
	end := time.Duration(float64(p.Duration) * p.Model.Slowdown)
	start := time.Now()
	next := time.Duration(0)
	for i := 0; ; i++ {
		next += time.Duration(rng.ExpFloat64() / realRate * float64(time.Second))
		if next >= end {
			break
		}
		if d := time.Until(start.Add(next)); d > 0 {
			time.Sleep(d)
		} else {
			lag = max(lag, -d)
		}
		wg.Go(func() {
			o := buyer.order(ctx, fmt.Sprintf("buyer-%d", i))
			if o.status == http.StatusCreated {
				clean.verify(o.orderID)
			}
			mu.Lock()
			outcomes = append(outcomes, o)
			mu.Unlock()
		})
	}
	wg.Wait()
	return outcomes, start, lag
}

// summarise counts the answers and measures rate and latency (at 1×).
func (r *Result) summarise(outcomes []outcome, start time.Time, slow float64) {
	r.Arrivals = len(outcomes)
	var lat []time.Duration
	real := func(d time.Duration) time.Time { return start.Add(time.Duration(float64(d) * slow)) }
	from, to := real(r.Duration/5), real(r.Duration)
	steady := 0
	for _, o := range outcomes {
		switch {
		case o.status == http.StatusCreated:
			r.Orders++
			lat = append(lat, time.Duration(float64(o.end.Sub(o.start))/slow))
			if !o.end.Before(from) && o.end.Before(to) {
				steady++
			}
		case o.code == "STOCK_OUT":
			r.StockOut++
		case o.code == "BUSY":
			r.Busy++
		default:
			r.Failed++
		}
	}
	r.PerSecond = float64(steady) / (r.Duration * 4 / 5).Seconds()
	if r.Orders > 0 {
		slices.Sort(lat)
		r.P50 = lat[len(lat)/2]
		r.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
}

// buyers places orders with one strategy. Like Lambda, each order borrows a
// container (a handler with its own store and caches) that serves one order at a
// time, and a new one is built when all are busy.
type buyers struct {
	p      Point
	db     *dynamodb.Client
	tables dynamo.Tables
	queue  *closeq.Queue
	mu     sync.Mutex
	idle   []container
}

type container interface {
	order(ctx context.Context, user string) outcome
	warm(ctx context.Context) error // read the SKU record into the container's cache
}

func newBuyers(p Point, db *dynamodb.Client, tables dynamo.Tables, queue *closeq.Queue) *buyers {
	return &buyers{p: p, db: db, tables: tables, queue: queue}
}

// warm starts n containers and has each read the SKU record.
func (b *buyers) warm(ctx context.Context, n int) error {
	for range n {
		c := b.newContainer()
		if err := c.warm(ctx); err != nil {
			return err
		}
		b.idle = append(b.idle, c)
	}
	return nil
}

func (b *buyers) order(ctx context.Context, user string) outcome {
	b.mu.Lock()
	var c container
	if n := len(b.idle); n > 0 {
		c, b.idle = b.idle[n-1], b.idle[:n-1]
	}
	b.mu.Unlock()
	if c == nil {
		c = b.newContainer()
	}
	o := c.order(ctx, user)
	b.mu.Lock()
	b.idle = append(b.idle, c)
	b.mu.Unlock()
	return o
}

func (b *buyers) newContainer() container {
	// The store caches the SKU record for 5 s (dynamo.Options.CatalogTTL's default):
	// 5 s at 1×, so Slowdown times that in real time.
	ttl := time.Duration(float64(dynamo.DefaultCatalogTTL) * b.p.Model.Slowdown)
	if b.p.Strategy == Conditional {
		return newConditional(b.db, b.tables, b.queue, ttl)
	}
	store := dynamo.New(b.db, b.tables, dynamo.Options{CatalogTTL: ttl})
	fn, err := createorder.Build(createorder.Config{Tables: b.tables}, slog.New(slog.DiscardHandler), store, b.queue, nil, nil, nil)
	if err != nil {
		panic(err) // createOrder needs nothing the buyers lack
	}
	return &handler{h: fn.HTTP}
}

// handler is a createOrder container: the real handler (as package wiring builds it),
// fed API Gateway events.
type handler struct {
	h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
}

func (c *handler) warm(ctx context.Context) error {
	resp, _ := c.h(ctx, events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: stock.RouteShow, PathParameters: map[string]string{"skuId": SKU},
		RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: stock.RouteShow},
	})
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("warm a container: GET /skus/%s answered %d %s", SKU, resp.StatusCode, resp.Body)
	}
	return nil
}

func (c *handler) order(ctx context.Context, user string) outcome {
	o := outcome{start: time.Now()}
	resp, _ := c.h(ctx, events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: orders.RoutePlace, RawPath: "/orders",
		Headers: map[string]string{"content-type": "application/json"},
		Body:    `{"items":[{"skuId":"` + SKU + `","qty":1}],"address":` + orders.ExampleAddress + `}`,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:   orders.RoutePlace,
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": user}}},
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/orders"},
		},
	})
	o.end, o.status = time.Now(), resp.StatusCode
	var body struct{ Code, OrderID string }
	json.Unmarshal([]byte(resp.Body), &body)
	o.code, o.orderID = body.Code, body.OrderID
	return o
}
