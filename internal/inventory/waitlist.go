package inventory

// The waitlist's entries as the store keeps them (docs/design.md, "Waiting room", "The
// waitlist"); the pass over them is Waitlist.PassHolds (queue.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// ErrWaitlistNotFound: the caller has no entry on the SKU's waitlist (docs/contract.md,
// 404 WAITLIST_NOT_FOUND).
var ErrWaitlistNotFound = errors.New("no waitlist entry")

// WaitlistEntryID is the id of user's waitlist entry for sku: the first 16 bytes of
// SHA-256("waitlist" 0 user 0 sku), hex (32 characters), as TicketID is. The same
// buyer and SKU always get the same id, so one conditioned write keeps one entry per
// buyer and SKU.
func WaitlistEntryID(user, sku string) string {
	sum := sha256.Sum256([]byte("waitlist\x00" + user + "\x00" + sku))
	return hex.EncodeToString(sum[:16])
}

// WaitlistEntry is one buyer's entry on a SKU's waitlist, as POST and GET
// /skus/{skuId}/waitlist answer it.
type WaitlistEntry struct {
	ID         string    // WaitlistEntryID of the buyer and SKU (not personal data)
	SKU        string    // SKU id
	User       string    // the buyer (personal data: never logged)
	State      WaitState // WaitWaiting, WaitHeld, WaitPassed or WaitDone
	JoinedAt   time.Time // when the buyer joined: the waitlist's order
	Subscribed bool      // the buyer accepted the waitlist's one-time subscribe message
	// Units and HoldUntil are the hold (WaitHeld only): units taken off the SKU's
	// shards (Shards: shard → units) for this buyer until HoldUntil.
	Units     int
	HoldUntil time.Time
	Shards    map[int]int
	// Moved counts the times a shrinking reshard moved the hold to other shards: every
	// write of the hold is conditioned on it, so none gives back to shards it left.
	Moved int
	// Ref is the reference of the hold's ledger entries (HOLD, UNHOLD): one per
	// joining, so a buyer who leaves and joins again is held afresh.
	Ref     string
	OrderID string // WaitDone: the order that used the hold
}

// Holds reports whether e holds units for its buyer at t: held, and the hold not
// run out.
func (e WaitlistEntry) Holds(t time.Time) bool {
	return e.State == WaitHeld && e.Units > 0 && t.Before(e.HoldUntil)
}

// WaitlistPass is what one pass over a SKU's waitlist did (the sweep's log line and
// the messages it queues): counts, and the entries that got holds.
type WaitlistPass struct {
	SKU     string
	Waiting int             // entries waiting or held when the pass read them
	Passed  int             // holds that ran out and passed
	Granted []WaitlistEntry // entries given a hold by this pass (each gets a message)
	Units   int             // units held by this pass's grants
	Skipped string          // why the pass gave nothing ("" when it ran)
}

// WaitlistSKU is a SKU the sweep passes over: it had a waitlist entry; SoldOut when
// a pass found it with nothing available (after the sale: from then on units that
// come back go to the waitlist).
type WaitlistSKU struct {
	SKU     string
	SoldOut bool
}
