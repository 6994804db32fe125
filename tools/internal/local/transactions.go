package local

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/server"
)

// Rules of TransactWriteItems that minidyn does not implement (DynamoDB API
// Reference, TransactWriteItems): at most 100 actions; "The aggregate size of the
// items in the transaction cannot exceed 4 MB" (counted as the request gives them: a
// Put's item, the key of any other action, by server.ItemSize); a ClientRequestToken of
// 1 to 36 characters; a request repeating a token with the same parameters within 10
// minutes gets the first request's answer without being applied again; with other
// parameters it fails with IdempotentParameterMismatchException.
const (
	maxTransactItems      = 100
	maxTransactSize       = 4 << 20
	maxClientRequestToken = 36
	tokenWindow           = 10 * time.Minute
)

// tokenRecord is what a transactor remembers of one token.
type tokenRecord struct {
	digest [sha256.Size]byte // of the request's parameters (parametersDigest)
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
// transact). Those requests are calls of minidyn's client in this process, with the
// transaction's items as decoded once from its body: the same calls minidyn's HTTP
// handler makes, without encoding each request to JSON and decoding its answer (a
// third of a transaction's allocations). They never see the request's context: a
// transaction whose body was read is applied or rolled back whole even when its
// client gives up (see DynamoDBServer). The TransactWriteItems rules above are
// checked first.
type transactor struct {
	mini   http.Handler
	db     *server.Client // mini's in-memory client, which transactions call directly
	mu     sync.RWMutex
	tokens map[string]*tokenRecord // used only under mu's write lock, as are issued and schemas
	issued []string                // the keys of tokens, oldest first
	// schemas holds each table's key attribute names, read with DescribeTable the
	// first time a transaction puts an item in it; a request that creates or deletes
	// a table empties it (a table's key schema is fixed while it exists).
	schemas map[string][]string
}

func newTransactor(mini *server.Server) *transactor {
	return &transactor{mini: mini, db: mini.Client(), tokens: map[string]*tokenRecord{}, schemas: map[string][]string{}}
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
	writeAnswer(w, t.idempotent(*in.ClientRequestToken, parametersDigest(body), in.TransactItems))
}

// parametersDigest is the digest of a request's parameters, not of its bytes: DynamoDB
// compares the parameters of a repeated ClientRequestToken, and a client that sends the
// same input again may order the keys of its JSON maps differently (Go map order).
// The body is decoded and encoded again, which sorts every object's keys.
func parametersDigest(body []byte) [sha256.Size]byte {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return sha256.Sum256(body)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return sha256.Sum256(body)
	}
	return sha256.Sum256(canon)
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
	if n := in.size(); n > maxTransactSize {
		a := validationError(fmt.Sprintf("Transaction too large: its items total %d bytes, more than the 4 MB one transaction may carry", n))
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

// size is the aggregate size of the request's items: each Put's item and each other
// action's key (server.ItemSize).
func (in transactInput) size() int {
	n := 0
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			n += server.ItemSize(it.Put.Item)
		case it.Update != nil:
			n += server.ItemSize(it.Update.Key)
		case it.Delete != nil:
			n += server.ItemSize(it.Delete.Key)
		case it.ConditionCheck != nil:
			n += server.ItemSize(it.ConditionCheck.Key)
		}
	}
	return n
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

// item is a DynamoDB item or key as minidyn takes and gives it: attribute name →
// attribute value, with the JSON protocol's shape.
type item = map[string]*server.AttributeValue

// transactItem is one element of TransactItems: exactly one member is set.
type transactItem = server.TransactWriteItem

// action is one parsed action of a transaction and what the transactor knows of it.
type action struct {
	it      transactItem
	table   string
	key     item // the item's key (a Put's, projected from its item)
	old     item // the item before the transaction; nil when there was none
	written bool // the item may differ from old: restore it on rollback
}

// isCheck reports whether the action is a ConditionCheck.
func (a *action) isCheck() bool { return a.it.ConditionCheck != nil }

// apply performs the action as the matching single-item request, called on minidyn's
// client in this process (the same call its HTTP handler makes for that request,
// without the JSON in and out). A condition check is a PutItem of the item as it is
// (its key alone when absent) under the check's condition, which is undone afterwards.
func (a *action) apply(db *server.Client) error {
	ctx := context.Background()
	var err error
	switch it := a.it; {
	case it.Put != nil:
		p := it.Put
		_, err = db.PutItem(ctx, &server.PutItemInput{TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
			ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: p.ReturnValuesOnConditionCheckFailure})
	case it.Update != nil:
		u := it.Update
		_, err = db.UpdateItem(ctx, &server.UpdateItemInput{TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
			ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames,
			ExpressionAttributeValues: u.ExpressionAttributeValues, ReturnValuesOnConditionCheckFailure: u.ReturnValuesOnConditionCheckFailure})
	case it.Delete != nil:
		d := it.Delete
		_, err = db.DeleteItem(ctx, &server.DeleteItemInput{TableName: d.TableName, Key: d.Key, ConditionExpression: d.ConditionExpression,
			ExpressionAttributeNames: d.ExpressionAttributeNames, ExpressionAttributeValues: d.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: d.ReturnValuesOnConditionCheckFailure})
	default:
		c, img := it.ConditionCheck, a.old
		if img == nil {
			img = c.Key
		}
		_, err = db.PutItem(ctx, &server.PutItemInput{TableName: c.TableName, Item: img, ConditionExpression: c.ConditionExpression,
			ExpressionAttributeNames: c.ExpressionAttributeNames, ExpressionAttributeValues: c.ExpressionAttributeValues})
	}
	return err
}

// returnsOld reports whether the action asked for the item as it was when its
// condition fails (ReturnValuesOnConditionCheckFailure ALL_OLD).
func (a *action) returnsOld() bool {
	var v ddbtypes.ReturnValuesOnConditionCheckFailure
	switch it := a.it; {
	case it.Put != nil:
		v = it.Put.ReturnValuesOnConditionCheckFailure
	case it.Update != nil:
		v = it.Update.ReturnValuesOnConditionCheckFailure
	case it.Delete != nil:
		v = it.Delete.ReturnValuesOnConditionCheckFailure
	default:
		v = it.ConditionCheck.ReturnValuesOnConditionCheckFailure
	}
	return v == ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
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
		err := a.apply(t.db)
		switch {
		case err == nil:
			reasons[i].Code, a.written = "None", true
		case isConditionFailure(err):
			reasons[i] = a.conditionFailed()
			cancelled = true
		default:
			return t.rollback(acts, errorAnswer(err))
		}
	}
	if cancelled {
		return t.rollback(acts, cancellation(reasons))
	}
	for i := range acts {
		acts[i].written = acts[i].isCheck() // undo the condition checks' puts
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
		if it.Put != nil {
			names, fail := t.keyNames(a.table)
			if fail != nil {
				return nil, fail
			}
			a.key = item{}
			for _, n := range names {
				if v, ok := it.Put.Item[n]; ok {
					a.key[n] = v
				}
			}
		}
		id, _ := json.Marshal([]any{a.table, a.key}) // sorted, compact: one id per item
		if seen[string(id)] {
			a := validationError("Transaction request cannot include multiple operations on one item")
			return nil, &a
		}
		seen[string(id)] = true
		out, err := t.db.GetItem(context.Background(), &server.GetItemInput{TableName: &a.table, Key: a.key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			a := errorAnswer(err)
			return nil, &a
		}
		a.old = out.Item
		acts[i] = a
	}
	return acts, nil
}

// parseAction reads one element of TransactItems.
func parseAction(it transactItem) (action, *answer) {
	a := action{it: it}
	set := 0
	if it.Put != nil {
		a.table, set = aws.ToString(it.Put.TableName), set+1
	}
	if it.Update != nil {
		a.table, a.key, set = aws.ToString(it.Update.TableName), it.Update.Key, set+1
	}
	if it.Delete != nil {
		a.table, a.key, set = aws.ToString(it.Delete.TableName), it.Delete.Key, set+1
	}
	if it.ConditionCheck != nil {
		a.table, a.key, set = aws.ToString(it.ConditionCheck.TableName), it.ConditionCheck.Key, set+1
	}
	if set != 1 {
		fail := validationError("transaction item must include exactly one of Put, Update, Delete, or ConditionCheck")
		return a, &fail
	}
	if a.table == "" {
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
	out, err := t.db.DescribeTable(context.Background(), &server.DescribeTableInput{TableName: &table})
	if err != nil {
		a := errorAnswer(err)
		return nil, &a
	}
	desc, ok := out.Table.(*ddbtypes.TableDescription)
	if !ok {
		a := errorAnswer(fmt.Errorf("describe table %s: an answer of type %T", table, out.Table))
		return nil, &a
	}
	var names []string
	for _, k := range desc.KeySchema {
		names = append(names, aws.ToString(k.AttributeName))
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
		var err error
		if act.old == nil {
			_, err = t.db.DeleteItem(context.Background(), &server.DeleteItemInput{TableName: &act.table, Key: act.key})
		} else {
			_, err = t.db.PutItem(context.Background(), &server.PutItemInput{TableName: &act.table, Item: act.old})
		}
		if err != nil {
			return answer{status: http.StatusInternalServerError, body: errorBody("InternalServerError",
				"transaction could not be rolled back")}
		}
	}
	return a
}

// isConditionFailure reports whether err is minidyn's ConditionalCheckFailedException.
func isConditionFailure(err error) bool {
	var ccf *ddbtypes.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// errorAnswer is minidyn's HTTP answer to a request that failed with err.
func errorAnswer(err error) answer {
	rec := httptest.NewRecorder()
	server.WriteError(rec, err)
	return answer{status: rec.Code, body: rec.Body.Bytes()}
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
	if a.returnsOld() {
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
