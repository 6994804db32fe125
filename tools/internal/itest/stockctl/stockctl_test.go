package stockctl_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/stockctl"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
	"github.com/stockguard/stockguard/tools/internal/testing/openapitest"
)

const (
	accessKey = "AKIDSTOCKCTLTEST"
	secretKey = "stockctl-test-secret"
	region    = "ap-east-1"
)

// verifySigV4 checks r's SigV4 signature as API Gateway would: it signs a copy of the
// request carrying only the headers r says it signed, with the SDK's signer, the
// known secret and r's own X-Amz-Date, and compares the Authorization headers.
func verifySigV4(r *http.Request, body []byte) bool {
	auth := r.Header.Get("Authorization")
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	if err != nil || !ok || !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+accessKey+"/") {
		return false
	}
	signed, _, _ = strings.Cut(signed, ",")
	check, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			check.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, check, hex.EncodeToString(sum[:]), "execute-api", region, at); err != nil {
		return false
	}
	return check.Header.Get("Authorization") == auth
}

// harness is the local stack behind a server that refuses requests without a valid
// SigV4 signature (403, as API Gateway's AWS_IAM authorization does).
type harness struct {
	stack    *local.Stack
	url      string
	verified atomic.Int64
	outside  atomic.Pointer[string] // why the requests sent now are outside the contract
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	stack, err := local.Start(context.Background(), local.StackConfig{Template: "../../../../template.yaml", APIWrap: openapitest.New(t).Wrap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stack.Close() })
	h := &harness{stack: stack}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := h.outside.Load(); why != nil {
			r = r.WithContext(openapitest.OutsideContract(r.Context(), *why))
		}
		body, _ := io.ReadAll(r.Body)
		if !verifySigV4(r, body) {
			w.WriteHeader(http.StatusForbidden) // API Gateway's answer to a signature made with another secret
			io.WriteString(w, `{"message":"The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."}`)
			return
		}
		h.verified.Add(1)
		r.Body = io.NopCloser(bytes.NewReader(body))
		stack.API.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// run runs stockctl with the given secret and returns its exit status and output.
func (h *harness) run(secret string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	env := stockctl.Env{
		Stdout: &out, Stderr: &errOut, HTTP: http.DefaultClient,
		Getenv: func(string) string { return "" },
		LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) {
			return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(accessKey, secret, "")}, nil
		},
	}
	code := stockctl.Run(context.Background(), append([]string{"--endpoint", h.url}, args...), env)
	return code, out.String(), errOut.String()
}

func TestStockctl_SignsEveryRequestWithSigV4(t *testing.T) {
	h := newHarness(t)
	steps := []struct {
		args []string
		want string // in the table output
	}{
		{[]string{"create", "--sku", "cup-01", "--name", "Cup", "--price", "39900", "--stock", "10", "--off-sale"}, "OFF_SALE"},
		{[]string{"adjust", "cup-01", "--id", "restock-1", "--delta", "5", "--reason", "delivery"}, "on-hand 15"},
		{[]string{"adjust", "cup-01", "--id", "restock-1", "--delta", "5", "--reason", "delivery"}, "already applied"},
		{[]string{"on-sale", "cup-01", "--at", "2030-01-01T00:00:00Z"}, "UPCOMING"},
		{[]string{"reshard", "cup-01", "--shards", "4"}, "4 shards"},
		{[]string{"get", "cup-01"}, "available 15"},
		{[]string{"list"}, "cup-01"},
		{[]string{"ledger", "cup-01"}, "restock-1"},
		{[]string{"orders", "--status", "PENDING_OVERDUE"}, "ORDER"},
		{[]string{"reconcile"}, "the books balance"},
		{[]string{"reconcile", "--latest"}, "1 SKUs checked"},
	}
	for _, s := range steps {
		code, out, errOut := h.run(secretKey, s.args...)
		if code != stockctl.ExitOK || !strings.Contains(out, s.want) {
			t.Errorf("stockctl %s: exit %d\n%s%s\nwant %q", strings.Join(s.args, " "), code, out, errOut, s.want)
		}
	}
	if got := h.verified.Load(); got != int64(len(steps)) {
		t.Errorf("%d requests verified, want %d", got, len(steps))
	}
	code, out, _ := h.run(secretKey, "-o", "json", "get", "cup-01")
	var sku struct {
		OnHand    int    `json:"onHand"`
		UpdatedBy string `json:"updatedBy"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sku) != nil || sku.OnHand != 15 || sku.UpdatedBy != local.LocalOperatorARN {
		t.Errorf("-o json get: exit %d %q", code, out)
	}
	// An id is one path segment however it is spelled: "nope/../cup-01" names no SKU
	// and must not reach cup-01.
	// (Straight to the local API, which needs no signature, as cmd/local serves it.)
	unsigned := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.stack.API.ServeHTTP(w, r.WithContext(openapitest.OutsideContract(r.Context(), "a SKU id outside the pattern")))
	}))
	defer unsigned.Close()
	signed := h.url
	h.url = unsigned.URL
	code, out, errOut := h.run(secretKey, "adjust", "nope/../cup-01", "--id", "climb-1", "--delta", "1", "--reason", "x")
	h.url = signed
	if code == stockctl.ExitOK {
		t.Errorf("adjust of SKU nope/../cup-01: exit %d\n%s%s", code, out, errOut)
	}
	if _, out, _ := h.run(secretKey, "get", "cup-01"); !strings.Contains(out, "on-hand 15") {
		t.Errorf("cup-01 after an adjustment of another id:\n%s", out)
	}
	booktest.Check(t, h.stack.DB, h.stack.Tables)
}

func TestStockctl_FailsWithAClearMessageAndNonZeroExit(t *testing.T) {
	h := newHarness(t)
	if code, _, errOut := h.run(secretKey, "create", "--sku", "cup", "--name", "Cup", "--price", "100"); code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	before := booktest.Snapshot(t, h.stack.DB, h.stack.Tables)
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seedFile, []byte(`[{"skuId":"ok","name":"ok","price":1,"stock":1,"colour":"red"}]`), 0o600)
	objectFile := filepath.Join(t.TempDir(), "object.json")
	os.WriteFile(objectFile, []byte(`{"skuId":"ok","name":"ok","price":1,"stock":1}`), 0o600)
	badEntryFile := filepath.Join(t.TempDir(), "bad-entry.json")
	os.WriteFile(badEntryFile, []byte(`[{"skuId":"first","name":"First","price":1,"stock":1},{"skuId":"second","name":"Second","price":"1"}]`), 0o600)
	for _, tc := range []struct {
		args    []string
		secret  string
		exit    int
		want    string
		outside bool // the request breaks the contract, on purpose
	}{
		{[]string{"get", "cup"}, "not-the-secret", stockctl.ExitError, "403 Forbidden: API Gateway refused these AWS credentials: The request signature we calculated does not match", false},
		{[]string{"create", "--sku", "cup", "--name", "Cup", "--price", "200"}, secretKey, stockctl.ExitError, "409 SKU_EXISTS", false},
		{[]string{"adjust", "cup", "--id", "loss", "--delta", "-1", "--reason", "broken"}, secretKey, stockctl.ExitError, "409 STOCK_OUT", false},
		{[]string{"reshard", "cup", "--shards", "65"}, secretKey, stockctl.ExitUsage, "--shards must be 1 to 64", false},
		{[]string{"on-sale", "cup", "--at", "tomorrow"}, secretKey, stockctl.ExitUsage, "is not an RFC 3339 time", false},
		{[]string{"get", "nope"}, secretKey, stockctl.ExitError, "404 SKU_NOT_FOUND", false},
		{[]string{"seed", seedFile}, secretKey, stockctl.ExitError, `unknown field "colour"`, true},
		{[]string{"seed", "/no/such/file.json"}, secretKey, stockctl.ExitError, "no such file", false},
		{[]string{"seed", objectFile}, secretKey, stockctl.ExitError, "the seed file must be a JSON array of SKUs", false},
		{[]string{"seed", badEntryFile}, secretKey, stockctl.ExitError, `entry 2: price must be an integer (got string)`, false},
		{[]string{"create", "--sku", "x9", "--name", "X", "--price", "abc"}, secretKey, stockctl.ExitUsage, `invalid value "abc" for flag -price`, false},
		{[]string{"--frobnicate", "list"}, secretKey, stockctl.ExitUsage, "flag provided but not defined", false},
		{[]string{"frobnicate"}, secretKey, stockctl.ExitUsage, "unknown command", false},
		{[]string{"adjust", "cup", "--delta", "1"}, secretKey, stockctl.ExitUsage, "needs --id", false},
		{[]string{"refund", "0123456789abcdef", "--reason", "damaged"}, secretKey, stockctl.ExitError, "404 ORDER_NOT_FOUND", false},
		{[]string{"refund", "0123456789abcdef"}, secretKey, stockctl.ExitUsage, "needs --reason", false},
		{[]string{"ship", "0123456789abcdef", "--shipment-id", "p1", "--type", "virtual"}, secretKey, stockctl.ExitError, "404 ORDER_NOT_FOUND", false},
		{[]string{"ship", "0123456789abcdef", "--type", "virtual"}, secretKey, stockctl.ExitUsage, "needs --shipment-id", false},
		{[]string{"ship", "0123456789abcdef", "--shipment-id", "p1", "--type", "virtual", "--item", "cup"}, secretKey, stockctl.ExitUsage, "SKU:QTY", false},
		{[]string{"ship", "0123456789abcdef", "--shipment-id", "p1", "--type", "teleport"}, secretKey, stockctl.ExitUsage, "--type must be express, same-city, virtual or self-pickup", false},
		{[]string{"-o", "yaml", "list"}, secretKey, stockctl.ExitUsage, "-o must be", false},
	} {
		if tc.outside {
			why := strings.Join(tc.args, " ")
			h.outside.Store(&why)
		}
		code, out, errOut := h.run(tc.secret, tc.args...)
		h.outside.Store(nil)
		if code != tc.exit || !strings.HasPrefix(errOut, "stockctl: ") || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("stockctl %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, out, errOut, tc.exit, tc.want)
		}
	}
	if after := booktest.Snapshot(t, h.stack.DB, h.stack.Tables); after != before {
		t.Error("refused commands changed the tables")
	}
	for _, args := range [][]string{{"-h"}, {"create", "--help"}} {
		if code, out, errOut := h.run(secretKey, args...); code != stockctl.ExitOK || !strings.HasPrefix(out, "usage: stockctl") || errOut != "" {
			t.Errorf("stockctl %s: exit %d, stdout %q, stderr %q; want the usage on stdout", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// The waiting-room settings go through create and queue as the routes take them, and
// come back in get, list and -o json; queue sends only the settings it is given.
func TestStockctl_SetsAndShowsTheWaitingRoom(t *testing.T) {
	h := newHarness(t)
	steps := []struct {
		args []string
		want string // the end of the table's line of the SKU
	}{
		{[]string{"create", "--sku", "drop-01", "--name", "Drop", "--price", "9900", "--stock", "5", "--off-sale", "--queue", "--fair-window", "30", "--risk-threshold", "3"},
			"queue on, fair window 30s, risk threshold 3"},
		{[]string{"list"}, "1 on, fair window 30s, risk threshold 3"},
		{[]string{"queue", "drop-01", "--risk-threshold", "0"}, "queue on, fair window 30s"},
		{[]string{"queue", "drop-01", "--off"}, "queue off"},
		{[]string{"queue", "drop-01", "--risk-threshold", "2"}, "queue off, risk threshold 2"},
		{[]string{"queue", "drop-01", "--on", "--fair-window", "10"}, "queue on, fair window 10s, risk threshold 2"},
		{[]string{"get", "drop-01"}, "queue on, fair window 10s, risk threshold 2"},
	}
	lineEnds := func(out, want string) bool {
		for line := range strings.Lines(out) {
			if strings.HasSuffix(strings.Join(strings.Fields(line), " "), want) {
				return true
			}
		}
		return false
	}
	for _, s := range steps {
		code, out, errOut := h.run(secretKey, s.args...)
		if code != stockctl.ExitOK || !lineEnds(out, s.want) {
			t.Errorf("stockctl %s: exit %d\n%s%s\nwant %q", strings.Join(s.args, " "), code, out, errOut, s.want)
		}
	}
	code, out, _ := h.run(secretKey, "-o", "json", "get", "drop-01")
	var sku struct {
		Queue             bool `json:"queue"`
		FairWindowSeconds int  `json:"fairWindowSeconds"`
		RiskThreshold     int  `json:"riskThreshold"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sku) != nil || !sku.Queue || sku.FairWindowSeconds != 10 || sku.RiskThreshold != 2 {
		t.Errorf("-o json get: exit %d %q", code, out)
	}
	if code, out, errOut := h.run(secretKey, "on-sale", "drop-01"); code != stockctl.ExitOK {
		t.Fatalf("stockctl on-sale drop-01: exit %d %s%s", code, out, errOut)
	}
	before := booktest.Snapshot(t, h.stack.DB, h.stack.Tables)
	for _, tc := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"queue", "drop-01", "--off"}, stockctl.ExitError, "409 SALE_IN_PROGRESS"}, // its queued sale is on
		{[]string{"queue", "drop-01"}, stockctl.ExitUsage, "queue needs --on, --off, --fair-window or --risk-threshold"},
		{[]string{"queue", "drop-01", "--on", "--off"}, stockctl.ExitUsage, "not both"},
		{[]string{"queue", "drop-01", "--risk-threshold", "5"}, stockctl.ExitUsage, "--risk-threshold must be 0 to 4"},      // refused before sending
		{[]string{"queue", "drop-01", "--off", "--fair-window", "20"}, stockctl.ExitUsage, "--fair-window needs the queue"}, // the API's 400, refused before sending
	} {
		code, out, errOut := h.run(secretKey, tc.args...)
		if code != tc.exit || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("stockctl %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, out, errOut, tc.exit, tc.want)
		}
	}
	if after := booktest.Snapshot(t, h.stack.DB, h.stack.Tables); after != before {
		t.Error("refused queue changes changed the tables")
	}
}

// cupOrder places buyer's order of 2 cups through the stack's API.
func (h *harness) cupOrder(t *testing.T) struct{ OrderID string } {
	t.Helper()
	req := httptest.NewRequest("POST", "/orders", strings.NewReader(`{"items":[{"skuId":"cup","qty":2}],"address":`+orders.ExampleAddress+`}`))
	req.Header.Set("X-User-Id", "buyer")
	rec := httptest.NewRecorder()
	h.stack.API.ServeHTTP(rec, req)
	var order struct{ OrderID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &order); err != nil || rec.Code != http.StatusCreated {
		t.Fatalf("order: %d %s", rec.Code, rec.Body)
	}
	return order
}

func TestStockctl_RefundsAPaidOrder(t *testing.T) {
	h := newHarness(t)
	if code, _, errOut := h.run(secretKey, "create", "--sku", "cup", "--name", "Cup", "--price", "100", "--stock", "3"); code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	order := h.cupOrder(t)
	rec := httptest.NewRecorder()
	h.stack.API.ServeHTTP(rec, httptest.NewRequest("POST", "/_local/pay/"+order.OrderID, nil))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	code, out, errOut := h.run(secretKey, "-o", "json", "refund", order.OrderID, "--reason", "returned")
	if code != 0 || !strings.Contains(out, `"status":"REFUNDING"`) {
		t.Fatalf("refund: %d %s %s", code, out, errOut)
	}
	if got, _ := h.stack.Store.SKU(context.Background(), "cup"); got.OnHand != 3 || got.Available != 3 {
		t.Errorf("cup on-hand %d available %d after the refund, want 3 and 3", got.OnHand, got.Available)
	}
	booktest.Check(t, h.stack.DB, h.stack.Tables)
}

// stockctl aftersales approves and rejects a buyer's after-sales, and refuses a bad
// command line before calling the API.
func TestStockctl_DecidesAftersales(t *testing.T) {
	h := newHarness(t)
	if code, _, errOut := h.run(secretKey, "create", "--sku", "cup", "--name", "Cup", "--price", "100", "--stock", "3"); code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	order := h.cupOrder(t)
	rec := httptest.NewRecorder()
	h.stack.API.ServeHTTP(rec, httptest.NewRequest("POST", "/_local/pay/"+order.OrderID, nil))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("pay: %d %s", rec.Code, rec.Body)
	}
	for _, id := range []string{"as-1", "as-2"} {
		req := httptest.NewRequest("POST", "/orders/"+order.OrderID+"/aftersales", strings.NewReader(`{"aftersaleId":"`+id+`","kind":"refund","lines":[{"skuId":"cup","qty":1}],"reason":"late"}`))
		req.Header.Set("X-User-Id", "buyer")
		rec := httptest.NewRecorder()
		h.stack.API.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("after-sale %s: %d %s", id, rec.Code, rec.Body)
		}
	}
	for _, args := range [][]string{
		{"aftersales", "frobnicate", order.OrderID, "as-1"},
		{"aftersales", "reject", order.OrderID, "as-2"},
		{"aftersales", "approve", order.OrderID, "as-1", "--reason", "x"},
		{"aftersales", "approve", order.OrderID},
	} {
		if code, _, errOut := h.run(secretKey, args...); code != stockctl.ExitUsage {
			t.Errorf("stockctl %s: exit %d (%s), want %d", strings.Join(args, " "), code, errOut, stockctl.ExitUsage)
		}
	}
	code, out, errOut := h.run(secretKey, "aftersales", "approve", order.OrderID, "as-1")
	if code != 0 || !strings.Contains(out, "as-1") || !strings.Contains(out, "REFUNDING") || !strings.Contains(out, order.OrderID+"_R") {
		t.Errorf("approve: %d %s %s", code, out, errOut)
	}
	code, out, errOut = h.run(secretKey, "aftersales", "reject", order.OrderID, "as-2", "--reason", "not late")
	if code != 0 || !strings.Contains(out, "REJECTED") || !strings.Contains(out, "(rejected: not late)") {
		t.Errorf("reject: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := h.run(secretKey, "aftersales", "received", order.OrderID, "as-1"); code != stockctl.ExitError || !strings.Contains(errOut, "409 REFUND_NOT_ALLOWED") {
		t.Errorf("received of a refund: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := h.run(secretKey, "aftersales", "approve", order.OrderID, "nope"); code != stockctl.ExitError || !strings.Contains(errOut, "404 AFTERSALE_NOT_FOUND") {
		t.Errorf("unknown after-sale: exit %d, stderr %q", code, errOut)
	}
	booktest.Check(t, h.stack.DB, h.stack.Tables)
}

// stockctl ship of an order not paid is refused with the route's 409, nothing shipped.
func TestStockctl_ShipRefusesAnUnpaidOrder(t *testing.T) {
	h := newHarness(t)
	if code, _, errOut := h.run(secretKey, "create", "--sku", "cup", "--name", "Cup", "--price", "100", "--stock", "3"); code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	order := h.cupOrder(t)
	code, _, errOut := h.run(secretKey, "ship", order.OrderID, "--shipment-id", "p1", "--type", "express", "--carrier", "YTO", "--tracking", "YT1", "--item", "cup:1")
	if code != stockctl.ExitError || !strings.Contains(errOut, "409 ORDER_NOT_SHIPPABLE") {
		t.Errorf("ship: exit %d, stderr %q", code, errOut)
	}
	if o, _ := h.stack.Store.Lookup(context.Background(), order.OrderID); o.Shipping != nil {
		t.Errorf("shipping recorded: %+v", o.Shipping)
	}
}

// Without credentials (the local stack) stockctl sends no signature and names the
// local operator in X-Operator-Id (the OpenAPI document's localOperator scheme), whom
// the local stack records as the principal of each change.
func TestStockctl_WithoutCredentialsNamesTheLocalOperator(t *testing.T) {
	if stockctl.LocalOperator != local.LocalOperator {
		t.Fatalf("stockctl names %q, the local stack's operator is %q", stockctl.LocalOperator, local.LocalOperator)
	}
	h := newHarness(t)
	var operators []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		operators = append(operators, r.Header.Get(local.OperatorHeader)+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		h.stack.API.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	env := stockctl.Env{
		Stdout: &out, Stderr: &errOut, HTTP: http.DefaultClient,
		Getenv: func(string) string { return "" },
		LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) {
			return aws.Config{Region: region}, nil // no credentials in the chain
		},
	}
	for _, args := range [][]string{
		{"create", "--sku", "mug-9", "--name", "Mug", "--price", "100", "--stock", "3"},
		{"-o", "json", "get", "mug-9"},
	} {
		out.Reset()
		if code := stockctl.Run(context.Background(), append([]string{"--endpoint", srv.URL}, args...), env); code != stockctl.ExitOK {
			t.Fatalf("stockctl %v: exit %d %s", args, code, errOut.String())
		}
	}
	var sku struct {
		UpdatedBy string `json:"updatedBy"`
	}
	if err := json.Unmarshal(out.Bytes(), &sku); err != nil || sku.UpdatedBy != local.LocalOperatorARN {
		t.Errorf("get: %v %q, want updatedBy %s", err, out.String(), local.LocalOperatorARN)
	}
	for _, o := range operators {
		if o != local.LocalOperator+" " {
			t.Errorf("request sent with X-Operator-Id and Authorization %q, want %q and no signature", o, local.LocalOperator)
		}
	}
}

// stockctl COMMAND -h (or --help, after the command's arguments too) prints that
// command's usage on stdout with exit status 0, without an endpoint and without
// looking for credentials: how it is called, what it does, every flag its synopsis
// names, and an example. The commands are read from stockctl -h.
func TestStockctl_CommandHelpNeedsNoEndpoint(t *testing.T) {
	var out, errOut bytes.Buffer
	env := stockctl.Env{
		Stdout: &out, Stderr: &errOut, HTTP: http.DefaultClient,
		Getenv: func(string) string { return "" }, // no STOCKCTL_ENDPOINT
		LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) {
			t.Error("help looked for AWS credentials")
			return aws.Config{}, nil
		},
	}
	if code := stockctl.Run(context.Background(), []string{"-h"}, env); code != stockctl.ExitOK || errOut.Len() > 0 {
		t.Fatalf("stockctl -h: exit %d, stderr %q", code, errOut.String())
	}
	_, list, _ := strings.Cut(out.String(), "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	synopses := map[string]string{}
	for line := range strings.Lines(list) {
		name, args, _ := strings.Cut(strings.TrimSpace(line), " ")
		synopses[name] = strings.TrimSpace(args)
	}
	if len(synopses) != 19 {
		t.Fatalf("stockctl -h lists %d commands, want 19:\n%s", len(synopses), out.String())
	}
	for name, args := range synopses {
		for _, argv := range [][]string{{name, "-h"}, {name, "--help"}, {"-o", "json", name, "cup-01", "-h"}} {
			if name == "create" || name == "list" || name == "reconcile" || name == "plan" {
				if argv[len(argv)-2] == "cup-01" { // no positional argument
					argv = []string{"-o", "json", name, "-h"}
				}
			}
			out.Reset()
			errOut.Reset()
			code := stockctl.Run(context.Background(), argv, env)
			help := out.String()
			if code != stockctl.ExitOK || errOut.Len() > 0 || !strings.HasPrefix(help, "usage: stockctl [global flags] "+name+" "+args+"\n") ||
				!regexp.MustCompile(`\nExample:\n  stockctl `+name+`[ \n]`).MatchString(help) || !strings.Contains(help, "--endpoint URL") {
				t.Errorf("stockctl %s: exit %d, stderr %q, stdout:\n%s", strings.Join(argv, " "), code, errOut.String(), help)
				continue
			}
			for _, flagName := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(args, -1) {
				if !strings.Contains(help, "\n  -"+flagName[1]+" ") && !strings.Contains(help, "\n  -"+flagName[1]+"\n") {
					t.Errorf("stockctl %s -h does not explain --%s:\n%s", name, flagName[1], help)
				}
			}
		}
	}
	out.Reset()
	if code := stockctl.Run(context.Background(), []string{"get", "cup-01"}, env); code != stockctl.ExitUsage || !strings.Contains(errOut.String(), "no endpoint") {
		t.Errorf("stockctl get without an endpoint: exit %d, stderr %q; want 2 and \"no endpoint\"", code, errOut.String())
	}
}

// A reshard that is not complete (a shard past the target still holds a unit
// reserved by a PENDING order) exits 3, so that a script does not take it for done;
// run again once the order is released, it completes and exits 0.
func TestStockctl_AnIncompleteReshardExitsThree(t *testing.T) {
	h := newHarness(t)
	if code, _, errOut := h.run(secretKey, "create", "--sku", "mug", "--name", "Mug", "--price", "100", "--stock", "2", "--shards", "2"); code != stockctl.ExitOK {
		t.Fatalf("create: %d %s", code, errOut)
	}
	var held *inventory.Order
	for i := range 2 { // one unit per shard: both shards hold one reserved unit
		cart, _ := inventory.NewCart([]inventory.Line{{SKU: "mug", Qty: 1}})
		o, _, err := h.stack.Store.Reserve(context.Background(), inventory.ReserveRequest{UserID: fmt.Sprint("u", i), Cart: cart, Address: &inventory.Address{
			UserName: "李四", TelNumber: "13800138000", ProvinceName: "广东省", CityName: "广州市", DetailInfo: "天河路1号"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := o.Items[0].Shards[1]; ok {
			held = o
		}
	}
	// The order's table shows where to ship it, whole: the merchant ships by it.
	if code, out, errOut := h.run(secretKey, "orders", held.ID); code != stockctl.ExitOK || !strings.Contains(out, "ship to") || !strings.Contains(out, "13800138000") || !strings.Contains(out, "天河路1号") {
		t.Errorf("orders %s: exit %d, %q %q; want the address whole", held.ID, code, out, errOut)
	}
	for _, json := range []bool{false, true} {
		args := []string{"reshard", "mug", "--shards", "1"}
		if json {
			args = append([]string{"-o", "json"}, args...)
		}
		code, out, errOut := h.run(secretKey, args...)
		if code != stockctl.ExitIncomplete || !strings.Contains(errOut, "not complete") {
			t.Errorf("json %v: reshard with a unit reserved on shard 1: exit %d, %q %q; want %d and why", json, code, out, errOut, stockctl.ExitIncomplete)
		}
	}
	if _, _, err := h.stack.Store.Release(context.Background(), held, inventory.CancelUser); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := h.run(secretKey, "reshard", "mug", "--shards", "1"); code != stockctl.ExitOK || !strings.Contains(out, "1 shards") {
		t.Errorf("reshard once the order is released: exit %d, %q %q; want 0", code, out, errOut)
	}
}

// Reconcile's report with a difference exits 4 (a cron job or a script can tell the
// books are wrong), in table and JSON output; a clean report exits 0. A reshard to a
// shard count out of range is a wrong command line (2), sent nowhere.
func TestStockctl_ReconcileWithDifferencesExitsFour(t *testing.T) {
	h := newHarness(t)
	if code, _, errOut := h.run(secretKey, "create", "--sku", "pot", "--name", "Pot", "--price", "100", "--stock", "5"); code != stockctl.ExitOK {
		t.Fatalf("create: %d %s", code, errOut)
	}
	if code, _, errOut := h.run(secretKey, "reconcile"); code != stockctl.ExitOK {
		t.Fatalf("reconcile of balanced books: exit %d %s", code, errOut)
	}
	_, err := h.stack.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(h.stack.Tables.SKUs), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "pot#shard#0"}},
		UpdateExpression: aws.String("ADD available :d"), ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberN{Value: "3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"reconcile"}, {"-o", "json", "reconcile"}, {"reconcile", "--latest"}} {
		if code, _, errOut := h.run(secretKey, args...); code != stockctl.ExitDifferences || !strings.Contains(errOut, "differ") {
			t.Errorf("%v with available bumped by 3: exit %d %q, want %d", args, code, errOut, stockctl.ExitDifferences)
		}
	}
	sent := h.verified.Load()
	for _, n := range []string{"0", "65"} {
		if code, _, _ := h.run(secretKey, "reshard", "pot", "--shards", n); code != stockctl.ExitUsage {
			t.Errorf("reshard --shards %s: exit %d, want %d", n, code, stockctl.ExitUsage)
		}
	}
	if h.verified.Load() != sent {
		t.Error("a reshard out of range was sent")
	}
}
