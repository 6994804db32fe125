package core

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/truora/minidyn/interpreter"
	"github.com/truora/minidyn/interpreter/language"
	"github.com/truora/minidyn/types"
)

const defaultIndexActivationDelay = 0

// QueryInput struct to represent a query input
type QueryInput struct {
	Index                     string
	ExpressionAttributeValues map[string]*types.Item
	Limit                     int64
	ExclusiveStartKey         map[string]*types.Item
	KeyConditionExpression    string
	ConditionExpression       *string
	FilterExpression          string
	ProjectionExpression      string
	Aliases                   map[string]string
	ScanIndexForward          bool
	Scan                      bool
}

// Table struct to mock a dynamodb table
type Table struct {
	Name                 string
	Indexes              map[string]*index
	AttributesDef        map[string]string
	SortedKeys           sortedList[string]
	parts                *partitions
	Data                 map[string]map[string]*types.Item
	KeySchema            keySchema
	BillingMode          *string
	UseNativeInterpreter bool
	NativeInterpreter    interpreter.Native
	LangInterpreter      interpreter.Language
	IndexActivationDelay time.Duration
}

// NewTable creates a new Table
func NewTable(name string) *Table {
	return &Table{
		Name:                 name,
		Indexes:              map[string]*index{},
		AttributesDef:        map[string]string{},
		SortedKeys:           newSortedList(strings.Compare),
		parts:                newPartitions(),
		Data:                 map[string]map[string]*types.Item{},
		IndexActivationDelay: defaultIndexActivationDelay,
	}
}

// ValidatePrimaryKeyMap checks that a Key map for GetItem, DeleteItem, or UpdateItem
// contains exactly the table's primary key attribute names (hash and range when defined).
func (t *Table) ValidatePrimaryKeyMap(key map[string]*types.Item) error {
	return t.KeySchema.validatePrimaryKeyMap(key)
}

// SetAttributeDefinition sets the attribute definition of a table
func (t *Table) SetAttributeDefinition(attrs []*types.AttributeDefinition) {
	for _, attr := range attrs {
		t.AttributesDef[*attr.AttributeName] = *attr.AttributeType
	}
}

func parseKeySchema(schema []*types.KeySchemaElement) (keySchema, error) {
	var ks keySchema

	for _, element := range schema {
		if element.KeyType == "HASH" {
			ks.HashKey = element.AttributeName
			continue
		}

		ks.RangeKey = element.AttributeName
	}

	if ks.HashKey == "" {
		return ks, types.NewError("ValidationException", "No Hash Key specified in schema. All Dynamo DB Tables must have exactly one hash key", nil)
	}

	return ks, nil
}

// CreatePrimaryIndex creates the primary index of a table
func (t *Table) CreatePrimaryIndex(input *types.CreateTableInput) error {
	ks, err := parseKeySchema(input.KeySchema)
	if err != nil {
		return err
	}

	err = t.validateAttributeDefinition(ks, "")
	if err != nil {
		return err
	}

	// types-local check this after validate the key schema
	if t.BillingMode == nil || types.StringValue(t.BillingMode) != "PAY_PER_REQUEST" {
		if input.ProvisionedThroughput == nil {
			// https://github.com/aws/aws-sdk-go/issues/3140
			return types.NewError("ValidationException", "No provisioned throughput specified for the table", nil)
		}
	}

	t.KeySchema = ks

	return nil
}

func isValidKeyAttributeType(typ string) bool {
	switch typ {
	case "S", "N", "B":
		return true
	default:
		return false
	}
}

func (t *Table) validateAttributeDefinition(ks keySchema, message string) error {
	if _, ok := t.AttributesDef[ks.HashKey]; !ok {
		return types.NewError("ValidationException", fmt.Sprintf("%sHash Key not specified in Attribute Definitions.  Type unknown.", message), nil)
	}

	if _, ok := t.AttributesDef[ks.RangeKey]; ks.RangeKey != "" && !ok {
		return types.NewError("ValidationException", fmt.Sprintf("%sRange Key not specified in Attribute Definitions.  Type unknown.", message), nil)
	}

	hashType := t.AttributesDef[ks.HashKey]
	if !isValidKeyAttributeType(hashType) {
		return types.NewError("ValidationException", fmt.Sprintf(
			"%sHash key attribute %q has invalid type %q; key attributes must be scalar types S, N, or B.",
			message, ks.HashKey, hashType,
		), nil)
	}

	if ks.RangeKey != "" {
		rangeType := t.AttributesDef[ks.RangeKey]
		if !isValidKeyAttributeType(rangeType) {
			return types.NewError("ValidationException", fmt.Sprintf(
				"%sRange key attribute %q has invalid type %q; key attributes must be scalar types S, N, or B.",
				message, ks.RangeKey, rangeType,
			), nil)
		}
	}

	return nil
}

func buildGSI(t *Table, gsiInput *types.GlobalSecondaryIndex) (*index, error) {
	if t.BillingMode == nil || types.StringValue(t.BillingMode) != "PAY_PER_REQUEST" {
		if gsiInput.ProvisionedThroughput == nil {
			// https://github.com/aws/aws-sdk-go/issues/3140
			return nil, types.NewError("ValidationException", "No provisioned throughput specified for the global secondary index", nil)
		}
	}

	ks, err := parseKeySchema(gsiInput.KeySchema)
	if err != nil {
		return nil, err
	}

	err = t.validateAttributeDefinition(ks, "Global Secondary Index ")
	if err != nil {
		return nil, err
	}

	i := newIndex(t, indexTypeGlobal, ks)
	i.projection = gsiInput.Projection

	return i, nil
}

// IsGlobalIndex reports whether name is one of the table's global secondary indexes.
func (t *Table) IsGlobalIndex(name string) bool {
	i, ok := t.Indexes[name]

	return ok && i.typ == indexTypeGlobal
}

// ApplyIndexChange applies the index change
func (t *Table) ApplyIndexChange(change *types.GlobalSecondaryIndexUpdate) error {
	switch {
	case change.Create != nil:
		{
			gsi := &types.GlobalSecondaryIndex{
				IndexName:             change.Create.IndexName,
				KeySchema:             change.Create.KeySchema,
				Projection:            change.Create.Projection,
				ProvisionedThroughput: change.Create.ProvisionedThroughput,
			}

			return t.addGlobalIndex(gsi)
		}
	case change.Delete != nil:
		return t.deleteIndex(*change.Delete.IndexName)
	case change.Update != nil:
		return t.updateIndex(*change.Update.IndexName, change.Update.ProvisionedThroughput)
	}

	return nil
}

// AddGlobalIndexes adds global indexes to a table
func (t *Table) AddGlobalIndexes(input []*types.GlobalSecondaryIndex) error {
	if input != nil && len(input) == 0 {
		return types.NewError("ValidationException", "GSI list is empty/invalid", nil)
	}

	for _, gsiInput := range input {
		if err := t.addGlobalIndex(gsiInput); err != nil {
			return err
		}
	}

	return nil
}

func (t *Table) addGlobalIndex(gsiInput *types.GlobalSecondaryIndex) error {
	i, err := buildGSI(t, gsiInput)
	if err != nil {
		return err
	}

	i.createdAt = time.Now()
	t.Indexes[*gsiInput.IndexName] = i

	return nil
}

func (t *Table) deleteIndex(indexName string) error {
	if _, ok := t.Indexes[indexName]; !ok {
		return types.NewError("ResourceNotFoundException", "Requested resource not found", nil)
	}

	delete(t.Indexes, indexName)

	return nil
}

func (t *Table) updateIndex(indexName string, provisionedThroughput *types.ProvisionedThroughput) error {
	// we do not have support for provisionedThroughput values in the index
	return nil
}

func buildLSI(t *Table, lsiInput *types.LocalSecondaryIndex) (*index, error) {
	ks, err := parseKeySchema(lsiInput.KeySchema)
	if err != nil {
		return nil, err
	}

	err = t.validateAttributeDefinition(ks, "Local Secondary Index ")
	if err != nil {
		return nil, err
	}

	i := newIndex(t, indexTypeLocal, ks)
	i.projection = lsiInput.Projection

	return i, nil
}

// AddLocalIndexes adds local indexes to a table
func (t *Table) AddLocalIndexes(input []*types.LocalSecondaryIndex) error {
	if input != nil && len(input) == 0 {
		return types.NewError("ValidationException", "ValidationException: LSI list is empty/invalid", nil)
	}

	for _, lsi := range input {
		i, err := buildLSI(t, lsi)
		if err != nil {
			return err
		}

		t.Indexes[*lsi.IndexName] = i
	}

	return nil
}

func validateSearchInputMaps(input QueryInput) error {
	if err := types.ValidateItemMap(input.ExpressionAttributeValues); err != nil {
		return types.NewError("ValidationException", err.Error(), nil)
	}

	if err := types.ValidateItemMap(input.ExclusiveStartKey); err != nil {
		return types.NewError("ValidationException", err.Error(), nil)
	}

	return nil
}

// validateSearchExpressionAttributeNames rejects up front any Query/Scan expression that
// references an attribute name placeholder (#name) not declared in ExpressionAttributeNames.
// DynamoDB validates this before scanning, so it must error even when the table is empty or
// no item matches (when the per-item interpreter checks would never run).
func validateSearchExpressionAttributeNames(input QueryInput) error {
	checks := []struct {
		label      string
		expression string
	}{
		{"KeyConditionExpression", input.KeyConditionExpression},
		{"FilterExpression", input.FilterExpression},
		{"ProjectionExpression", input.ProjectionExpression},
	}

	for _, c := range checks {
		if err := interpreter.ValidateExpressionAttributeNamesDeclared(c.label, c.expression, input.Aliases); err != nil {
			return types.NewError("ValidationException", err.Error(), nil)
		}
	}

	return nil
}

func validateUpdateItemInputKeysAndValues(input *types.UpdateItemInput) error {
	if err := types.ValidateItemMap(input.Key); err != nil {
		return types.NewError("ValidationException", err.Error(), nil)
	}

	if err := types.ValidateItemMap(input.ExpressionAttributeValues); err != nil {
		return types.NewError("ValidationException", err.Error(), nil)
	}

	return nil
}

func (t *Table) parseStartKey(schema keySchema, startkeyAttr map[string]*types.Item) string {
	startKey := ""
	if len(startkeyAttr) != 0 {
		startKey, _ = schema.GetKey(t.AttributesDef, startkeyAttr)
	}

	return startKey
}

// searchOrder is the items a Query or Scan of the table (idx nil) or of one of its
// indexes reads, in key order: n of them, the table primary key of the one at pos
// and the key it is sorted by (the primary key, or the index key).
type searchOrder struct {
	n       int
	key     func(pos int) string
	sortKey func(pos int) string
}

// keyCount is how many keys the table (idx nil) or the index holds.
func (t *Table) keyCount(idx *index) int {
	if idx == nil {
		return t.SortedKeys.len()
	}

	return idx.sorted.len()
}

func (t *Table) searchOrder(idx *index) searchOrder {
	if idx == nil {
		keys := t.SortedKeys.all()
		at := func(pos int) string { return keys[pos] }

		return searchOrder{n: len(keys), key: at, sortKey: at}
	}

	refs := idx.sorted.all()

	return searchOrder{
		n:       len(refs),
		key:     func(pos int) string { return refs[pos].key },
		sortKey: func(pos int) string { return refs[pos].indexKey },
	}
}

// partitionSpan returns the members of one partition a Query reads, when its key
// condition compares the partition key equal to a placeholder (DynamoDB API
// Reference, Query: "You must provide the name of the partition key attribute and a
// single value for that attribute") and its ExclusiveStartKey, if any, is of that
// partition: those its sort key condition can match (interpreter.KeyRange), past the
// start key, in sort key order. ok is false for any other Query or Scan, which reads
// every item.
func (t *Table) partitionSpan(input QueryInput, idx *index) ([]member, bool) {
	if input.Scan || input.KeyConditionExpression == "" || t.UseNativeInterpreter {
		return nil, false
	}

	ks, parts := t.KeySchema, t.parts
	if idx != nil {
		ks, parts = idx.keySchema, idx.parts
	}

	placeholder, ok := interpreter.KeyEquality(input.KeyConditionExpression, input.Aliases, ks.HashKey)
	if !ok {
		return nil, false
	}

	hash, ok := keyValue(input.ExpressionAttributeValues[placeholder], t.AttributesDef[ks.HashKey])
	if !ok {
		return nil, false
	}

	part := parts.byHash[hash]
	if part == nil {
		part = &partition{}
	}

	typ := t.AttributesDef[ks.RangeKey]
	lo, hi := 0, len(part.members)

	if ks.RangeKey != "" {
		lo, hi = t.sortKeySpan(input, ks, part)
	}

	if len(input.ExclusiveStartKey) == 0 {
		return part.members[lo:hi], true
	}

	startHash, hok := keyValue(input.ExclusiveStartKey[ks.HashKey], t.AttributesDef[ks.HashKey])
	startRange, rok := keyValue(input.ExclusiveStartKey[ks.RangeKey], typ)
	startKey, err := t.KeySchema.GetKey(t.AttributesDef, input.ExclusiveStartKey)

	if !hok || startHash != hash || ks.RangeKey != "" && !rok || err != nil {
		return nil, false
	}

	before, after := part.cut(typ, startRange, startKey)
	if input.ScanIndexForward {
		lo = max(lo, after)
	} else {
		hi = min(hi, before)
	}

	return part.members[lo:max(lo, hi)], true
}

// sortKeySpan returns the positions [lo, hi) of part's members that the key
// condition's sort key term can match (all of them when it has none this reads).
func (t *Table) sortKeySpan(input QueryInput, ks keySchema, part *partition) (int, int) {
	typ := t.AttributesDef[ks.RangeKey]

	op, placeholders, ok := interpreter.KeyRange(input.KeyConditionExpression, input.Aliases, ks.RangeKey)
	if !ok {
		return 0, len(part.members)
	}

	vals := make([]string, len(placeholders))
	for j, ph := range placeholders {
		if vals[j], ok = keyValue(input.ExpressionAttributeValues[ph], typ); !ok {
			return 0, len(part.members)
		}
	}

	return part.span(typ, op, vals)
}

// searchMatch evaluates a Query's key condition (a Scan reads every item) and then
// the filter on item: keyMatched says whether the Query reads the item (it counts
// towards Limit), matched whether it is returned.
func (t *Table) searchMatch(input QueryInput, item map[string]*types.Item) (keyMatched, matched bool, err error) {
	keyMatched = input.Scan
	if input.KeyConditionExpression != "" {
		keyMatched, err = t.InterpreterMatch(interpreter.MatchInput{
			TableName:      t.Name,
			Expression:     input.KeyConditionExpression,
			ExpressionType: interpreter.ExpressionTypeKey,
			Item:           item,
			Aliases:        input.Aliases,
			Attributes:     input.ExpressionAttributeValues,
		})
		if err != nil {
			return false, false, err
		}
	}

	if !keyMatched || input.FilterExpression == "" {
		return keyMatched, keyMatched, nil
	}

	matched, err = t.InterpreterMatch(interpreter.MatchInput{
		TableName:      t.Name,
		Expression:     input.FilterExpression,
		ExpressionType: interpreter.ExpressionTypeFilter,
		Item:           item,
		Aliases:        input.Aliases,
		Attributes:     input.ExpressionAttributeValues,
	})
	if err != nil {
		return false, false, err
	}

	return true, matched, nil
}

// returned is what a Query or Scan returns of a matched stored item: through the
// index's projection, then the projection expression.
func (t *Table) returned(input QueryInput, storedItem map[string]*types.Item, idx *index) (map[string]*types.Item, error) {
	baseItem := storedItem
	if idx != nil {
		baseItem = idx.ProjectItem(storedItem)
	}

	if input.ProjectionExpression != "" {
		return t.LangInterpreter.Project(interpreter.ProjectInput{
			Expression: input.ProjectionExpression,
			Item:       baseItem,
			Aliases:    input.Aliases,
		})
	}

	if idx != nil {
		return baseItem, nil
	}

	return copyItem(storedItem), nil
}

// GetKeyAt returns the key value in a given position
func GetKeyAt(sortedKeys []string, size int64, pos int64, forward bool) string {
	if !forward {
		return sortedKeys[size-1-int64(pos)]
	}

	return sortedKeys[pos]
}

// SearchData queries the table based on the input. A Query whose key condition sets
// the partition key reads only that partition's items its sort key condition can
// match, in sort key order (partitionSpan); any other reads every item in key order.
// Either way each item read is matched by the expression interpreter, and Limit
// counts the items the key condition matched (DynamoDB API Reference, Query: Limit is
// "the maximum number of items to evaluate (not necessarily the number of matching
// items)", before the filter).
func (t *Table) SearchData(input QueryInput) ([]map[string]*types.Item, map[string]*types.Item, error) {
	if err := validateSearchInputMaps(input); err != nil {
		return nil, nil, err
	}

	if err := validateSearchExpressionAttributeNames(input); err != nil {
		return nil, nil, err
	}

	var idx *index
	if input.Index != "" {
		idx = t.Indexes[input.Index]
	}

	forward := input.ScanIndexForward

	members, ok := t.partitionSpan(input, idx)
	if !ok {
		order := t.searchOrder(idx)
		at := func(j int) string {
			if forward {
				return order.key(j)
			}

			return order.key(order.n - 1 - j)
		}

		return t.readItems(input, idx, order.n, at, t.parseStartKey(t.KeySchema, input.ExclusiveStartKey))
	}

	if len(members) == 0 && t.keyCount(idx) > 0 {
		// nothing to read: the expression still has to be one the interpreter
		// takes, as it would have been on the first item (the key lists are put in
		// order only here, not for every Query: see sortedList)
		order := t.searchOrder(idx)
		if _, _, err := t.searchMatch(input, t.Data[order.key(0)]); err != nil {
			return nil, nil, types.NewError("ValidationException", err.Error(), nil)
		}
	}

	at := func(j int) string {
		if forward {
			return members[j].key
		}

		return members[len(members)-1-j].key
	}

	return t.readItems(input, idx, len(members), at, "")
}

// MaxPageSize is the most data one Query or Scan reads, 1 MB (1 KB = 1,024 bytes): the
// items the key condition matched (every item, for a Scan), counted before the filter
// as "DynamoDB item sizes and formats" says (ItemSize; for an index, its entries, the
// projected attributes). The item that would take a page past it is left for the next
// page, so the page fits within it, and LastEvaluatedKey is the last item read
// (Developer Guide, "Paginating table query results in DynamoDB",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html:
// "A single Query only returns a result set that fits within the 1 MB size limit"; API
// Reference, Query and Scan: "a maximum of 1 MB of data and then apply any filtering").
const MaxPageSize = 1 << 20

// entrySize is the size of storedItem's entry in idx (nil: the table), as MaxPageSize
// counts it: for an index projecting KEYS_ONLY or INCLUDE, the table's and the index's
// key attributes and the included ones, each once (what index.ProjectItem keeps),
// without building the projected item.
func entrySize(idx *index, storedItem map[string]*types.Item) int {
	p := idx.projectionType()
	if p != "KEYS_ONLY" && p != "INCLUDE" {
		return ItemSize(storedItem)
	}

	var seen [8]string

	names := append(seen[:0], idx.Table.KeySchema.HashKey, idx.Table.KeySchema.RangeKey, idx.keySchema.HashKey, idx.keySchema.RangeKey)
	if p == "INCLUDE" {
		for _, name := range idx.projection.NonKeyAttributes {
			if name != nil {
				names = append(names, *name)
			}
		}
	}

	n := 0

	for j, name := range names {
		if v, ok := storedItem[name]; ok && name != "" && !slices.Contains(names[:j], name) {
			n += len(name) + valueSize(v)
		}
	}

	return n
}

// projectionType is idx's projection type ("" for the table or an index without one).
func (idx *index) projectionType() string {
	if idx == nil || idx.projection == nil || idx.projection.ProjectionType == nil {
		return ""
	}

	return *idx.projection.ProjectionType
}

// readItems reads the n items at(0), at(1), … (table primary keys) after startKey
// ("": from the first), matching each, up to Limit and MaxPageSize, and returns the
// items matched and the LastEvaluatedKey.
func (t *Table) readItems(input QueryInput, idx *index, n int, at func(int) string, startKey string) ([]map[string]*types.Item, map[string]*types.Item, error) {
	items := []map[string]*types.Item{}
	last := map[string]*types.Item{}
	started := startKey == ""
	pageSize := 0

	var count, scanned int64

	for j := range n {
		pk := at(j)
		scanned++

		if !started {
			started = pk == startKey

			continue
		}

		storedItem, ok := t.Data[pk]
		if !ok {
			continue
		}

		keyMatched, matched, err := t.searchMatch(input, storedItem)
		if err != nil {
			return nil, nil, types.NewError("ValidationException", err.Error(), nil)
		}

		if keyMatched {
			if pageSize += entrySize(idx, storedItem); pageSize > MaxPageSize && count > 0 {
				return items, t.lastKey(last, idx), nil
			}
		}

		if matched {
			item, err := t.returned(input, storedItem, idx)
			if err != nil {
				return nil, nil, types.NewError("ValidationException", err.Error(), nil)
			}

			items = append(items, item)
		}

		if !keyMatched {
			continue
		}

		count++
		last = storedItem

		if input.Limit != 0 && count == input.Limit {
			break
		}
	}

	return items, t.getLastKey(last, input.Limit, count, scanned, int64(n), idx), nil
}

func shouldReturnNextKey(item map[string]*types.Item, count, scanned, limit, keysSize int64) bool {
	if len(item) == 0 || limit == 0 {
		return false
	}

	return scanned <= keysSize && limit <= count
}

func (t *Table) getLastKey(item map[string]*types.Item, limit, count, scanned, keysSize int64, index *index) map[string]*types.Item {
	if !shouldReturnNextKey(item, count, scanned, limit, keysSize) {
		return map[string]*types.Item{}
	}

	return t.lastKey(item, index)
}

// lastKey is the LastEvaluatedKey of a page that ended at item: its table primary key
// and, for an index, its index key.
func (t *Table) lastKey(item map[string]*types.Item, index *index) map[string]*types.Item {
	key := t.KeySchema.getKeyItem(item)

	if index != nil {
		iKey := index.keySchema.getKeyItem(item)
		maps.Copy(key, iKey)
	}

	return key
}

// InterpreterMatch evaluates a match expression against an item
func (t *Table) InterpreterMatch(input interpreter.MatchInput) (bool, error) {
	if t.UseNativeInterpreter {
		matched, err := t.NativeInterpreter.Match(input)
		if err == nil {
			return matched, nil
		}
	}

	matched, err := t.LangInterpreter.Match(input)
	if err != nil {
		return false, err
	}

	return matched, nil
}

func (t *Table) matchKey(input QueryInput, item map[string]*types.Item) (interpreter.ExpressionType, bool, error) { //nolint:gocognit // key, filter, and conditional expression branches
	var lastMatchExpressionType interpreter.ExpressionType
	matched := input.Scan

	if input.KeyConditionExpression != "" {
		var err error

		matched, err = t.InterpreterMatch(interpreter.MatchInput{
			TableName:      t.Name,
			Expression:     input.KeyConditionExpression,
			ExpressionType: interpreter.ExpressionTypeKey,
			Item:           item,
			Aliases:        input.Aliases,
			Attributes:     input.ExpressionAttributeValues,
		})
		if err != nil {
			return interpreter.ExpressionTypeKey, false, err
		}
		lastMatchExpressionType = interpreter.ExpressionTypeKey
	}

	if input.FilterExpression != "" {
		if matched {
			m, err := t.InterpreterMatch(interpreter.MatchInput{
				TableName:      t.Name,
				Expression:     input.FilterExpression,
				ExpressionType: interpreter.ExpressionTypeFilter,
				Item:           item,
				Aliases:        input.Aliases,
				Attributes:     input.ExpressionAttributeValues,
			})
			if err != nil {
				return interpreter.ExpressionTypeFilter, false, err
			}
			matched = m
		}
		lastMatchExpressionType = interpreter.ExpressionTypeFilter
	}

	if input.ConditionExpression != nil && *input.ConditionExpression != "" {
		var err error

		matched, err = t.InterpreterMatch(interpreter.MatchInput{
			TableName:      t.Name,
			Expression:     *input.ConditionExpression,
			ExpressionType: interpreter.ExpressionTypeConditional,
			Item:           item,
			Aliases:        input.Aliases,
			Attributes:     input.ExpressionAttributeValues,
		})
		if err != nil {
			return interpreter.ExpressionTypeConditional, false, err
		}
		lastMatchExpressionType = interpreter.ExpressionTypeConditional
	}

	return lastMatchExpressionType, matched, nil
}

func (t *Table) setItem(key string, item map[string]*types.Item) {
	_, exists := t.Data[key]
	t.Data[key] = item

	if !exists {
		t.SortedKeys.insert(key)
		t.parts.file(t.KeySchema, t.AttributesDef, key, item)
	}
}

func (t *Table) getItem(key string) map[string]*types.Item {
	item, exists := t.Data[key]
	if !exists {
		return map[string]*types.Item{}
	}

	return item
}

// Clear removes data and sorted keys from a table
func (t *Table) Clear() {
	t.SortedKeys = newSortedList(strings.Compare)
	t.parts = newPartitions()
	t.Data = map[string]map[string]*types.Item{}
}

// TableSnapshot captures a point-in-time copy of mutable table state for transactional rollback
type TableSnapshot struct {
	data       map[string]map[string]*types.Item
	sortedKeys sortedList[string]
	parts      *partitions
	indexes    map[string]indexSnapshot
}

// Snapshot returns a deep copy of the table's mutable state
func (t *Table) Snapshot() TableSnapshot {
	data := make(map[string]map[string]*types.Item, len(t.Data))
	for k, v := range t.Data {
		data[k] = deepCopyItemMap(v)
	}

	keys := t.SortedKeys.clone()

	indexes := make(map[string]indexSnapshot, len(t.Indexes))
	for name, idx := range t.Indexes {
		indexes[name] = idx.snapshot()
	}

	return TableSnapshot{data: data, sortedKeys: keys, parts: t.parts.clone(), indexes: indexes}
}

// Restore replaces the table's mutable state with a previously taken snapshot
func (t *Table) Restore(s TableSnapshot) {
	t.Data = s.data
	t.SortedKeys = s.sortedKeys
	t.parts = s.parts

	for name, idx := range t.Indexes {
		if snap, ok := s.indexes[name]; ok {
			idx.restore(snap)
		}
	}
}

// Put puts items into table
func (t *Table) Put(input *types.PutItemInput) (map[string]*types.Item, error) { //nolint:gocognit // conditional write, key resolution, GSI updates
	if err := types.ValidateItemMap(input.Item); err != nil {
		return copyItem(input.Item), types.NewError("ValidationException", err.Error(), nil)
	}

	if err := types.ValidateItemMap(input.ExpressionAttributeValues); err != nil {
		return copyItem(input.Item), types.NewError("ValidationException", err.Error(), nil)
	}

	item := copyItem(input.Item)
	if ItemSize(item) > MaxItemSize {
		return item, types.NewError("ValidationException", ErrItemTooLarge, nil)
	}

	key, err := t.KeySchema.GetKey(t.AttributesDef, input.Item)
	if err != nil {
		return item, types.NewError("ValidationException", err.Error(), nil)
	}

	// support conditional writes
	if input.ConditionExpression != nil {
		_, matched, merr := t.matchKey(QueryInput{
			Index:                     PrimaryIndexName,
			ExpressionAttributeValues: input.ExpressionAttributeValues,
			Aliases:                   input.ExpressionAttributeNames,
			Limit:                     1,
			ConditionExpression:       input.ConditionExpression,
		}, t.getItem(key))
		if merr != nil {
			return item, types.NewError("ValidationException", merr.Error(), nil)
		}

		if !matched {
			return item, &types.ConditionalCheckFailedException{MessageText: ErrConditionalRequestFailed.Error()}
		}
	}

	t.setItem(key, item)

	for _, index := range t.Indexes {
		err := index.putData(key, item)
		if err != nil {
			return nil, types.NewError("ValidationException", err.Error(), nil)
		}
	}

	return item, nil
}

func (t *Table) interpreterUpdate(input interpreter.UpdateInput) error {
	if t.UseNativeInterpreter {
		return t.NativeInterpreter.Update(input)
	}

	return t.LangInterpreter.Update(input)
}

func validateUpdateItemReturnValues(rv *string) error {
	if rv == nil || *rv == "" {
		return nil
	}

	switch *rv {
	case "NONE", "ALL_OLD", "UPDATED_OLD", "UPDATED_NEW", "ALL_NEW":
		return nil
	default:
		return types.NewError("ValidationException",
			fmt.Sprintf("1 validation error detected: Value '%s' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [NONE, ALL_OLD, UPDATED_OLD, UPDATED_NEW, ALL_NEW]", *rv),
			nil)
	}
}

func dynamoItemEqual(a, b *types.Item) bool {
	return reflect.DeepEqual(a, b)
}

func changedUpdateAttributeKeys(oldItem, newItem map[string]*types.Item) []string {
	keys := make(map[string]struct{})

	for k := range oldItem {
		keys[k] = struct{}{}
	}

	for k := range newItem {
		keys[k] = struct{}{}
	}

	changed := make([]string, 0, len(keys))

	for k := range keys {
		ov, okO := oldItem[k]
		nv, okN := newItem[k]

		if !okO {
			ov = nil
		}

		if !okN {
			nv = nil
		}

		if !dynamoItemEqual(ov, nv) {
			changed = append(changed, k)
		}
	}

	sort.Strings(changed)

	return changed
}

func buildUpdateItemReturnAttributes(rv *string, oldItem, newItem map[string]*types.Item) map[string]*types.Item {
	mode := ""

	if rv != nil {
		mode = *rv
	}

	switch mode {
	case "", "NONE":
		return nil
	case "ALL_NEW":
		return copyItem(newItem)
	case "ALL_OLD":
		return copyItem(oldItem)
	case "UPDATED_OLD":
		ck := changedUpdateAttributeKeys(oldItem, newItem)
		if len(ck) == 0 {
			return map[string]*types.Item{}
		}

		out := make(map[string]*types.Item, len(ck))

		for _, k := range ck {
			if v, ok := oldItem[k]; ok {
				out[k] = deepCopyTypesItem(v)
			}
		}

		return out
	case "UPDATED_NEW":
		ck := changedUpdateAttributeKeys(oldItem, newItem)
		if len(ck) == 0 {
			return map[string]*types.Item{}
		}

		out := make(map[string]*types.Item, len(ck))

		for _, k := range ck {
			if v, ok := newItem[k]; ok {
				out[k] = deepCopyTypesItem(v)
			}
		}

		return out
	default:
		return nil
	}
}

// Update updates an item in the table based on the input
func (t *Table) Update(input *types.UpdateItemInput) (map[string]*types.Item, error) { //nolint:gocognit,gocyclo // conditional writes, interpreter update, GSI updates
	if err := validateUpdateItemInputKeysAndValues(input); err != nil {
		return nil, err
	}

	if err := validateUpdateItemReturnValues(input.ReturnValues); err != nil {
		return nil, err
	}

	if err := t.KeySchema.validatePrimaryKeyMap(input.Key); err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	if !t.KeySchema.Secondary {
		if err := language.ValidateUpdateExpressionDoesNotTargetPrimaryKey(
			input.UpdateExpression,
			input.ExpressionAttributeNames,
			t.KeySchema.HashKey,
			t.KeySchema.RangeKey,
		); err != nil {
			return nil, types.NewError("ValidationException", err.Error(), nil)
		}
	}

	// update primary index
	key, err := t.KeySchema.GetKey(t.AttributesDef, input.Key)
	if err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	item, ok := t.Data[key]
	if !ok {
		// it allow the use of attribute_exists to check if the item exists
		item = map[string]*types.Item{}
	}

	// support conditional writes
	if input.ConditionExpression != nil {
		query := QueryInput{
			Index:                     PrimaryIndexName,
			ExpressionAttributeValues: input.ExpressionAttributeValues,
			Limit:                     1,
			ConditionExpression:       input.ConditionExpression,
			Aliases:                   input.ExpressionAttributeNames,
		}

		_, matched, merr := t.matchKey(query, item)
		if merr != nil {
			return nil, types.NewError("ValidationException", merr.Error(), nil)
		}

		if !matched {
			checkErr := &types.ConditionalCheckFailedException{
				MessageText: ErrConditionalRequestFailed.Error(),
			}

			handleConditionalCheckError(input, checkErr, item)

			return nil, checkErr
		}
	}

	if !ok {
		// types creates a new item when the item does not exists
		item = copyItem(input.Key)
	}

	oldItem := deepCopyItemMap(item)

	err = t.interpreterUpdate(interpreter.UpdateInput{
		TableName:  t.Name,
		Expression: input.UpdateExpression,
		Item:       item,
		Attributes: input.ExpressionAttributeValues,
		Aliases:    input.ExpressionAttributeNames,
	})
	if err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	if ItemSize(item) > MaxItemSize {
		if ok {
			t.Data[key] = oldItem // the update changed the stored item in place
		}

		return nil, types.NewError("ValidationException", ErrItemTooLarge, nil)
	}

	t.setItem(key, item)

	// update secondary Indexes
	for _, index := range t.Indexes {
		err := index.updateData(key, item, oldItem)
		if err != nil {
			return nil, types.NewError("ValidationException", err.Error(), nil)
		}
	}

	newItem := copyItem(item)

	return buildUpdateItemReturnAttributes(input.ReturnValues, oldItem, newItem), nil
}

// Delete deletes an item in the table based on the input
func (t *Table) Delete(input *types.DeleteItemInput) (map[string]*types.Item, error) { //nolint:gocognit,gocyclo // conditional delete, key resolution, index cleanup
	if err := types.ValidateItemMap(input.Key); err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	if err := types.ValidateItemMap(input.ExpressionAttributeValues); err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	if err := t.KeySchema.validatePrimaryKeyMap(input.Key); err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	key, err := t.KeySchema.GetKey(t.AttributesDef, input.Key)
	if err != nil {
		return nil, types.NewError("ValidationException", err.Error(), nil)
	}

	item, ok := t.Data[key]

	existingForCond := item
	if !ok {
		existingForCond = map[string]*types.Item{}
	}

	if input.ConditionExpression != nil && *input.ConditionExpression != "" {
		aliases := map[string]string{}

		for k, v := range input.ExpressionAttributeNames {
			if v != nil {
				aliases[k] = *v
			}
		}

		_, matched, merr := t.matchKey(QueryInput{
			Index:                     PrimaryIndexName,
			ExpressionAttributeValues: input.ExpressionAttributeValues,
			Aliases:                   aliases,
			Limit:                     1,
			ConditionExpression:       input.ConditionExpression,
		}, existingForCond)
		if merr != nil {
			return nil, types.NewError("ValidationException", merr.Error(), nil)
		}

		if !matched {
			return nil, &types.ConditionalCheckFailedException{MessageText: ErrConditionalRequestFailed.Error()}
		}
	}

	if !ok {
		return nil, nil
	}

	item = copyItem(item)

	delete(t.Data, key)
	t.parts.remove(t.KeySchema, t.AttributesDef, key)

	t.SortedKeys.remove(key)

	for _, index := range t.Indexes {
		err := index.delete(key, item)
		if err != nil {
			return nil, types.NewError("ValidationException", err.Error(), nil)
		}
	}

	return item, nil
}

// Description returns the description of a table
func (t *Table) Description(name string) *types.TableDescription {
	// TODO: implement other fields for TableDescription
	gsi, lsi := t.IndexesDescription()

	return &types.TableDescription{
		TableName:              name,
		ItemCount:              int64(t.SortedKeys.len()),
		KeySchema:              t.KeySchema.describe(),
		GlobalSecondaryIndexes: gsi,
		LocalSecondaryIndexes:  lsi,
	}
}

// IndexesDescription returns the description of the table indexes
func (t *Table) IndexesDescription() ([]types.GlobalSecondaryIndexDescription, []types.LocalSecondaryIndexDescription) {
	gsi := []types.GlobalSecondaryIndexDescription{}
	lsi := []types.LocalSecondaryIndexDescription{}

	for indexName, index := range t.Indexes {
		schema := index.keySchema.describe()
		count := index.count()

		switch index.typ {
		case indexTypeGlobal:
			{
				status := "ACTIVE"
				if t.IndexActivationDelay > 0 && time.Since(index.createdAt) < t.IndexActivationDelay {
					status = "CREATING"
				}

				gsi = append(gsi, types.GlobalSecondaryIndexDescription{
					IndexName:   &indexName,
					ItemCount:   count,
					KeySchema:   schema,
					Projection:  index.projection,
					IndexStatus: &status,
				})
			}
		case indexTypeLocal:
			{
				lsi = append(lsi, types.LocalSecondaryIndexDescription{
					IndexName:  &indexName,
					ItemCount:  count,
					KeySchema:  schema,
					Projection: index.projection,
				})
			}
		}
	}

	return gsi, lsi
}

func handleConditionalCheckError(input *types.UpdateItemInput, checkErr *types.ConditionalCheckFailedException, item map[string]*types.Item) {
	if input.ReturnValuesOnConditionCheckFailure != nil && *input.ReturnValuesOnConditionCheckFailure == "ALL_OLD" {
		checkErr.Item = item
	}
}
