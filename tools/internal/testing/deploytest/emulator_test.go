package deploytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// EmulatorInstall is the command that installs the Lambda Runtime Interface Emulator
// this test runs the bootstraps under.
const EmulatorInstall = "go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// emulatorEnv names the emulator's path. When it is set (CI sets it) the emulator
// must be there: the test fails instead of skipping.
const emulatorEnv = "AWS_LAMBDA_RIE"

// emulatorPath finds aws-lambda-rie: $AWS_LAMBDA_RIE, else on PATH, else in the Go
// bin directory. Without one (and without AWS_LAMBDA_RIE) it skips t, naming the
// install command.
func emulatorPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(emulatorEnv); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s=%s: %v (install it with: %s)", emulatorEnv, p, err, EmulatorInstall)
		}
		return p
	}
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	gobin, _ := exec.Command("go", "env", "GOBIN").Output()
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	for _, dir := range []string{string(bytes.TrimSpace(gobin)), filepath.Join(string(bytes.TrimSpace(gopath)), "bin")} {
		if p, err := exec.LookPath(filepath.Join(dir, "aws-lambda-rie")); dir != "" && err == nil {
			return p
		}
	}
	t.Skipf("the Lambda Runtime Interface Emulator (aws-lambda-rie) is not installed, so the bootstraps are not run; install it with: %s", EmulatorInstall)
	return ""
}

// buildAll runs the Makefile's build target of every function (logical ids) for each
// of goarches, as `sam build` does with ARTIFACTS_DIR (plus GOARCH on the make command
// line), and returns the bootstraps' paths by GOARCH and logical id. The architectures
// build side by side, each one's functions one after the other: the functions share
// most of their packages, which the first build of an architecture compiles into the
// build cache for the next ones, so two builds of one architecture at once would
// compile them twice.
func buildAll(t *testing.T, root string, functions []string, goarches ...string) map[string]map[string]string {
	t.Helper()
	built := map[string]map[string]string{}
	errs := make([]error, len(goarches))
	var wg sync.WaitGroup
	for i, goarch := range slices.Compact(slices.Sorted(slices.Values(goarches))) {
		paths := map[string]string{}
		built[goarch] = paths
		dir := filepath.Join(t.TempDir(), goarch)
		wg.Go(func() {
			for _, function := range functions {
				if paths[function], errs[i] = build(root, filepath.Join(dir, function), function, goarch); errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return built
}

// build runs `make build-<function> ARTIFACTS_DIR=dir GOARCH=goarch` in root and
// returns the bootstrap's path.
func build(root, dir, function, goarch string) (string, error) {
	cmd := exec.Command("make", "-s", "build-"+function, "ARTIFACTS_DIR="+dir, "GOARCH="+goarch)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make build-%s GOARCH=%s: %v\n%s", function, goarch, err, out)
	}
	return filepath.Join(dir, "bootstrap"), nil
}

// hostGOARCH is the GOARCH the emulator can run here.
var hostGOARCH = runtime.GOARCH

// emulated is one bootstrap running under aws-lambda-rie, a lambda.Handler that
// invokes it through the emulator's invoke endpoint.
type emulated struct {
	name string
	url  string       // the emulator's invoke endpoint
	out  *testkit.Log // the emulator's and the function's output

	mu        sync.Mutex
	coldStart time.Duration // the first invocation, sent to answered: init plus the request
}

// startEmulated runs bootstrap under the emulator at rie with env as the whole
// environment, on free loopback ports, until the test ends.
func startEmulated(t *testing.T, rie, name, bootstrap string, env []string) *emulated {
	t.Helper()
	apiAddr, runtimeAddr := freeAddr(t), freeAddr(t)
	e := &emulated{name: name, url: "http://" + apiAddr + "/2015-03-31/functions/function/invocations", out: &testkit.Log{}}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", apiAddr, "--runtime-api-address", runtimeAddr, bootstrap)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, e.out, e.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s under the emulator: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s emulator and function output:\n%s", name, e.out.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", apiAddr)
		if err == nil {
			c.Close()
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the emulator never listened on %s:\n%s", name, apiAddr, e.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Invoke posts payload to the emulator and returns the function's answer; an error
// when the function returned one (errorType/errorMessage) or the emulator failed.
func (e *emulated) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: invoke: %w", e.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	e.mu.Lock()
	if e.coldStart == 0 {
		e.coldStart = time.Since(start)
	}
	e.mu.Unlock()
	var fail struct{ ErrorType, ErrorMessage string }
	json.Unmarshal(body, &fail)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: read the answer: %w", e.name, err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s: emulator answered %d: %s", e.name, resp.StatusCode, body)
	case fail.ErrorType != "" || fail.ErrorMessage != "":
		return nil, fmt.Errorf("%s: function error %s: %s", e.name, fail.ErrorType, fail.ErrorMessage)
	}
	return body, nil
}

// initReport matches the emulator's INIT REPORT line: the init phase, from starting
// the bootstrap to its first request for work (its main up to lambda.Start). The
// Init Duration of the REPORT line is not it: this emulator starts the bootstrap
// before timing it.
var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initDuration is the init phase in milliseconds, -1 before the first invocation.
func (e *emulated) initDuration() float64 {
	m := initReport.FindStringSubmatch(e.out.String())
	if m == nil {
		return -1
	}
	ms, _ := strconv.ParseFloat(m[1], 64)
	return ms
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
