package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

// tokenRecord is what transactRules remembers of one token.
type tokenRecord struct {
	digest [sha256.Size]byte // of the whole request body
	at     time.Time
	status int    // the first answer's status, 0 while it is not a success
	body   []byte // the first successful answer
}

// transactRules wraps the DynamoDB API with the TransactWriteItems rules above.
func transactRules(next http.Handler) http.Handler {
	var (
		mu     sync.Mutex
		tokens = map[string]*tokenRecord{}
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.TransactWriteItems" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct {
			ClientRequestToken *string
			TransactItems      []json.RawMessage
		}
		if json.Unmarshal(body, &in) != nil {
			next.ServeHTTP(w, r)
			return
		}
		if len(in.TransactItems) > maxTransactItems {
			dynamoError(w, "com.amazon.coral.validate#ValidationException",
				"1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
			return
		}
		if in.ClientRequestToken == nil {
			next.ServeHTTP(w, r)
			return
		}
		token := *in.ClientRequestToken
		if n := len(token); n < 1 || n > maxClientRequestToken {
			dynamoError(w, "com.amazon.coral.validate#ValidationException",
				"1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
			return
		}
		digest := sha256.Sum256(body)
		now := time.Now()
		mu.Lock()
		for k, rec := range tokens {
			if now.Sub(rec.at) > tokenWindow {
				delete(tokens, k)
			}
		}
		rec, seen := tokens[token]
		switch {
		case seen && rec.digest != digest:
			mu.Unlock()
			dynamoError(w, "com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException",
				"The provided ClientRequestToken is already in use with different parameters")
			return
		case seen && rec.status == http.StatusOK:
			mu.Unlock()
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.Write(rec.body)
			return
		case !seen:
			tokens[token] = &tokenRecord{digest: digest, at: now}
		}
		mu.Unlock()
		rw := httptest.NewRecorder()
		next.ServeHTTP(rw, r)
		if rw.Code == http.StatusOK {
			mu.Lock()
			if rec := tokens[token]; rec != nil && rec.digest == digest {
				rec.status, rec.body = rw.Code, rw.Body.Bytes()
			}
			mu.Unlock()
		}
		for k, v := range rw.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rw.Code)
		w.Write(rw.Body.Bytes())
	})
}

// dynamoError writes a DynamoDB JSON-protocol client error.
func dynamoError(w http.ResponseWriter, typ, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": message})
}
