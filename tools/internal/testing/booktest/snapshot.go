package booktest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/dynamo"
)

// Snapshot renders every item of the three tables (strongly consistent scans), one
// line per item sorted, so that a test can show a refused request changed nothing by
// comparing a snapshot before and after it.
func Snapshot(t testing.TB, db *dynamodb.Client, tables dynamo.Tables) string {
	t.Helper()
	var out []string
	for _, table := range []string{tables.SKUs, tables.Orders, tables.StockLog} {
		items, err := Scan(context.Background(), db, table)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		for _, it := range items {
			out = append(out, table+" "+fmt.Sprint(it))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
