package inventory_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

var saleStart = time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)

func TestQueueSettings_ValidateBounds(t *testing.T) {
	for _, tc := range []struct {
		q    inventory.QueueSettings
		want string // "" = valid; otherwise part of the reason
	}{
		{inventory.QueueSettings{}, ""},
		{inventory.QueueSettings{Queue: true}, ""},
		{inventory.QueueSettings{Queue: true, FairWindowSeconds: inventory.MaxFairWindowSeconds, RiskThreshold: inventory.MaxRiskRank}, ""},
		{inventory.QueueSettings{RiskThreshold: 1}, ""}, // the risk check works without a queue
		{inventory.QueueSettings{Queue: true, FairWindowSeconds: -1}, "fairWindowSeconds must"},
		{inventory.QueueSettings{Queue: true, FairWindowSeconds: inventory.MaxFairWindowSeconds + 1}, "fairWindowSeconds must"},
		{inventory.QueueSettings{FairWindowSeconds: 10}, "needs queue"},
		{inventory.QueueSettings{Queue: true, RiskThreshold: -1}, "riskThreshold must"},
		{inventory.QueueSettings{Queue: true, RiskThreshold: inventory.MaxRiskRank + 1}, "riskThreshold must"},
	} {
		err := tc.q.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%+v: %v, want valid", tc.q, err)
			}
			continue
		}
		var ie *inventory.InvalidRequestError
		if !errors.Is(err, inventory.ErrInvalidRequest) || !errors.As(err, &ie) || !strings.Contains(ie.Reason, tc.want) {
			t.Errorf("%+v: %v, want INVALID_REQUEST saying %q", tc.q, err, tc.want)
		}
	}
}

func TestQueueSettings_CheckRiskRefusesAtOrAboveTheThreshold(t *testing.T) {
	for _, tc := range []struct {
		threshold int
		answer    inventory.RiskAnswer
		refused   bool
	}{
		{0, inventory.RiskAnswer{Rank: 4, Known: true}, false}, // check off
		{4, inventory.RiskAnswer{Rank: 3, Known: true}, false},
		{4, inventory.RiskAnswer{Rank: 4, Known: true}, true},
		{1, inventory.RiskAnswer{Rank: 0, Known: true}, false},
		{1, inventory.RiskAnswer{Rank: 1, Known: true}, true},
		{2, inventory.RiskAnswer{Rank: 3, Known: true}, true},
		{1, inventory.RiskAnswer{}, false},                     // WeChat gave no rank: fail open
		{1, inventory.RiskAnswer{Rank: 9, Known: true}, false}, // not a legal risk_rank: unknown
		{1, inventory.RiskAnswer{Rank: -1, Known: true}, false},
	} {
		q := inventory.QueueSettings{Queue: true, RiskThreshold: tc.threshold}
		err := q.CheckRisk("sku-1", tc.answer)
		var se *inventory.SKUError
		if got := err != nil; got != tc.refused {
			t.Errorf("threshold %d, %+v: %v, want refused %v", tc.threshold, tc.answer, err, tc.refused)
		} else if got && (!errors.Is(err, inventory.ErrRiskRejected) || !errors.As(err, &se) || se.SKU != "sku-1") {
			t.Errorf("threshold %d, %+v: %v, want a *SKUError for sku-1 wrapping ErrRiskRejected", tc.threshold, tc.answer, err)
		}
	}
}

func TestAdmissionRatePerSecond_IsThePlannersShardRate(t *testing.T) {
	for shards, want := range map[int]int{0: 200, 1: 200, 2: 400, 50: 10_000, inventory.MaxShards: 12_800} {
		if got := inventory.AdmissionRatePerSecond(shards); got != want {
			t.Errorf("%d shards: %d admissions/s, want %d", shards, got, want)
		}
	}
	// A SKU sized for a peak is admitted at least at that peak.
	for _, peak := range []int{1, 199, 200, 201, 5_000, 12_800} {
		if r := inventory.AdmissionRatePerSecond(inventory.ShardsForPeak(peak)); r < peak {
			t.Errorf("peak %d/s: shards for it admit %d/s", peak, r)
		}
	}
}

func TestAdmissionInput_Decide(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   inventory.AdmissionInput
		want inventory.AdmissionDecision
	}{
		{"bounded by units", inventory.AdmissionInput{Available: 10, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 10}},
		{"bounded by rate", inventory.AdmissionInput{Available: 10_000, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 200}},
		{"bounded by the line", inventory.AdmissionInput{Available: 10_000, Budget: 200, Waiting: 3}, inventory.AdmissionDecision{Admit: 3}},
		{"unexpired admissions claim units", inventory.AdmissionInput{Available: 10, AdmittedUnexpired: 7, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 3}},
		{"more admitted than available admits none", inventory.AdmissionInput{Available: 5, Reserved: 3, AdmittedUnexpired: 7, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{}},
		{"units per buyer", inventory.AdmissionInput{Available: 10, AdmittedUnexpired: 1, UnitsPerAdmission: 3, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 2}},
		// The last unit under a limit of 2: one buyer is admitted for it, not none
		// (buyers waited for it forever); the next tick, its claim over what is
		// available, admits nobody more.
		{"a remainder under one claim admits one", inventory.AdmissionInput{Available: 1, UnitsPerAdmission: 2, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 1}},
		{"then nobody more", inventory.AdmissionInput{Available: 1, AdmittedUnexpired: 1, UnitsPerAdmission: 2, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{}},
		{"3 units at 2 each: one, then the remainder's", inventory.AdmissionInput{Available: 3, AdmittedUnexpired: 1, UnitsPerAdmission: 2, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 1}},
		{"all held by pending orders: wait, not sold out", inventory.AdmissionInput{Reserved: 4, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{}},
		{"nothing purchasable: sold out", inventory.AdmissionInput{AdmittedUnexpired: 3, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{SoldOut: true}},
		{"negative counts count as 0", inventory.AdmissionInput{Available: -2, Reserved: -1, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{SoldOut: true}},
		{"no budget", inventory.AdmissionInput{Available: 10, Waiting: 1000}, inventory.AdmissionDecision{}},
		// 10 admitted, 2 units each; 6 of them ordered (12 units gone from 20): their
		// claims are used, so the 4 unused claim 8 of the 8 left.
		{"used claims are not counted twice", inventory.AdmissionInput{Available: 8, Reserved: 12, AdmittedUnexpired: 10, UsedClaims: 12, UnitsPerAdmission: 2, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{}},
		// One of those orders is cancelled: its 2 units come back, its admission
		// stays used (its ticket opens no other order), so one more buyer is admitted.
		{"a cancel admits one more", inventory.AdmissionInput{Available: 10, Reserved: 10, AdmittedUnexpired: 10, UsedClaims: 12, UnitsPerAdmission: 2, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 1}},
		{"used claims count at most every claim", inventory.AdmissionInput{Available: 3, AdmittedUnexpired: 2, UsedClaims: 50, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 3}},
		{"negative used claims count as 0", inventory.AdmissionInput{Available: 3, AdmittedUnexpired: 2, UsedClaims: -5, Budget: 200, Waiting: 1000}, inventory.AdmissionDecision{Admit: 1}},
	} {
		if got := tc.in.Decide(); got != tc.want {
			t.Errorf("%s: %+v.Decide() = %+v, want %+v", tc.name, tc.in, got, tc.want)
		}
	}
}

// Claims that orders used are credited back per bucket of the admissions' expiry,
// all of those not yet expired, and in the bucket expiring now only what is left
// once its expired admissions are assumed to have used their whole claims; a
// counter credited at another number of units a buyer counts in proportion.
func TestFrontier_UsedClaims(t *testing.T) {
	t0 := saleStart // a whole number of buckets
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	bucket := func(s int) int64 {
		return inventory.AdmissionBucket(at(s).Add(inventory.AdmissionSeconds * time.Second))
	}
	// Steps at 0 s (5 admitted), 12 s (3), 15 s (4), 19 s (2), 25 s (6): buckets of
	// their expiries 180, 192, 195, 199, 205 s: b(0), b(12) = b(15) = b(19), b(25).
	f := inventory.Frontier{Steps: []inventory.AdmissionStep{
		{Through: 5, At: at(0)}, {Through: 8, At: at(12)}, {Through: 12, At: at(15)}, {Through: 14, At: at(19)}, {Through: 20, At: at(25)},
	}}
	two := func(b int64) inventory.UsedKey { return inventory.UsedKey{Bucket: b, Per: 2} }
	used := map[inventory.UsedKey]int{two(bucket(0)): 10, two(bucket(12)): 14, two(bucket(25)): 4}
	for _, tc := range []struct {
		name string
		f    inventory.Frontier
		used map[inventory.UsedKey]int
		now  int // seconds after t0
		per  int
		want int
	}{
		{"nothing expired: every counter", f, used, 100, 2, 10 + 14 + 4},
		{"credited at 2 a buyer, 1 now: half", f, used, 100, 1, 5 + 7 + 2},
		{"a counter above its claims counts them all", f, map[inventory.UsedKey]int{two(bucket(0)): 30}, 100, 2, 5 * 2},
		{"counters of several limits", f, map[inventory.UsedKey]int{{Bucket: bucket(25), Per: 1}: 3, {Bucket: bucket(25), Per: 3}: 6}, 100, 2, 3 + 6*2/3},
		{"a bucket expired whole counts nothing", f, used, 185, 2, 14 + 4},
		// At 196 s the steps of 12 and 15 s expired (7 admissions, 14 units at
		// most): 14 − 14 = 0 of the bucket's credit is known to be unexpired.
		{"the bucket expiring now: less its expired claims", f, used, 196, 2, 0 + 4},
		{"at 193 s only the step of 12 s expired", f, used, 193, 2, 14 - 3*2 + 4},
		// A frontier whose first step expired in the bucket expiring now: how many
		// it admitted is not known, so that bucket credits nothing.
		{"first step expired, its start dropped", inventory.Frontier{Steps: f.Steps[2:]}, used, 196, 2, 4},
		// Its first step not expired: nothing was dropped, the line starts at 1, so
		// its bucket has 12 + 2 admissions to credit.
		{"first step not expired", inventory.Frontier{Steps: f.Steps[2:]}, used, 100, 2, 14 + 4},
	} {
		if got := tc.f.UsedClaims(at(tc.now), tc.used, tc.per); got != tc.want {
			t.Errorf("%s: UsedClaims(%d s, per %d) = %d, want %d", tc.name, tc.now, tc.per, got, tc.want)
		}
	}
}

// Advance keeps every step of the bucket expiring now and the one before them, so
// that UsedClaims can count that bucket's expired admissions.
func TestFrontier_AdvanceKeepsTheBucketExpiringNow(t *testing.T) {
	t0 := saleStart
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var f inventory.Frontier
	for _, s := range []int{0, 12, 15, 19, 25} {
		f = f.Advance(at(s), inventory.AdmissionDecision{Admit: 2})
	}
	f = f.Advance(at(196), inventory.AdmissionDecision{})
	if len(f.Steps) != 5 || f.Steps[0].Through != 2 {
		t.Fatalf("at 196 s kept %v; want all 5 steps, from the one of 0 s", f.Steps)
	}
	f = f.Advance(at(201), inventory.AdmissionDecision{})
	if len(f.Steps) != 2 || !f.Steps[0].At.Equal(at(19)) {
		t.Fatalf("at 201 s kept %v; want the steps of 19 and 25 s", f.Steps)
	}
}

func TestAdmissionCredit(t *testing.T) {
	for _, tc := range []struct {
		per    int
		shards map[int]int
		want   map[int]int
	}{
		{2, map[int]int{3: 1}, map[int]int{3: 2}}, // one shard: the whole claim
		{0, map[int]int{0: 1}, map[int]int{0: 1}},
		{3, map[int]int{4: 1, 1: 1}, map[int]int{1: 1, 4: 1}},       // several: the units taken on each
		{2, map[int]int{0: 3, 1: 2}, map[int]int{0: 2}},             // at most per in all
		{3, map[int]int{2: 2, 0: 0, 1: 2}, map[int]int{1: 2, 2: 1}}, // in shard order
	} {
		if got := inventory.AdmissionCredit(tc.per, tc.shards); !maps.Equal(got, tc.want) {
			t.Errorf("AdmissionCredit(%d, %v) = %v, want %v", tc.per, tc.shards, got, tc.want)
		}
	}
}

// admission is one admitted buyer of the simulation below.
type admission struct {
	expires time.Time
	used    bool
}

// usedClaim is what the simulation's order of a credits: its whole claim, on one
// shard, to its bucket (AdmissionCredit).
func usedClaim(used map[inventory.UsedKey]int, a admission, per int) {
	k := inventory.UsedKey{Bucket: inventory.AdmissionBucket(a.expires.Truncate(time.Second)), Per: per}
	used[k] += inventory.AdmissionCredit(per, map[int]int{0: 1})[0]
}

// TestAdmission_NeverExceedsPurchasableUnits runs 1,000 random sales of 200 ticks
// each (fixed seed): admitted buyers order (some take fewer units than they may),
// pending orders are paid or released, refunds restock, admissions expire, and
// ticks come 250 ms (sharing a frontier step) to 90 s apart; the claims orders
// used are credited back (UsedClaims, a cancel or release leaving the admission
// used), and the per-user limit is lowered now and then. After every tick the unused, unexpired admissions
// never exceed the available units (each can buy one), and their claims of
// UnitsPerAdmission pass what is available by less than one claim; the tick says SoldOut exactly when nothing is purchasable; and
// with no admission outstanding it admits all the units, rate and line allow.
func TestAdmission_NeverExceedsPurchasableUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 2026))
	var ticks, admitted, soldOut int
	for sale := range 1000 {
		per := 1 + r.IntN(3)
		available, reserved := r.IntN(50), 0
		waiting := r.IntN(300)
		rate := inventory.AdmissionRatePerSecond(1 + r.IntN(3))
		now := saleStart
		var f inventory.Frontier
		var adm []admission
		used := map[inventory.UsedKey]int{} // the shards' counters of used claims
		var pending []int                   // units of each PENDING order
		for tick := range 200 {
			// Between ticks: buyers act, orders settle, refunds restock.
			for i := range adm {
				a := &adm[i]
				if a.used || !now.Before(a.expires) || r.IntN(3) != 0 {
					continue
				}
				q := 1 + r.IntN(per)
				if q > available {
					continue // STOCK_OUT for this buyer: the admission stays unused
				}
				a.used = true
				usedClaim(used, *a, per)
				available -= q
				reserved += q
				pending = append(pending, q)
			}
			for len(pending) > 0 && r.IntN(2) == 0 {
				i := r.IntN(len(pending))
				if r.IntN(2) == 0 { // released
					available += pending[i]
				}
				reserved -= pending[i]
				pending = slices.Delete(pending, i, i+1)
			}
			if r.IntN(20) == 0 {
				available += 1 + r.IntN(3) // a refund restocks
			}
			waiting += r.IntN(20)
			if per > 1 && r.IntN(30) == 0 {
				per-- // the merchant lowers the limit: earlier orders credited more a buyer
			}
			if r.IntN(2) == 0 {
				now = now.Add(250 * time.Millisecond) // the admitter's tick: admissions share a step
			} else {
				now = now.Add(time.Duration(200+r.IntN(90_000)) * time.Millisecond)
			}

			in := inventory.AdmissionInput{
				Available: available, Reserved: reserved,
				AdmittedUnexpired: f.AdmittedUnexpired(now), UsedClaims: f.UsedClaims(now, used, per),
				UnitsPerAdmission: per, Budget: rate, Waiting: waiting,
			}
			d := in.Decide()
			f = f.Advance(now, d)
			for pos := f.Admitted() - d.Admit + 1; pos <= f.Admitted(); pos++ {
				// The admission lasts as its token says: until its step expires.
				st, exp := f.Status(pos, now)
				if st != inventory.TicketAdmitted || exp.After(now.Add(inventory.AdmissionSeconds*time.Second)) {
					t.Fatalf("sale %d tick %d: position %d just admitted is %s until %v", sale, tick, pos, st, exp)
				}
				adm = append(adm, admission{expires: exp})
			}
			waiting -= d.Admit
			ticks++
			admitted += d.Admit
			if d.SoldOut {
				soldOut++
			}

			outstanding := 0
			unexpired := 0
			for _, a := range adm {
				if now.Before(a.expires) {
					unexpired++
					if !a.used {
						outstanding++
					}
				}
			}
			// Each unused admission can still buy a unit; their claims pass what is
			// available by less than one claim (the remainder's admission).
			if p := available + reserved; outstanding > p || outstanding > available || outstanding*per > available+per-1 {
				t.Fatalf("sale %d tick %d: %d unused admissions (each up to %d units) with %d available, %d purchasable", sale, tick, outstanding, per, available, p)
			}
			if got := f.AdmittedUnexpired(now); got != unexpired {
				t.Fatalf("sale %d tick %d: frontier counts %d unexpired admissions, the buyers %d", sale, tick, got, unexpired)
			}
			if d.SoldOut != (available+reserved == 0) {
				t.Fatalf("sale %d tick %d: SoldOut %v with %d available, %d reserved", sale, tick, d.SoldOut, available, reserved)
			}
			want := available / per
			if want == 0 && available > 0 {
				want = 1 // the remainder under one claim
			}
			if in.AdmittedUnexpired == 0 && d.Admit != min(want, rate, in.Waiting) {
				t.Fatalf("sale %d tick %d: admitted %d with nothing outstanding, %d available, rate %d, %d waiting", sale, tick, d.Admit, available, rate, in.Waiting)
			}
		}
	}
	// The scenarios reach every case (fixed seed: these are exact).
	if admitted == 0 || soldOut == 0 || soldOut == ticks {
		t.Fatalf("%d ticks, %d admitted, %d sold out: the scenarios miss a case", ticks, admitted, soldOut)
	}
}

func TestFrontier_StatusOfATicket(t *testing.T) {
	t0 := saleStart
	life := inventory.AdmissionSeconds * time.Second
	f := inventory.Frontier{Steps: []inventory.AdmissionStep{{Through: 100, At: t0}, {Through: 250, At: t0.Add(10 * time.Second)}}}
	for _, tc := range []struct {
		name     string
		f        inventory.Frontier
		position int
		now      time.Time
		want     inventory.TicketStatus
		expires  time.Time
	}{
		{"first step, in time", f, 1, t0.Add(time.Second), inventory.TicketAdmitted, t0.Add(life)},
		{"second step", f, 101, t0.Add(time.Minute), inventory.TicketAdmitted, t0.Add(10*time.Second + life)},
		{"first step, run out", f, 100, t0.Add(life), inventory.TicketExpired, time.Time{}},
		{"second step still on", f, 250, t0.Add(life), inventory.TicketAdmitted, t0.Add(10*time.Second + life)},
		{"behind the frontier", f, 251, t0.Add(time.Second), inventory.TicketWaiting, time.Time{}},
		{"not drawn yet", f, 0, t0.Add(time.Second), inventory.TicketWaiting, time.Time{}},
		{"sold out while waiting", inventory.Frontier{Steps: f.Steps, SoldOut: true}, 251, t0.Add(time.Second), inventory.TicketSoldOut, time.Time{}},
		{"admitted before the sell-out", inventory.Frontier{Steps: f.Steps, SoldOut: true}, 5, t0.Add(time.Second), inventory.TicketAdmitted, t0.Add(life)},
		{"no admission yet", inventory.Frontier{}, 1, t0, inventory.TicketWaiting, time.Time{}},
	} {
		got, exp := tc.f.Status(tc.position, tc.now)
		if got != tc.want || !exp.Equal(tc.expires) {
			t.Errorf("%s: Status(%d) = %s until %v, want %s until %v", tc.name, tc.position, got, exp, tc.want, tc.expires)
		}
	}
	if got := f.EstimatedWaitSeconds(650, 200); got != 2 {
		t.Errorf("400 ahead at 200/s: %d s, want 2", got)
	}
	if got := f.EstimatedWaitSeconds(3, 200); got != 0 {
		t.Errorf("admitted: %d s, want 0", got)
	}
}

// A frontier advanced once a second for an hour keeps at most about
// AdmissionSeconds + UsedBucketSeconds steps, and still tells each position its
// status.
func TestFrontier_AdvanceKeepsTheItemSmall(t *testing.T) {
	var f inventory.Frontier
	now := saleStart
	for range 3600 {
		now = now.Add(time.Second)
		f = f.Advance(now, inventory.AdmissionDecision{Admit: 10})
	}
	most := (inventory.AdmissionSeconds+inventory.UsedBucketSeconds)/inventory.FrontierStepSeconds + 1
	if n := len(f.Steps); n > most {
		t.Fatalf("%d steps kept, want at most %d", n, most)
	}
	if f.Admitted() != 36_000 || f.AdmittedUnexpired(now) != 10*inventory.AdmissionSeconds {
		t.Fatalf("admitted %d, unexpired %d; want 36000 and %d", f.Admitted(), f.AdmittedUnexpired(now), 10*inventory.AdmissionSeconds)
	}
	for pos, want := range map[int]inventory.TicketStatus{1: inventory.TicketExpired, 34_200: inventory.TicketExpired, 34_201: inventory.TicketAdmitted, 36_000: inventory.TicketAdmitted, 36_001: inventory.TicketWaiting} {
		if got, _ := f.Status(pos, now); got != want {
			t.Errorf("position %d: %s, want %s", pos, got, want)
		}
	}
	// Ticking four times a second: a second's admissions share one step, which
	// expires with its first.
	var g inventory.Frontier
	now = saleStart
	for range 4 * 3600 {
		now = now.Add(250 * time.Millisecond)
		g = g.Advance(now, inventory.AdmissionDecision{Admit: 1})
	}
	if n := len(g.Steps); n > most {
		t.Fatalf("4 ticks a second: %d steps kept, want at most %d", n, most)
	}
	if g.Admitted() != 14_400 || g.AdmittedUnexpired(now) != 4*inventory.AdmissionSeconds {
		t.Fatalf("4 ticks a second: admitted %d, unexpired %d; want 14400 and %d", g.Admitted(), g.AdmittedUnexpired(now), 4*inventory.AdmissionSeconds)
	}
	if st, exp := g.Status(g.Admitted(), now); st != inventory.TicketAdmitted || exp.After(now.Add(inventory.AdmissionSeconds*time.Second)) {
		t.Fatalf("the last admitted: %s until %v; want ADMITTED for at most %d s", st, exp, inventory.AdmissionSeconds)
	}
}

func testSeed() inventory.DrawSeed {
	var s inventory.DrawSeed
	for i := range s {
		s[i] = byte(i)
	}
	return s
}

// The draw is HMAC-SHA256(seed, ticket), first 8 bytes, ascending. The expected
// order was computed outside Go, so anyone can check a published draw the same way:
//
//	printf %s t-0001 | openssl dgst -sha256 -mac HMAC -macopt hexkey:<seed>
func TestDrawSeed_FairOrderIsRecomputable(t *testing.T) {
	seed := testSeed()
	tickets := []string{"t-0001", "t-0002", "t-0003", "t-0004", "t-0005", "t-0006"}
	want := []string{"t-0005", "t-0004", "t-0003", "t-0006", "t-0001", "t-0002"}
	if got := seed.FairOrder(tickets); !slices.Equal(got, want) {
		t.Fatalf("FairOrder = %v, want %v", got, want)
	}
	if got := seed.DrawKey("t-0005"); got != 0x260a0ca20b37f764 {
		t.Fatalf("DrawKey(t-0005) = %x, want 260a0ca20b37f764", got)
	}
	// The same seed gives the same order whatever order the tickets come in.
	shuffled := slices.Clone(tickets)
	slices.Reverse(shuffled)
	if got := seed.FairOrder(shuffled); !slices.Equal(got, want) {
		t.Fatalf("reversed input: %v, want %v", got, want)
	}
	if !slices.Equal(shuffled, []string{"t-0006", "t-0005", "t-0004", "t-0003", "t-0002", "t-0001"}) {
		t.Fatalf("FairOrder changed its input: %v", shuffled)
	}
	// Another seed, another order.
	other := seed
	other[0] ^= 1
	if slices.Equal(other.FairOrder(tickets), want) {
		t.Fatal("a different seed drew the same order")
	}
}

func TestDrawSeed_CommitmentAndReveal(t *testing.T) {
	seed := testSeed()
	const commitment = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd" // sha256sum of the seed's bytes
	if seed.Commitment() != commitment || !seed.Matches(strings.ToUpper(commitment)) {
		t.Fatalf("Commitment = %s, want %s", seed.Commitment(), commitment)
	}
	revealed, err := inventory.ParseDrawSeed("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil || revealed != seed {
		t.Fatalf("ParseDrawSeed = %x, %v", revealed, err)
	}
	other := seed
	other[31]++
	if other.Matches(commitment) {
		t.Fatal("a different seed matches the commitment")
	}
	for _, bad := range []string{"", "00", strings.Repeat("0", 63), strings.Repeat("g", 64), strings.Repeat("0", 66)} {
		if _, err := inventory.ParseDrawSeed(bad); !errors.Is(err, inventory.ErrInvalidRequest) {
			t.Errorf("ParseDrawSeed(%q) = %v, want INVALID_REQUEST", bad, err)
		}
	}
}

// TestDrawSeed_FairOrderIsUnbiased draws 4 tickets with 24,000 fixed seeds: each of
// the 24 orders should come about 1,000 times. Pearson's chi-square over the 24
// counts must stay below 49.73, the 0.999 quantile of chi-square with 23 degrees of
// freedom; the seeds are fixed, so the statistic (printed) is the same every run.
// Each ticket must also come first in about a quarter of the draws, whichever
// arrived first.
func TestDrawSeed_FairOrderIsUnbiased(t *testing.T) {
	const draws = 24_000
	tickets := []string{"t-early", "t-second", "t-third", "t-late"} // in arrival order
	perm := map[string]int{}
	first := map[string]int{}
	for i := range draws {
		seed := inventory.DrawSeed(sha256.Sum256(fmt.Appendf(nil, "rehearsal seed %d", i)))
		order := seed.FairOrder(tickets)
		perm[strings.Join(order, ",")]++
		first[order[0]]++
	}
	if len(perm) != 24 {
		t.Fatalf("%d distinct orders drawn, want all 24", len(perm))
	}
	const expected = draws / 24.0
	chi2 := 0.0
	for _, n := range perm {
		d := float64(n) - expected
		chi2 += d * d / expected
	}
	t.Logf("chi-square over 24 orders: %.2f (23 df); first places: %v", chi2, first)
	if chi2 >= 49.73 {
		t.Fatalf("chi-square %.2f ≥ 49.73: the draw favours some orders: %v", chi2, perm)
	}
	for _, tk := range tickets {
		// A quarter is 6,000; a binomial's standard deviation here is 67, so ±400 is 6σ.
		if n := first[tk]; n < 5_600 || n > 6_400 {
			t.Errorf("%s came first %d times in %d draws, want about 6000", tk, n, draws)
		}
	}
}

func TestQueueSettings_LineDrawsTheFairWindowThenQueuesByArrival(t *testing.T) {
	seed := testSeed()
	q := inventory.QueueSettings{Queue: true, FairWindowSeconds: 10}
	arrivals := []inventory.Arrival{
		{"t-0001", saleStart.Add(9 * time.Second)},
		{"late-b", saleStart.Add(12 * time.Second)},
		{"t-0002", saleStart.Add(-time.Second)}, // before the start: in the draw
		{"late-a", saleStart.Add(12 * time.Second)},
		{"t-0005", saleStart},
		{"late-0", saleStart.Add(10 * time.Second)}, // the window's end: by arrival
		{"t-0003", saleStart.Add(5 * time.Second)},
	}
	got, err := q.Line(seed, saleStart, arrivals)
	want := []string{"t-0005", "t-0003", "t-0001", "t-0002", "late-0", "late-a", "late-b"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Line = %v, %v; want %v", got, err, want)
	}
	// Without a fair window everyone queues by arrival.
	got, err = inventory.QueueSettings{Queue: true}.Line(seed, saleStart, arrivals)
	want = []string{"t-0002", "t-0005", "t-0003", "t-0001", "late-0", "late-a", "late-b"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("no window: Line = %v, %v; want %v", got, err, want)
	}
	if _, err := q.Line(seed, saleStart, append(arrivals, inventory.Arrival{"t-0001", saleStart})); !errors.Is(err, inventory.ErrInvalidRequest) {
		t.Fatalf("a ticket twice: %v, want INVALID_REQUEST", err)
	}
}

func TestWaitlist_PassHoldsGivesReturnedUnitsInOrderAndPassesUnusedHolds(t *testing.T) {
	t0 := saleStart
	hold := inventory.WaitlistHoldSeconds * time.Second
	w := inventory.Waitlist{{Buyer: "w1"}, {Buyer: "w2"}, {Buyer: "w3"}, {Buyer: "w4"}}

	// One unit comes back: the first in line holds it.
	c := w.PassHolds(1, 1, t0)
	if !slices.Equal(c.Granted, []int{0}) || c.Passed != nil || c.Free != 0 ||
		c.Entries[0] != (inventory.WaitEntry{Buyer: "w1", State: inventory.WaitHeld, Units: 1, HoldUntil: t0.Add(hold)}) || c.Entries[1].State != "" {
		t.Fatalf("one unit back: %v %+v", c, c.Entries)
	}
	if w[0].State != "" {
		t.Fatal("PassHolds changed its receiver")
	}
	// Before the hold ends nothing passes, even with no unit free.
	if c2 := c.Entries.PassHolds(0, 1, t0.Add(hold-time.Nanosecond)); c2.Passed != nil || c2.Granted != nil {
		t.Fatalf("hold still on: %v", c2)
	}
	// The hold runs out unused: it passes to the next, and w1 is never offered again.
	c = c.Entries.PassHolds(0, 1, t0.Add(hold))
	if !slices.Equal(c.Passed, []int{0}) || !slices.Equal(c.Granted, []int{1}) || c.Entries[0].State != inventory.WaitPassed || c.Entries[1].State != inventory.WaitHeld {
		t.Fatalf("hold ran out: %v %+v", c, c.Entries)
	}
	// w2 orders; three more units come back, two per buyer: w3 gets 2, w4 gets 1.
	c.Entries[1].State = inventory.WaitDone
	c = c.Entries.PassHolds(3, 2, t0.Add(hold+time.Second))
	if !slices.Equal(c.Granted, []int{2, 3}) || c.Entries[2].Units != 2 || c.Entries[3].Units != 1 || c.Free != 0 || c.Entries[0].State != inventory.WaitPassed || c.Entries[1].State != inventory.WaitDone {
		t.Fatalf("three back: %v %+v", c, c.Entries)
	}
	// Units left when nobody waits stay free.
	if c = c.Entries.PassHolds(4, 1, t0.Add(hold+2*time.Second)); c.Free != 4 || c.Granted != nil {
		t.Fatalf("nobody waiting: %v", c)
	}
}

// Over random waitlists and returns (fixed seed), units held never exceed the units
// returned, holds go to the earliest waiting buyers, and nobody holds twice.
func TestWaitlist_PassHoldsNeverHoldsMoreThanReturned(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 7))
	for run := range 1000 {
		w := make(inventory.Waitlist, 1+r.IntN(30))
		for i := range w {
			w[i].Buyer = fmt.Sprint("w", i)
		}
		per := 1 + r.IntN(3)
		now := saleStart
		returned, used := 0, 0
		offered := map[int]int{}
		for range 20 {
			back := r.IntN(4)
			returned += back
			now = now.Add(time.Duration(r.IntN(2*inventory.WaitlistHoldSeconds)) * time.Second)
			c := w.PassHolds(back, per, now)
			held := 0
			lastGranted := -1
			for _, i := range c.Granted {
				offered[i]++
				if offered[i] > 1 || i < lastGranted {
					t.Fatalf("run %d: entry %d offered %d times (granted %v)", run, i, offered[i], c.Granted)
				}
				lastGranted = i
			}
			for i, e := range c.Entries {
				switch e.State {
				case inventory.WaitHeld:
					held += e.Units
					if r.IntN(3) == 0 { // the buyer orders with the hold
						used += e.Units
						c.Entries[i] = inventory.WaitEntry{Buyer: e.Buyer, State: inventory.WaitDone}
						held -= e.Units
					}
				case "", inventory.WaitWaiting:
					if c.Free > 0 {
						t.Fatalf("run %d: %d units free while %s waits", run, c.Free, e.Buyer)
					}
				}
			}
			if held+used+c.Free != returned {
				t.Fatalf("run %d: %d held + %d used + %d free ≠ %d returned", run, held, used, c.Free, returned)
			}
			w = c.Entries
			returned -= c.Free // free units go back to open sale; not counted again
		}
	}
}

// A ticket without a position is missed only once the line is drawn, everything
// read is placed and written, and the watermark is RescueAfter past its arrival.
func TestLineState_MissedOnlyOnceTheLineHasPassedIt(t *testing.T) {
	arrived := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	passed := inventory.LineState{Placed: 10, Queued: 10, Drawn: true, Watermark: arrived.Add(inventory.RescueAfter)}
	cases := []struct {
		name   string
		change func(*inventory.LineState)
		want   bool
	}{
		{"passed", func(*inventory.LineState) {}, true},
		{"watermark short of RescueAfter", func(l *inventory.LineState) { l.Watermark = l.Watermark.Add(-time.Millisecond) }, false},
		{"tickets read and unplaced", func(l *inventory.LineState) { l.Queued++ }, false},
		{"positions not written", func(l *inventory.LineState) { l.Unwritten = 1 }, false},
		{"not drawn", func(l *inventory.LineState) { l.Drawn = false }, false},
	}
	for _, c := range cases {
		l := passed
		c.change(&l)
		if got := l.Missed(arrived); got != c.want {
			t.Errorf("%s: missed %v, want %v", c.name, got, c.want)
		}
	}
}

// A SKU put on sale again with a new start gets a new line: nobody placed nor
// admitted, the fair window not drawn, not sold out. The last sale's admissions
// unexpired then (and those it still carried) claim units for SaleHandover, and
// the counters of the bucket they last expire in credit the new sale nothing; a
// frontier of the same sale is kept as it is.
func TestFrontier_ForSaleStartsANewLine(t *testing.T) {
	first, second := saleStart, saleStart.Add(time.Hour)
	at := first.Add(10 * time.Minute)
	old := inventory.Frontier{Sale: first, SoldOut: true, Line: inventory.LineState{Placed: 40, Queued: 50, Drawn: true, Watermark: at}}.
		Advance(at, inventory.AdmissionDecision{Admit: 30}).
		Advance(at.Add(2*time.Minute), inventory.AdmissionDecision{Admit: 4, SoldOut: true})
	now := at.Add(3 * time.Minute) // the first 30 have expired, the last 4 not
	if got := old.ForSale(first, now); !slices.Equal(got.Steps, old.Steps) || got.Line != old.Line || !got.Replaced.IsZero() {
		t.Fatalf("the same sale's frontier changed: %+v", got)
	}
	f := old.ForSale(second, now)
	if f.Admitted() != 0 || f.SoldOut || f.Line != (inventory.LineState{}) || !f.Sale.Equal(second) || !f.Replaced.Equal(now) || f.Prior != 4 {
		t.Fatalf("new sale's frontier: %+v, want empty, of %v, replaced at %v with 4 prior", f, second, now)
	}
	for _, tc := range []struct {
		after time.Duration
		want  int
	}{{0, 4}, {inventory.SaleHandover - time.Millisecond, 4}, {inventory.SaleHandover, 0}} {
		if got := f.PriorClaims(now.Add(tc.after)); got != tc.want {
			t.Errorf("prior claims %v after the change: %d, want %d", tc.after, got, tc.want)
		}
	}
	if again := f.ForSale(first, now.Add(time.Second)); again.Prior != 4 || !again.Sale.Equal(first) {
		t.Errorf("replaced again within the handover: %+v, want the 4 still counted", again)
	}
	if quiet := old.ForSale(second, at.Add(time.Hour)); quiet.Prior != 0 || !quiet.Replaced.IsZero() {
		t.Errorf("replacing a sale whose admissions all expired: %+v, want no prior, no handover", quiet)
	}

	// The new sale admits 2 at once and 3 a bucket later; one order of the last
	// sale and one of this one's first step credited the shared bucket.
	g := f.Advance(now, inventory.AdmissionDecision{Admit: 2}).Advance(now.Add(10*time.Second), inventory.AdmissionDecision{Admit: 3})
	if !g.Sale.Equal(second) || !g.Replaced.Equal(now) || g.Prior != 4 || g.Admitted() != 5 {
		t.Fatalf("Advance lost the sale: %+v", g)
	}
	shared := inventory.AdmissionBucket(now.Add(inventory.AdmissionSeconds * time.Second))
	used := map[inventory.UsedKey]int{{Bucket: shared, Per: 1}: 2, {Bucket: shared + 1, Per: 1}: 1}
	if got := g.UsedClaims(now.Add(20*time.Second), used, 1); got != 1 {
		t.Errorf("used claims %d, want 1 (the shared bucket credits nothing)", got)
	}
	if got := (inventory.Frontier{Steps: g.Steps, Sale: second}).UsedClaims(now.Add(20*time.Second), used, 1); got != 3 {
		t.Errorf("used claims of a frontier that replaced none %d, want 3", got)
	}
}
