package stockctl_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// skuRule is how a refusal names the API's SKU id rule (inventory.CheckSKUID).
const skuRule = `1-64 characters of [0-9A-Za-z_.:-], other than "." and ".."`

// Every command that takes a SKU id refuses one the API would refuse before sending
// anything: a usage error naming the rule (a seed file's entry: an error naming the
// entry), where the API would answer 404 (".", "..": the URL resolves them away) or
// 400.
func TestRun_RefusesASKUIDTheAPIRefusesWithoutSendingIt(t *testing.T) {
	srv, paths := fakeAPI(t)
	const order = "0123456789abcdef"
	for _, id := range []string{".", "..", "a/b", "a b", "cup-01?x", "é", strings.Repeat("a", 65)} {
		seedFile := filepath.Join(t.TempDir(), "seed.json")
		if err := os.WriteFile(seedFile, []byte(`[{"skuId":"ok-1","name":"ok","price":1},{"skuId":"`+id+`","name":"Cup","price":1}]`), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			args []string
			exit int
		}{
			{[]string{"get", id}, stockctl.ExitUsage},
			{[]string{"ledger", id, "--after", "x"}, stockctl.ExitUsage},
			{[]string{"adjust", id, "--id", "restock-1", "--delta", "1", "--reason", "delivery"}, stockctl.ExitUsage},
			{[]string{"reshard", id, "--shards", "2"}, stockctl.ExitUsage},
			{[]string{"on-sale", id}, stockctl.ExitUsage},
			{[]string{"off-sale", id}, stockctl.ExitUsage},
			{[]string{"queue", id, "--on"}, stockctl.ExitUsage},
			{[]string{"create", "--sku", id, "--name", "Cup", "--price", "100"}, stockctl.ExitUsage},
			{[]string{"refund", order, "--reason", "broken", "--line", id + ":1"}, stockctl.ExitUsage},
			{[]string{"ship", order, "--shipment-id", "p1", "--type", "virtual", "--item", id + ":1"}, stockctl.ExitUsage},
			{[]string{"plan", "--sku", id + ":10:100"}, stockctl.ExitUsage},
			{[]string{"seed", seedFile}, stockctl.ExitError},
		} {
			var loaded []stockctl.ConfigOptions
			code, out, errOut := run(append([]string{"--endpoint", srv.URL}, c.args...), nil, &loaded)
			if code != c.exit || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, skuRule) {
				t.Errorf("%q: exit %d, out %q, err %q; want exit %d naming the SKU id rule", c.args, code, out, errOut, c.exit)
			}
		}
	}
	if len(*paths) != 0 {
		t.Errorf("SKU ids the API refuses were sent: %q", *paths)
	}
	if code, _, errOut := run([]string{"--endpoint", srv.URL, "get", "a.b:c_d-9"}, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK {
		t.Errorf("get of a valid SKU id: exit %d, err %q", code, errOut)
	}
}

// recordingAPI answers every request with an object holding the SKU's and the order's
// id it names (echoIDs) and records the bodies sent.
func recordingAPI(t *testing.T) (*httptest.Server, *[]string) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		w.Write(echoIDs(r, b))
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

// A SKU id may hold ':' (its rule allows it): --line, --item and --sku split their
// value at the last ':' (for --sku, the last two), so such an id is sent whole.
func TestRun_TakesASKUIDWithColonsInSKUQuantityFlags(t *testing.T) {
	srv, bodies := recordingAPI(t)
	const order = "0123456789abcdef"
	for _, args := range [][]string{
		{"refund", order, "--reason", "broken", "--line", "a:b:1"},
		{"ship", order, "--shipment-id", "p1", "--type", "virtual", "--item", "a:b:1"},
	} {
		*bodies = nil
		code, _, errOut := run(append([]string{"--endpoint", srv.URL}, args...), nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitOK || len(*bodies) != 1 || !strings.Contains((*bodies)[0], `{"qty":1,"skuId":"a:b"}`) {
			t.Errorf("%q: exit %d, err %q, sent %q; want SKU a:b, 1 unit", args, code, errOut, *bodies)
		}
	}
	code, out, errOut := run([]string{"-o", "json", "plan", "--sku", "a:b:10:100"}, nil, new([]stockctl.ConfigOptions))
	if code != stockctl.ExitOK || !strings.Contains(out, `"a:b"`) {
		t.Errorf("plan --sku a:b:10:100: exit %d, err %q, out %.300s", code, errOut, out)
	}
}

// A seed entry's value of the wrong type is named by its JSON field and what it wants,
// also for the waiting-room fields, and nothing is sent.
func TestRun_SeedNamesTheJSONFieldOfAValueOfTheWrongType(t *testing.T) {
	srv, paths := fakeAPI(t)
	for entry, want := range map[string]string{
		`{"skuId":"a","name":"A","price":1,"riskThreshold":"3"}`: "entry 2: riskThreshold must be an integer (got string)",
		`{"skuId":"a","name":"A","price":1,"queue":1}`:           "entry 2: queue must be true or false (got number)",
		`{"skuId":"a","name":"A","price":"1"}`:                   "entry 2: price must be an integer (got string)",
		`{"skuId":"a","name":7,"price":1}`:                       "entry 2: name must be a string (got number)",
	} {
		seedFile := filepath.Join(t.TempDir(), "seed.json")
		if err := os.WriteFile(seedFile, []byte(`[{"skuId":"ok-1","name":"ok","price":1},`+entry+`]`), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run([]string{"--endpoint", srv.URL, "seed", seedFile}, nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitError || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("seed of %s: exit %d, out %q, err %q; want exit %d with %q", entry, code, out, errOut, stockctl.ExitError, want)
		}
	}
	if len(*paths) != 0 {
		t.Errorf("a seed file with a malformed entry sent %q", *paths)
	}
}

// A seed file that cannot be a seed is refused before anything is sent, in words,
// with its name made printable: a missing file, a directory, one larger than 16 MiB
// (/dev/zero used to be read until memory ran out); a name's escape sequences never
// reach the terminal.
func TestRun_ASeedFileIsReadBoundedAndNamedPrintably(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, 16<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "x\x1b[2J\x1b]0;pwn\x07.json"), "stockctl: seed " + dir + "/x [2J ]0;pwn .json: no such file\n"},
		{dir, "stockctl: seed " + dir + ": cannot read it (a directory?)\n"},
		{big, "stockctl: seed " + big + ": larger than 16 MiB: not a seed file\n"},
	} {
		sent := false
		rt := roundTripFunc(func(*http.Request) (*http.Response, error) { sent = true; return nil, io.EOF })
		code, out, errOut := runWith([]string{"--endpoint", "http://127.0.0.1:3000", "seed", c.file}, "", rt)
		if code != stockctl.ExitError || out != "" || errOut != c.want || sent {
			t.Errorf("seed %q: exit %d, out %q, err %q, sent %v; want exit %d, %q, nothing sent", c.file, code, out, errOut, sent, stockctl.ExitError, c.want)
		}
	}
}

// A seed file that lists no SKU ([], or null) is refused as a seed file that is not
// one (exit 1, saying it lists none), not taken in silence: a wrong or truncated file
// is likelier than a seed of nothing.
func TestRun_RefusesASeedFileOfNoSKUs(t *testing.T) {
	srv, paths := fakeAPI(t)
	for _, content := range []string{"[]", " [ ]\n", "null"} {
		seedFile := filepath.Join(t.TempDir(), "seed.json")
		if err := os.WriteFile(seedFile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run([]string{"--endpoint", srv.URL, "seed", seedFile}, nil, new([]stockctl.ConfigOptions))
		want := "stockctl: seed " + seedFile + `: it lists no SKUs; the seed file must be a JSON array of SKUs like [{"skuId":"cup-01"`
		if code != stockctl.ExitError || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("seed of %q: exit %d, out %q, err %q; want exit 1 and %q…", content, code, out, errOut, want)
		}
	}
	if len(*paths) != 0 {
		t.Errorf("a seed file of no SKUs sent %q", *paths)
	}
}

// A seed file listing one SKU twice is refused before anything is sent, as its other
// malformed entries are (exit 1), naming the SKU and both entries: the server found it
// only after creating the first (a 409 SKU_EXISTS half way), or not at all when the
// two were equal.
func TestRun_RefusesASeedFileListingASKUTwice(t *testing.T) {
	srv, paths := fakeAPI(t)
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	seedText := `[{"skuId":"cup-01","name":"Cup","price":1},{"skuId":"mug-01","name":"Mug","price":1},{"skuId":"cup-01","name":"Cup","price":1}]`
	if err := os.WriteFile(seedFile, []byte(seedText), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run([]string{"--endpoint", srv.URL, "seed", seedFile}, nil, new([]stockctl.ConfigOptions))
	want := "stockctl: seed " + seedFile + ": entries 1 and 3 both create SKU cup-01: a seed file lists each SKU once\n"
	if code != stockctl.ExitError || out != "" || errOut != want {
		t.Errorf("exit %d, out %q, err %q; want exit 1 and %q", code, out, errOut, want)
	}
	if len(*paths) != 0 {
		t.Errorf("a seed file listing a SKU twice sent %q", *paths)
	}
}

// "." and ".." are no id of any kind: a URL resolves them away (POST
// /admin/orders/o1/refunds/../settle is POST /admin/orders/o1/settle), so every
// command refuses them where an id goes into the path, exit 2 naming the id, nothing
// sent, as SKU ids already were.
func TestRun_RefusesDotSegmentsForEveryIDWithoutSendingThem(t *testing.T) {
	srv, paths := fakeAPI(t)
	for _, id := range []string{".", ".."} {
		for _, args := range [][]string{
			{"orders", id},
			{"refund", id, "--reason", "r"},
			{"refund-retry", id, "r1", "--reason", "r"},
			{"refund-retry", "o1", id, "--reason", "r"},
			{"refund-settled", "o1", id, "--reason", "r"},
			{"aftersales", "approve", id, "as-1"},
			{"aftersales", "reject", "o1", id, "--reason", "r"},
			{"ship", id, "--shipment-id", "p1", "--type", "virtual"},
		} {
			code, out, errOut := run(append([]string{"--endpoint", srv.URL}, args...), nil, new([]stockctl.ConfigOptions))
			if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `"`+id+`"`) {
				t.Errorf("%q: exit %d, out %q, err %q; want exit 2 naming %q", args, code, out, errOut, id)
			}
		}
	}
	if len(*paths) != 0 {
		t.Errorf("dot segments were sent: %q", *paths)
	}
	if code, _, errOut := run([]string{"--endpoint", srv.URL, "refund-settled", "o1", "..r1", "--reason", "r"}, nil, new([]stockctl.ConfigOptions)); code != stockctl.ExitOK {
		t.Errorf("an id holding dots: exit %d, err %q; want it sent", code, errOut)
	}
}

// A seed entry that gives a field null, or names a key twice (JSON decoding would keep
// the last, so {"skuId":"a","skuId":"b"} would create b), is refused as the other
// malformed entries are: exit 1 naming the entry and the field, nothing sent. A number
// past its field's integer is said to be out of range, with the bound.
func TestRun_SeedRefusesNullFieldsDuplicateKeysAndNumbersOutOfRange(t *testing.T) {
	srv, paths := fakeAPI(t)
	for entry, want := range map[string]string{
		`{"skuId":"a","name":"A","price":null}`:                               `entry 2: price is null`,
		`{"skuId":"a","name":null,"price":1}`:                                 `entry 2: name is null`,
		`{"skuId":"a","name":"A","price":1,"queue":null}`:                     `entry 2: queue is null`,
		`{"skuId":"a","skuId":"b","name":"A","price":1}`:                      `entry 2: "skuId" is given twice`,
		`{"skuId":"a","name":"A","price":1,"SKUID":"b"}`:                      `entry 2: "SKUID" is given twice`,
		`{"skuId":"a","name":"A","price":1,"x":{"k":1,"k":2}}`:                `entry 2: "k" is given twice`,
		`{"skuId":"a","name":"A","price":12345678901234567890123}`:            "entry 2: price is out of range: at most 9223372036854775807",
		`{"skuId":"a","name":"A","price":1,"stock":-12345678901234567890123}`: "entry 2: stock is out of range: at least -9223372036854775808",
	} {
		seedFile := filepath.Join(t.TempDir(), "seed.json")
		if err := os.WriteFile(seedFile, []byte(`[{"skuId":"ok-1","name":"ok","price":1},`+entry+`]`), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run([]string{"--endpoint", srv.URL, "seed", seedFile}, nil, new([]stockctl.ConfigOptions))
		if code != stockctl.ExitError || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
			t.Errorf("seed of %s: exit %d, out %q, err %q; want exit %d with %q", entry, code, out, errOut, stockctl.ExitError, want)
		}
	}
	if len(*paths) != 0 {
		t.Errorf("a seed file with a malformed entry sent %q", *paths)
	}
}
