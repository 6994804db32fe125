package core

import (
	"maps"
	"strings"
	"time"

	"github.com/truora/minidyn/types"
)

type indexType string

const (
	indexTypeGlobal indexType = "global"
	indexTypeLocal  indexType = "local"
)

type index struct {
	keySchema  keySchema
	typ        indexType
	projection *types.Projection
	Table      *Table
	// refs is each indexed item's index key by its primary key; sorted holds the
	// same pairs ordered by index key, then primary key (the order a Query or Scan
	// of the index reads them in), kept in order on every write.
	refs      map[string]string
	sorted    sortedList[ref]
	parts     *partitions
	createdAt time.Time
}

// ref is one item of an index: its index key and its table primary key.
type ref struct {
	indexKey, key string
}

func compareRefs(a, b ref) int {
	if c := strings.Compare(a.indexKey, b.indexKey); c != 0 {
		return c
	}

	return strings.Compare(a.key, b.key)
}

func newIndex(t *Table, typ indexType, ks keySchema) *index {
	ks.Secondary = true

	return &index{
		keySchema: ks,
		typ:       typ,
		Table:     t,
		refs:      map[string]string{},
		sorted:    newSortedList(compareRefs),
		parts:     newPartitions(),
	}
}

func (i *index) Clear() {
	i.refs = map[string]string{}
	i.sorted = newSortedList(compareRefs)
	i.parts = newPartitions()
}

type indexSnapshot struct {
	refs   map[string]string
	sorted sortedList[ref]
	parts  *partitions
}

func (i *index) snapshot() indexSnapshot {
	refs := make(map[string]string, len(i.refs))
	maps.Copy(refs, i.refs)

	return indexSnapshot{refs: refs, sorted: i.sorted.clone(), parts: i.parts.clone()}
}

func (i *index) restore(s indexSnapshot) {
	i.refs = s.refs
	i.sorted = s.sorted
	i.parts = s.parts
}

// ProjectItem returns the attributes visible through this index's projection (ALL, KEYS_ONLY, INCLUDE).
// For ALL or unknown types, it returns a full shallow copy of the item.
func (i *index) ProjectItem(item map[string]*types.Item) map[string]*types.Item {
	if i == nil || i.projection == nil {
		return copyItem(item)
	}

	pt := ""
	if i.projection.ProjectionType != nil {
		pt = *i.projection.ProjectionType
	}

	switch pt {
	case "", "ALL":
		return copyItem(item)
	case "KEYS_ONLY":
		return i.projectKeysOnly(item)
	case "INCLUDE":
		return i.projectInclude(item)
	default:
		return copyItem(item)
	}
}

func (i *index) projectKeysOnly(item map[string]*types.Item) map[string]*types.Item {
	out := make(map[string]*types.Item)
	maps.Copy(out, i.Table.KeySchema.getKeyItem(item))
	maps.Copy(out, i.keySchema.getKeyItem(item))

	return out
}

func (i *index) projectInclude(item map[string]*types.Item) map[string]*types.Item {
	out := i.projectKeysOnly(item)

	for _, namePtr := range i.projection.NonKeyAttributes {
		if namePtr == nil {
			continue
		}

		name := *namePtr
		if v, ok := item[name]; ok {
			out[name] = v
		}
	}

	return out
}

// putData indexes the item stored at key: under its index key, or not at all when it
// lacks an index key attribute (a sparse index).
func (i *index) putData(key string, item map[string]*types.Item) error {
	indexKey, err := i.keySchema.GetKey(i.Table.AttributesDef, item)
	if err != nil {
		return err
	}

	i.setRef(key, indexKey)
	i.parts.file(i.keySchema, i.Table.AttributesDef, key, item)

	return nil
}

func (i *index) updateData(key string, item, _ map[string]*types.Item) error {
	return i.putData(key, item)
}

func (i *index) delete(key string, _ map[string]*types.Item) error {
	i.setRef(key, "")
	i.parts.remove(i.keySchema, i.Table.AttributesDef, key)

	return nil
}

// setRef files the item at key under indexKey, or takes it out of the index when
// indexKey is "". An item whose index key attribute is removed leaves a sparse index
// ("Take advantage of sparse indexes", DynamoDB Developer Guide: only items with the
// index's key attributes appear in it).
func (i *index) setRef(key, indexKey string) {
	old, exists := i.refs[key]
	if exists && old == indexKey {
		return
	}

	if exists {
		i.sorted.remove(ref{old, key})

		delete(i.refs, key)
	}

	if indexKey == "" {
		return
	}

	i.refs[key] = indexKey
	i.sorted.insert(ref{indexKey, key})
}

func (i *index) count() int64 {
	return int64(i.sorted.len())
}
