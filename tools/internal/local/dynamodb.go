package local

import (
	"context"
	"fmt"
	"hash/crc32"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/truora/minidyn/server"
)

// DynamoDBOptions configures StartDynamoDB. The zero value is ready to use.
type DynamoDBOptions struct {
	// Wrap, when set, wraps the minidyn handler: every request passes through
	// it before (and after) minidyn sees it.
	Wrap Middleware
	// Endpoint, when set, is another DynamoDB API (MotoServer.URL()): the server
	// serves no minidyn and forwards every request to it, through Wrap, one at a
	// time. moto_server runs requests on threads of its own without a lock: sent
	// together, 60 TransactWriteItems each taking 1 of 20 units with the condition
	// that one is left all succeeded 22 times, where DynamoDB runs transactions
	// serializably (Developer Guide, "Isolation levels for DynamoDB transactions").
	Endpoint string
}

// DynamoDBServer is an in-memory DynamoDB-compatible API (minidyn) served
// over HTTP. It speaks the DynamoDB JSON protocol (X-Amz-Target
// "DynamoDB_20120810.<Operation>") for the operations minidyn implements:
// CreateTable, DescribeTable, UpdateTable, DeleteTable, PutItem, GetItem,
// UpdateItem, DeleteItem, Query, Scan, BatchWriteItem, BatchGetItem,
// TransactWriteItems and TransactGetItems. Any other operation (ListTables,
// UpdateTimeToLive, TagResource, ...) answers 400 "unsupported operation".
// Tables are ACTIVE as soon as CreateTable returns. Data lives in memory and
// is lost on Close. Every answer carries X-Amz-Crc32, the CRC32 (IEEE) of its body
// in decimal, as DynamoDB's do, so the SDK validates the body (DynamoDB Developer
// Guide, "DynamoDB low-level API": the x-amz-crc32 response header).
//
// TransactWriteItems is run in front of minidyn (see transactions.go): its cost
// follows the items it names, not the size of the tables, and it enforces what
// DynamoDB documents and minidyn ignores: at most 100 actions; a ClientRequestToken
// of at most 36 characters; a repeat with the same parameters within 10 minutes
// answered from the first success, a repeat with others refused with
// IdempotentParameterMismatchException; a CancellationReason for every action, with
// the old item for each failed condition that asked for ALL_OLD.
//
// A transaction is as strict here as on DynamoDB, which applies one whole or not at
// all and isolates it from every other transaction and single-item write on its items
// (Developer Guide, "Isolation levels for DynamoDB transactions",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-isolation):
// it runs under a lock no other request holds meanwhile, and once its body is read it
// runs to its end, applied or rolled back, whatever becomes of the request: a client's
// cancel, timeout or closed connection only loses the answer, never half a
// transaction (the request's context is not passed on; minidyn's calls take
// context.Background). TestDynamoDB_CancelledTransactionsApplyWholeOrNotAtAll checks
// it with contexts cancelled at random moments.
//
// Known gaps of minidyn v0.8.2 that the code must not lean on:
//   - REMOVE in an update expression is ignored (only SET/ADD results are
//     written back), so an item never leaves a sparse GSI by losing its key
//     attributes; readers of PendingByExpiry filter on status.
//   - Inserting a new item re-sorts the table's and each index's keys (a
//     sort of an almost sorted slice: linear in the items, with a small
//     factor), so writes of new items still slow down slowly as tables grow.
//   - Failure injection (EmulateFailure) switched on while a transaction is
//     running can stop its rollback; it then answers InternalServerError.
//   - An empty binary value (B, allowed by DynamoDB outside keys) is answered
//     as an empty attribute value ({}), which the SDK cannot decode: the frontier
//     item leaves its steps out while it has none.
//
// With DynamoDBOptions.Endpoint the server is a front of another DynamoDB API
// instead (moto_server's), which answers every request as it does.
type DynamoDBServer struct {
	http *httpServer
	mini *server.Server // nil in front of another API
}

// StartDynamoDB serves a new, empty minidyn (or a front of opts.Endpoint) on addr
// ("127.0.0.1:8000" for cmd/local, "127.0.0.1:0" for a free port in tests) and
// returns once it accepts connections. ctx bounds only the listen call, not the
// server's life: call Close to stop it. Any number may run in one process.
func StartDynamoDB(ctx context.Context, addr string, opts DynamoDBOptions) (*DynamoDBServer, error) {
	var front http.Handler
	if opts.Endpoint != "" {
		h, err := forward(opts.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("start dynamodb: %w", err)
		}
		front = oneAtATime(h)
	}
	ln, err := listen(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("start dynamodb: %w", err)
	}
	if front != nil {
		return &DynamoDBServer{http: serve(ln, front, opts.Wrap)}, nil
	}
	mini := server.NewServer()
	return &DynamoDBServer{http: serve(ln, withCRC32(newTransactor(mini)), opts.Wrap), mini: mini}, nil
}

// withCRC32 sets the X-Amz-Crc32 header of every answer of next: the CRC32 (IEEE) of
// the body, in decimal.
func withCRC32(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(rec.Body.Bytes())), 10))
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// URL returns the endpoint, "http://host:port", to pass to NewDynamoDBClient
// or to `aws dynamodb --endpoint-url`.
func (s *DynamoDBServer) URL() string { return s.http.url }

// Minidyn returns the underlying minidyn server, for failure injection in
// tests (EmulateFailure, EmulateFailureForTable, EmulateUnprocessedItems)
// and for resetting data (ClearAllTables, Reset); nil in front of another API.
func (s *DynamoDBServer) Minidyn() *server.Server { return s.mini }

// Close stops accepting connections, waits up to 5 s for in-flight requests
// and closes the rest. Calling it again returns the first call's result.
func (s *DynamoDBServer) Close() error { return s.http.close() }

// NewDynamoDBClient returns a DynamoDB client for the endpoint at endpointURL
// (e.g. DynamoDBServer.URL()), signing with static dummy credentials for
// Region, with the SDK's default retryer. It reads no environment variables
// or shared config files. optFns adjust the options last (e.g. RetryMaxAttempts).
func NewDynamoDBClient(endpointURL string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(localConfig(endpointURL), optFns...)
}

// localConfig is the SDK configuration of every local client: Region, the endpoint at
// endpointURL and dummy credentials (the embedded servers do not check signatures).
// It is built here, not loaded, so no environment variable or shared config file
// reaches it.
func localConfig(endpointURL string) aws.Config {
	return aws.Config{
		Region:       Region,
		BaseEndpoint: aws.String(endpointURL),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
}

// CreateTables creates each table in order with client.CreateTable. It stops
// at the first failure and returns it wrapped with the table name; tables
// created before it are kept. A table that already exists is an error
// (ResourceInUseException on DynamoDB).
func CreateTables(ctx context.Context, client *dynamodb.Client, tables []*dynamodb.CreateTableInput) error {
	for _, in := range tables {
		if _, err := client.CreateTable(ctx, in); err != nil {
			return fmt.Errorf("create table %s: %w", aws.ToString(in.TableName), err)
		}
	}
	return nil
}

// CountRequests returns a DynamoDB client option that calls count with the operation
// name (e.g. "TransactWriteItems") of every request the client sends, retries
// included: it sits in the SDK's Finalize step, after the retry loop. Tests and
// benchmarks use it to count DynamoDB round trips.
func CountRequests(count func(operation string)) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("stockguardCountRequests",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					count(awsmiddleware.GetOperationName(ctx))
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		})
	}
}
