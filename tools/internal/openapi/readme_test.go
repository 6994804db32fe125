package openapi_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// curlCommands returns every curl command of the README, in code blocks or inline code,
// with backslash-continued lines joined.
func curlCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(string(data), " ")
	out := regexp.MustCompile("curl [^`\n]*").FindAllString(text, -1)
	if len(out) < 10 {
		t.Fatalf("found %d curl commands in the README, want its walkthroughs", len(out))
	}
	for _, c := range out {
		if strings.Contains(c, "127.0.0.1:3000") {
			t.Errorf("names the default port instead of $API (the ready line's api=): %s", c)
		}
	}
	return out
}

// Every README curl that sends a body says it is JSON, as OpenAPI tools read the
// contract (a validating proxy refuses a body of another media type), and every one to
// a merchant route names the local operator (the local-only localOperator scheme).
func TestREADME_CurlsSendWhatTheDocumentRequires(t *testing.T) {
	for _, c := range curlCommands(t) {
		if regexp.MustCompile(` (-d|--data[a-z-]*) `).MatchString(c) && !strings.Contains(c, "-H 'Content-Type: application/json'") {
			t.Errorf("sends a body without Content-Type: application/json: %s", c)
		}
		if strings.Contains(c, "$API/admin/") && !strings.Contains(c, "-H 'X-Operator-Id: ") {
			t.Errorf("calls a merchant route without X-Operator-Id: %s", c)
		}
	}
}
