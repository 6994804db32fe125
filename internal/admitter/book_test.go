package admitter_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/inventory"
)

var start = time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }

func arrival(id string, ms int) inventory.Arrival { return inventory.Arrival{Ticket: id, At: at(ms)} }

// Before the fair window closes nothing is placed; the read that reaches its end
// draws every arrival so far (the window's in the seed's order, then by arrival);
// later reads join by arrival; an entry the index showed after its time was read
// joins the back and is counted; an entry read twice joins once.
func TestBook_DrawsOnceThenQueuesByArrivalAndLateEntriesJoinTheBack(t *testing.T) {
	q := inventory.QueueSettings{Queue: true, FairWindowSeconds: 2}
	var seed inventory.DrawSeed
	seed[0] = 7
	b := admitter.Book{Settings: q, Start: start, Seed: seed}
	read := func(cut int, as ...inventory.Arrival) int {
		t.Helper()
		n, err := b.Read(as, at(cut))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	read(1000, arrival("a", 100), arrival("b", 900))
	read(1999, arrival("c", 1500), arrival("a", 100))
	if b.Drawn || len(b.Pending) != 0 || b.Queued() != 3 {
		t.Fatalf("before the window's end: drawn %v, pending %v, queued %d", b.Drawn, b.Pending, b.Queued())
	}
	read(2500, arrival("e", 2400), arrival("d", 2100))
	want := append(seed.FairOrder([]string{"a", "b", "c"}), "d", "e")
	if !b.Drawn || !slices.Equal(b.Pending, want) {
		t.Fatalf("drawn: %v, want %v", b.Pending, want)
	}
	if got := b.Take(2); !slices.Equal(got, want[:2]) {
		t.Fatalf("took %v, want %v", got, want[:2])
	}
	// "late" arrived at 2,200 ms (read up to 2,500) and shows only now, after "f".
	if n := read(3000, arrival("f", 2800), arrival("late", 2200), arrival("e", 2400)); n != 2 {
		t.Fatalf("joined %d, want 2", n)
	}
	want = append(want[2:], "f", "late")
	if !slices.Equal(b.Pending, want) || b.Late != 1 {
		t.Fatalf("pending %v late %d, want %v and 1", b.Pending, b.Late, want)
	}
}

// Without a fair window the first read places everyone by arrival, ties by id.
func TestBook_WithoutAWindowQueuesByArrival(t *testing.T) {
	b := admitter.Book{Settings: inventory.QueueSettings{Queue: true}, Start: start}
	if _, err := b.Read([]inventory.Arrival{arrival("z", 5), arrival("y", 5), arrival("x", 9)}, at(10)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"y", "z", "x"}; !b.Drawn || !slices.Equal(b.Pending, want) {
		t.Fatalf("pending %v, want %v", b.Pending, want)
	}
}

// An admitter that resumes another's line rebuilds its unplaced part exactly: the
// same tickets, in the same order, as the first admitter still had pending.
func TestBook_ResumeRebuildsTheUnplacedPart(t *testing.T) {
	q := inventory.QueueSettings{Queue: true, FairWindowSeconds: 1}
	var seed inventory.DrawSeed
	seed[3] = 1
	var all []inventory.Arrival
	for i := range 50 {
		all = append(all, arrival(fmt.Sprintf("t%02d", i), i*40))
	}
	first := admitter.Book{Settings: q, Start: start, Seed: seed}
	if _, err := first.Read(all, at(2000)); err != nil {
		t.Fatal(err)
	}
	placed := first.Take(17)
	kept := inventory.LineState{Placed: len(placed), Queued: len(placed) + first.Queued(), Watermark: first.ReadTo, Drawn: true}
	second := admitter.Book{Settings: q, Start: start, Seed: seed}
	if _, err := second.Resume(kept, all); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(second.Pending, first.Pending) || len(second.Pending) != 33 {
		t.Fatalf("resumed %v, want %v", second.Pending, first.Pending)
	}
	// The next read finds only what is new to both.
	n, err := second.Read(append(all[45:], arrival("new", 2100)), at(2200))
	if err != nil || n != 1 || second.Pending[len(second.Pending)-1] != "new" {
		t.Fatalf("after resume: joined %d (%v), pending ends %v", n, err, second.Pending[len(second.Pending)-3:])
	}
}

// A rebuild gives back the tickets of the positions reserved and perhaps not
// written, the ones they were reserved for; after a late entry, or with an entry
// the line never held, none, as the order rebuilt may then differ from the kept one.
func TestBook_ResumeGivesBackTheUnwrittenPositionsTickets(t *testing.T) {
	q := inventory.QueueSettings{Queue: true}
	var all []inventory.Arrival
	for i := range 30 {
		all = append(all, arrival(fmt.Sprintf("t%02d", 29-i), i*10))
	}
	first := admitter.Book{Settings: q, Start: start}
	if _, err := first.Read(all, at(1000)); err != nil {
		t.Fatal(err)
	}
	placed := first.Take(17)
	kept := inventory.LineState{Placed: 17, Queued: 17 + first.Queued(), Watermark: first.ReadTo, Drawn: true, Unwritten: 5}
	second := admitter.Book{Settings: q, Start: start}
	again, err := second.Resume(kept, all)
	if err != nil || !slices.Equal(again, placed[12:]) {
		t.Fatalf("write again %v (%v), want %v", again, err, placed[12:])
	}
	if again, err := second.Resume(kept, append(all, arrival("shown since", 5))); err != nil || again != nil {
		t.Fatalf("with an entry the line never held: write again %v (%v), want none", again, err)
	}
	kept.Late = 1
	if again, err := second.Resume(kept, all); err != nil || again != nil {
		t.Fatalf("after a late entry: write again %v (%v), want none", again, err)
	}
}
