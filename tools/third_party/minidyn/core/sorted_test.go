package core

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A sortedList holds what a sorted slice would, in order, across merges, removals of
// pending and of merged keys, and clones.
func TestSortedList_HoldsTheKeysInOrder(t *testing.T) {
	l := newSortedList(strings.Compare)
	want := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3*pendingMax + 17 {
		k := strconv.Itoa(rng.IntN(1 << 30))
		if want[k] {
			continue
		}
		l.insert(k)
		want[k] = true
		if i%5 == 0 { // a key just taken in (pending) or merged long ago
			var gone string
			for gone = range want {
				break
			}
			l.remove(gone)
			delete(want, gone)
		}
		if i == pendingMax+3 {
			c := l.clone()
			if !slices.IsSorted(c.all()) || c.len() != len(want) {
				t.Fatalf("clone of %d keys: %d, sorted %v", len(want), c.len(), slices.IsSorted(c.all()))
			}
		}
	}
	l.remove("not there")
	got := l.all()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if l.len() != len(keys) || !slices.Equal(got, keys) {
		t.Fatalf("%d keys, sorted %v; want the %d keys in order", l.len(), slices.IsSorted(got), len(keys))
	}
}
