package flashsale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func ms2d(ms ...int) []time.Duration {
	d := make([]time.Duration, len(ms))
	for i, m := range ms {
		d[i] = time.Duration(m) * time.Millisecond
	}
	return d
}

func TestNearestRank_PicksObservedSampleAtCeilRank(t *testing.T) {
	ten := ms2d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	tests := []struct {
		name   string
		sorted []time.Duration
		pct    int
		want   time.Duration
	}{
		{"empty is zero", nil, 50, 0},
		{"single sample is every percentile", ms2d(7), 1, 7 * time.Millisecond},
		{"p50 of ten is the 5th", ten, 50, 5 * time.Millisecond},
		{"p90 of ten is the 9th", ten, 90, 9 * time.Millisecond},
		{"p99 of ten rounds up to the 10th", ten, 99, 10 * time.Millisecond},
		{"p100 is the max", ten, 100, 10 * time.Millisecond},
		{"p1 of ten is the 1st", ten, 1, 1 * time.Millisecond},
		{"p50 of two is the lower", ms2d(1, 9), 50, 1 * time.Millisecond},
		{"p51 of two is the upper", ms2d(1, 9), 51, 9 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nearestRank(tt.sorted, tt.pct); got != tt.want {
				t.Errorf("nearestRank(%v, %d) = %v, want %v", tt.sorted, tt.pct, got, tt.want)
			}
		})
	}
}

func TestSummarise_SortsAndReportsMilliseconds(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- { // 100 ms .. 1 ms, unsorted on purpose
		samples = append(samples, time.Duration(i)*time.Millisecond)
	}
	samples = append(samples, 1500*time.Microsecond) // 101 samples
	got := summarise(samples)
	want := Latency{Samples: 101, P50Ms: 50, P90Ms: 90, P99Ms: 99, MaxMs: 100}
	if got != want {
		t.Errorf("summarise = %+v, want %+v", got, want)
	}
	if samples[0] != 100*time.Millisecond {
		t.Errorf("summarise reordered its input")
	}
	if got := summarise(nil); got != (Latency{}) {
		t.Errorf("summarise(nil) = %+v, want zero", got)
	}
}

func TestCountAnswers_GroupsByStatusAndCode(t *testing.T) {
	final := func(status int, code string) outcome {
		return outcome{attempts: []attempt{{status: 503, code: "BUSY"}, {status: status, code: code}}}
	}
	outcomes := []outcome{
		final(409, "STOCK_OUT"), final(201, ""), final(409, "LIMIT_EXCEEDED"),
		final(201, ""), final(0, ""), final(409, "STOCK_OUT"), final(503, "BUSY"),
	}
	want := []Answer{
		{Status: 0, Count: 1}, {Status: 201, Count: 2}, {Status: 409, Code: "LIMIT_EXCEEDED", Count: 1},
		{Status: 409, Code: "STOCK_OUT", Count: 2}, {Status: 503, Code: "BUSY", Count: 1},
	}
	got := countAnswers(outcomes)
	if len(got) != len(want) {
		t.Fatalf("countAnswers = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestClassify_SortsAnswersByWhatTheySayAboutStock(t *testing.T) {
	tests := []struct {
		status int
		code   string
		want   kind
	}{
		{201, "", kindOrder},
		{200, "", kindOrder},
		{409, "STOCK_OUT", kindStockOut},
		{409, "LIMIT_EXCEEDED", kindWithdrawn},
		{429, "RATE_LIMITED", kindWithdrawn},
		{503, "BUSY", kindWithdrawn},
		{503, "", kindAmbiguous},
		{500, "INTERNAL", kindAmbiguous},
		{0, "", kindAmbiguous},
		{409, "SKU_OFF_SALE", kindUnexpected},
		{401, "UNAUTHORIZED", kindUnexpected},
		{400, "INVALID_REQUEST", kindUnexpected},
	}
	for _, tt := range tests {
		if got := classify(tt.status, tt.code); got != tt.want {
			t.Errorf("classify(%d, %q) = %d, want %d", tt.status, tt.code, got, tt.want)
		}
	}
}

func TestConfigValidate_RejectsWhatCannotBeRun(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		ok     bool
	}{
		{"defaults", func(*Config) {}, true},
		{"tokens without prefix", func(c *Config) { c.UserPrefix, c.Tokens = "", []string{"a"} }, true},
		{"no scheme", func(c *Config) { c.BaseURL = "127.0.0.1:3000" }, false},
		{"ftp", func(c *Config) { c.BaseURL = "ftp://host" }, false},
		{"bad sku", func(c *Config) { c.SKU = "cup 01" }, false},
		{"zero buyers", func(c *Config) { c.Buyers = 0 }, false},
		{"zero concurrency", func(c *Config) { c.Concurrency = 0 }, false},
		{"zero qty", func(c *Config) { c.Qty = 0 }, false},
		{"qty too big", func(c *Config) { c.Qty = 10000 }, false},
		{"zero timeout", func(c *Config) { c.Timeout = 0 }, false},
		{"no identity", func(c *Config) { c.UserPrefix = "" }, false},
		{"token with space", func(c *Config) { c.Tokens = []string{"a b"} }, false},
		{"ratio 0", func(c *Config) { c.PayRatio = 0 }, true},
		{"ratio 1", func(c *Config) { c.PayRatio = 1 }, true},
		{"ratio below 0", func(c *Config) { c.PayRatio = -0.1 }, false},
		{"ratio above 1", func(c *Config) { c.PayRatio = 1.01 }, false},
		{"ratio NaN", func(c *Config) { c.PayRatio = math.NaN() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.change(&c)
			err := c.Validate()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Errorf("Validate() = %v, want ok=%v (or ErrInvalidConfig)", err, tt.ok)
			}
		})
	}
}

func TestReadTokens_OnePerLine(t *testing.T) {
	got, err := ReadTokens(strings.NewReader("  tok-a\n\ntok-b\r\n  \n"))
	if err != nil || strings.Join(got, ",") != "tok-a,tok-b" {
		t.Errorf("ReadTokens = %q, %v; want [tok-a tok-b]", got, err)
	}
	if _, err := ReadTokens(strings.NewReader("\n \n")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ReadTokens(blank) error = %v, want ErrInvalidConfig", err)
	}
}

func TestConfigBuyer_AssignsIdentities(t *testing.T) {
	c := DefaultConfig()
	c.Buyers = 5
	if id := c.buyer(3); id.userID != "buyer-3" || id.token != "" {
		t.Errorf("buyer(3) = %+v, want X-User-Id buyer-3", id)
	}
	c.Tokens = []string{"a", "b"}
	if id := c.buyer(3); id.token != "b" || id.userID != "" {
		t.Errorf("buyer(3) with 2 tokens = %+v, want token b", id)
	}
	if n := c.identities(); n != 2 {
		t.Errorf("identities with 2 tokens = %d, want 2", n)
	}
	c.SameUser = true
	if n := c.identities(); n != 1 {
		t.Errorf("identities with SameUser = %d, want 1", n)
	}
}

// verdicts maps check names to the expected result; checks not named must not FAIL.
type verdicts map[string]Result

func TestRun_VerifiesAgainstStandIn(t *testing.T) {
	tests := []struct {
		name    string
		stock   int
		limit   int
		fault   fault
		cfg     func(*Config)
		want    verdicts
		created int
		wantErr error
	}{
		{
			name: "correct server, demand above stock sells out exactly", stock: 40,
			want: verdicts{"created orders": ResultPass, "nothing oversold": ResultPass, "sold out": ResultPass,
				"no false STOCK_OUT": ResultPass, "no 5xx except BUSY": ResultPass, "expected answers": ResultPass, "orders read back": ResultPass},
			created: 40,
		},
		{
			name: "correct server, demand below stock does not sell out", stock: 500,
			want:    verdicts{"created orders": ResultPass, "sold out": ResultPass, "no false STOCK_OUT": ResultPass},
			created: 120,
		},
		{
			name: "correct server, qty 3 leaves a remainder", stock: 40, cfg: func(c *Config) { c.Qty = 3 },
			want:    verdicts{"created orders": ResultPass, "sold out": ResultPass, "nothing oversold": ResultPass},
			created: 13,
		},
		{
			name: "correct server, nothing in stock", stock: 0,
			want:    verdicts{"created orders": ResultPass, "sold out": ResultPass, "no false STOCK_OUT": ResultPass},
			created: 0,
		},
		{
			name: "same user meets the per-user limit", stock: 40, limit: 2, cfg: func(c *Config) { c.SameUser = true },
			want:    verdicts{"created orders": ResultPass, "sold out": ResultSkip, "expected answers": ResultPass},
			created: 2,
		},
		{
			name: "BUSY is counted, not an error", stock: 40, fault: fault{busyEvery: 4},
			want:    verdicts{"created orders": ResultPass, "no 5xx except BUSY": ResultPass, "sold out": ResultPass},
			created: 40,
		},
		{
			name: "BUSY retried with the same key", stock: 200, fault: fault{busyFirst: true},
			cfg:     func(c *Config) { c.Idempotency = true },
			want:    verdicts{"created orders": ResultPass, "no 5xx except BUSY": ResultPass},
			created: 120,
		},
		{
			name: "lost answers converge through idempotent retries", stock: 40, fault: fault{hangFirst: true},
			// 1 s: an answer that is not held back must come within it even beside the
			// whole suite under -race (at 100 ms, answers on their way timed out too).
			cfg:     func(c *Config) { c.Idempotency, c.Timeout = true, time.Second },
			want:    verdicts{"created orders": ResultPass, "nothing oversold": ResultPass, "expected answers": ResultPass, "orders read back": ResultPass},
			created: 40,
		},
		{
			name: "overselling is caught", stock: 40, fault: fault{oversell: 3},
			want:    verdicts{"created orders": ResultFail, "nothing oversold": ResultFail},
			created: 43, wantErr: ErrVerificationFailed,
		},
		{
			name: "false STOCK_OUT with stock left over is caught", stock: 500, fault: fault{stockOutEvery: 5},
			want:    verdicts{"created orders": ResultFail, "no false STOCK_OUT": ResultFail},
			created: 96, wantErr: ErrVerificationFailed,
		},
		{
			name: "false STOCK_OUT masked by later buyers is caught by ordering", stock: 5, fault: fault{stockOutEvery: 3},
			cfg:     func(c *Config) { c.Buyers, c.Concurrency = 10, 1 },
			want:    verdicts{"created orders": ResultPass, "sold out": ResultPass, "no false STOCK_OUT": ResultFail},
			created: 5, wantErr: ErrVerificationFailed,
		},
		{
			name: "books that disagree with the orders are caught", stock: 40, fault: fault{staleSKU: true},
			want:    verdicts{"nothing oversold": ResultFail, "sold out": ResultFail, "no false STOCK_OUT": ResultFail},
			created: 40, wantErr: ErrVerificationFailed,
		},
		{
			name: "orders that cannot be read back are caught", stock: 40, fault: fault{forgetOrders: true},
			want:    verdicts{"orders read back": ResultFail, "nothing oversold": ResultPass},
			created: 40, wantErr: ErrVerificationFailed,
		},
		{
			name: "500 after reserving leaves outcomes unknown", stock: 40, fault: fault{failEvery: 10},
			want: verdicts{"created orders": ResultSkip, "nothing oversold": ResultSkip,
				"no 5xx except BUSY": ResultFail, "expected answers": ResultFail},
			created: 36, wantErr: ErrVerificationFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each run has its own stand-in server
			_, srv := newStandIn(t, "cup-01", tt.stock, tt.limit, tt.fault)
			cfg := testConfig(srv)
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			var out bytes.Buffer
			rep, err := Run(context.Background(), cfg, &out)
			if !errors.Is(err, tt.wantErr) || (err != nil && tt.wantErr == nil) {
				t.Fatalf("Run error = %v, want %v\n%s", err, tt.wantErr, out.String())
			}
			if rep.Created != tt.created {
				t.Errorf("created = %d, want %d", rep.Created, tt.created)
			}
			assertVerdicts(t, rep, tt.want)
			if t.Failed() {
				t.Logf("report:\n%s", out.String())
			}
		})
	}
}

func testConfig(srv *httptest.Server) Config {
	cfg := DefaultConfig()
	cfg.BaseURL = srv.URL
	cfg.Buyers, cfg.Concurrency = 120, 16
	cfg.Client = srv.Client()
	return cfg
}

func assertVerdicts(t *testing.T, rep *Report, want verdicts) {
	t.Helper()
	seen := make(map[string]bool)
	for _, c := range rep.Checks {
		seen[c.Name] = true
		w, named := want[c.Name]
		switch {
		case named && c.Result != w:
			t.Errorf("%s: %s (%s), want %s", c.Name, c.Result, c.Detail, w)
		case !named && c.Result == ResultFail:
			t.Errorf("%s: unexpected FAIL: %s", c.Name, c.Detail)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no check named %q", name)
		}
	}
}

func TestRun_ReportsCountsAndThroughput(t *testing.T) {
	t.Parallel() // its own stand-in server
	_, srv := newStandIn(t, "cup-01", 30, 0, fault{busyEvery: 10})
	cfg := testConfig(srv)
	cfg.Buyers = 100
	var out bytes.Buffer
	rep, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	counts := make(map[string]int)
	for _, a := range rep.Answers {
		counts[answerLabel(a)] = a.Count
	}
	if counts["201"] != 30 || counts["503 BUSY"] != 10 || counts["409 STOCK_OUT"] != 60 {
		t.Errorf("answers = %+v, want 201 x30, 503 BUSY x10, 409 STOCK_OUT x60", rep.Answers)
	}
	if rep.Busy != 10 || rep.Requests != 100 || rep.Retries != 0 || rep.Reserved != 30 || rep.Demand != 100 {
		t.Errorf("busy %d requests %d retries %d reserved %d demand %d, want 10 100 0 30 100",
			rep.Busy, rep.Requests, rep.Retries, rep.Reserved, rep.Demand)
	}
	if rep.StartAvailable != 30 || rep.EndAvailable != 0 || rep.EndStatus != "SOLD_OUT" {
		t.Errorf("stock %d → %d %s, want 30 → 0 SOLD_OUT", rep.StartAvailable, rep.EndAvailable, rep.EndStatus)
	}
	if rep.Latency.Samples != 100 || rep.Latency.MaxMs < rep.Latency.P99Ms || rep.Latency.P99Ms < rep.Latency.P50Ms {
		t.Errorf("latency %+v: want 100 samples, p50 <= p99 <= max", rep.Latency)
	}
	if rep.OrdersPerSec <= 0 || rep.RequestsPerSec < rep.OrdersPerSec {
		t.Errorf("orders/s %.1f requests/s %.1f: want 0 < orders/s <= requests/s", rep.OrdersPerSec, rep.RequestsPerSec)
	}
	for _, want := range []string{"503 BUSY", "PASS  created orders", "result: PASS", "latency ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRun_WritesJSON(t *testing.T) {
	t.Parallel() // its own stand-in server
	_, srv := newStandIn(t, "cup-01", 10, 0, fault{})
	cfg := testConfig(srv)
	cfg.JSON = true
	var out bytes.Buffer
	if _, err := Run(context.Background(), cfg, &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got Report
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("decode JSON report: %v\n%s", err, out.String())
	}
	if !got.Passed || got.Created != 10 || len(got.Checks) != 7 {
		t.Errorf("JSON report passed=%v created=%d checks=%d, want true 10 7", got.Passed, got.Created, len(got.Checks))
	}
}

func TestRun_SendsBearerTokensInsteadOfUserIDs(t *testing.T) {
	t.Parallel() // its own stand-in server
	s, srv := newStandIn(t, "cup-01", 100, 0, fault{})
	cfg := testConfig(srv)
	cfg.Buyers, cfg.Tokens = 30, []string{"t1", "t2", "t3"}
	var out bytes.Buffer
	rep, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if n := s.seenUsers(); n != 3 || rep.Identities != 3 {
		t.Errorf("server saw %d identities, report says %d; want 3", n, rep.Identities)
	}
	if !strings.Contains(out.String(), "distinct identities") {
		t.Errorf("report does not warn about fewer identities than buyers:\n%s", out.String())
	}
}

func TestRun_SetupErrorsComeWithoutReport(t *testing.T) {
	_, srv := newStandIn(t, "cup-01", 10, 0, fault{})
	_, offSale := newStandIn(t, "cup-01", 10, 0, fault{offSale: true})
	gone := httptest.NewServer(nil)
	gone.Close()
	tests := []struct {
		name   string
		change func(*Config)
		want   error
	}{
		{"unknown sku", func(c *Config) { c.SKU = "mug-99" }, ErrSKUNotFound},
		{"off sale", func(c *Config) { c.BaseURL = offSale.URL }, ErrSKUNotOnSale},
		{"invalid config", func(c *Config) { c.Buyers = 0 }, ErrInvalidConfig},
		{"unreachable", func(c *Config) { c.BaseURL = gone.URL }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(srv)
			cfg.Client = nil
			tt.change(&cfg)
			var out bytes.Buffer
			rep, err := Run(context.Background(), cfg, &out)
			if err == nil || rep != nil || errors.Is(err, ErrVerificationFailed) || out.Len() > 0 {
				t.Fatalf("Run = %v, %v, output %q; want a setup error, no report", rep, err, out.String())
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Run error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRun_StopsWhenContextEnds(t *testing.T) {
	_, srv := newStandIn(t, "cup-01", 10, 0, fault{hangFirst: true})
	cfg := testConfig(srv)
	cfg.Idempotency, cfg.Concurrency = true, 2
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, cfg, &bytes.Buffer{})
	if !errors.Is(err, context.DeadlineExceeded) || rep != nil {
		t.Errorf("Run = %v, %v; want context.DeadlineExceeded and no report", rep, err)
	}
}

func TestRun_RetriesOnlyWithIdempotency(t *testing.T) {
	tests := []struct {
		name        string
		fault       fault
		idempotency bool
		timeout     time.Duration
		wantRetries int
		wantReplays int
	}{
		{"BUSY first, retried with the key", fault{busyFirst: true}, true, time.Second, 20, 0},
		{"lost answer, retried with the key, replays the order", fault{hangFirst: true}, true, time.Second, 20, 20},
		{"5xx without a key is not retried", fault{failEvery: 2}, false, time.Second, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newStandIn(t, "cup-01", 100, 0, tt.fault)
			cfg := testConfig(srv)
			cfg.Buyers, cfg.Idempotency, cfg.Timeout = 20, tt.idempotency, tt.timeout
			rep, _ := Run(context.Background(), cfg, &bytes.Buffer{})
			if rep == nil || rep.Retries != tt.wantRetries || rep.Requests != cfg.Buyers+tt.wantRetries || rep.Replayed != tt.wantReplays {
				t.Fatalf("report %+v, want %d retries, %d replays", rep, tt.wantRetries, tt.wantReplays)
			}
		})
	}
}
