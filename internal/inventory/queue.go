package inventory

// The waiting room of a SKU on sale (docs/design.md, "Waiting room"): its settings,
// the fair draw that orders the first arrivals, the admission decision, what a
// ticket's poll answers, the waitlist's holds and the scalper check. Pure rules: the
// store reads, these decide, the store writes what they return.

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Waiting-room bounds and durations.
const (
	// MaxFairWindowSeconds is the longest fair window, in seconds: a buyer who
	// arrives in it learns a position when the window closes, so at most this long
	// after the sale starts.
	MaxFairWindowSeconds = 300
	// AdmissionSeconds is how long an admission (and its Admission-Token) stays
	// valid, in seconds. An admission not used by then is EXPIRED and its units go
	// to the next buyers in line.
	AdmissionSeconds = 180
	// WaitlistHoldSeconds is how long a waitlisted buyer's exclusive hold on
	// returned units lasts, in seconds; an unused hold passes to the next buyer.
	WaitlistHoldSeconds = 300
	// FrontierStepSeconds is the shortest span of one admission step, in seconds:
	// admissions less than this after a step's start join it (and expire with it),
	// so the frontier item keeps at most (AdmissionSeconds +
	// UsedBucketSeconds)/FrontierStepSeconds + 1 steps however often the admitter
	// ticks (Frontier.Advance).
	FrontierStepSeconds = 1
	// UsedBucketSeconds is the span, in seconds, of one bucket of admission
	// expiries (AdmissionBucket): an order that uses an admission adds its claim to
	// its bucket's counter on the shard it reserves on (AdmissionCredit), and the
	// admitter credits those counters back (Frontier.UsedClaims). A shard item
	// carries at most about (AdmissionSeconds + 70 s of clean-up lag) / 10 = 25
	// counters of some 18 bytes (admitter.DropUsedAfter, DropUsedEvery).
	UsedBucketSeconds = 10
	// MaxRiskRank is the highest risk_rank WeChat's getUserRiskRank returns: its
	// legal values are 0, 1, 2, 3, 4, higher meaning riskier (WeChat mini-program
	// server API, "获取用户安全等级 getUserRiskRank", 返回参数 risk_rank:
	// https://developers.weixin.qq.com/miniprogram/dev/server/API/sec-center/safety-control-capability/api_getuserriskrank.html).
	MaxRiskRank = 4
)

// ErrRiskRejected: WeChat rates the buyer's risk at or above the SKU's threshold, so
// the buyer is neither admitted nor reserved anything (docs/contract.md, 403
// RISK_REJECTED, once the routes land). Returned wrapped in a *SKUError.
var ErrRiskRejected = errors.New("buyer's risk rank is at or above the SKU's threshold")

// QueueSettings are a SKU's waiting-room settings (the SKU's `queue`,
// `fairWindowSeconds` and `riskThreshold`). The zero value is no waiting room and
// no risk check, as every SKU had before.
type QueueSettings struct {
	// Queue puts buyers of the SKU through the waiting room: POST /orders for it
	// then needs an admission.
	Queue bool `json:"queue"`
	// FairWindowSeconds, 0..MaxFairWindowSeconds, is how long after the sale's
	// start arrivals are ordered by the seeded draw (FairOrder) rather than by
	// arrival; 0 orders everyone by arrival. Needs Queue.
	FairWindowSeconds int `json:"fairWindowSeconds"`
	// RiskThreshold, 0..MaxRiskRank, refuses buyers whose getUserRiskRank
	// risk_rank is at or above it; 0 means no check (no call to WeChat). 4 refuses
	// only the riskiest rank, 1 admits only rank 0.
	RiskThreshold int `json:"riskThreshold"`
}

// Validate returns an error wrapping ErrInvalidRequest, with a message safe to
// show, when FairWindowSeconds is outside 0..MaxFairWindowSeconds or set without
// Queue, or RiskThreshold is outside 0..MaxRiskRank.
func (q QueueSettings) Validate() error {
	if q.FairWindowSeconds < 0 || q.FairWindowSeconds > MaxFairWindowSeconds {
		return InvalidError("fairWindowSeconds must be an integer from 0 to %d", MaxFairWindowSeconds)
	}
	if q.FairWindowSeconds > 0 && !q.Queue {
		return InvalidError("fairWindowSeconds needs queue: true")
	}
	if q.RiskThreshold < 0 || q.RiskThreshold > MaxRiskRank {
		return InvalidError("riskThreshold must be an integer from 0 (no check) to %d", MaxRiskRank)
	}
	return nil
}

// FairWindowEnd is the first instant after the fair window of a sale starting at
// start: arrivals before it are drawn, arrivals at or after it queue by arrival.
// It is start itself when the window is 0.
func (q QueueSettings) FairWindowEnd(start time.Time) time.Time {
	return start.Add(time.Duration(q.FairWindowSeconds) * time.Second)
}

// RiskAnswer is what getUserRiskRank said about one buyer: Known is false when
// WeChat gave no rank (errcode other than 0, e.g. -1 system busy or 61010 no visit
// in the last two hours, per the API's errcode table).
type RiskAnswer struct {
	Rank  int  // risk_rank, 0..MaxRiskRank when Known
	Known bool // WeChat answered errcode 0 with a legal risk_rank
}

// CheckRisk decides the scalper check for a buyer of sku: nil when the check is
// off (RiskThreshold 0), when WeChat gave no rank (the check fails open: a WeChat
// outage must not refuse buyers while stock remains; the caller counts these), or
// when the rank is below the threshold; otherwise a *SKUError wrapping
// ErrRiskRejected. A Known rank outside 0..MaxRiskRank is not a legal answer and is
// treated as unknown.
func (q QueueSettings) CheckRisk(sku string, a RiskAnswer) error {
	if q.RiskThreshold == 0 || !a.Known || a.Rank < 0 || a.Rank > MaxRiskRank {
		return nil
	}
	if a.Rank >= q.RiskThreshold {
		return &SKUError{Err: ErrRiskRejected, SKU: sku}
	}
	return nil
}

// AdmissionRatePerSecond is the most buyers per second the waiting room admits to a
// SKU with the given number of shards: the rate the planner sizes its shards for,
// shards × ShardCeilingOrdersPerSecond / ShardHeadroom (200 orders/s per shard;
// see ShardsForPeak and internal/stockctl/plan). shards below 1 count as 1.
func AdmissionRatePerSecond(shards int) int {
	return max(shards, 1) * ShardCeilingOrdersPerSecond / ShardHeadroom
}

// AdmissionInput is what the admitter knows at one tick (units of stock unless
// said otherwise). Available and Reserved come from one strongly consistent read
// of the SKU's shards.
type AdmissionInput struct {
	Available int // units available on the shards
	Reserved  int // units held by PENDING orders, which may be released
	// AdmittedUnexpired is the admissions issued in the last AdmissionSeconds,
	// used or not (Frontier.AdmittedUnexpired).
	AdmittedUnexpired int
	// UsedClaims is the units of those admissions' claims (UnitsPerAdmission each)
	// that orders have used already (Frontier.UsedClaims: a lower bound). A used
	// admission's order took its units out of Available and its ticket opens no
	// other order, so its claim is not counted again.
	UsedClaims int
	// UnitsPerAdmission is the most units one admitted buyer may take: the SKU's
	// per-user limit, or 1 when it has none. Values below 1 count as 1.
	UnitsPerAdmission int
	Budget            int // admissions the rate allows now (AdmissionRatePerSecond × seconds since the last tick)
	Waiting           int // buyers in line not yet admitted (positions assigned)
}

// AdmissionDecision is what one tick does.
type AdmissionDecision struct {
	Admit int // buyers to admit now, from the head of the line; ≥ 0
	// SoldOut: nothing is available or held by a PENDING order, so no unit can
	// come back from an order; everyone waiting is told SOLD_OUT.
	SoldOut bool
}

// Purchasable is the units that could still be bought: available plus what
// PENDING orders may release (units; negative counts count as 0).
func (in AdmissionInput) Purchasable() int { return max(in.Available, 0) + max(in.Reserved, 0) }

// Decide admits as many buyers as the rate budget, the line and the units allow:
// every unexpired admission claims UnitsPerAdmission units of what is available
// now, less what its order took already (UsedClaims, at most all the claims), so
// Admit ≤ (Available − (AdmittedUnexpired × UnitsPerAdmission − UsedClaims)) /
// UnitsPerAdmission; a remainder under one claim (0 < free < UnitsPerAdmission)
// admits one buyer, who can still buy it, so a last unit below the per-user limit
// is never left unsold while buyers wait. Hence the claims of the unused admissions
// and of the new ones never exceed Available plus UnitsPerAdmission − 1, and the
// unused admissions never exceed the units available (each can buy one), nor
// Purchasable. Units that come back (a release, a
// refund with restock, an admission that expires unused) and claims that orders
// use raise that bound one for one at the next tick.
func (in AdmissionInput) Decide() AdmissionDecision {
	if in.Purchasable() == 0 {
		return AdmissionDecision{SoldOut: true}
	}
	per := max(in.UnitsPerAdmission, 1)
	claims := max(in.AdmittedUnexpired, 0) * per
	free := max(in.Available, 0) - claims + min(max(in.UsedClaims, 0), claims)
	n := max(free, 0) / per
	if n == 0 && free > 0 {
		n = 1 // the remainder, under one claim: one buyer can still buy it
	}
	n = min(n, max(in.Budget, 0), max(in.Waiting, 0))
	return AdmissionDecision{Admit: n}
}

// AdmissionBucket is the bucket of admissions expiring at expires (an admission
// token's exp, or AdmissionStep.Expires): its Unix seconds over UsedBucketSeconds.
// A token's exp is its step's expiry rounded down to the second, so both name the
// same bucket.
func AdmissionBucket(expires time.Time) int64 { return expires.Unix() / UsedBucketSeconds }

// AdmissionCredit is the claim units an order line that uses an admission adds to
// its bucket's counter on each shard it reserves on (shards: shard → units taken
// from available), per being the units one admission may take (values below 1
// count as 1). A line on one shard credits the whole claim there. A line over
// several shards credits at most the units it takes on each, in shard order, per
// in all: the admitter reads the shards one after the other, so a read that sees
// one shard after the order and another before it must not see a claim given back
// beyond the units already gone from what it saw available.
func AdmissionCredit(per int, shards map[int]int) map[int]int {
	per = max(per, 1)
	out := map[int]int{}
	if len(shards) == 1 {
		for n := range shards {
			out[n] = per
		}
		return out
	}
	for _, n := range slices.Sorted(maps.Keys(shards)) {
		if c := min(shards[n], per); c > 0 {
			out[n] = c
			per -= c
		}
	}
	return out
}

// UsedKey names one counter of claim units that orders used (AdmissionCredit): the
// bucket of their admissions' expiry (AdmissionBucket) and Per, the units one
// admission could take when those orders credited it (the SKU's per-user limit
// then, 1 without one).
type UsedKey struct {
	Bucket int64
	Per    int
}

// UsedClaims is a lower bound, at now, of the claim units of unexpired admissions
// that orders used, from used: the counters summed over the SKU's shards,
// per being UnitsPerAdmission now. A counter credited at another Per counts
// min(per, Per)/Per of its units (rounded down), so no admission is credited more
// than it may take now, nor more than its order took on a shard. Buckets whose
// admissions have all expired are left out. In the bucket expiring now, orders of
// admissions already expired may have credited up to per units each, so those are
// taken off first (its admissions are counted from the steps: Advance keeps them
// all); a bucket whose expired admissions cannot be counted (its first step's
// start was dropped) counts nothing. Each bucket counts at most its unexpired
// admissions' claims. A frontier that replaced another sale's (ForSale) credits
// nothing in the buckets up to the one that sale's admissions last expire in: its
// orders' counters are there too.
func (f Frontier) UsedClaims(now time.Time, used map[UsedKey]int, per int) int {
	per = max(per, 1)
	type tally struct {
		expired, unexpired int
		unknown            bool
	}
	credited := map[int64]int{}
	for k, units := range used {
		if k.Per >= 1 && units > 0 {
			credited[k.Bucket] += units * min(per, k.Per) / k.Per
		}
	}
	buckets := map[int64]*tally{}
	current := now.Unix() / UsedBucketSeconds // buckets before it have expired whole
	for i, s := range f.Steps {
		b := AdmissionBucket(s.Expires())
		if b < current || b <= f.priorBucket() {
			continue
		}
		t := buckets[b]
		if t == nil {
			t = &tally{}
			buckets[b] = t
		}
		expired := !now.Before(s.Expires())
		switch {
		case !expired && i == 0: // nothing was dropped: the line starts at 1
			t.unexpired += s.Through
		case !expired:
			t.unexpired += s.Through - f.Steps[i-1].Through
		case i == 0: // how many it admitted is not known
			t.unknown = true
		default:
			t.expired += s.Through - f.Steps[i-1].Through
		}
	}
	total := 0
	for b, t := range buckets {
		if !t.unknown {
			total += min(max(credited[b]-t.expired*per, 0), t.unexpired*per)
		}
	}
	return total
}

// AdmissionStep is one tick's admission: every position up to Through (1-based,
// in line order) is admitted, from At.
type AdmissionStep struct {
	Through int       // last position admitted so far, ≥ the previous step's
	At      time.Time // when the step was taken; its admissions expire AdmissionSeconds later
}

// Expires is when the admissions of s end.
func (s AdmissionStep) Expires() time.Time { return s.At.Add(AdmissionSeconds * time.Second) }

// Frontier is a SKU's admission frontier: the one small item the admitter writes
// each tick and every poll reads (cached), from which each ticket's status follows.
// Steps are in order of At and Through; steps expired long ago may be dropped, but
// the last expired one must be kept, and those of the bucket expiring now with the
// one before them (Advance does this).
type Frontier struct {
	Steps   []AdmissionStep
	SoldOut bool // the last tick found nothing purchasable
	// Line is the admitter's account of the line, kept in the same item.
	Line LineState
	// Sale is the start of the sale whose line this is (the SKU's saleStartsAt;
	// zero: none). A SKU put on sale again with a new start has a new line
	// (ForSale).
	Sale time.Time
	// Replaced is when this frontier replaced the previous sale's that had
	// admissions unexpired (zero: none), and Prior is those admissions. They still claim
	// units until SaleHandover after Replaced (PriorClaims), and orders' counters
	// of the bucket they last expire in are not credited (UsedClaims).
	Replaced time.Time
	Prior    int
}

// SaleHandover is how long after a SKU's frontier was replaced by a new sale's
// (Frontier.ForSale) the previous sale's unexpired admissions still count as
// claims: an order's view of the SKU record, from which it tells an admission of
// the current sale (Admission.Admits), may lag the change by the catalog cache
// (5 s) and createOrder's 10 s timeout; 15 s more cover a replica behind an
// eventually consistent read, as the waitlist's lead does.
const SaleHandover = 30 * time.Second

// ForSale is f if it is the frontier of the sale starting at start, else the new
// sale's frontier at now: nobody placed nor admitted, the fair window not drawn,
// not sold out, and, when the previous sale has admissions unexpired at now (with
// those it still carried), those as its Prior, replaced at now. A frontier written
// before frontiers named their sale has a zero Sale: it is the line of a SKU
// without a start (and no frontier at all is the zero Frontier).
func (f Frontier) ForSale(start, now time.Time) Frontier {
	if f.Sale.Equal(start) {
		return f
	}
	next := Frontier{Sale: start, Prior: f.AdmittedUnexpired(now) + f.PriorClaims(now)}
	if next.Prior > 0 {
		next.Replaced = now
		if n := len(f.Steps); n > 0 && f.Steps[n-1].At.After(now) {
			next.Replaced = f.Steps[n-1].At // another admitter's clock ran ahead
		}
	}
	return next
}

// PriorClaims is the admissions of the previous sale that still count as claims at
// now: Prior until SaleHandover after Replaced, then 0. The admitter adds them to
// AdmissionInput.AdmittedUnexpired (fewer admitted in the handover, never more).
func (f Frontier) PriorClaims(now time.Time) int {
	if f.Replaced.IsZero() || !now.Before(f.Replaced.Add(SaleHandover)) {
		return 0
	}
	return max(f.Prior, 0)
}

// priorBucket is the last bucket (AdmissionBucket) in which the previous sale's
// admissions can expire, so that its orders' counters are not credited to this
// sale's admissions; -1 when f replaced none.
func (f Frontier) priorBucket() int64 {
	if f.Replaced.IsZero() {
		return -1
	}
	return AdmissionBucket(f.Replaced.Add(AdmissionSeconds * time.Second))
}

// LineState is what the admitter keeps of a SKU's line between ticks (and between
// invocations) in the frontier item, and what a poll of a ticket not yet placed
// estimates its wait from.
type LineState struct {
	// Placed is the positions given so far, 1..Placed: each was reserved by the
	// frontier write that raised Placed, before the ticket's PlaceTicket, so two
	// admitters never give one position twice.
	Placed int
	// Queued is the tickets in line as the admitter last read it: Placed plus those
	// read from the index (or arrived in the fair window) and not placed yet.
	Queued int
	// ArrivalsPerSecond is the rate of arrivals over the last second read.
	ArrivalsPerSecond int
	// Watermark is the arrival time up to which the index was read into the line
	// (zero: not read since the sale, or the fair window not drawn yet).
	Watermark time.Time
	// Drawn: the fair window's line was drawn (or the SKU has no fair window).
	Drawn bool
	// Late counts index entries seen after the arrivals of their time were read
	// (the index is eventually consistent): each joined the back of the line.
	Late int
	// Unwritten is how many of the last positions, Placed−Unwritten+1..Placed, were
	// reserved and are not known to be written to their tickets: the admitter that
	// reserved them wrote its tickets after this frontier and may have stopped first.
	// The next admitter writes them again (admitter.Book.Resume).
	Unwritten int
}

// RescueAfter is how far behind the admitter's watermark a ticket still without a
// position must have arrived, with nothing read and unplaced in line, before its poll
// indexes it again (LineState.Missed): more than the admitter's own 2 s look back
// (admitter.Lookback), so an entry it can still find is left to it.
const RescueAfter = 5 * time.Second

// Missed reports whether a ticket without a position that arrived at arrived was
// missed by the admitter: its index entry showed after the admitter's look back had
// passed it (a global secondary index has no bound on its lag). That is so when the
// line is drawn, every ticket read is placed (Queued = Placed, Unwritten = 0) and the
// watermark is RescueAfter past the arrival. The poll then indexes the ticket again
// (its arrival set to the poll's time), and the admitter reads it as a new arrival.
func (l LineState) Missed(arrived time.Time) bool {
	return l.Drawn && l.Queued <= l.Placed && l.Unwritten == 0 && !arrived.After(l.Watermark.Add(-RescueAfter))
}

// Ahead is how many tickets are in line before one not placed yet that arrived at
// arrived: every ticket read (Queued), plus, for an arrival after the Watermark, the
// arrivals since then at ArrivalsPerSecond. Polls estimate the wait from it.
func (l LineState) Ahead(arrived time.Time) int {
	n := l.Queued
	if !l.Watermark.IsZero() && arrived.After(l.Watermark) {
		n += int(int64(l.ArrivalsPerSecond) * int64(arrived.Sub(l.Watermark)) / int64(time.Second))
	}
	return n
}

// Admitted is the last admitted position (0: none yet).
func (f Frontier) Admitted() int {
	if len(f.Steps) == 0 {
		return 0
	}
	return f.Steps[len(f.Steps)-1].Through
}

// expiredThrough is the last position whose admission has expired at now.
func (f Frontier) expiredThrough(now time.Time) int {
	through := 0
	for _, s := range f.Steps {
		if now.Before(s.Expires()) {
			break
		}
		through = s.Through
	}
	return through
}

// AdmittedUnexpired is the admissions issued less than AdmissionSeconds before now.
func (f Frontier) AdmittedUnexpired(now time.Time) int {
	return f.Admitted() - f.expiredThrough(now)
}

// Advance returns f after a tick at now that admitted d.Admit more buyers and
// found the SKU sold out or not. Admissions less than FrontierStepSeconds after the
// last step's start join that step (expiring with it, a little early, never late);
// steps of buckets that expired whole (AdmissionBucket) are dropped but the last
// of them, so that the admissions of the bucket expiring now can be counted
// (UsedClaims) and the last expired step is kept. So the item keeps at most
// (AdmissionSeconds + UsedBucketSeconds)/FrontierStepSeconds + 1 steps.
func (f Frontier) Advance(now time.Time, d AdmissionDecision) Frontier {
	steps := slices.Clone(f.Steps)
	if d.Admit > 0 {
		if n := len(steps); n > 0 && now.Sub(steps[n-1].At) < FrontierStepSeconds*time.Second {
			steps[n-1].Through += d.Admit
		} else {
			steps = append(steps, AdmissionStep{Through: f.Admitted() + d.Admit, At: now})
		}
	}
	current, last := now.Unix()/UsedBucketSeconds, -1
	for i, s := range steps {
		if AdmissionBucket(s.Expires()) < current {
			last = i
		}
	}
	if last > 0 {
		steps = steps[last:]
	}
	f.Steps, f.SoldOut = steps, d.SoldOut
	return f
}

// TicketStatus is what GET /queue/{ticket} answers.
type TicketStatus string

// Ticket statuses.
const (
	TicketWaiting  TicketStatus = "WAITING"  // in line (position known or, in the fair window, not yet drawn)
	TicketAdmitted TicketStatus = "ADMITTED" // may order until the admission expires
	TicketSoldOut  TicketStatus = "SOLD_OUT" // not admitted and nothing can be bought any more
	TicketExpired  TicketStatus = "EXPIRED"  // admitted, but the admission ran out
)

// Status is the status of the ticket at position (1-based; 0 = not yet drawn) at
// now, and for an admitted ticket when its admission expires. A ticket admitted
// before the sale sold out stays ADMITTED until its admission expires: its order
// may still find a unit a release returns.
func (f Frontier) Status(position int, now time.Time) (TicketStatus, time.Time) {
	if position > 0 {
		for _, s := range f.Steps {
			if position <= s.Through {
				if now.Before(s.Expires()) {
					return TicketAdmitted, s.Expires()
				}
				return TicketExpired, time.Time{}
			}
		}
	}
	if f.SoldOut {
		return TicketSoldOut, time.Time{}
	}
	return TicketWaiting, time.Time{}
}

// EstimatedWaitSeconds is the wait, in whole seconds rounded up, of the ticket at
// position when admissions run at ratePerSecond: the buyers ahead of it not yet
// admitted, at that rate. It is 0 for a ticket already admitted and ignores units
// running out (the Frontier's SoldOut says that).
func (f Frontier) EstimatedWaitSeconds(position, ratePerSecond int) int {
	ahead := position - f.Admitted()
	if ahead <= 0 {
		return 0
	}
	r := max(ratePerSecond, 1)
	return (ahead + r - 1) / r
}

// DrawSeed is a sale's secret seed for the fair draw, 32 random bytes chosen before
// the sale. Its Commitment is published before the sale opens, the seed itself
// after the fair window closes, so anyone can check that the seed was fixed in
// advance and recompute the order (FairOrder).
type DrawSeed [32]byte

// Commitment is the hex SHA-256 of the seed, published before the sale.
func (s DrawSeed) Commitment() string {
	h := sha256.Sum256(s[:])
	return hex.EncodeToString(h[:])
}

// Matches reports whether the seed is the one committed to (commitment is the hex
// Commitment, either case).
func (s DrawSeed) Matches(commitment string) bool {
	want := s.Commitment()
	return subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(commitment))) == 1
}

// ParseDrawSeed reads a seed from its 64 hex digits, as published after the sale.
// It returns an error wrapping ErrInvalidRequest for anything else.
func ParseDrawSeed(s string) (DrawSeed, error) {
	var seed DrawSeed
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(seed) {
		return seed, InvalidError("a draw seed is 64 hexadecimal digits")
	}
	copy(seed[:], b)
	return seed, nil
}

// DrawKey is a ticket's place in the draw: the first 8 bytes, big-endian, of
// HMAC-SHA256(seed, ticket). HMAC with a secret key is a pseudorandom function, so
// before the seed is revealed nobody can tell or steer the order by choosing when to
// arrive, and after it anyone can recompute it.
func (s DrawSeed) DrawKey(ticket string) uint64 {
	m := hmac.New(sha256.New, s[:])
	m.Write([]byte(ticket))
	return binary.BigEndian.Uint64(m.Sum(nil))
}

// FairOrder returns the tickets in draw order: ascending DrawKey, ties (one in
// 2⁶⁴ per pair) broken by ticket id. The order depends only on the seed and the
// set of tickets, not on the order they are given in, so anyone holding the
// published seed and ticket list recomputes the same line. tickets is not changed.
func (s DrawSeed) FairOrder(tickets []string) []string {
	type keyed struct {
		key    uint64
		ticket string
	}
	ks := make([]keyed, len(tickets))
	for i, t := range tickets {
		ks[i] = keyed{s.DrawKey(t), t}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ticket, b.ticket)
	})
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ticket
	}
	return out
}

// Arrival is one ticket and when it was taken (the store's clock).
type Arrival struct {
	Ticket string
	At     time.Time
}

// Line orders a sale's arrivals into the waiting line (positions are 1 + the
// index): those before FairWindowEnd(start), early ones included, first, in the
// seed's FairOrder; then the rest by arrival time, ties by ticket id. A ticket id
// given twice is an error wrapping ErrInvalidRequest (a buyer holds one ticket per
// SKU).
func (q QueueSettings) Line(seed DrawSeed, start time.Time, arrivals []Arrival) ([]string, error) {
	end := q.FairWindowEnd(start)
	seen := make(map[string]bool, len(arrivals))
	var fair []string
	var late []Arrival
	for _, a := range arrivals {
		if seen[a.Ticket] {
			return nil, InvalidError("ticket %q is in the line twice", a.Ticket)
		}
		seen[a.Ticket] = true
		if a.At.Before(end) && q.FairWindowSeconds > 0 {
			fair = append(fair, a.Ticket)
		} else {
			late = append(late, a)
		}
	}
	line := seed.FairOrder(fair)
	slices.SortFunc(late, func(a, b Arrival) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Ticket, b.Ticket)
	})
	for _, a := range late {
		line = append(line, a.Ticket)
	}
	return line, nil
}

// WaitState is where a waitlisted buyer stands.
type WaitState string

// Waitlist states.
const (
	WaitWaiting WaitState = "WAITING" // no hold yet
	WaitHeld    WaitState = "HELD"    // an exclusive hold on Units until HoldUntil
	WaitDone    WaitState = "DONE"    // an order used the hold
	WaitPassed  WaitState = "PASSED"  // the hold ran out unused and passed to the next buyer
)

// WaitEntry is one buyer on a SKU's waitlist.
type WaitEntry struct {
	Buyer     string    // the waitlist entry's id (not personal data)
	State     WaitState // WaitWaiting when zero ("")
	Units     int       // units held (WaitHeld)
	HoldUntil time.Time // when the hold ends (WaitHeld)
}

// Waitlist is a SKU's waitlist in line order (by subscription time, ties by id).
type Waitlist []WaitEntry

// WaitlistChange is what one pass over a waitlist does: Entries is the waitlist
// after it; Passed and Granted name the entries (by index) whose holds ran out and
// that got a new hold (each of them gets a subscribe message); Free is the units
// still free after it (no buyer left waiting).
type WaitlistChange struct {
	Entries Waitlist
	Passed  []int
	Granted []int
	Free    int
}

// PassHolds gives units back to the waitlist at now: holds that ended unused
// (HoldUntil at or before now) pass, their units joining free (units just
// returned to the SKU's stock and not yet held), and the free units go to waiting
// buyers in line order, at most perBuyer (≥ 1) each, each hold lasting
// WaitlistHoldSeconds. A buyer whose hold passed never gets another, so every
// buyer is offered units at most once and in order. Units held never exceed free
// plus the units of holds that passed.
func (w Waitlist) PassHolds(free, perBuyer int, now time.Time) WaitlistChange {
	perBuyer = max(perBuyer, 1)
	c := WaitlistChange{Entries: slices.Clone(w), Free: max(free, 0)}
	for i, e := range c.Entries {
		if e.State == WaitHeld && !now.Before(e.HoldUntil) {
			c.Free += e.Units
			c.Entries[i] = WaitEntry{Buyer: e.Buyer, State: WaitPassed}
			c.Passed = append(c.Passed, i)
		}
	}
	until := now.Add(WaitlistHoldSeconds * time.Second)
	for i, e := range c.Entries {
		if c.Free == 0 {
			break
		}
		if e.State != WaitWaiting && e.State != "" {
			continue
		}
		u := min(perBuyer, c.Free)
		c.Entries[i] = WaitEntry{Buyer: e.Buyer, State: WaitHeld, Units: u, HoldUntil: until}
		c.Free -= u
		c.Granted = append(c.Granted, i)
	}
	return c
}

// String names the change for logs: counts only, no buyer.
func (c WaitlistChange) String() string {
	return fmt.Sprintf("%d passed, %d granted, %d units free", len(c.Passed), len(c.Granted), c.Free)
}
