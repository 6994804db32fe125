package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Rules of TransactWriteItems that minidyn does not implement (DynamoDB API
// Reference, TransactWriteItems): at most 100 actions; a ClientRequestToken of 1 to 36
// characters; a request repeating a token with the same parameters within 10 minutes
// gets the first request's answer without being applied again; with other parameters
// it fails with IdempotentParameterMismatchException.
const (
	maxTransactItems      = 100
	maxClientRequestToken = 36
	tokenWindow           = 10 * time.Minute
)

// tokenRecord is what a transactor remembers of one token.
type tokenRecord struct {
	digest [sha256.Size]byte // of the whole request body
	at     time.Time
	body   []byte // the first successful answer; nil while there is none
}

// transactor serves the DynamoDB API of minidyn and runs TransactWriteItems itself, so
// that a transaction costs what it touches: minidyn's own TransactWriteItems copies
// every table it names before it starts (to roll back from the copy), which makes an
// order's cost grow with every order before it. Here a transaction holds mu
// exclusively while every other request holds it shared, so nothing runs between its
// steps: it reads the old image of each item it names, applies each action as the
// matching single-item request, and on failure writes the old images back (see
// transact). The TransactWriteItems rules above are checked first.
type transactor struct {
	mini   http.Handler
	mu     sync.RWMutex
	tokens map[string]*tokenRecord // used only under mu's write lock, as are issued and schemas
	issued []string                // the keys of tokens, oldest first
	// schemas holds each table's key attribute names, read with DescribeTable the
	// first time a transaction puts an item in it; a request that creates or deletes
	// a table empties it (a table's key schema is fixed while it exists).
	schemas map[string][]string
}

func newTransactor(mini http.Handler) *transactor {
	return &transactor{mini: mini, tokens: map[string]*tokenRecord{}, schemas: map[string][]string{}}
}

func (t *transactor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Header.Get("X-Amz-Target") {
	case targetPrefix + "TransactWriteItems":
	case targetPrefix + "CreateTable", targetPrefix + "DeleteTable":
		t.mu.Lock()
		defer t.mu.Unlock()
		clear(t.schemas)
		t.mini.ServeHTTP(w, r)
		return
	default:
		t.mu.RLock()
		defer t.mu.RUnlock()
		t.mini.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in transactInput
	if err := json.Unmarshal(body, &in); err != nil {
		writeAnswer(w, validationError("malformed TransactWriteItems request: "+err.Error()))
		return
	}
	if a := in.check(); a != nil {
		writeAnswer(w, *a)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if in.ClientRequestToken == nil {
		writeAnswer(w, t.transact(in.TransactItems))
		return
	}
	writeAnswer(w, t.idempotent(*in.ClientRequestToken, sha256.Sum256(body), in.TransactItems))
}

// transactInput is the part of a TransactWriteItems request the transactor reads.
type transactInput struct {
	ClientRequestToken *string
	TransactItems      []transactItem
}

// check enforces the limits on the request's shape, or returns nil.
func (in transactInput) check() *answer {
	if n := len(in.TransactItems); n < 1 || n > maxTransactItems {
		a := validationError("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
		return &a
	}
	if in.ClientRequestToken != nil {
		if n := len(*in.ClientRequestToken); n < 1 || n > maxClientRequestToken {
			a := validationError("1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
			return &a
		}
	}
	return nil
}

// idempotent runs the transaction under token unless the token was used within
// tokenWindow: then it answers the first success again, or refuses other parameters.
// The caller holds t.mu exclusively, so a repeat sent while the first is running
// waits for it and gets its answer.
func (t *transactor) idempotent(token string, digest [sha256.Size]byte, items []transactItem) answer {
	now := time.Now()
	for len(t.issued) > 0 && now.Sub(t.tokens[t.issued[0]].at) > tokenWindow {
		delete(t.tokens, t.issued[0])
		t.issued = t.issued[1:]
	}
	rec, seen := t.tokens[token]
	switch {
	case seen && rec.digest != digest:
		return answer{status: http.StatusBadRequest, body: errorBody("com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
			"The provided ClientRequestToken is already in use with different parameters")}
	case seen && rec.body != nil:
		return answer{status: http.StatusOK, body: rec.body}
	case !seen:
		rec = &tokenRecord{digest: digest, at: now}
		t.tokens[token] = rec
		t.issued = append(t.issued, token)
	}
	a := t.transact(items)
	if a.status == http.StatusOK {
		rec.body = a.body
	}
	return a
}

// targetPrefix starts the X-Amz-Target header of every DynamoDB JSON-protocol request.
const targetPrefix = "DynamoDB_20120810."

// answer is one HTTP answer of the DynamoDB API.
type answer struct {
	status int
	body   []byte
}

func writeAnswer(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(a.status)
	w.Write(a.body)
}

func errorBody(typ, message string) []byte {
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": message})
	return b
}

func validationError(message string) answer {
	return answer{status: http.StatusBadRequest, body: errorBody("com.amazon.coral.validate#ValidationException", message)}
}

// call sends one request for operation op to minidyn, in process, and returns its answer.
func (t *transactor) call(op string, in any) answer {
	body, err := json.Marshal(in)
	if err != nil {
		return validationError(err.Error())
	}
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", targetPrefix+op)
	rec := httptest.NewRecorder()
	t.mini.ServeHTTP(rec, req)
	return answer{status: rec.Code, body: rec.Body.Bytes()}
}

// item is a DynamoDB item or key in the JSON protocol: attribute name → attribute value.
type item = map[string]json.RawMessage

// transactItem is one element of TransactItems: exactly one member is set.
type transactItem struct {
	Put, Update, Delete, ConditionCheck json.RawMessage
}

// member holds the fields of an action that the transactor reads. The whole member is
// also a valid PutItem, UpdateItem or DeleteItem request (DynamoDB API Reference:
// Put, Update, Delete and ConditionCheck share those requests' parameters).
type member struct {
	TableName                           string
	Key                                 item            `json:",omitempty"`
	Item                                item            `json:",omitempty"`
	ConditionExpression                 *string         `json:",omitempty"`
	ExpressionAttributeNames            json.RawMessage `json:",omitempty"`
	ExpressionAttributeValues           json.RawMessage `json:",omitempty"`
	ReturnValuesOnConditionCheckFailure string          `json:",omitempty"`
}

// action is one parsed action of a transaction and what the transactor knows of it.
type action struct {
	op      string          // PutItem, UpdateItem or DeleteItem; "" for a condition check
	raw     json.RawMessage // the member as sent
	m       member
	old     item // the item before the transaction; nil when there was none
	written bool // the item may differ from old: restore it on rollback
}

// request is the single-item request that performs the action. A condition check is
// a PutItem of the item as it is (its key alone when absent) under the check's
// condition, which is undone afterwards.
func (a *action) request() (string, any) {
	if a.op != "" {
		return a.op, a.raw
	}
	img := a.old
	if img == nil {
		img = a.m.Key
	}
	return "PutItem", member{TableName: a.m.TableName, Item: img, ConditionExpression: a.m.ConditionExpression,
		ExpressionAttributeNames: a.m.ExpressionAttributeNames, ExpressionAttributeValues: a.m.ExpressionAttributeValues}
}

// transact runs one TransactWriteItems; the caller holds t.mu exclusively. Every
// action is tried, so that each failed condition gets its reason, as on DynamoDB;
// conditions only see their own item and no two actions name one item, so an action
// cannot change what another one checks. On any failure every item written is put
// back as it was (or deleted when it did not exist) before answering.
func (t *transactor) transact(items []transactItem) answer {
	acts, fail := t.prepare(items)
	if fail != nil {
		return *fail
	}
	reasons := make([]cancellationReason, len(acts))
	cancelled := false
	for i := range acts {
		a := &acts[i]
		res := t.call(a.request())
		switch {
		case res.status == http.StatusOK:
			reasons[i].Code, a.written = "None", true
		case isConditionFailure(res):
			reasons[i] = a.conditionFailed()
			cancelled = true
		default:
			return t.rollback(acts, res)
		}
	}
	if cancelled {
		return t.rollback(acts, cancellation(reasons))
	}
	for i := range acts {
		acts[i].written = acts[i].op == "" // undo the condition checks' puts
	}
	return t.rollback(acts, answer{status: http.StatusOK, body: []byte("{}")})
}

// prepare parses the actions, refuses two actions on one item, and reads each item's
// old image. Nothing is written yet, so any failure is answered as it is.
func (t *transactor) prepare(items []transactItem) ([]action, *answer) {
	acts := make([]action, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		a, fail := parseAction(it)
		if fail != nil {
			return nil, fail
		}
		if a.op == "PutItem" {
			names, fail := t.keyNames(a.m.TableName)
			if fail != nil {
				return nil, fail
			}
			a.m.Key = item{}
			for _, n := range names {
				if v, ok := a.m.Item[n]; ok {
					a.m.Key[n] = v
				}
			}
		}
		id, _ := json.Marshal([]any{a.m.TableName, a.m.Key}) // sorted, compact: one id per item
		if seen[string(id)] {
			a := validationError("Transaction request cannot include multiple operations on one item")
			return nil, &a
		}
		seen[string(id)] = true
		res := t.call("GetItem", map[string]any{"TableName": a.m.TableName, "Key": a.m.Key, "ConsistentRead": true})
		var out struct{ Item item }
		if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil {
			return nil, &res
		}
		a.old = out.Item
		acts[i] = a
	}
	return acts, nil
}

// parseAction reads one element of TransactItems.
func parseAction(it transactItem) (action, *answer) {
	var a action
	set := 0
	for _, c := range []struct {
		op  string
		raw json.RawMessage
	}{{"PutItem", it.Put}, {"UpdateItem", it.Update}, {"DeleteItem", it.Delete}, {"", it.ConditionCheck}} {
		if c.raw != nil {
			a.op, a.raw = c.op, c.raw
			set++
		}
	}
	if set != 1 {
		fail := validationError("transaction item must include exactly one of Put, Update, Delete, or ConditionCheck")
		return a, &fail
	}
	if err := json.Unmarshal(a.raw, &a.m); err != nil || a.m.TableName == "" {
		fail := validationError("transaction item must name a table")
		return a, &fail
	}
	return a, nil
}

// keyNames returns the names of table's key attributes, read with DescribeTable once
// while the table exists.
func (t *transactor) keyNames(table string) ([]string, *answer) {
	if names, ok := t.schemas[table]; ok {
		return names, nil
	}
	res := t.call("DescribeTable", map[string]string{"TableName": table})
	var out struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil {
		return nil, &res
	}
	var names []string
	for _, k := range out.Table.KeySchema {
		names = append(names, k.AttributeName)
	}
	t.schemas[table] = names
	return names, nil
}

// rollback puts back the old image of every written action, then answers with a. If
// a write-back fails (only failure injection can do that: nothing else runs meanwhile)
// the answer is an InternalServerError.
func (t *transactor) rollback(acts []action, a answer) answer {
	for _, act := range acts {
		if !act.written {
			continue
		}
		var res answer
		if act.old == nil {
			res = t.call("DeleteItem", map[string]any{"TableName": act.m.TableName, "Key": act.m.Key})
		} else {
			res = t.call("PutItem", map[string]any{"TableName": act.m.TableName, "Item": act.old})
		}
		if res.status != http.StatusOK {
			return answer{status: http.StatusInternalServerError, body: errorBody("InternalServerError",
				"transaction could not be rolled back")}
		}
	}
	return a
}

// isConditionFailure reports whether res is minidyn's ConditionalCheckFailedException.
func isConditionFailure(res answer) bool {
	var e struct {
		Type string `json:"__type"`
	}
	return res.status == http.StatusBadRequest && json.Unmarshal(res.body, &e) == nil &&
		strings.HasSuffix(e.Type, "ConditionalCheckFailedException")
}

// cancellationReason is one element of a TransactionCanceledException's
// CancellationReasons (DynamoDB API Reference, CancellationReason).
type cancellationReason struct {
	Code    string
	Message string `json:",omitempty"`
	Item    item   `json:",omitempty"`
}

// conditionFailed is the reason of an action whose condition failed: with the item as
// it was when the action asked for ReturnValuesOnConditionCheckFailure ALL_OLD.
func (a *action) conditionFailed() cancellationReason {
	r := cancellationReason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
	if a.m.ReturnValuesOnConditionCheckFailure == "ALL_OLD" {
		r.Item = a.old
	}
	return r
}

// cancellation is the TransactionCanceledException answering reasons.
func cancellation(reasons []cancellationReason) answer {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		if r.Code == "" {
			reasons[i].Code = "None"
		}
		codes[i] = reasons[i].Code
	}
	body, _ := json.Marshal(struct {
		Type                string `json:"__type"`
		Message             string `json:"message"`
		CancellationReasons []cancellationReason
	}{"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]", reasons})
	return answer{status: http.StatusBadRequest, body: body}
}
