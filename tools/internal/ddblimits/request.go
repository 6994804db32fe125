package ddblimits

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// access is one item a request touches.
type access struct {
	table      string
	item       string  // "table|key"
	key        rawItem // the item's key (a limit names the item by it)
	write      bool    // write units (else read units)
	factor     float64 // units per KB (write) or per 4 KB (read): 2 transactional, 1 plain, 0.5 eventually consistent
	checksHold bool    // refused while a transaction holds the item
	putSize    int     // bytes of the item a Put writes (its JSON form, an over-estimate)
	change     *change // what a write does to the item's attributes; nil for reads and condition checks
}

// request is a parsed DynamoDB request: the items it touches, in the order of the
// request (a transaction's cancellation reasons follow that order), or the index
// partition a Query reads.
type request struct {
	accesses []access
	query    *query
}

// query is a Query or Scan: what it reads, metered once its answer says how much.
type query struct {
	table, index string  // index "" for the table itself
	hash         string  // the partition a Query reads ("" for a Scan)
	factor       float64 // 1 strongly consistent, 0.5 eventually
}

// wire shapes of the DynamoDB JSON protocol (DynamoDB API Reference, each operation's
// request syntax) that the model reads.
type (
	rawItem = map[string]json.RawMessage
	keyed   struct {
		TableName                 string
		Key                       rawItem
		Item                      rawItem
		ConsistentRead            bool
		UpdateExpression          string
		ExpressionAttributeNames  map[string]string
		ExpressionAttributeValues rawItem
		IndexName                 string
		KeyConditionExpression    string
	}
	transactItem struct {
		Put, Update, Delete, ConditionCheck, Get *keyed
	}
	batchGet struct {
		Keys           []rawItem
		ConsistentRead bool
	}
	batchWrite struct {
		PutRequest    *struct{ Item rawItem }
		DeleteRequest *struct{ Key rawItem }
	}
	body struct {
		keyed
		TransactItems []transactItem
		RequestItems  json.RawMessage
	}
)

// parseRequest lists what op touches. Query and Scan read what their answer holds
// (see query); table operations touch nothing.
func parseRequest(op string, raw []byte, keys map[string][]string, indexes map[string][]Index) (request, error) {
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		return request{}, fmt.Errorf("parse %s: %w", op, err)
	}
	a := &accesses{keys: keys}
	var err error
	switch op {
	case "PutItem":
		a.add(b.keyed, true, 1, true, &change{put: b.Item})
	case "UpdateItem":
		a.add(b.keyed, true, 1, true, parseUpdate(b.UpdateExpression, b.ExpressionAttributeNames, b.ExpressionAttributeValues))
	case "DeleteItem":
		a.add(b.keyed, true, 1, true, &change{delete: true})
	case "GetItem":
		a.add(b.keyed, false, readFactor(b.ConsistentRead), false, nil)
	case "Query", "Scan":
		a.r.query = newQuery(b.keyed, keys, indexes, op == "Query")
	case "TransactWriteItems":
		for _, it := range b.TransactItems {
			switch {
			case it.Put != nil:
				a.add(*it.Put, true, 2, true, &change{put: it.Put.Item})
			case it.Update != nil:
				u := it.Update
				a.add(*u, true, 2, true, parseUpdate(u.UpdateExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues))
			case it.Delete != nil:
				a.add(*it.Delete, true, 2, true, &change{delete: true})
			case it.ConditionCheck != nil:
				a.add(*it.ConditionCheck, true, 2, true, nil)
			}
		}
	case "TransactGetItems":
		for _, it := range b.TransactItems {
			if it.Get != nil {
				a.add(*it.Get, false, 2, true, nil)
			}
		}
	case "BatchGetItem":
		err = a.batchGet(b.RequestItems)
	case "BatchWriteItem":
		err = a.batchWrite(b.RequestItems)
	}
	if err != nil {
		return request{}, fmt.Errorf("parse %s: %w", op, err)
	}
	return a.r, nil
}

// accesses collects the item accesses of one request; keys names each table's key
// attributes.
type accesses struct {
	r    request
	keys map[string][]string
}

// add records an access of the item k names (by its key, or by the key attributes
// of its whole item): a write or a read, its unit cost factor, whether it checks
// another transaction's hold, and what a write changes. An item of a table whose keys
// are unknown is unmetered.
func (a *accesses) add(k keyed, write bool, factor float64, checksHold bool, c *change) {
	key, size := k.Key, 0
	if k.Item != nil {
		key, size = project(k.Item, a.keys[k.TableName]), itemSize(k.Item)
		if key == nil {
			return
		}
	}
	a.r.accesses = append(a.r.accesses, access{
		table: k.TableName, item: k.TableName + "|" + canonical(key), key: key,
		write: write, factor: factor, checksHold: checksHold, putSize: size, change: c,
	})
}

// keyName is a key's values, in attribute-name order, joined by "|".
func keyName(key rawItem) string {
	parts := make([]string, 0, len(key))
	for _, n := range sortedKeys(key) {
		parts = append(parts, attrString(key[n]))
	}
	return strings.Join(parts, "|")
}

// newQuery reads what a Query or Scan reads: its table or index and, for a Query, the
// partition its key condition's equality names (Developer Guide, "Query operations
// in DynamoDB": the partition key condition must be an equality).
func newQuery(k keyed, keys map[string][]string, indexes map[string][]Index, isQuery bool) *query {
	q := &query{table: k.TableName, index: k.IndexName, factor: readFactor(k.ConsistentRead)}
	if !isQuery {
		return q
	}
	hash := ""
	if names := keys[k.TableName]; len(names) > 0 {
		hash = names[0]
	}
	for _, ix := range indexes[k.TableName] {
		if ix.Name == k.IndexName {
			hash = ix.Hash
		}
	}
	for _, part := range strings.Split(strings.ReplaceAll(k.KeyConditionExpression, " and ", " AND "), " AND ") {
		lhs, rhs, ok := strings.Cut(part, "=")
		rhs = strings.TrimSpace(rhs)
		if ok && !strings.ContainsAny(lhs, "<>") && topAttribute(strings.Trim(lhs, " ()"), k.ExpressionAttributeNames) == hash && isPlaceholder(strings.TrimRight(rhs, ") ")) {
			q.hash = attrString(k.ExpressionAttributeValues[strings.TrimRight(rhs, ") ")])
		}
	}
	return q
}

// readFactor is a read's unit cost factor: 1 strongly consistent, 0.5 eventually.
func readFactor(consistent bool) float64 {
	if consistent {
		return 1
	}
	return 0.5
}

// batchGet adds the reads of a BatchGetItem's RequestItems, table by table in order.
func (a *accesses) batchGet(raw json.RawMessage) error {
	var req map[string]batchGet
	if err := json.Unmarshal(raw, &req); err != nil {
		return err
	}
	for _, table := range sortedKeys(req) {
		for _, k := range req[table].Keys {
			a.add(keyed{TableName: table, Key: k}, false, readFactor(req[table].ConsistentRead), false, nil)
		}
	}
	return nil
}

// batchWrite adds the writes of a BatchWriteItem's RequestItems, table by table in order.
func (a *accesses) batchWrite(raw json.RawMessage) error {
	var req map[string][]batchWrite
	if err := json.Unmarshal(raw, &req); err != nil {
		return err
	}
	for _, table := range sortedKeys(req) {
		for _, w := range req[table] {
			switch {
			case w.PutRequest != nil:
				a.add(keyed{TableName: table, Item: w.PutRequest.Item}, true, 1, true, &change{put: w.PutRequest.Item})
			case w.DeleteRequest != nil:
				a.add(keyed{TableName: table, Key: w.DeleteRequest.Key}, true, 1, true, &change{delete: true})
			}
		}
	}
	return nil
}

// splitBatchGet splits the RequestItems of a BatchGetItem body into the body to send,
// without the reads unprocessed names (indexes of its accesses, in the order batchGet
// adds them: table by table in name order, then each table's Keys in order), and the
// RequestItems of those reads, as UnprocessedKeys lists them (each table's
// KeysAndAttributes with only its unprocessed Keys; DynamoDB API Reference,
// BatchGetItem, "UnprocessedKeys"). A table left with no key is dropped from the body.
func splitBatchGet(body []byte, unprocessed []int) (sent []byte, left map[string]map[string]json.RawMessage, err error) {
	var req map[string]json.RawMessage
	var items map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(req["RequestItems"], &items); err != nil {
		return nil, nil, err
	}
	skip := map[int]bool{}
	for _, i := range unprocessed {
		skip[i] = true
	}
	left = map[string]map[string]json.RawMessage{}
	i := 0
	for _, table := range sortedKeys(items) {
		var keys, kept, gone []json.RawMessage
		if err := json.Unmarshal(items[table]["Keys"], &keys); err != nil {
			return nil, nil, err
		}
		for _, k := range keys {
			if skip[i] {
				gone = append(gone, k)
			} else {
				kept = append(kept, k)
			}
			i++
		}
		if len(gone) > 0 {
			left[table] = withKeys(items[table], gone)
		}
		if len(kept) == 0 {
			delete(items, table)
		} else {
			items[table] = withKeys(items[table], kept)
		}
	}
	if req["RequestItems"], err = json.Marshal(items); err != nil {
		return nil, nil, err
	}
	sent, err = json.Marshal(req)
	return sent, left, err
}

// withKeys is the KeysAndAttributes ka with its Keys replaced by keys.
func withKeys(ka map[string]json.RawMessage, keys []json.RawMessage) map[string]json.RawMessage {
	out := maps.Clone(ka)
	out["Keys"], _ = json.Marshal(keys) // raw JSON values: cannot fail
	return out
}

// withUnprocessed adds left (splitBatchGet's) to the UnprocessedKeys of the
// BatchGetItem answer resp, after any the server left itself.
func withUnprocessed(resp *http.Response, left map[string]map[string]json.RawMessage) (*http.Response, error) {
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	var un map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if u, ok := out["UnprocessedKeys"]; ok {
		if err := json.Unmarshal(u, &un); err != nil {
			return nil, err
		}
	}
	if un == nil {
		un = map[string]map[string]json.RawMessage{}
	}
	for table, ka := range left {
		var have, more []json.RawMessage
		if un[table] != nil {
			_ = json.Unmarshal(un[table]["Keys"], &have)
		}
		_ = json.Unmarshal(ka["Keys"], &more)
		un[table] = withKeys(ka, append(have, more...))
	}
	if out["UnprocessedKeys"], err = json.Marshal(un); err != nil {
		return nil, err
	}
	if raw, err = json.Marshal(out); err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	resp.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	resp.Header.Del("X-Amz-Crc32") // the body changed; the SDK checks a CRC32 header when one is sent
	return resp, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// project keeps the key attributes of an item; nil when the table's keys are unknown
// or the item lacks one.
func project(item rawItem, names []string) rawItem {
	if len(names) == 0 {
		return nil
	}
	key := make(rawItem, len(names))
	for _, n := range names {
		v, ok := item[n]
		if !ok {
			return nil
		}
		key[n] = v
	}
	return key
}

// canonical is a key's identity: its attributes' JSON in name order, compacted
// (the SDK's JSON already is: only JSON with white space is compacted again).
func canonical(key rawItem) string {
	var sb strings.Builder
	for _, n := range sortedKeys(key) {
		sb.WriteString(n)
		sb.WriteByte('=')
		var compact bytes.Buffer
		if bytes.ContainsAny(key[n], " \t\r\n") && json.Compact(&compact, key[n]) == nil {
			sb.Write(compact.Bytes())
		} else {
			sb.Write(key[n])
		}
		sb.WriteByte(';')
	}
	return sb.String()
}

// itemSize estimates an item's size as the length of its JSON form: never below
// DynamoDB's count (attribute names plus values, Developer Guide, "Item sizes and
// formats"), so units are never under-charged.
func itemSize(item rawItem) int {
	n := 0
	for k, v := range item {
		n += len(k) + len(v)
	}
	return n
}

// Error shapes of the DynamoDB JSON protocol: HTTP 400 with a body naming the type in
// "__type" (DynamoDB Developer Guide, "Error handling with DynamoDB", "Error
// components").
const (
	typeCanceled  = "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"
	typeConflict  = "com.amazonaws.dynamodb.v20120810#TransactionConflictException"
	typeThrottled = "com.amazonaws.dynamodb.v20120810#ThrottlingException"
)

// response builds the error DynamoDB answers a refused request with.
func (v verdict) response(op string, r request) *http.Response {
	var body any
	if op == "TransactWriteItems" || op == "TransactGetItems" {
		// CancellationReason members (DynamoDB API Reference, CancellationReason):
		// Code, Message, and Item only for failed conditions.
		reasons := make([]map[string]string, len(r.accesses))
		codes := make([]string, len(r.accesses))
		for i := range reasons {
			reasons[i], codes[i] = map[string]string{"Code": "None"}, "None"
		}
		for _, i := range v.conflict {
			reasons[i] = map[string]string{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
			codes[i] = "TransactionConflict"
		}
		for _, i := range v.throttle {
			reasons[i] = map[string]string{"Code": "ThrottlingError", "Message": v.limits[i].message()}
			codes[i] = "ThrottlingError"
		}
		body = map[string]any{
			"__type":              typeCanceled,
			"Message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
			"CancellationReasons": reasons,
		}
	} else if len(v.conflict) > 0 {
		body = map[string]any{"__type": typeConflict, "message": "Transaction is ongoing for the item"}
	} else {
		l := v.limits[v.throttle[0]]
		// ThrottlingException's members are "message" and "throttlingReasons" (DynamoDB
		// API Reference, ThrottlingException and ThrottlingReason: a reason is
		// ResourceType + OperationType + LimitType, the resource the ARN of the table
		// or index throttled).
		body = map[string]any{
			"__type":            typeThrottled,
			"message":           l.message(),
			"throttlingReasons": []map[string]string{{"reason": l.reason, "resource": l.resource}},
		}
	}
	return errorResponse(http.StatusBadRequest, body)
}

// limit is one ceiling of the model, as a refusal names it.
type limit struct {
	name     string // for counts: "item SkusTable cup#shard#0", "index StockLogTable.LedgerByShard cup#3", "table OrdersTable writes"
	reason   string // ThrottlingReason.reason
	resource string // ThrottlingReason.resource: the table's or index's ARN
}

// arn is the ARN of a table, or of one of its indexes when index is not "".
func arn(table, index string) string {
	a := "arn:aws:dynamodb:us-east-1:000000000000:table/" + table
	if index != "" {
		a += "/index/" + index
	}
	return a
}

// message is the refusal's message: for an index, that the index could not keep up
// (Developer Guide, "Understanding GSI write throttling and back-pressure in
// DynamoDB": the base-table write is throttled, the exception names the index).
func (l limit) message() string {
	if strings.HasPrefix(l.reason, "Index") {
		return "Throughput exceeds the current capacity of a partition of one of the table's global secondary indexes"
	}
	if strings.HasSuffix(l.reason, "AccountLimitExceeded") {
		return "Throughput exceeds the current throughput quota for your table"
	}
	return "Throughput exceeds the current capacity of a partition of the table"
}

// typeInternal is the error DynamoDB answers with HTTP 500 when "the request
// processing has failed because of an unknown error, exception or failure" (API
// Reference, Common Errors: InternalServerError); a write so answered may or may not
// have been applied.
const typeInternal = "com.amazonaws.dynamodb.v20120810#InternalServerError"

// lostAnswer is the answer to a write whose real answer the model dropped after the
// server applied it: an InternalServerError, which the SDK's retryer retries.
func lostAnswer() *http.Response {
	return errorResponse(http.StatusInternalServerError, map[string]string{"__type": typeInternal, "message": "Internal server error"})
}

// errorResponse is an error answer of the DynamoDB JSON protocol with the HTTP status
// and body given.
func errorResponse(status int, body any) *http.Response {
	raw, _ := json.Marshal(body)
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":     {"application/x-amz-json-1.0"},
			"X-Amzn-Requestid": {"ddblimits"},
			"Content-Length":   {strconv.Itoa(len(raw))},
		},
		Body: io.NopCloser(bytes.NewReader(raw)), ContentLength: int64(len(raw)),
	}
}
