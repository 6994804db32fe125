package ddblimits

import "unique"

// named is one value of an item's state by attribute or index name.
type named[V any] struct {
	name string
	v    V
}

// fields is a small map by name kept as a slice: an item has a few index key
// attributes, index entries and attributes, and a slice holds them in a fraction of a
// map's bytes (the model keeps one state per item a sale writes: a million tickets in
// a queued sale). Names are interned, so every item shares one copy of each.
type fields[V any] []named[V]

// get is name's value and whether there is one.
func (f fields[V]) get(name string) (V, bool) {
	for _, e := range f {
		if e.name == name {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// set gives name the value v, appended when name is new.
func (f *fields[V]) set(name string, v V) {
	for i := range *f {
		if (*f)[i].name == name {
			(*f)[i].v = v
			return
		}
	}
	*f = append(*f, named[V]{unique.Make(name).Value(), v})
}

// del takes name out.
func (f *fields[V]) del(name string) {
	for i := range *f {
		if (*f)[i].name == name {
			*f = append((*f)[:i], (*f)[i+1:]...)
			return
		}
	}
}
