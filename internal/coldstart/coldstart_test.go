package coldstart_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring"
)

// parseTable reads TABLE, refusing an empty one as the functions' loaders do.
func parseTable(get envvar.Lookup) (string, error) {
	if get("TABLE") == "" {
		return "", errors.New("TABLE is empty")
	}
	return get("TABLE"), nil
}

// A bad setting ends the process with status 1 and an error-level line naming the
// function and the setting, before anything is built (run in a child process, since
// Run exits).
func TestRun_ExitsOnABadSettingNamingIt(t *testing.T) {
	if os.Getenv("COLDSTART_CHILD") == "1" {
		coldstart.Run(wiring.Function{Name: "OrderTakerFunction", Short: "orderTaker"}, envvar.Map(nil), parseTable,
			func(coldstart.Start[string]) (*lambdaevent.Function, error) { panic("built despite a bad setting") })
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRun_ExitsOnABadSettingNamingIt$")
	cmd.Env = append(os.Environ(), "COLDSTART_CHILD=1")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child ended with %v, want exit status 1", err)
	}
	line := string(out)
	for _, want := range []string{`"level":"ERROR"`, `"function":"orderTaker"`, "orderTaker cannot start", "TABLE is empty"} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %s", line, want)
		}
	}
}

// The Lambda environment's region, role credentials and the SDK's per-service
// endpoint override reach a client built from AWSConfig.
func TestAWSConfig_ReadsTheLambdaEnvironment(t *testing.T) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Write([]byte(`{"SecretString":"s"}`))
	}))
	defer srv.Close()
	t.Setenv("AWS_REGION", "cn-north-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDROLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	cfg, err := coldstart.AWSConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(mustRead(t, secret.Reader(cfg, "arn:aws:secretsmanager:cn-north-1:111122223333:secret:x"))); got != "s" {
		t.Errorf("secret %q, want s", got)
	}
	if a, _ := auth.Load().(string); !strings.Contains(a, "Credential=AKIDROLE/") || !strings.Contains(a, "/cn-north-1/secretsmanager/") {
		t.Errorf("Authorization %q: not signed with the role's key for cn-north-1", a)
	}
}

func TestAWSConfig_RefusesAnEnvironmentWithoutRegionOrCredentials(t *testing.T) {
	for _, unset := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID"} {
		t.Run(unset, func(t *testing.T) {
			t.Setenv("AWS_REGION", "cn-north-1")
			t.Setenv("AWS_DEFAULT_REGION", "")
			t.Setenv("AWS_ACCESS_KEY_ID", "AKIDROLE")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
			t.Setenv(unset, "")
			if _, err := coldstart.AWSConfig(os.Getenv); err == nil || !strings.Contains(err.Error(), unset) {
				t.Errorf("AWSConfig without %s = %v, want an error naming it", unset, err)
			}
		})
	}
}

func mustRead(t *testing.T, read func(context.Context) ([]byte, error)) []byte {
	t.Helper()
	data, err := read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return data
}
