package rehearse_test

import (
	"bytes"
	"encoding/json"
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
