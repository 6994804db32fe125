package ddblimits

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Index is one global secondary index of a table, as the model maintains it: which
// attributes key it and which it projects (Developer Guide, "Using Global Secondary
// Indexes in DynamoDB": "Attribute projections").
type Index struct {
	// Name is the index name, e.g. LedgerByShard.
	Name string
	// Hash and Range name the index's key attributes (Range "" when it has none). An
	// item is in the index only while it has them all (a sparse index).
	Hash, Range string
	// Projection is ALL, KEYS_ONLY or INCLUDE; Include lists INCLUDE's non-key
	// attributes.
	Projection string
	Include    []string
}

// IndexesOf lists the global secondary indexes of tables as Config.Indexes wants
// them (table name → indexes), from their CreateTable inputs (e.g.
// sam.Template.Tables).
func IndexesOf(tables []*dynamodb.CreateTableInput) map[string][]Index {
	out := map[string][]Index{}
	for _, t := range tables {
		for _, g := range t.GlobalSecondaryIndexes {
			ix := Index{Name: aws.ToString(g.IndexName)}
			for _, k := range g.KeySchema {
				if k.KeyType == types.KeyTypeHash {
					ix.Hash = aws.ToString(k.AttributeName)
				} else {
					ix.Range = aws.ToString(k.AttributeName)
				}
			}
			if p := g.Projection; p != nil {
				ix.Projection, ix.Include = string(p.ProjectionType), p.NonKeyAttributes
			}
			out[aws.ToString(t.TableName)] = append(out[aws.ToString(t.TableName)], ix)
		}
	}
	return out
}

// keyAttributes are the attributes that key the index.
func (ix Index) keyAttributes() []string {
	if ix.Range == "" {
		return []string{ix.Hash}
	}
	return []string{ix.Hash, ix.Range}
}

// projects reports whether a change of attribute name rewrites the index entry.
func (ix Index) projects(name string) bool {
	switch ix.Projection {
	case "ALL", "":
		return true
	case "INCLUDE":
		for _, n := range ix.Include {
			if n == name {
				return true
			}
		}
	}
	return false
}

// change is what one write does to an item's attributes, as far as the model needs
// it to maintain the item's index entries.
type change struct {
	put    rawItem                    // a Put: the whole new item
	delete bool                       // a Delete
	set    map[string]json.RawMessage // an Update: attributes set (nil: to a value the model cannot tell, or in part by a nested path)
	remove map[string]bool            // an Update: attributes removed
	named  map[string]bool            // an Update: every top-level attribute it names
}

// unknownValue stands for an index key set to a value the model cannot read from the
// request (an expression other than a plain :value).
const unknownValue = "?"

// indexEntry is an item's entry in one index: the value of its index hash key (its
// index partition), the whole index key, and its size in bytes.
type indexEntry struct {
	hash, key string
	size      int
}

// indexWrite is one write an index receives because of a base-table write: a put or
// a delete of one entry in the partition of hash (Developer Guide, "Using Global
// Secondary Indexes in DynamoDB", "Provisioned throughput considerations for Global
// Secondary Indexes": a new entry is one write, an entry whose key changed is two (a
// delete of the old and a put of the new), an entry updated in place one, a removed
// entry one, and an item outside the index before and after none).
type indexWrite struct {
	index string
	hash  string
	units float64
}

// entries computes an item's index entries after a write: from the whole item for a
// Put, from its entries before (old) and the attributes the update sets and removes
// for an Update (an ALL entry the item's size after it), none for a Delete. keys are
// the table's key attributes (KEYS_ONLY entries hold them); size is the item's size
// estimate after the write.
func entries(indexes []Index, keys []string, old fields[indexEntry], keyAttrs fields[json.RawMessage], c *change, size int) fields[indexEntry] {
	var out fields[indexEntry]
	if c.delete {
		return out
	}
	for _, ix := range indexes {
		values := make([]string, 0, 2)
		present := true
		for _, a := range ix.keyAttributes() {
			v, ok := keyAttrs.get(a)
			if !ok {
				present = false
				break
			}
			values = append(values, attrString(v))
		}
		if !present {
			continue
		}
		e := indexEntry{hash: values[0], key: strings.Join(values, "|")}
		switch {
		case c.put != nil:
			e.size = projectedSize(ix, keys, c.put)
		case ix.Projection == "ALL" || ix.Projection == "":
			e.size = size // an update of an item projected whole: the item as it leaves it
		case oldEntry(old, ix.Name).size > 0:
			e.size = oldEntry(old, ix.Name).size
		default:
			e.size = size
		}
		out.set(ix.Name, e)
	}
	return out
}

// oldEntry is the item's entry in the index named name (zero: none).
func oldEntry(old fields[indexEntry], name string) indexEntry {
	e, _ := old.get(name)
	return e
}

// indexWrites lists the index writes that turn entries before into entries after,
// given the change that did it.
func indexWrites(indexes []Index, before, after fields[indexEntry], c *change) []indexWrite {
	var w []indexWrite
	units := func(size int) float64 { return float64((max(size, 1) + 1023) / 1024) }
	for _, ix := range indexes {
		b, inBefore := before.get(ix.Name)
		a, inAfter := after.get(ix.Name)
		switch {
		case inBefore && inAfter && b.key != a.key:
			w = append(w, indexWrite{ix.Name, b.hash, units(b.size)}, indexWrite{ix.Name, a.hash, units(a.size)})
		case inBefore && !inAfter:
			w = append(w, indexWrite{ix.Name, b.hash, units(b.size)})
		case !inBefore && inAfter:
			w = append(w, indexWrite{ix.Name, a.hash, units(a.size)})
		case inBefore && inAfter && (c.put != nil || touchesProjection(ix, c)):
			w = append(w, indexWrite{ix.Name, a.hash, units(a.size)})
		}
	}
	return w
}

// touchesProjection reports whether an update names an attribute the index projects.
func touchesProjection(ix Index, c *change) bool {
	for n := range c.named {
		if ix.projects(n) {
			return true
		}
	}
	return false
}

// projectedSize is the size of item's entry in ix: the whole item for ALL, else the
// table's and the index's key attributes plus INCLUDE's attributes (Developer Guide,
// "Item sizes and formats": names plus values, estimated by their JSON as itemSize
// does).
func projectedSize(ix Index, keys []string, item rawItem) int {
	if ix.Projection == "ALL" || ix.Projection == "" {
		return itemSize(item)
	}
	n := 0
	seen := map[string]bool{}
	add := func(name string) {
		if v, ok := item[name]; ok && !seen[name] {
			seen[name] = true
			n += len(name) + len(v)
		}
	}
	for _, k := range keys {
		add(k)
	}
	for _, k := range ix.keyAttributes() {
		add(k)
	}
	if ix.Projection == "INCLUDE" {
		for _, k := range ix.Include {
			add(k)
		}
	}
	return n
}

// attrString is an attribute value as a key part: the scalar's text for S, N and B
// ({"S":"P3"} → P3), else the value's compact JSON; unknownValue for nil.
func attrString(raw json.RawMessage) string {
	if raw == nil {
		return unknownValue
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) == nil && len(v) == 1 {
		for _, inner := range v {
			var s string
			if json.Unmarshal(inner, &s) == nil {
				return s
			}
		}
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		return compact.String()
	}
	return string(raw)
}

// parseUpdate reads an UpdateExpression (Developer Guide, "Using update expressions
// in DynamoDB": SET, REMOVE, ADD and DELETE clauses, each a comma-separated list) for
// the top-level attributes it names, the values it SETs (nil when the value is not a
// plain :value, e.g. arithmetic or if_not_exists) and those it REMOVEs. names and
// values are the request's ExpressionAttributeNames and ExpressionAttributeValues.
func parseUpdate(expr string, names map[string]string, values rawItem) *change {
	c := &change{set: map[string]json.RawMessage{}, remove: map[string]bool{}, named: map[string]bool{}}
	for _, clause := range clauses(expr) {
		for _, action := range splitTop(clause.body, ',') {
			action = strings.TrimSpace(action)
			if action == "" {
				continue
			}
			switch clause.verb {
			case "SET":
				lhs, rhs, _ := strings.Cut(action, "=")
				attr := topAttribute(lhs, names)
				c.named[attr] = true
				rhs = strings.TrimSpace(rhs)
				// A value for the whole attribute only: a nested path's (items[0].qty)
				// is not the attribute's.
				if v, ok := values[rhs]; ok && isPlaceholder(rhs) && !strings.ContainsAny(strings.TrimSpace(lhs), ".[") {
					c.set[attr] = v
				} else {
					c.set[attr] = nil
				}
			case "REMOVE":
				attr := topAttribute(action, names)
				c.named[attr], c.remove[attr] = true, true
			default: // ADD, DELETE: "path :value"
				path, _, _ := strings.Cut(action, " ")
				attr := topAttribute(path, names)
				c.named[attr] = true
				c.set[attr] = nil
			}
		}
	}
	return c
}

// isPlaceholder reports whether s is one :value placeholder and nothing else.
func isPlaceholder(s string) bool {
	if len(s) < 2 || s[0] != ':' {
		return false
	}
	for _, r := range s[1:] {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// clause is one clause of an update expression.
type clause struct{ verb, body string }

// clauses splits an update expression at its clause keywords (outside parentheses).
func clauses(expr string) []clause {
	var out []clause
	words := strings.Fields(expr)
	depth := 0
	var cur *clause
	for _, w := range words {
		if depth == 0 {
			switch u := strings.ToUpper(w); u {
			case "SET", "REMOVE", "ADD", "DELETE":
				out = append(out, clause{verb: u})
				cur = &out[len(out)-1]
				continue
			}
		}
		depth += strings.Count(w, "(") - strings.Count(w, ")")
		if cur != nil {
			cur.body += w + " "
		}
	}
	return out
}

// splitTop splits s at sep where it is outside parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// topAttribute is the top-level attribute of a document path (a.b[0] → a), with an
// #name placeholder resolved.
func topAttribute(path string, names map[string]string) string {
	path = strings.TrimSpace(path)
	if i := strings.IndexAny(path, ".["); i >= 0 {
		path = path[:i]
	}
	if n, ok := names[path]; ok {
		return n
	}
	return path
}
