package openapi_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/openapi"
)

// The contract the repository documents for people (docs/contract.md) names every
// route of the machine-readable document, and every error code it answers.
func TestContractDocument_NamesEveryRouteAndCode(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "docs", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	contract := string(data)
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	routes := 0
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			routes++
			key := regexp.QuoteMeta(method + " " + path)
			if !regexp.MustCompile("(?m)(^## |`)" + key + "($|[`?])").MatchString(contract) {
				t.Errorf("docs/contract.md does not name %s %s (as a heading or in code)", method, path)
			}
		}
	}
	codes := map[string]bool{}
	for _, m := range regexp.MustCompile(`code: \{(?:enum: \[([A-Z_, ]+)\]|const: ([A-Z_]+))\}`).FindAllStringSubmatch(string(openapi.YAML()), -1) {
		for _, c := range regexp.MustCompile(`[A-Z_]+`).FindAllString(m[1]+" "+m[2], -1) {
			codes[c] = true
		}
	}
	if routes < 20 || len(codes) < 15 {
		t.Fatalf("read %d routes and %d codes from the document, want all of them", routes, len(codes))
	}
	for c := range codes {
		if !regexp.MustCompile(`\b` + c + `\b`).MatchString(contract) {
			t.Errorf("docs/contract.md does not name the error code %s", c)
		}
	}
}
