// Package history holds stockguard's randomized fault histories, in its tests: seeded,
// replayable runs of concurrent buyers, payments, cancels, expiries, sweeps and
// reconciles through the local stack's HTTP API and Lambda handlers, with faults
// injected on the DynamoDB wire (responses dropped after the server applied them,
// throttles, 5xx, TransactionConflict, latency) and on the close-order queue's side
// (duplicate, delayed and reordered deliveries, whole invocations retried). After
// every history the books must balance (booktest), nothing may be oversold, no order
// may be both paid and released, every acknowledged order must be readable, and
// reconcile must have reported no difference and no alert, during the traffic or
// after it.
//
//	go test -run History ./tools/internal/history/                   # the short histories
//	go test -run History ./tools/internal/history/ -seed 42          # replay one seed
//	go test -run History ./tools/internal/history/ -history.ops 30   # the long histories
//	go test -run HistorySoak ./tools/internal/history/ -history.for 7s  # ≥ 20 s over 3 seeds
//
// The test command runs 16 operations per worker (three workers) in each history: every
// fault kind still shows in the three histories (the first keyed order of each is
// always resent and its first close batch always retried), and the broken release is
// still caught. Nearly every DynamoDB request of a history is one of the 128
// PendingByExpiry bucket queries of a sweep or of a reconcile run, so a history's cost
// follows its length; -history.ops 30 plays the longer histories (more interleavings of
// reconcile with the traffic, at about twice the CPU) by hand.
//
// A failing history prints its seed; the same -seed replays the same plan of
// operations and the same fault draws (goroutine interleaving stays the scheduler's).
package history
