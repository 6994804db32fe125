package core

import "slices"

// pendingMax is how many keys a sortedList takes in before it merges them into its
// sorted keys: each merge moves every sorted key once, so a key taken in costs the
// list's length / pendingMax moves instead of half the list's length.
const pendingMax = 4096

// sortedList is a list of keys kept in order (stockguard patch, see PATCHES.md): new
// keys wait, unsorted, in pending until a reader needs the order or pendingMax have
// come, and are then merged into sorted in one pass. Inserting each key at its place
// moved half of a million-key list per new item, which made a table of a million
// items cost its writers more than their own work.
type sortedList[T any] struct {
	sorted  []T
	pending []T
	cmp     func(a, b T) int
}

func newSortedList[T any](cmp func(a, b T) int) sortedList[T] {
	return sortedList[T]{cmp: cmp}
}

// len is how many keys the list holds.
func (l *sortedList[T]) len() int { return len(l.sorted) + len(l.pending) }

// insert adds k (not in the list).
func (l *sortedList[T]) insert(k T) {
	l.pending = append(l.pending, k)
	if len(l.pending) >= pendingMax {
		l.merge()
	}
}

// remove takes k out, if there.
func (l *sortedList[T]) remove(k T) {
	if i := slices.IndexFunc(l.pending, func(p T) bool { return l.cmp(p, k) == 0 }); i >= 0 {
		l.pending = slices.Delete(l.pending, i, i+1)
		return
	}

	if pos, found := slices.BinarySearchFunc(l.sorted, k, l.cmp); found {
		l.sorted = slices.Delete(l.sorted, pos, pos+1)
	}
}

// all is every key in order (the list's own slice: not to be changed).
func (l *sortedList[T]) all() []T {
	l.merge()

	return l.sorted
}

// merge sorts pending and merges it into sorted, from the back, in place.
func (l *sortedList[T]) merge() {
	if len(l.pending) == 0 {
		return
	}

	slices.SortFunc(l.pending, l.cmp)
	n, p := len(l.sorted), l.pending
	l.sorted = slices.Grow(l.sorted, len(p))[:n+len(p)]

	for i, j, k := n-1, len(p)-1, n+len(p)-1; j >= 0; k-- {
		if i >= 0 && l.cmp(l.sorted[i], p[j]) > 0 {
			l.sorted[k] = l.sorted[i]
			i--
		} else {
			l.sorted[k] = p[j]
			j--
		}
	}

	clear(p)
	l.pending = l.pending[:0]
}

// clone is a copy of the list (for a snapshot).
func (l *sortedList[T]) clone() sortedList[T] {
	return sortedList[T]{sorted: slices.Clone(l.all()), cmp: l.cmp}
}
