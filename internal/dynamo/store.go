// Package dynamo keeps stockguard's stock, orders and stock_log ledger in DynamoDB. Its
// files are by entity: orders (orders.go), pending orders (pending.go), refunds
// (refunds.go), SKUs (skus.go), stock shards (shards.go), the ledger (ledger.go),
// reconcile's checkpoints (checkpoints.go). Every transaction is built by one builder
// and its outcome read by one reader (txn.go).
//
// A reservation is one TransactWriteItems per order that reserves every cart line with
// a conditional update (available >= qty), writes the order and writes one RESERVE
// ledger entry per line, so all lines are reserved or none is (reservation.go). Every
// later change of an order or a refund — release, payment, refund start, refund result
// — is decided by package inventory as one value (inventory.Change) and written by one
// function, transact (transition.go; docs/design.md, "One path for every change"):
// conditioned on the status as read, so it happens at most once.
//
// # Tables and keys
//
// Every table has a string partition key "pk" and no sort key.
//
//   - skus: the SKU record (pk = skuId: name, price, currency, onSale, shards,
//     limitPerUser, saleStartsAt, moves, retired, updatedBy/updatedAt) and its stock shard items
//     (pk = skuId#shard#n, n = 0..shards-1: available, reserved, onHand, copies of
//     price, onSale, saleStartsAt and the shard count so the reservation's condition
//     reads one item, and seq and epoch, which give reconcile a consistent cut: see
//     Cut). The latest reconcile report is kept at pk reconcile#report. Every write
//     keeps available + reserved = onHand on
//     each shard: a reservation moves units from available to reserved, a release
//     back (conditioned on reserved >= q, so available can never pass onHand). Each shard has its own partition key, so a hot SKU split into N
//     shards spreads its writes over N partitions (DynamoDB serves about 1,000 write
//     units per second per partition: Developer Guide, "Partitions and data distribution").
//   - orders: orders (pk = orderId; a keyed request's id is inventory.KeyedOrderID),
//     per-user purchase counters (pk = limit#skuId#userId, attribute bought) and
//     request-shaping window items (pk = shape#digest(user)#windowStart, one token
//     set "r:skuId" per SKU), the last expired through the table's TTL attribute "ttl". Order ids cannot contain '#', so they never collide. PENDING orders carry pendingBucket (P0..P127) and
//     pendingExpiresAt (Unix milliseconds), the keys of the sparse GSI PendingByExpiry.
//     The skus table also holds reconcile's per-SKU checkpoints (pk = skuId#checkpoint)
//     and its watermark (pk = reconcile#watermark), and each queued SKU's admission
//     frontier (pk = skuId#queue, see QueueStore). The orders table also holds the
//     waiting room's tickets (pk = ticket#<id>, in the GSI TicketsByArrival).
//   - stock_log: ledger entries (pk = ref#op#skuId, ref an order id, an adjustment id
//     or a repair run; REPAIR entries add #shard), written with attribute_not_exists(pk)
//     so that a repeated write fails. The LedgerByShard GSI (see ShardIndex) lists a
//     shard's entries in time order.
//
// # Shards
//
// A line goes to one shard that can cover it, picked at random among those the last
// counts seen say can (unknown counts count as able). When none can, the line is
// split over the fullest shards. A shard that turns out short makes every sharded line
// of the cart re-read its shards (one BatchGetItem) and plan again; STOCK_OUT is only
// answered from such a strongly consistent read. Between reshards a shard's available
// count only falls with reservations and rises with releases and restocks, which is
// what makes a sum of per-shard reads a sound basis for STOCK_OUT. A reshard (see
// Reshard) moves available units between shards in MOVE transactions that each bump
// the SKU record's move counter, and STOCK_OUT is only answered from shard reads that
// an unchanged counter brackets (steadyShards), so units in transit are never counted
// missing. Shard items carry the shard count (shardCount): a plan made on an old
// count fails its condition and is made again. A cart whose
// lines would need more than the 100 actions one transaction may hold (many lines,
// each split thin over many shards) is refused with inventory.ErrCartTooLarge: keep shards few and full.
//
// # Outcomes
//
// Transaction cancellations are read from their CancellationReasons (DynamoDB API
// Reference, TransactWriteItems: "TransactionCanceledException"), with the failing
// item returned through ReturnValuesOnConditionCheckFailure=ALL_OLD; nothing is
// guessed from error text. A write whose response was lost is retried by the SDK with
// the same input and ClientRequestToken; a retry that finds its own order already
// written reads it back as success.
package dynamo

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Tables names the three DynamoDB tables.
type Tables struct {
	SKUs     string // skus: SKU records and stock shard items
	Orders   string // orders and purchase counters
	StockLog string // the stock_log ledger
}

// DefaultCatalogTTL is how long a Store reuses a SKU record it read, unless
// Options.CatalogTTL says otherwise.
const DefaultCatalogTTL = 5 * time.Second

// Options tune a Store. Zero values take the defaults.
type Options struct {
	// PaymentTimeout is how long a new order stays PENDING before it may be released;
	// default 15 minutes.
	PaymentTimeout time.Duration
	// CatalogTTL is how long a SKU record (price, shard count, limit) read from the
	// skus table is reused before being read again; default DefaultCatalogTTL (5 s). A stale entry
	// never refuses a buyer: the reservation's conditions check price and on-sale on
	// the shard items, and a failed price, shard, limit or address check re-reads the record
	// before answering. A lowered per-user limit, or a SKU made to ship by express, takes up to
	// CatalogTTL to apply.
	CatalogTTL time.Duration
	// MaxRounds bounds how many reservation transactions one order may try; default
	// 12. A round is lost when a shard turned out short or a cached price or limit was
	// stale. After its first round an order plans from fresh reads, so it loses a
	// round only to another order that committed in between: with n orders racing for
	// the same shards, each is served (stock permitting) within n rounds, and beyond
	// MaxRounds−1 racing orders some may get ErrBusy.
	MaxRounds int
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Shaping refuses one user's order requests for one SKU beyond a rate before any
	// stock is touched, at the cost of one conditional write per request (see
	// inventory.Shaping); zero is off.
	Shaping inventory.Shaping
}

// Store reads and writes stock, orders and the ledger. It is safe for concurrent use.
// Its methods come from one part per aggregate, each over the same client, tables,
// options and caches and sending its changes through the one transaction builder
// (txn.go) and transition path (transition.go): OrderStore (orders, pending orders,
// reservations, shipments), StockStore (SKUs, shards, stock adjustments, reshards),
// BookStore (the ledger, checkpoints, reconcile's cut and repairs), RefundStore
// (refunds), SessionStore (login attempts, alert pacing and quiet periods) and
// QueueStore (the waiting room's tickets and frontiers).
type Store struct {
	*store
	OrderStore
	StockStore
	BookStore
	RefundStore
	SessionStore
	QueueStore
	WaitlistStore
}

// store is what every part of Store shares.
type store struct {
	db      *dynamodb.Client
	tables  Tables
	opts    Options
	catalog *catalog
	epochs  *epochCache
	// frontiers caches the waiting room's frontiers (QueueStore.FrontierOf).
	frontiers *frontierCache
}

// OrderStore is Store's part for orders: placing (the reservation), reading, paying,
// releasing, shipping and listing them, and the PENDING orders' index.
type OrderStore struct{ *store }

// StockStore is Store's part for SKUs and their shard items: creating and changing
// SKUs, reading them steady, stock adjustments and reshards.
type StockStore struct{ *store }

// BookStore is Store's part for the books: the stock_log ledger, reconcile's cut,
// checkpoints, watermark and repairs.
type BookStore struct{ *store }

// RefundStore is Store's part for refunds: starting, settling and listing them.
type RefundStore struct{ *store }

// SessionStore is Store's part for what login and the alerts keep: sign-in attempts
// and sealed tokens, alert pacing and quiet periods.
type SessionStore struct{ *store }

// New returns a Store over db (built with ClientOptions for stockguard's retry rules).
func New(db *dynamodb.Client, tables Tables, opts Options) *Store {
	if opts.PaymentTimeout <= 0 {
		opts.PaymentTimeout = 15 * time.Minute
	}
	if opts.CatalogTTL <= 0 {
		opts.CatalogTTL = DefaultCatalogTTL
	}
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = 12
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	base := &store{db: db, tables: tables, opts: opts, catalog: newCatalog(opts.CatalogTTL), epochs: &epochCache{},
		frontiers: &frontierCache{entries: map[string]frontierEntry{}}}
	return &Store{base, OrderStore{base}, StockStore{base}, BookStore{base}, RefundStore{base}, SessionStore{base}, QueueStore{base}, WaitlistStore{base}}
}

func (s *store) now() time.Time { return s.opts.Now().UTC() }

// Now is the store's clock (Options.Now) in UTC: the time reservations are
// conditioned on, so that a sale start is judged by one clock.
func (s *store) Now() time.Time { return s.now() }

// Open returns a Store over a DynamoDB client built from awsCfg with ClientOptions: a
// deployed function's store.
func Open(awsCfg aws.Config, tables Tables, opts Options) *Store {
	return New(dynamodb.NewFromConfig(awsCfg, ClientOptions), tables, opts)
}

// MaxAttempts is how many times the SDK sends one DynamoDB request before giving up.
const MaxAttempts = 5

// ClientOptions configures a dynamodb.Client for stockguard: the SDK's standard
// retryer with MaxAttempts attempts, full-jitter exponential backoff (25 ms × 2^n,
// capped at 400 ms) and no client-side retry quota (one Lambda container serves one
// request at a time, so the quota would only add failures under load). Besides the
// SDK's default retryable errors (throttling, 5xx, connection errors), a
// TransactionCanceledException is retried when its reasons are only
// TransactionConflict or throttling — nothing was applied, so the same request (same
// ClientRequestToken) may be sent again. Use it as
// dynamodb.NewFromConfig(cfg, dynamo.ClientOptions).
func ClientOptions(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = MaxAttempts
		so.RateLimiter = ratelimit.None
		so.Backoff = retry.BackoffDelayerFunc(jitterBackoff)
		so.Retryables = append(so.Retryables, retry.IsErrorRetryableFunc(retryableCancellation))
	})
}

// ForBuyers configures a dynamodb.Client, after ClientOptions, for the function that
// answers buyers (createOrder): a request refused for throttling or a transaction
// conflict (isTransient: nothing was applied) is not sent again; its error is
// returned at once, so the buyer is answered 503 BUSY with Retry-After (docs/contract.md)
// and the Lambda environment is free for the next buyer, where ClientOptions would
// spend up to MaxAttempts and about 0.75 s of backoff on it. In a sale's herd a hot
// SKU's partitions refuse most such requests again anyway, and an environment serves
// one request at a time ("Understanding Lambda function scaling"), so a wait spent
// on them is a buyer refused by Lambda's concurrency (docs/design.md, "Where the
// herd's time goes"). Errors of unknown outcome (timeouts, 5xx) keep MaxAttempts:
// resending them under the same ClientRequestToken is how their outcome is learnt.
// Use it as dynamodb.NewFromConfig(cfg, dynamo.ClientOptions, dynamo.ForBuyers).
func ForBuyers(o *dynamodb.Options) {
	if r, ok := o.Retryer.(aws.RetryerV2); ok {
		o.Retryer = impatient{r}
	}
}

// impatient is a retryer that retries no transient error.
type impatient struct{ aws.RetryerV2 }

// IsErrorRetryable reports err retryable when the wrapped retryer does and it is not
// transient.
func (r impatient) IsErrorRetryable(err error) bool {
	return !isTransient(err) && r.RetryerV2.IsErrorRetryable(err)
}

// Backoff bounds (see ClientOptions).
const (
	backoffBase = 25 * time.Millisecond
	backoffCap  = 400 * time.Millisecond
)

// jitter is the full-jitter exponential backoff before attempt n: a random wait
// below backoffBase × 2^n, capped at backoffCap, plus a millisecond.
func jitter(n int) time.Duration {
	return rand.N(min(backoffBase<<min(n, 8), backoffCap)) + time.Millisecond
}

func jitterBackoff(attempt int, _ error) (time.Duration, error) { return jitter(attempt), nil }

// retryableCancellation reports a cancelled transaction as retryable when no reason is
// a failed condition or a validation error and at least one is a conflict or throttle.
func retryableCancellation(err error) aws.Ternary {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return aws.UnknownTernary
	}
	transient := false
	for _, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "None", "":
		case "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
			transient = true
		default:
			return aws.FalseTernary
		}
	}
	return aws.BoolTernary(transient)
}

// isTransient reports whether err is a definite "nothing applied, try later" answer
// from DynamoDB: a cancellation made only of conflicts/throttles, or a throttling error.
func isTransient(err error) bool {
	if retryableCancellation(err) == aws.TrueTernary {
		return true
	}
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	var tce *types.TransactionConflictException
	var tip *types.TransactionInProgressException
	var thr *types.ThrottlingException // DynamoDB API Reference, "Common Errors": ThrottlingException
	return errors.As(err, &pte) || errors.As(err, &rle) || errors.As(err, &tce) || errors.As(err, &tip) || errors.As(err, &thr)
}

// convergeTimeout is how long the read-back after a write of unknown outcome may take.
const convergeTimeout = 2 * time.Second

// convergeContext gives a follow-up read its own short deadline even when the caller's
// context is already done, so that an ambiguous write can still be checked.
func convergeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), convergeTimeout)
}
