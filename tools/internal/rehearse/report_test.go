package rehearse_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/stockguard/stockguard/tools/internal/rehearse"
)

// TestReport_ConfigKeysAreCamelCase writes a report as JSON and checks that every key
// of its config block is camelCase, like the rest of the report, not a Go field name.
func TestReport_ConfigKeysAreCamelCase(t *testing.T) {
	var b bytes.Buffer
	if err := (&rehearse.Report{}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Config) < 20 {
		t.Fatalf("config has %d keys: %v; want every setting echoed", len(doc.Config), doc.Config)
	}
	for key := range doc.Config {
		if r := []rune(key); !unicode.IsLower(r[0]) || bytes.ContainsAny([]byte(key), "_- ") {
			t.Errorf("config key %q is not camelCase", key)
		}
	}
}

// The report echoes the provisioned and reserved concurrency the sale ran with
// (-warm, -warm-close, -reserved): in the table's lambda line and beside the other
// settings in the JSON.
func TestReport_EchoesWarmAndReservedConcurrency(t *testing.T) {
	r := &rehearse.Report{Config: rehearse.Settings{Warm: 3500, WarmClose: 6750,
		Reserved: map[string]int{"PayCallbackFunction": 675, "CloseOrderFunction": 6839}}}
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	want := "3500 createOrder and 6750 closeOrder environments warm at the start (-warm, -warm-close); reserved concurrency CloseOrderFunction=6839, PayCallbackFunction=675 (-reserved"
	if !strings.Contains(table.String(), want) {
		t.Errorf("table:\n%s\nwant a line with %q", table.String(), want)
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Config struct {
			Warm, WarmClose int
			Reserved        map[string]int
		} `json:"config"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.Config; c.Warm != 3500 || c.WarmClose != 6750 || c.Reserved["CloseOrderFunction"] != 6839 || c.Reserved["PayCallbackFunction"] != 675 {
		t.Errorf("config %+v; want warm 3500, warmClose 6750, reserved CloseOrderFunction 6839 and PayCallbackFunction 675", c)
	}
	table.Reset()
	if err := (&rehearse.Report{}).WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if want := "reserved concurrency as the template reserves it (no -reserved)"; !strings.Contains(table.String(), want) {
		t.Errorf("table without -reserved:\n%s\nwant %q", table.String(), want)
	}
}

// TestReport_SaysHowKeysArePlaced checks the table's partitions line: the partitions
// of each table, the keys isolated and the shared partitions' refusals while keys
// share them, and every key alone when they do not.
func TestReport_SaysHowKeysArePlaced(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    rehearse.Report
		want string
	}{
		{"shared", rehearse.Report{Config: rehearse.Settings{IsolateAfterSeconds: 300}, Partitions: map[string]int{"SkusTable": 267, "StockLogTable.LedgerByShard": 75},
			IsolatedKeys: 2, SharedPartitionThrottles: 41}, "SkusTable 267, StockLogTable.LedgerByShard 75; keys hashed onto them, a key isolated after 300 s hot: 2 isolated, 41 refusals on a shared partition"},
		{"alone", rehearse.Report{}, "every key on a partition of its own"},
		{"isolated at once", rehearse.Report{Config: rehearse.Settings{IsolateAfterSeconds: 0.001}, Partitions: map[string]int{"SkusTable": 4}},
			"SkusTable 4; keys hashed onto them, a key isolated after 0.001 s hot: 0 isolated, 0 refusals on a shared partition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.r.WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(b.String(), "\n") {
				if rest, ok := strings.CutPrefix(line, "partitions "); ok {
					if got := strings.TrimSpace(rest); got != tc.want {
						t.Errorf("partitions line %q, want %q", got, tc.want)
					}
					return
				}
			}
			t.Errorf("no partitions line:\n%s", b.String())
		})
	}
}
