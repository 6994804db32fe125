package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/clock"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/teamchat"
)

// kindPace marks a chat bot's pacing record on the orders table.
const kindPace = "PACE"

// PaceKeyPrefix starts the pk of every chat bot's pacing record ("pace#" + a digest of
// the key): the alert function's policy may read and write only these and the
// quiet-period claims (QuietKeyPrefix).
const PaceKeyPrefix = "pace#"

// paceKeep is how long a pacing record outlives its last write before the table's TTL
// may delete it: as long as SQS keeps a message (14 days), so held alerts outlast any
// outage the alert function's queues would.
const paceKeep = 14 * 24 * time.Hour

// paceAttempts bounds the rounds of UpdatePace: each round that loses the race to
// another writer reads again after a jittered wait.
const paceAttempts = 50

// paceItem is a pacing record as stored: teamchat.Pace with times in Unix
// milliseconds (0: none), the version its conditional writes compare, and the token
// of the write that made it. Empty lists are removed, not stored empty: the embedded
// DynamoDB (tools/third_party/minidyn) stores an empty list attribute wrongly (a PutItem's
// came back as the item's pk), though DynamoDB accepts empty lists.
type paceItem struct {
	Version int64      `dynamodbav:"version"`
	Token   string     `dynamodbav:"token"`
	Sent    []int64    `dynamodbav:"sent,omitempty"`
	Until   int64      `dynamodbav:"until"`
	Held    []heldItem `dynamodbav:"held,omitempty"`
	More    int        `dynamodbav:"more"`
}

type heldItem struct {
	At      int64  `dynamodbav:"at"`
	Level   int    `dynamodbav:"level"`
	Title   string `dynamodbav:"title"`
	Entry   string `dynamodbav:"entry"`
	Runbook string `dynamodbav:"runbook"`
}

func (it paceItem) pace() teamchat.Pace {
	p := teamchat.Pace{More: it.More}
	if it.Until != 0 {
		p.Until = time.UnixMilli(it.Until).UTC()
	}
	for _, ms := range it.Sent {
		p.Sent = append(p.Sent, time.UnixMilli(ms).UTC())
	}
	for _, h := range it.Held {
		p.Held = append(p.Held, teamchat.Held{At: time.UnixMilli(h.At).UTC(), Level: teamchat.Level(h.Level), Title: h.Title, RunbookEntry: h.Entry, Runbook: h.Runbook})
	}
	return p
}

func toPaceItem(p teamchat.Pace, version int64, token string) paceItem {
	it := paceItem{Version: version, Token: token, More: p.More}
	if !p.Until.IsZero() {
		it.Until = p.Until.UnixMilli()
	}
	for _, t := range p.Sent {
		it.Sent = append(it.Sent, t.UnixMilli())
	}
	for _, h := range p.Held {
		it.Held = append(it.Held, heldItem{At: h.At.UnixMilli(), Level: int(h.Level), Title: h.Title, Entry: h.RunbookEntry, Runbook: h.Runbook})
	}
	return it
}

// UpdatePace reads the pacing record of key (one chat bot, e.g. alertChat's
// teamchat.Webhook.ID; a new record is empty), hands it to decide, and, when decide
// reports a change, writes what decide left conditioned on the version it read
// (optimistic locking: DynamoDB Developer Guide, "Condition expressions"; DynamoDB
// applies conditional writes to one item one at a time), so every update applies to
// the record the one before it left and none is lost. A write that lost the race
// reads again and decides again, after a jittered wait, up to paceAttempts rounds; a
// write whose answer was lost and that finds its own token is done. One
// strongly consistent GetItem and one UpdateItem per round on the orders table (item
// "pace#<digest of key>"); the record expires through the table's TTL 14 days after
// its last write. Errors: inventory.ErrBusy (throttled, unavailable, or still losing
// the race after paceAttempts rounds), another store error, or ctx's.
func (s *SessionStore) UpdatePace(ctx context.Context, key string, decide func(*teamchat.Pace) bool) error {
	pk := PaceKeyPrefix + digest(key)
	for round := range paceAttempts {
		if round > 0 {
			if err := clock.Sleep(ctx, jitter(min(round, 3))); err != nil {
				return err
			}
		}
		item, found, err := s.readPace(ctx, pk)
		if err != nil {
			return err
		}
		p := item.pace()
		if !decide(&p) {
			return nil
		}
		written, err := s.writePace(ctx, pk, item.Version, found, p)
		if err != nil || written {
			return err
		}
	}
	return fmt.Errorf("update pace: %w: %d rounds lost to other writers", inventory.ErrBusy, paceAttempts)
}

func (s *SessionStore) readPace(ctx context.Context, pk string) (paceItem, bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.tables.Orders), Key: pkOf(pk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return paceItem{}, false, s.storeError("read pace", err)
	}
	var it paceItem
	if out.Item == nil {
		return it, false, nil
	}
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return paceItem{}, false, fmt.Errorf("read pace: %w", err)
	}
	return it, true, nil
}

// writePace writes p as the version after version, if the stored record is still the
// one read (none when !found). It reports false when another writer came first. One
// UpdateItem (SET every field, REMOVE an empty list), which answers a failed condition
// with the item as it stands (ReturnValuesOnConditionCheckFailure ALL_OLD): the
// embedded DynamoDB returns no item there for a PutItem.
func (s *SessionStore) writePace(ctx context.Context, pk string, version int64, found bool, p teamchat.Pace) (bool, error) {
	random := make([]byte, 16)
	rand.Read(random)
	token := hex.EncodeToString(random)
	it := toPaceItem(p, version+1, token)
	update := expression.Set(expression.Name("kind"), expression.Value(kindPace)).
		Set(expression.Name("version"), expression.Value(it.Version)).
		Set(expression.Name("token"), expression.Value(token)).
		Set(expression.Name("until"), expression.Value(it.Until)).
		Set(expression.Name("more"), expression.Value(it.More)).
		Set(expression.Name("ttl"), expression.Value(s.now().Add(paceKeep).Unix()))
	for name, list := range map[string]any{"sent": it.Sent, "held": it.Held} {
		if reflect.ValueOf(list).Len() == 0 {
			update = update.Remove(expression.Name(name))
		} else {
			update = update.Set(expression.Name(name), expression.Value(list))
		}
	}
	cond := expression.AttributeNotExists(expression.Name("pk"))
	if found {
		cond = expression.Name("version").Equal(expression.Value(version))
	}
	expr, err := expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
	if err != nil {
		return false, fmt.Errorf("write pace: %w", err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.tables.Orders), Key: pkOf(pk), UpdateExpression: expr.Update(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		var held struct {
			Token string `dynamodbav:"token"`
		}
		return attributevalue.UnmarshalMap(ccf.Item, &held) == nil && held.Token == token, nil
	case err != nil:
		return false, s.storeError("write pace", err)
	}
	return true, nil
}
