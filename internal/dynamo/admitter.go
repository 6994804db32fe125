package dynamo

// What the waiting room's admitter reads and writes besides tickets and frontiers
// (docs/design.md, "Waiting room", "The admitter's store"): arrivals from the
// TicketsByArrival index, its lease, and the fair draw's seed.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/stockguard/stockguard/internal/inventory"
)

// arrivalReaders is how many of a SKU's ArrivalBuckets Arrivals queries at once.
const arrivalReaders = 16

// ReadFrontier reads sku's frontier and version as FrontierOf does, but always from
// the table (strongly consistent, 1 read unit), never from the instance's copy: the
// admitter must see another admitter's write.
func (s *QueueStore) ReadFrontier(ctx context.Context, sku string) (inventory.Frontier, int64, error) {
	var rec frontierRecord
	if err := s.get(ctx, s.tables.SKUs, frontierKey(sku), "frontier of "+sku, &rec); err != nil {
		return inventory.Frontier{}, 0, err
	}
	rec.SKU = sku
	f, err := rec.frontier()
	return f, rec.Version, err
}

// arrivalRecord is a TicketsByArrival entry (KEYS_ONLY: the table's key and the
// index's).
type arrivalRecord struct {
	PK        string `dynamodbav:"pk"`
	ArrivedMs int64  `dynamodbav:"arrivedMs"`
}

// Arrivals reads the tickets of sku's sale starting at start (zero: none) that
// arrived after after and at or before through (store clock, milliseconds; a zero
// after reads from the first), from TicketsByArrival: one Query per bucket of the
// sale (arrivalBucket), b = 0..ArrivalBuckets-1,
// arrivalReaders at a time, eventually consistent (a GSI has no other kind), 0.5
// read units per 4 KB of entries (an entry is about 100 bytes). The index lags the
// table: an entry may show after later ones did. The order is not defined. Errors:
// inventory.ErrBusy.
func (s *QueueStore) Arrivals(ctx context.Context, sku string, start, after, through time.Time) ([]inventory.Arrival, error) {
	var mu sync.Mutex
	var out []inventory.Arrival
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(arrivalReaders)
	for b := range ArrivalBuckets {
		g.Go(func() error {
			got, err := s.arrivalsIn(gctx, arrivalBucket(sku, start, strconv.Itoa(b)), after.UnixMilli()+1, through.UnixMilli())
			mu.Lock()
			out = append(out, got...)
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// arrivalsIn reads one bucket's entries with arrivedMs in from..through.
func (s *QueueStore) arrivalsIn(ctx context.Context, key string, from, through int64) ([]inventory.Arrival, error) {
	if from < 1 {
		from = 1
	}
	if through < from {
		return nil, nil
	}
	cond := expression.Key("arrivalBucket").Equal(expression.Value(key)).
		And(expression.Key("arrivedMs").Between(expression.Value(from), expression.Value(through)))
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build arrivals query: %w", err)
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.tables.Orders), IndexName: aws.String(ArrivalIndex),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var out []inventory.Arrival
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.storeError("read arrivals", err)
		}
		for _, item := range page.Items {
			var rec arrivalRecord
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				return nil, fmt.Errorf("decode arrival: %w", err)
			}
			if id, ok := strings.CutPrefix(rec.PK, "ticket#"); ok {
				out = append(out, inventory.Arrival{Ticket: id, At: fromMilli(rec.ArrivedMs)})
			}
		}
	}
	return out, nil
}

// leaseRecord is an admitter's lease on a SKU: pk <skuId>#admitter in the skus table.
type leaseRecord struct {
	PK      string `dynamodbav:"pk"`
	Kind    string `dynamodbav:"kind"`
	SKU     string `dynamodbav:"skuId"`
	Holder  string `dynamodbav:"holder"`
	UntilMs int64  `dynamodbav:"untilMs"`
}

const kindLease = "ADMITTER_LEASE"

func leaseKey(sku string) string { return sku + "#admitter" }

// TakeLease takes or renews holder's lease on admitting sku until until: one
// conditional PutItem (1 write unit), which succeeds when nobody holds the lease,
// holder does, or the holder's lease ended before now (store clock). It reports
// whether holder has the lease. Errors: inventory.ErrBusy.
func (s *QueueStore) TakeLease(ctx context.Context, sku, holder string, until time.Time) (bool, error) {
	cond := expression.AttributeNotExists(expression.Name("pk")).
		Or(expression.Name("holder").Equal(expression.Value(holder))).
		Or(expression.Name("untilMs").LessThan(expression.Value(s.now().UnixMilli())))
	err := s.putIf(ctx, "admitter lease of "+sku, leaseRecord{PK: leaseKey(sku), Kind: kindLease, SKU: sku, Holder: holder, UntilMs: until.UnixMilli()}, cond)
	if errors.Is(err, inventory.ErrMoved) {
		return false, nil
	}
	return err == nil, err
}

// DropLease ends holder's lease on sku (one conditional DeleteItem, 1 write unit),
// so the next admitter need not wait for it to run out; another holder's lease is
// left alone. Errors: inventory.ErrBusy.
func (s *QueueStore) DropLease(ctx context.Context, sku, holder string) error {
	expr, err := expression.NewBuilder().WithCondition(expression.Name("holder").Equal(expression.Value(holder))).Build()
	if err != nil {
		return fmt.Errorf("build lease condition: %w", err)
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(leaseKey(sku)), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return s.storeError("drop admitter lease of "+sku, err)
	}
	return nil
}

// drawRecord is a sale's draw seed: pk <skuId>#draw#<sale start, Unix ms> in the skus
// table.
type drawRecord struct {
	PK         string `dynamodbav:"pk"`
	Kind       string `dynamodbav:"kind"`
	SKU        string `dynamodbav:"skuId"`
	Seed       string `dynamodbav:"seed"`       // 64 hex digits
	Commitment string `dynamodbav:"commitment"` // its SHA-256, hex
	CreatedMs  int64  `dynamodbav:"createdMs"`
}

const kindDraw = "DRAW"

// DrawSeedOf returns the fair draw's seed of sku's sale starting at start, drawn
// (crypto/rand) and kept on first use: one conditional PutItem (1 write unit) of
// pk <skuId>#draw#<start ms>, the seed and its inventory.DrawSeed.Commitment, or,
// when a seed is kept already, one strongly consistent GetItem (1 read unit). A sale
// whose start moves gets a new seed. It reports whether the seed is new (the caller
// publishes the commitment). Errors: inventory.ErrBusy.
func (s *QueueStore) DrawSeedOf(ctx context.Context, sku string, start time.Time) (inventory.DrawSeed, bool, error) {
	var seed inventory.DrawSeed
	if _, err := rand.Read(seed[:]); err != nil {
		return seed, false, fmt.Errorf("draw seed: %w", err)
	}
	pk := sku + "#draw#" + strconv.FormatInt(start.UnixMilli(), 10)
	rec := drawRecord{PK: pk, Kind: kindDraw, SKU: sku, Seed: hex.EncodeToString(seed[:]), Commitment: seed.Commitment(), CreatedMs: s.now().UnixMilli()}
	err := s.putIf(ctx, "draw seed of "+sku, rec, expression.AttributeNotExists(expression.Name("pk")))
	switch {
	case err == nil:
		return seed, true, nil
	case !errors.Is(err, inventory.ErrMoved):
		return seed, false, err
	}
	var kept drawRecord
	if err := s.get(ctx, s.tables.SKUs, pk, "draw seed of "+sku, &kept); err != nil {
		return seed, false, err
	}
	seed, err = inventory.ParseDrawSeed(kept.Seed)
	if err != nil {
		return seed, false, fmt.Errorf("draw seed of %s: %w", sku, err)
	}
	return seed, false, nil
}
