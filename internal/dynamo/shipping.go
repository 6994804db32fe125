package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Shipping information on orders (inventory.Shipping), changed through the one
// transition path, and the claims that make each subscribe message go out once.

// kindNotice is a claim on one subscribe message (see ClaimNotice).
const kindNotice = "NOTICE"

// noticeTTL is how long a notice claim is kept: the orders table's TTL attribute
// "ttl" (template.yaml) deletes it afterwards, long after any retry of its message.
const noticeTTL = 30 * 24 * time.Hour

type shipmentRecord struct {
	ID         string                  `dynamodbav:"id"`
	Logistics  string                  `dynamodbav:"type"`
	Carrier    string                  `dynamodbav:"carrier,omitempty"`
	TrackingNo string                  `dynamodbav:"tracking,omitempty"`
	Contact    string                  `dynamodbav:"contact,omitempty"`
	Receiver   string                  `dynamodbav:"receiverContact,omitempty"` // masked`
	Items      []inventory.ShippedItem `dynamodbav:"items"`
	UploadedAt string                  `dynamodbav:"uploadedAt,omitempty"`
}

type shippingRecord struct {
	Status     string           `dynamodbav:"status"`
	Shipments  []shipmentRecord `dynamodbav:"shipments"`
	Uploaded   int              `dynamodbav:"uploaded"`
	UploadedAt string           `dynamodbav:"uploadedAt,omitempty"`
	Error      string           `dynamodbav:"error,omitempty"`
}

func newShippingRecord(s *inventory.Shipping) *shippingRecord {
	if s == nil {
		return nil
	}
	r := &shippingRecord{Status: string(s.Status), Uploaded: s.Uploaded, UploadedAt: formatOptional(s.UploadedAt), Error: s.Error}
	for _, sh := range s.Shipments {
		r.Shipments = append(r.Shipments, shipmentRecord{ID: sh.ID, Logistics: string(sh.Logistics), Carrier: sh.Carrier,
			TrackingNo: sh.TrackingNo, Contact: sh.Contact, Receiver: sh.ReceiverContact, Items: sh.Items, UploadedAt: formatOptional(sh.UploadedAt)})
	}
	return r
}

func (r *shippingRecord) shipping() (*inventory.Shipping, error) {
	if r == nil {
		return nil, nil
	}
	s := &inventory.Shipping{Status: inventory.ShippingStatus(r.Status), Uploaded: r.Uploaded, Error: r.Error}
	var err error
	if s.UploadedAt, err = optionalTime(r.UploadedAt); err != nil {
		return nil, err
	}
	for _, sh := range r.Shipments {
		at, err := optionalTime(sh.UploadedAt)
		if err != nil {
			return nil, err
		}
		s.Shipments = append(s.Shipments, inventory.Shipment{ID: sh.ID, Logistics: inventory.Logistics(sh.Logistics),
			Carrier: sh.Carrier, TrackingNo: sh.TrackingNo, Contact: sh.Contact, ReceiverContact: sh.Receiver, Items: sh.Items, UploadedAt: at})
	}
	return s, nil
}

// Ship records shipment s on the order id as inventory.Order.Ship decides, through
// the one transition path: one conditional update of the order (still PAID, its
// shipping as read). It returns the order as it stands and whether this call
// recorded s (false for the same shipment again). Errors: inventory.ErrOrderNotFound,
// inventory.ErrNotShippable, inventory.ErrIdempotencyKeyReused, an
// *inventory.InvalidRequestError (nothing written), inventory.ErrBusy, or another
// store error.
func (s *OrderStore) Ship(ctx context.Context, id string, sh inventory.Shipment) (*inventory.Order, bool, error) {
	order, err := s.Lookup(ctx, id)
	if err != nil {
		return nil, false, err
	}
	o, c, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.Ship(sh)
	})
	if err != nil {
		return nil, false, err
	}
	return o, !c.None(), nil
}

// RecordShipping records WeChat's answer to an upload of the first n shipments of
// the order id (inventory.Order.ShippingResult; errText empty: accepted) through the
// one transition path, and returns the order as it stands. Errors:
// inventory.ErrOrderNotFound, inventory.ErrBusy, or another store error.
func (s *OrderStore) RecordShipping(ctx context.Context, id string, n int, errText string, final bool) (*inventory.Order, error) {
	order, err := s.Lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	o, _, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.ShippingResult(n, errText, final, now), nil
	})
	return o, err
}

type presaleRecord struct {
	ShipAt     string `dynamodbav:"shipAt"`
	Status     string `dynamodbav:"status"`
	DeclaredAt string `dynamodbav:"declaredAt,omitempty"`
	Error      string `dynamodbav:"error,omitempty"`
}

func newPresaleRecord(p *inventory.Presale) *presaleRecord {
	if p == nil {
		return nil
	}
	return &presaleRecord{ShipAt: formatTime(p.ShipAt), Status: string(p.Status), DeclaredAt: formatOptional(p.DeclaredAt), Error: p.Error}
}

func (r *presaleRecord) presale() (*inventory.Presale, error) {
	if r == nil {
		return nil, nil
	}
	p := &inventory.Presale{Status: inventory.ShippingStatus(r.Status), Error: r.Error}
	var err error
	if p.ShipAt, err = parseTime(r.ShipAt); err != nil {
		return nil, err
	}
	p.DeclaredAt, err = optionalTime(r.DeclaredAt)
	return p, err
}

// DeclarePresale records on the order id its presale ship time shipAt as
// inventory.Order.DeclarePresale decides, through the one transition path. It returns
// the order as it stands and whether this call changed it. Errors:
// inventory.ErrOrderNotFound, inventory.ErrNotShippable, an
// *inventory.InvalidRequestError (nothing written), inventory.ErrBusy, or another store
// error.
func (s *OrderStore) DeclarePresale(ctx context.Context, id string, shipAt time.Time) (*inventory.Order, bool, error) {
	order, err := s.Lookup(ctx, id)
	if err != nil {
		return nil, false, err
	}
	o, c, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.DeclarePresale(shipAt)
	})
	if err != nil {
		return nil, false, err
	}
	return o, !c.None(), nil
}

// RecordPresale records WeChat's answer to the order id's presale declaration
// (inventory.Order.PresaleResult; errText empty: accepted) through the one transition
// path, and returns the order as it stands. Errors: inventory.ErrOrderNotFound,
// inventory.ErrBusy, or another store error.
func (s *OrderStore) RecordPresale(ctx context.Context, id, errText string, final bool) (*inventory.Order, error) {
	order, err := s.Lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	o, _, err := transact(ctx, s.store, s.orderSubject(id), order, func(_ context.Context, o *inventory.Order, _ inventory.Retry) (inventory.Change, error) {
		return o.PresaleResult(errText, final, now), nil
	})
	return o, err
}

// ClaimNotice claims the subscribe message key (e.g. "remind#<orderId>") for one
// sender: a PutItem conditioned on attribute_not_exists(pk) (DynamoDB API
// Reference, PutItem, ConditionExpression). It reports true to the one caller that
// created the claim, false when the message was claimed before. A sender that then
// fails to send for a reason worth retrying gives the claim back (DropNotice). Errors:
// inventory.ErrBusy, or another store error.
func (s *OrderStore) ClaimNotice(ctx context.Context, key string) (bool, error) {
	expr, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("pk"))).Build()
	if err != nil {
		return false, fmt.Errorf("build notice claim: %w", err)
	}
	now := s.now()
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.tables.Orders),
		Item: map[string]types.AttributeValue{
			"pk":        &types.AttributeValueMemberS{Value: noticeKey(key)},
			"kind":      &types.AttributeValueMemberS{Value: kindNotice},
			"claimedAt": &types.AttributeValueMemberS{Value: formatTime(now)},
			"ttl":       &types.AttributeValueMemberN{Value: fmt.Sprint(now.Add(noticeTTL).Unix())},
		},
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(),
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, s.storeError("claim notice "+key, err)
	}
	return true, nil
}

// DropNotice gives back the claim on the subscribe message key, so that a retry may
// send it. Errors: inventory.ErrBusy, or another store error.
func (s *OrderStore) DropNotice(ctx context.Context, key string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.tables.Orders), Key: pkOf(noticeKey(key))})
	if err != nil {
		return s.storeError("drop notice "+key, err)
	}
	return nil
}

func noticeKey(key string) string { return "notice#" + key }
