// Package reconcile is the reconcile function: it proves, on a schedule, that the
// books balance (docs/design.md, "Conservation", "Reconcile"), alerts when they do
// not, and repairs only when told to.
//
// # What is checked, per SKU and per shard
//
//   - available = Σ of the ledger's available deltas (ADJUST − RESERVE + RELEASE +
//     RETURN + REPAIR), and onHand = Σ of its on-hand deltas (ADJUST − COMMIT + RETURN +
//     REPAIR);
//   - onHand − available (reserved) = the ledger's reserved units (Σ RESERVE − RELEASE −
//     COMMIT: the per-order balances), and the shard's reserved counter agrees;
//   - 0 ≤ available ≤ onHand;
//   - Σ COMMIT − Σ RETURN ≤ Σ ADJUST (never sold more than ever stocked);
//   - and, apart from the SKUs, PENDING orders past expiresAt plus a grace period,
//     and the money side of refunds (money.go).
//
// # A consistent cut
//
// Each shard is compared at one instant (dynamo.Cut): every transaction that moves a
// shard adds its ledger entries to the shard's seq and is conditioned on the shard's
// epoch, which it stamps on those entries. A run moves each active shard's epoch on
// with one UpdateItem returning the counters and seq just before; the entries stamped
// with that epoch or earlier are exactly those applied before, and there are seq −
// (the checkpoint's seq) of them since the checkpoint. Counters and ledger sums so
// describe the same moment whatever the traffic, and a difference is reported at once.
// When the entries read do not match that count (the index has not shown an entry
// yet, a write took longer than Lag, or an entry was deleted or forged), the whole
// ledger is read again after ConfirmDelay, with a strongly consistent Scan, for the
// same cuts, and what is then found is reported: a difference is never reported from
// the index alone. A shard whose seq has not moved
// since its checkpoint is not cut: the strongly consistent Scan of the skus table is its
// cut. The open orders (PendingByExpiry, an eventually consistent index) are no longer
// a rule's reference; they find overdue orders and pick which side a repair trusts.
//
// # Cost that follows activity, not history
//
// Ledger sums are kept in per-SKU checkpoints (item skuId#checkpoint in the skus table:
// per shard, the sums of every entry through its last cut, with that cut's epoch and
// seq) and a run watermark (reconcile#watermark). A run reads the skus table (counters
// and checkpoints: its size follows the catalogue), cuts the shards that moved, reads
// the open orders (PendingByExpiry: they follow open orders), and only the ledger
// entries written since the watermark on the shards that moved since their
// checkpoints, through the stock_log index LedgerByShard, whose hash key is
// "<skuId>#<shard>" and range key its write time `at`: one Query per moved shard, plus
// the entries themselves. Each run saves the sums through its cuts as the new checkpoints
// (conditioned on the version read, so two runs cannot fold twice), then moves the
// watermark to now − Lag: an entry not yet folded was applied after a cut of this run,
// so written after now − Lag as long as no write takes longer than Lag (default 2
// minutes, longer than any function's timeout, plus the writers' clock skew). The first
// run, with no watermark, scans the whole ledger once.
//
// # Full re-check
//
// A checkpoint trusts the entries it folded. Every FullCheckEvery (FULL_CHECK_DAYS),
// the first run inside the repair window ignores the checkpoints, cuts every shard and
// scans the whole ledger, so an entry deleted, edited or back-dated after it was
// folded shows as a difference.
//
// # Alerts
//
// A difference larger than max(AlertUnits, AlertPercent % of the SKU's on-hand) is an
// alert (error-level log line and an SNS message); smaller ones are warnings. Metrics
// go out in the CloudWatch Embedded Metric Format.
//
// # Repair (off by default)
//
// Enabled and inside its window, a run repairs each differing shard in one
// TransactWriteItems per SKU (dynamo.Store.Repair), conditioned on the counters still
// holding what was read and on the shard's seq still being the cut's (no order or
// waitlist hold came, went or changed hands since). The open orders and the live
// waitlist holds (Books.HeldUnits, read for a SKU that differs) are the reference for
// what is reserved:
//   - when the ledger agrees with them (ledger on-hand − ledger available = reserved
//     units of open orders and holds), the counters drifted: they are set to the ledger's values;
//   - when the counters agree with them, the ledger lost or gained an entry: a REPAIR
//     entry with the missing deltas is written and the counters are left as they are;
//   - when neither does, or both do (available and on-hand off by the same amount: a
//     lost or doubled ADJUST, or an edited counter — which one is true is a fact about
//     the warehouse), and whenever the SKU looks oversold, nothing is repaired: it
//     needs a person.
//
// Every repair writes REPAIR ledger entries, one per shard, keyed by the watermark the
// run read, so overlapping runs cannot repair one shard twice. A watermark more than 6
// hours old makes the run scan the ledger instead of walking the index hour by hour. Overdue PENDING orders are
// released through closeOrder's own release path (dynamo.Store.Expire).
package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // REPAIR_TIMEZONE must resolve where no zoneinfo is installed (provided.al2023)

	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/metric"
)

// MetricFunction is the Function dimension of reconcile's metrics, whichever function runs
// it (the schedule's, or the merchant API's POST /admin/reconcile): one metric per alarm.
const MetricFunction = "reconcile"

// Publisher sends alert messages; *sns.Client is one (Amazon SNS API Reference, Publish).
type Publisher interface {
	Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// Books is what reconcile reads and writes in the store (dynamo.Store): the counters
// and checkpoints of every SKU, each active shard's cut, the ledger since the
// watermark (or whole), the open orders, a differing SKU's held waitlist units
// (shard → units; false when not all were read), the refunds under way and their RETURN
// entries, and what a run writes back (checkpoints, watermark, repairs, releases of
// overdue orders, its report).
type Books interface {
	Stock(ctx context.Context, read func(items int)) ([]inventory.SKUState, inventory.Watermark, error)
	Cut(ctx context.Context, sku string, n int) (inventory.ShardCut, error)
	LedgerSince(ctx context.Context, shards map[string][]int, after, until time.Time, read func(items int)) iter.Seq2[inventory.LedgerEntry, error]
	LedgerAll(ctx context.Context, read func(items int)) iter.Seq2[inventory.LedgerEntry, error]
	OpenOrders(ctx context.Context, read func(items int)) iter.Seq2[inventory.OpenOrder, error]
	HeldUnits(ctx context.Context, sku string, read func(items int)) (map[int]int, bool, error)
	RefundingBefore(ctx context.Context, before time.Time) iter.Seq2[string, error]
	Lookup(ctx context.Context, id string) (*inventory.Order, error)
	Returned(ctx context.Context, order *inventory.Order) (map[string]int, error)
	Release(ctx context.Context, order *inventory.Order, reason inventory.CancelReason) (*inventory.Order, bool, error)
	SaveCheckpoint(ctx context.Context, cp inventory.Checkpoint, prev int) error
	SaveWatermark(ctx context.Context, w inventory.Watermark, prev time.Time) error
	Repair(ctx context.Context, run, sku, reason string, fixes []inventory.ShardFix) error
	SaveReport(ctx context.Context, report []byte) error
}

// Config tunes a Reconciler. Zero values take the defaults.
type Config struct {
	// AlertUnits and AlertPercent make a difference an alert when it exceeds
	// max(AlertUnits, AlertPercent % of the SKU's ledger on-hand); defaults 5 and 1.
	AlertUnits   int
	AlertPercent float64
	// Grace is how long past expiresAt a PENDING order may stay before it is overdue;
	// default 5 minutes (the sweep runs every minute).
	Grace time.Duration
	// Lag bounds how long before its write a ledger entry's `at` may be (the writer's
	// clock skew plus its longest retries): the watermark trails the run by Lag;
	// default 2 minutes.
	Lag time.Duration
	// ConfirmDelay is the wait before the ledger is read again when the entries read do
	// not match the shards' seq; default 1 second.
	ConfirmDelay time.Duration
	// Repair enables repairs, inside Window only.
	Repair bool
	// Window is when repairs may run; the zero Window never contains any time.
	Window Window
	// FullCheckEvery is how often a run inside Window re-reads the whole ledger,
	// ignoring the checkpoints (catching an entry deleted or back-dated after it was
	// folded); zero: never.
	FullCheckEvery time.Duration
	// RefundStuck is how long a refund may stay REFUNDING before it is reported;
	// default 30 minutes.
	RefundStuck time.Duration
	// Topic is the SNS topic ARN alerts go to; "" sends none.
	Topic string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Window is a daily time window in a location, e.g. 02:00–05:00 in Asia/Shanghai.
type Window struct {
	Start, End time.Duration // offsets from local midnight; End < Start wraps past midnight
	Loc        *time.Location
}

// ParseWindow parses "HH:MM-HH:MM" (24-hour clock) in loc. It returns an error for
// another shape, an impossible time, or an empty window (start = end).
func ParseWindow(s string, loc *time.Location) (Window, error) {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return Window{}, fmt.Errorf("repair window %q: want HH:MM-HH:MM", s)
	}
	var w Window
	for i, part := range []string{from, to} {
		t, err := time.Parse("15:04", strings.TrimSpace(part))
		if err != nil {
			return Window{}, fmt.Errorf("repair window %q: want HH:MM-HH:MM", s)
		}
		d := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute
		if i == 0 {
			w.Start = d
		} else {
			w.End = d
		}
	}
	if w.Start == w.End {
		return Window{}, fmt.Errorf("repair window %q is empty", s)
	}
	w.Loc = loc
	return w, nil
}

// Contains reports whether t falls inside the window (start inclusive, end exclusive).
func (w Window) Contains(t time.Time) bool {
	if w.Loc == nil || w.Start == w.End {
		return false
	}
	t = t.In(w.Loc)
	d := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second
	if w.Start < w.End {
		return d >= w.Start && d < w.End
	}
	return d >= w.Start || d < w.End
}

// Difference is one broken rule: what the books say (Expected) and what the counters
// hold (Actual), in units.
type Difference struct {
	SKU      string `json:"skuId"`
	Rule     Rule   `json:"rule"`
	Expected int    `json:"expected"`
	Actual   int    `json:"actual"`
}

// Repaired is one applied repair: Delta units changed on Rule's counter (available,
// onHand), on the ledger (ledger available, ledger onHand), or released by an overdue
// order (overdue <orderId>).
type Repaired struct {
	SKU   string `json:"skuId"`
	Rule  string `json:"rule"`
	Delta int    `json:"delta"`
}

// Report is a run's result, logged as one structured line and returned as JSON
// (docs/contract.md, "Merchant API").
type Report struct {
	SKUsChecked   int          `json:"skusChecked"`
	Differences   []Difference `json:"differences"`   // empty when the books balance
	OverdueOrders []string     `json:"overdueOrders"` // PENDING past expiresAt + grace
	Repaired      []Repaired   `json:"repaired"`
	DurationMs    int64        `json:"durationMs"`
	// ItemsRead counts the DynamoDB items this run read, LedgerEntriesRead the ledger
	// entries among them (not in the JSON result; in the log line).
	ItemsRead         int `json:"-"`
	LedgerEntriesRead int `json:"-"`
	// Unrepaired lists SKUs whose differences no automatic repair can explain.
	Unrepaired []string `json:"-"`
	// AlertNotPublished is true when the run's alert could not be published (see
	// ErrAlertNotPublished).
	AlertNotPublished bool `json:"-"`
	// RefundProblems lists orders whose refund breaks the money rules (see money.go);
	// StuckRefunds the out_refund_no of refunds REFUNDING longer than RefundStuck.
	RefundProblems []string `json:"refundProblems"`
	StuckRefunds   []string `json:"stuckRefunds"`
}

// Reconciler runs reconciliations.
type Reconciler struct {
	store Books
	alert Publisher
	log   *slog.Logger
	cfg   Config
}

// New returns a Reconciler over store that publishes alerts with alert (nil: none)
// and logs JSON lines (and EMF metrics) to log.
func New(store Books, alert Publisher, log *slog.Logger, cfg Config) *Reconciler {
	if cfg.AlertUnits <= 0 {
		cfg.AlertUnits = 5
	}
	if cfg.AlertPercent <= 0 {
		cfg.AlertPercent = 1
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Minute
	}
	if cfg.Lag <= 0 {
		cfg.Lag = 2 * time.Minute
	}
	if cfg.ConfirmDelay <= 0 {
		cfg.ConfirmDelay = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RefundStuck <= 0 {
		cfg.RefundStuck = 30 * time.Minute
	}
	return &Reconciler{store: store, alert: alert, log: log, cfg: cfg}
}

// snapshot is what one pass read and concluded.
type snapshot struct {
	skus      []inventory.SKUState
	mark      inventory.Watermark
	check     check                                 // a full re-check or from the checkpoints
	cuts      map[string]map[int]inventory.ShardCut // SKU → shard → the shard at its cut
	entries   []inventory.LedgerEntry               // read this pass: after the watermark (all, the first time)
	bySKU     map[string][]inventory.LedgerEntry    // the same, by SKU
	ledger    map[string]ledgerSums                 // SKU → sums through the cuts
	pending   map[string]map[int]int                // SKU → shard → reserved units of open orders
	overdue   []inventory.OpenOrder                 // PENDING past expiresAt + grace
	diffs     map[string][]Difference               // SKU → broken rules
	fixes     map[string][]inventory.ShardFix       // SKU → repairs that would explain them
	unfixable []string                              // SKUs no repair explains
	short     bool                                  // some shard's entries read did not match its seq
	scan      bool                                  // read the ledger with a Scan, not through the index
	now       time.Time
}

// Run reconciles once and keeps its report as the latest (Store.SaveReport). It
// returns the report, or an error when the store could not be read (nothing is
// concluded then). Failures to alert, repair, checkpoint or keep the report are logged
// at error level and do not fail the run; a failed alert is also marked in
// Report.AlertNotPublished, which fails the Lambda invocation (Handle).
func (r *Reconciler) Run(ctx context.Context) (*Report, error) {
	start := time.Now()
	rep := &Report{Differences: []Difference{}, OverdueOrders: []string{}, Repaired: []Repaired{}, RefundProblems: []string{}, StuckRefunds: []string{}}
	read := func(n int) { rep.ItemsRead += n }
	snap, err := r.pass(ctx, read)
	if err != nil {
		return nil, err
	}
	if snap.short {
		// The ledger read missed entries the seq counts (or found more): the index may
		// not show them yet, or a write took longer than Lag. Read the whole ledger
		// with a strongly consistent Scan, for the same cuts, after ConfirmDelay.
		if err := clock.Sleep(ctx, r.cfg.ConfirmDelay); err != nil {
			return nil, err
		}
		snap.scan = true
		if err := r.conclude(ctx, snap, read); err != nil {
			return nil, err
		}
	}
	rep.SKUsChecked = len(snap.skus)
	rep.LedgerEntriesRead = len(snap.entries)
	for _, sku := range slices.Sorted(maps.Keys(snap.diffs)) {
		rep.Differences = append(rep.Differences, snap.diffs[sku]...)
	}
	for _, o := range snap.overdue {
		rep.OverdueOrders = append(rep.OverdueOrders, o.ID)
	}
	rep.Unrepaired = snap.unfixable
	if err := r.money(ctx, snap, rep); err != nil {
		return nil, err
	}
	booksFailed := r.alertOn(ctx, snap)
	moneyFailed := r.alertOnMoney(ctx, rep)
	rep.AlertNotPublished = booksFailed || moneyFailed
	if r.cfg.Repair && r.cfg.Window.Contains(snap.now) {
		rep.Repaired = r.repair(ctx, snap)
	}
	r.fold(ctx, snap)
	rep.DurationMs = time.Since(start).Milliseconds()
	r.logReport(ctx, rep, snap)
	r.keep(ctx, rep)
	return rep, nil
}

// keep stores rep as the latest report (read by the merchant API); a failure is
// logged at error level and does not fail the run.
func (r *Reconciler) keep(ctx context.Context, rep *Report) {
	data, err := json.Marshal(rep)
	if err == nil {
		err = r.store.SaveReport(ctx, data)
	}
	if err != nil {
		r.log.LogAttrs(ctx, inventory.FailureLevel(ctx, err), "reconcile report not kept", slog.String("error", err.Error()))
	}
}

// pass reads the stock, cuts the shards, reads the open orders and the ledger since
// the watermark, and concludes differences, overdue orders and possible repairs.
func (r *Reconciler) pass(ctx context.Context, read func(int)) (*snapshot, error) {
	snap := &snapshot{now: r.cfg.Now().UTC(), cuts: map[string]map[int]inventory.ShardCut{}, pending: map[string]map[int]int{}}
	var err error
	if snap.skus, snap.mark, err = r.store.Stock(ctx, read); err != nil {
		return nil, err
	}
	snap.check = r.checkDue(snap)
	if err := r.cut(ctx, snap, read); err != nil {
		return nil, err
	}
	for o, err := range r.store.OpenOrders(ctx, read) {
		if err != nil {
			return nil, err
		}
		for _, it := range o.Items {
			if snap.pending[it.SKU] == nil {
				snap.pending[it.SKU] = map[int]int{}
			}
			for n, units := range it.Shards {
				snap.pending[it.SKU][n] += units
			}
		}
		if o.ExpiresAt.Add(r.cfg.Grace).Before(snap.now) {
			snap.overdue = append(snap.overdue, o)
		}
	}
	return snap, r.conclude(ctx, snap, read)
}

// conclude reads the ledger since the watermark (all of it on the first run, on a
// full re-check, or when the watermark is too old to walk the index) and checks every
// SKU at its cuts.
func (r *Reconciler) conclude(ctx context.Context, snap *snapshot, read func(int)) error {
	snap.entries, snap.bySKU, snap.ledger = nil, map[string][]inventory.LedgerEntry{}, map[string]ledgerSums{}
	snap.diffs, snap.fixes, snap.unfixable, snap.short = map[string][]Difference{}, map[string][]inventory.ShardFix{}, nil, false
	entries := r.store.LedgerAll(ctx, read)
	if w := snap.mark.Through; snap.check == sinceCheckpoints && !snap.scan && !w.IsZero() && snap.now.Sub(w) <= maxCatchUp {
		entries = r.store.LedgerSince(ctx, moved(snap.skus), w, snap.now.Add(clockAhead), read)
	}
	for e, err := range entries {
		if err != nil {
			return err
		}
		snap.entries = append(snap.entries, e)
		snap.bySKU[e.SKU] = append(snap.bySKU[e.SKU], e)
	}
	for _, sku := range snap.skus {
		l := sums(sku, snap.cuts[sku.SKU], snap.bySKU[sku.SKU], snap.check)
		snap.ledger[sku.SKU] = l
		snap.short = snap.short || len(l.short) > 0
		if err := r.check(ctx, snap, sku, read); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) logReport(ctx context.Context, rep *Report, snap *snapshot) {
	level := slog.LevelInfo
	if len(rep.Differences) > 0 || len(rep.OverdueOrders) > 0 || len(rep.RefundProblems) > 0 || len(rep.StuckRefunds) > 0 {
		level = slog.LevelWarn
	}
	r.log.LogAttrs(ctx, level, "reconcile", slog.Int("skusChecked", rep.SKUsChecked), slog.Any("differences", rep.Differences),
		slog.Any("overdueOrders", rep.OverdueOrders), slog.Any("refundProblems", rep.RefundProblems), slog.Any("stuckRefunds", rep.StuckRefunds), slog.Any("repaired", rep.Repaired), slog.Any("unrepairable", rep.Unrepaired),
		slog.Int("itemsRead", rep.ItemsRead), slog.Int("ledgerEntriesRead", len(snap.entries)),
		slog.Time("watermark", snap.mark.Through), slog.Bool("fullCheck", snap.check == fullCheck), slog.Int64("durationMs", rep.DurationMs))
	metric.Emit(ctx, r.log, MetricFunction,
		metric.SKUsChecked.Of(float64(rep.SKUsChecked)),
		metric.Differences.Of(float64(len(rep.Differences))),
		metric.OverduePending.Of(float64(len(rep.OverdueOrders))),
		metric.Repairs.Of(float64(len(rep.Repaired))),
		metric.ItemsRead.Of(float64(rep.ItemsRead)),
		metric.Duration.Of(float64(rep.DurationMs)))
}

// maxCatchUp is how far behind the watermark may be for a run to read the ledger
// through the LedgerByShard index; further behind, it scans.
const maxCatchUp = 6 * time.Hour

// clockAhead is how far past now a run reads the ledger index, for writers whose
// clocks run a little ahead of its own.
const clockAhead = time.Minute

// Handle is the Lambda handler: any event (the EventBridge schedule's, or an operator's
// empty invoke) runs one reconciliation and returns its Report. It returns
// ErrAlertNotPublished (with the report) when the run's alert could not be published,
// so that the invocation counts as an error and is retried.
func (r *Reconciler) Handle(ctx context.Context, _ json.RawMessage) (*Report, error) {
	rep, err := r.Run(ctx)
	if err == nil && rep.AlertNotPublished {
		return rep, ErrAlertNotPublished
	}
	return rep, err
}

// Settings are reconcile's environment variables as template.yaml sets them, still
// as text.
type Settings struct {
	RepairEnabled       string // REPAIR_ENABLED: "true" or "false"
	RepairWindow        string // REPAIR_WINDOW: "HH:MM-HH:MM"
	RepairTimezone      string // REPAIR_TIMEZONE: IANA name, e.g. Asia/Shanghai
	AlertMinUnits       string // ALERT_MIN_UNITS: units
	AlertPercent        string // ALERT_PERCENT: percent of on-hand
	OverdueGraceSeconds string // OVERDUE_GRACE_SECONDS: seconds
	AlertsTopicARN      string // ALERTS_TOPIC_ARN: SNS topic; "" sends no alerts
	FullCheckDays       string // FULL_CHECK_DAYS: days between full re-checks of the ledger
	RefundStuckSeconds  string // REFUND_STUCK_SECONDS: seconds a refund may stay REFUNDING
}

// Config parses the settings. Errors name the bad variable.
func (s Settings) Config() (Config, error) {
	var cfg Config
	var err error
	if cfg.Repair, err = strconv.ParseBool(s.RepairEnabled); err != nil {
		return cfg, fmt.Errorf("REPAIR_ENABLED %q: want true or false", s.RepairEnabled)
	}
	loc, err := time.LoadLocation(s.RepairTimezone)
	if err != nil {
		return cfg, fmt.Errorf("REPAIR_TIMEZONE: %w", err)
	}
	if cfg.Window, err = ParseWindow(s.RepairWindow, loc); err != nil {
		return cfg, fmt.Errorf("REPAIR_WINDOW: %w", err)
	}
	if cfg.AlertUnits, err = strconv.Atoi(s.AlertMinUnits); err != nil || cfg.AlertUnits < 1 {
		return cfg, fmt.Errorf("ALERT_MIN_UNITS %q: want a positive number of units", s.AlertMinUnits)
	}
	if cfg.AlertPercent, err = strconv.ParseFloat(s.AlertPercent, 64); err != nil || !(cfg.AlertPercent > 0) {
		return cfg, fmt.Errorf("ALERT_PERCENT %q: want a positive percentage", s.AlertPercent)
	}
	grace, err := strconv.Atoi(s.OverdueGraceSeconds)
	if err != nil || grace < 1 {
		return cfg, fmt.Errorf("OVERDUE_GRACE_SECONDS %q: want a positive number of seconds", s.OverdueGraceSeconds)
	}
	cfg.Grace = time.Duration(grace) * time.Second
	days, err := strconv.Atoi(s.FullCheckDays)
	if err != nil || days < 1 {
		return cfg, fmt.Errorf("FULL_CHECK_DAYS %q: want a positive number of days", s.FullCheckDays)
	}
	cfg.FullCheckEvery = time.Duration(days) * 24 * time.Hour
	stuck, err := strconv.Atoi(s.RefundStuckSeconds)
	if err != nil || stuck < 1 {
		return cfg, fmt.Errorf("REFUND_STUCK_SECONDS %q: want a positive number of seconds", s.RefundStuckSeconds)
	}
	cfg.RefundStuck = time.Duration(stuck) * time.Second
	cfg.Topic = s.AlertsTopicARN
	return cfg, nil
}
