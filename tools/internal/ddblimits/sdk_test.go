package ddblimits_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/local"
)

// The tests in this file send real SDK requests through the model to the embedded
// DynamoDB (minidyn) and check what the SDK makes of the model's answers.

const table = "T"

// newClient starts minidyn with one table (key pk) and returns a client through a
// model with cfg whose SDK makes a single attempt per call, so that each answer of
// the model reaches the test.
func newClient(t testing.TB, cfg ddblimits.Config) (*dynamodb.Client, *ddblimits.Model) {
	t.Helper()
	return newClientWith(t, cfg, dynamo.ClientOptions, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
}

// newClientWith is newClient with the client's options opts (the model's last).
func newClientWith(t testing.TB, cfg ddblimits.Config, opts ...func(*dynamodb.Options)) (*dynamodb.Client, *ddblimits.Model) {
	t.Helper()
	srv, err := local.StartDynamoDB(context.Background(), "127.0.0.1:0", local.DynamoDBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	tables := []*dynamodb.CreateTableInput{{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}}
	if err := local.CreateTables(context.Background(), local.NewDynamoDBClient(srv.URL()), tables); err != nil {
		t.Fatal(err)
	}
	cfg.Keys = ddblimits.KeysOf(tables)
	m := ddblimits.New(cfg)
	db := local.NewDynamoDBClient(srv.URL(), append(opts, m.ClientOptions)...)
	return db, m
}

func key(k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: k}}
}

func add(k string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: key(k), UpdateExpression: aws.String("ADD n :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	}}
}

func update(ctx context.Context, db *dynamodb.Client, k string) error {
	u := add(k).Update
	_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ExpressionAttributeValues: u.ExpressionAttributeValues})
	return err
}

func reasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	return codes
}

// TestModel_SDKWriteLoopNeverPassesTheCeiling runs 8 writers in a loop on one item for
// two seconds of real time at a 100× slowdown with a 0.1 ms round trip (8 writers offer
// 80 times the ceiling of 10 writes/s real, so even on a machine loaded many times its
// cores the loop meets throttles): the writes that succeed never exceed rate × elapsed + burst, and the
// others fail with a ThrottlingException the SDK recognises.
func TestModel_SDKWriteLoopNeverPassesTheCeiling(t *testing.T) {
	cfg := ddblimits.Config{RoundTrip: 100 * time.Microsecond, Slowdown: 100}
	db, m := newClient(t, cfg)
	var ok, throttled, other atomic.Int64
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for time.Since(start) < 2*time.Second {
				err := update(ctx, db, "hot")
				var te *types.ThrottlingException
				switch {
				case err == nil:
					ok.Add(1)
				case errors.As(err, &te) && len(te.ThrottlingReasons) == 1 && aws.ToString(te.ThrottlingReasons[0].Reason) == "TableWriteKeyRangeThroughputExceeded":
					throttled.Add(1)
				default:
					other.Add(1)
					t.Errorf("write: %v", err)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	ceiling := float64(ddblimits.PartitionWriteUnits) / cfg.Slowdown * elapsed.Seconds()
	burst := float64(ddblimits.PartitionWriteUnits) * 0.010
	t.Logf("%d writes succeeded in %v (ceiling %.0f + burst %.0f), %d throttled; %.0f writes/s at 1×",
		ok.Load(), elapsed, ceiling, burst, throttled.Load(), float64(ok.Load())/elapsed.Seconds()*cfg.Slowdown)
	if float64(ok.Load()) > ceiling+burst {
		t.Errorf("%d writes succeeded, above the ceiling %.0f + burst %.0f", ok.Load(), ceiling, burst)
	}
	if float64(ok.Load()) < ceiling/2 {
		t.Errorf("%d writes succeeded, not even half the ceiling %.0f: 8 writers should saturate it", ok.Load(), ceiling)
	}
	if throttled.Load() == 0 {
		t.Error("8 writers on one item were never throttled")
	}
	if st := m.Stats()["UpdateItem"]; int64(st.Requests) != ok.Load()+throttled.Load()+other.Load() || int64(st.Throttles) != throttled.Load() {
		t.Errorf("model counted %+v; the SDK saw %d ok, %d throttled", st, ok.Load(), throttled.Load())
	}
}

// TestModel_SDKConcurrentTransactionsOnOneItem fires 20 transactions at once that
// share one item and each own another: exactly one goes through, the 19 others are
// cancelled with TransactionConflict on the shared item and None on their own.
// Transactions on disjoint items all go through.
func TestModel_SDKConcurrentTransactionsOnOneItem(t *testing.T) {
	// A 1 s hold: all 20 reach the server well within it.
	db, m := newClient(t, ddblimits.Config{RoundTrip: time.Millisecond, TransactionHold: time.Second})
	ctx := context.Background()
	run := func(shared bool) (ok int, conflicted int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		startGun := make(chan struct{})
		for i := range 20 {
			wg.Go(func() {
				<-startGun
				first := fmt.Sprint("own-a-", i)
				if shared {
					first = "shared"
				}
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add(first), add(fmt.Sprint("own-b-", i))}})
				mu.Lock()
				defer mu.Unlock()
				switch r := reasons(err); {
				case err == nil:
					ok++
				case fmt.Sprint(r) == "[TransactionConflict None]":
					conflicted++
				default:
					t.Errorf("transaction %d: %v (reasons %v)", i, err, r)
				}
			})
		}
		close(startGun)
		wg.Wait()
		return ok, conflicted
	}
	if ok, conflicted := run(false); ok != 20 || conflicted != 0 {
		t.Errorf("disjoint items: %d went through, %d conflicted; want 20, 0", ok, conflicted)
	}
	if ok, conflicted := run(true); ok != 1 || conflicted != 19 {
		t.Errorf("one shared item: %d went through, %d conflicted; want 1, 19", ok, conflicted)
	}
	if st := m.Stats()["TransactWriteItems"]; st.Requests != 40 || st.Conflicts != 19 {
		t.Errorf("model counted %+v, want 40 requests, 19 conflicts", st)
	}
}

// TestModel_SDKErrorShapes checks each refusal as the SDK types it: a plain write of
// an item a transaction holds, a transaction over an item's budget, a plain write
// over it, and a read of a held item (allowed).
func TestModel_SDKErrorShapes(t *testing.T) {
	db, m := newClient(t, ddblimits.Config{RoundTrip: time.Millisecond, TransactionHold: 400 * time.Millisecond})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add("a"), add("b")}})
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); len(m.Held(time.Now())) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the first transaction never reached the model")
		}
		time.Sleep(time.Millisecond)
	}
	var tce *types.TransactionConflictException
	if err := update(ctx, db, "a"); !errors.As(err, &tce) {
		t.Errorf("plain write of a held item: %v, want TransactionConflictException", err)
	}
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add("c"), add("b")}})
	if r := reasons(err); fmt.Sprint(r) != "[None TransactionConflict]" {
		t.Errorf("transaction over c and held b: %v, reasons %v; want [None TransactionConflict]", err, r)
	}
	if err := update(ctx, db, "c"); err != nil {
		t.Errorf("plain write of c, which the cancelled transaction named: %v", err)
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("b"), ConsistentRead: aws.Bool(true)}); err != nil {
		t.Errorf("strongly consistent read of a held item: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	if err := update(ctx, db, "a"); err != nil {
		t.Errorf("plain write of a after the transaction: %v", err)
	}

	// Over budget: one write unit per second and a 1 s burst is one 1 KB write.
	db, _ = newClient(t, ddblimits.Config{RoundTrip: time.Millisecond, WriteUnits: 1, Burst: time.Second})
	if err := update(ctx, db, "x"); err != nil {
		t.Fatalf("first write: %v", err)
	}
	var te *types.ThrottlingException
	if err := update(ctx, db, "x"); !errors.As(err, &te) {
		t.Errorf("second write within the second: %v, want ThrottlingException", err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add("y"), add("x")}})
	if r := reasons(err); fmt.Sprint(r) != "[None ThrottlingError]" {
		t.Errorf("transaction over y and spent x: %v, reasons %v; want [None ThrottlingError]", err, r)
	}
}

// BenchmarkModel_SingleItemWrites drives plain writes (1 unit) and transactional
// writes (2 units) on one item from 16 goroutines at a 10× slowdown and reports what
// the item served at 1×, next to the ceiling: writes/s and units/s.
func BenchmarkModel_SingleItemWrites(b *testing.B) {
	for _, tc := range []struct {
		name  string
		units float64
		write func(context.Context, *dynamodb.Client) error
	}{
		{"UpdateItem", 1, func(ctx context.Context, db *dynamodb.Client) error { return update(ctx, db, "hot") }},
		{"TransactWriteItems", 2, func(ctx context.Context, db *dynamodb.Client) error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add("hot")}})
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := ddblimits.Config{Slowdown: 10}
			db, m := newClient(b, cfg)
			var ok atomic.Int64
			b.SetParallelism(8) // 16 goroutines on 2 CPUs
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if tc.write(context.Background(), db) == nil {
						ok.Add(1)
					}
				}
			})
			perSec := float64(ok.Load()) / time.Since(start).Seconds() * cfg.Slowdown
			b.ReportMetric(perSec, "writes/s@1x")
			b.ReportMetric(perSec*tc.units, "units/s@1x")
			st := m.Stats()[tc.name]
			b.ReportMetric(float64(st.Throttles)/float64(max(st.Requests, 1)), "throttled/req")
			b.ReportMetric(float64(st.Conflicts)/float64(max(st.Requests, 1)), "conflicted/req")
		})
	}
}

// TestModel_SDKLostAnswers loses every third applied write: the caller sees an
// InternalServerError, the write stands, reads are never lost, and an SDK that retries
// the lost answer applies a plain UpdateItem twice.
func TestModel_SDKLostAnswers(t *testing.T) {
	ctx := context.Background()
	db, m := newClient(t, ddblimits.Config{RoundTrip: time.Millisecond, LoseAnswerEvery: 3})
	var lost int
	for i := range 9 {
		var ise *types.InternalServerError
		switch err := update(ctx, db, "a"); {
		case errors.As(err, &ise):
			lost++
			if i%3 != 2 {
				t.Errorf("write %d lost, want only every third", i+1)
			}
		case err != nil:
			t.Fatalf("write %d: %v", i+1, err)
		}
		if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("a"), ConsistentRead: aws.Bool(true)}); err != nil {
			t.Fatalf("read %d: %v", i+1, err)
		}
	}
	if got := counter(t, db, "a"); lost != 3 || got != 9 || m.Stats()["UpdateItem"].Lost != 3 || m.Stats()["GetItem"].Lost != 0 {
		t.Errorf("lost %d answers (stats %+v), item counts %d writes; want 3 lost, 9 applied", lost, m.Stats(), got)
	}

	// With the SDK's retries the lost write is sent again and applied again.
	srvDB, m := newClient(t, ddblimits.Config{RoundTrip: time.Millisecond, LoseAnswerEvery: 2})
	retrying := dynamodb.New(srvDB.Options(), func(o *dynamodb.Options) { o.RetryMaxAttempts = 3 })
	for i := range 2 {
		if err := update(ctx, retrying, "b"); err != nil {
			t.Fatalf("write %d with retries: %v", i+1, err)
		}
	}
	if got := counter(t, retrying, "b"); got != 3 || m.Stats()["UpdateItem"].Lost != 1 {
		t.Errorf("2 calls with one lost answer retried: item counts %d writes (stats %+v), want 3", got, m.Stats())
	}
}

// counter reads item k's n.
func counter(t *testing.T, db *dynamodb.Client, k string) int {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(k), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := out.Item["n"].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("item %s has no n: %v", k, out.Item)
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestModel_SDKBatchGetAnswersInPart reads three items in one BatchGetItem when one
// has spent its partition's read units: DynamoDB answers the other two and lists the
// spent one in UnprocessedKeys, with the request's ConsistentRead (DynamoDB API
// Reference, BatchGetItem); a batch of spent items only is refused whole.
func TestModel_SDKBatchGetAnswersInPart(t *testing.T) {
	// One read unit a second and a 1 s burst: one strongly consistent read per item.
	db, m := newClient(t, ddblimits.Config{RoundTrip: time.Millisecond, ReadUnits: 1, Burst: time.Second})
	ctx := context.Background()
	for _, k := range []string{"x", "y", "z"} {
		if err := update(ctx, db, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("x"), ConsistentRead: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	out, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		table: {Keys: []map[string]types.AttributeValue{key("x"), key("y"), key("z")}, ConsistentRead: aws.Bool(true)},
	}})
	if err != nil {
		t.Fatalf("batch of a spent item and two fresh ones: %v, want an answer in part", err)
	}
	var got []string
	for _, it := range out.Responses[table] {
		got = append(got, it["pk"].(*types.AttributeValueMemberS).Value)
	}
	slices.Sort(got)
	un := out.UnprocessedKeys[table]
	if fmt.Sprint(got) != "[y z]" || len(un.Keys) != 1 || un.Keys[0]["pk"].(*types.AttributeValueMemberS).Value != "x" || !aws.ToBool(un.ConsistentRead) {
		t.Fatalf("answered %v, unprocessed %+v; want [y z] answered and x unprocessed, consistent", got, un)
	}
	if c := m.Stats()["BatchGetItem"]; c.Partial != 1 || c.Throttles != 0 || c.ReadUnits != 2 {
		t.Errorf("BatchGetItem counts %+v, want 1 answered in part, none refused, 2 read units", c)
	}
	_, err = db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		table: {Keys: []map[string]types.AttributeValue{key("x"), key("y")}, ConsistentRead: aws.Bool(true)},
	}})
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Errorf("batch of spent items only: %v, want ThrottlingException", err)
	}
}

// TestForBuyers_ATransientRefusalIsNotSentAgain sends a read the model throttles and
// a write whose answer it loses through clients with dynamo.ClientOptions, with and
// without dynamo.ForBuyers: the throttled read is sent once for buyers (MaxAttempts
// times otherwise) and ends ThrottlingException; the lost answer, whose outcome is
// unknown, is sent MaxAttempts times by both.
func TestForBuyers_ATransientRefusalIsNotSentAgain(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		opts  []func(*dynamodb.Options)
		reads int
	}{
		{"ClientOptions", []func(*dynamodb.Options){dynamo.ClientOptions}, dynamo.MaxAttempts},
		{"ForBuyers", []func(*dynamodb.Options){dynamo.ClientOptions, dynamo.ForBuyers}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One read unit a second: past a first read, the retries (under 0.8 s of backoff in
			// all) refill less than the unit a read needs.
			db, m := newClientWith(t, ddblimits.Config{RoundTrip: time.Millisecond, ReadUnits: 1, Burst: time.Second}, tc.opts...)
			get := func() error {
				_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("x"), ConsistentRead: aws.Bool(true)})
				return err
			}
			if err := get(); err != nil {
				t.Fatal(err)
			}
			var te *types.ThrottlingException
			if err := get(); !errors.As(err, &te) {
				t.Fatalf("read of a spent item: %v, want ThrottlingException", err)
			}
			if got := m.Stats()["GetItem"].Requests - 1; got != tc.reads {
				t.Errorf("the throttled read was sent %d times, want %d", got, tc.reads)
			}
		})
		t.Run(tc.name+"/lost answer", func(t *testing.T) {
			db, m := newClientWith(t, ddblimits.Config{RoundTrip: time.Millisecond, LoseAnswerEvery: 1}, tc.opts...)
			if err := update(ctx, db, "y"); err == nil {
				t.Fatal("every answer lost, yet the write succeeded")
			}
			if got := m.Stats()["UpdateItem"].Requests; got != dynamo.MaxAttempts {
				t.Errorf("the write whose answers were lost was sent %d times, want %d", got, dynamo.MaxAttempts)
			}
		})
	}
}
