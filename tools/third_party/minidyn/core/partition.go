package core

import (
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/truora/minidyn/types"
)

// partitions files the items of a table (by primary key) or of an index (by index
// key) under their partition key value, each partition's items ordered by sort key
// value as DynamoDB orders them (numbers by value, strings and binary by their
// bytes; DynamoDB API Reference, Query: "Query results are always sorted by the sort
// key value"), then by table primary key. A Query reads only its partition, from the
// first item its sort key condition allows.
type partitions struct {
	byHash map[string]*partition
	at     map[string]slot // table primary key → where its item is filed
}

// slot is where an item is filed: its partition key value and its sort key value
// (both as stored: a string, a number's digits, or binary's bytes).
type slot struct{ hash, rng string }

// partition is one partition key value's items in order.
type partition struct{ members []member }

// member is one item of a partition: its sort key value and table primary key.
type member struct{ rng, key string }

func newPartitions() *partitions {
	return &partitions{byHash: map[string]*partition{}, at: map[string]slot{}}
}

// clone copies p for a snapshot.
func (p *partitions) clone() *partitions {
	c := &partitions{byHash: make(map[string]*partition, len(p.byHash)), at: maps.Clone(p.at)}
	for h, part := range p.byHash {
		c.byHash[h] = &partition{members: slices.Clone(part.members)}
	}

	return c
}

// keyValue returns an attribute's value as stored, when it has type typ (S, N or B).
func keyValue(v *types.Item, typ string) (string, bool) {
	if v == nil {
		return "", false
	}

	switch typ {
	case "S":
		return types.StringValue(v.S), v.S != nil
	case "N":
		return types.StringValue(v.N), v.N != nil
	case "B":
		return string(v.B), v.B != nil
	}

	return "", false
}

// file puts the item stored at key under its key attributes of ks, or takes it out
// when it lacks one (a sparse index).
func (p *partitions) file(ks keySchema, attrs map[string]string, key string, item map[string]*types.Item) {
	hash, ok := keyValue(item[ks.HashKey], attrs[ks.HashKey])
	rng := ""

	if ok && ks.RangeKey != "" {
		rng, ok = keyValue(item[ks.RangeKey], attrs[ks.RangeKey])
	}

	if !ok {
		p.remove(ks, attrs, key)

		return
	}

	s := slot{hash, rng}
	if old, exists := p.at[key]; exists {
		if old == s {
			return
		}

		p.remove(ks, attrs, key)
	}

	part := p.byHash[hash]
	if part == nil {
		part = &partition{}
		p.byHash[hash] = part
	}

	typ := attrs[ks.RangeKey]
	m := member{rng, key}
	pos, _ := slices.BinarySearchFunc(part.members, m, func(a, b member) int { return compareMembers(typ, a, b) })
	part.members = slices.Insert(part.members, pos, m)
	p.at[key] = s
}

// remove takes the item stored at key out, if filed.
func (p *partitions) remove(ks keySchema, attrs map[string]string, key string) {
	s, ok := p.at[key]
	if !ok {
		return
	}

	delete(p.at, key)

	part := p.byHash[s.hash]
	typ := attrs[ks.RangeKey]

	if pos, found := slices.BinarySearchFunc(part.members, member{s.rng, key}, func(a, b member) int { return compareMembers(typ, a, b) }); found {
		part.members = slices.Delete(part.members, pos, pos+1)
	}

	if len(part.members) == 0 {
		delete(p.byHash, s.hash)
	}
}

func compareMembers(typ string, a, b member) int {
	if c := compareKeyValues(typ, a.rng, b.rng); c != 0 {
		return c
	}

	return strings.Compare(a.key, b.key)
}

// compareKeyValues orders two sort key values of type typ: numbers by value (two
// spellings of one number by their digits, so that the order stays total), strings
// and binary by their bytes.
func compareKeyValues(typ, a, b string) int {
	if typ != "N" || a == b {
		return strings.Compare(a, b)
	}

	fa, erra := strconv.ParseFloat(a, 64)
	fb, errb := strconv.ParseFloat(b, 64)

	if erra == nil && errb == nil && fa != fb {
		if fa < fb {
			return -1
		}

		return 1
	}

	ra, oka := new(big.Rat).SetString(a)
	rb, okb := new(big.Rat).SetString(b)

	if oka && okb {
		if c := ra.Cmp(rb); c != 0 {
			return c
		}
	}

	return strings.Compare(a, b)
}

// span returns the positions [lo, hi) of the members whose sort key value the sort
// key condition (op, the values vals, as interpreter.KeyRange gives them) can match.
// The key condition is still evaluated on every member of the span, so a span wider
// than the matches would only cost time; an op it does not know spans everything.
func (part *partition) span(typ, op string, vals []string) (int, int) {
	n := len(part.members)
	cmp := func(pos int, v string) int { return compareKeyValues(typ, part.members[pos].rng, v) }
	atLeast := func(v string) int { return sort.Search(n, func(pos int) bool { return cmp(pos, v) >= 0 }) }
	above := func(v string) int { return sort.Search(n, func(pos int) bool { return cmp(pos, v) > 0 }) }

	lo, hi := 0, n

	switch {
	case op == "=":
		lo, hi = atLeast(vals[0]), above(vals[0])
	case op == "<":
		hi = atLeast(vals[0])
	case op == "<=":
		hi = above(vals[0])
	case op == ">":
		lo = above(vals[0])
	case op == ">=":
		lo = atLeast(vals[0])
	case op == "BETWEEN":
		lo, hi = atLeast(vals[0]), above(vals[1])
	case op == "begins_with" && typ != "N":
		lo = atLeast(vals[0])
		hi = lo + sort.Search(n-lo, func(pos int) bool { return !strings.HasPrefix(part.members[lo+pos].rng, vals[0]) })
	}

	return lo, max(lo, hi)
}

// cut returns where the member of sort key value rng and primary key key stands
// (present or not): the position of the first member at or past it, and of the first
// past it. A page that ended there goes on from after (forward) or before it.
func (part *partition) cut(typ, rng, key string) (int, int) {
	m := member{rng, key}
	before, found := slices.BinarySearchFunc(part.members, m, func(a, b member) int { return compareMembers(typ, a, b) })

	if found {
		return before, before + 1
	}

	return before, before
}
