package dynamo

import (
	"hash/fnv"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stockguard/stockguard/internal/inventory"
)

// Keys, item kinds and the encodings every entity's records share.

// Item kinds, stored in the "kind" attribute so a scan can tell items apart.
const (
	kindSKU   = "SKU"
	kindShard = "SHARD"
	kindOrder = "ORDER"
	kindLimit = "LIMIT"
	kindExtra = "EXTRA_PAYMENT"                   // a second payment of a paid order, refunded (see SecondPayment)
	kindMark  = string(inventory.StatusRefunding) // a refund under way (see refundingRecord)
)

func skuKey(sku string) string { return sku }

func shardKey(sku string, n int) string { return sku + "#shard#" + strconv.Itoa(n) }

func limitKey(sku, user string) string { return "limit#" + sku + "#" + user }

func ledgerKey(ref string, op inventory.Op, sku string) string {
	return ref + "#" + string(op) + "#" + sku
}

func pkOf(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}
}

// bucket spreads keys over n index partitions: FNV-1a of key, modulo n.
func bucket(key string, n int) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return strconv.Itoa(int(h.Sum32() % uint32(n)))
}

const timeLayout = time.RFC3339Nano

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

// formatOptional is formatTime of *t, "" for nil.
func formatOptional(t *time.Time) string {
	if t == nil {
		return ""
	}
	return formatTime(*t)
}

func optionalTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := parseTime(s)
	return &t, err
}

func shardsToRecord(m map[int]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[strconv.Itoa(k)] = v
	}
	return out
}

func shardsFromRecord(m map[string]int) (map[int]int, error) {
	out := make(map[int]int, len(m))
	for k, v := range m {
		n, err := strconv.Atoi(k)
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// unixMilli is t in Unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMilli is the UTC time of Unix milliseconds ms, the zero time for 0.
func fromMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
