package stacktest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/local"
)

// AWSEnv names the switch of the AWS implementation a test binary's stacks run
// against; a package's TestMain reads it and hands it to Main:
//
//	func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, os.Getenv(stacktest.AWSEnv))) }
//
// Its values are Embedded (or unset) and Moto.
const AWSEnv = "STOCKGUARD_AWS"

// The implementations of the AWS APIs a stack may run against.
const (
	// Embedded is the local stack's own servers: minidyn for DynamoDB, goaws for
	// SQS and SNS (and, in internal/testing/deploytest, local-kms for KMS).
	Embedded = "embedded"
	// Moto is moto_server (local.MotoCommand) for DynamoDB, SQS, SNS, KMS and
	// Secrets Manager: each stack gets a moto_server of its own while it runs, from
	// a pool of this test binary's, reset when the stack is closed.
	Moto = "moto"
)

// impl is the implementation this test binary's stacks run against, set by Main
// before any test runs: "" (Embedded) unless a TestMain chose another.
var impl string

// motos are this test binary's moto_server processes that no test holds.
var motos struct {
	mu   sync.Mutex
	idle []*local.MotoServer
	all  []*local.MotoServer
}

// Main runs the tests of m with every Stack that New starts running against the AWS
// implementation named aws (AWSEnv's value: "" or Embedded, or Moto), stops the
// moto_server processes the tests started, and returns the exit code for os.Exit.
// An unknown name, or Moto without moto_server installed, fails before any test
// runs, naming the fix.
func Main(m *testing.M, aws string) int {
	switch aws {
	case "", Embedded:
	case Moto:
		if !MotoInstalled() {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", AWSEnv, aws, local.ErrNoMoto)
			return 1
		}
	default:
		fmt.Fprintf(os.Stderr, "%s=%q: want %q (the embedded servers, as when unset) or %q (moto_server)\n", AWSEnv, aws, Embedded, Moto)
		return 2
	}
	impl = aws
	code := m.Run()
	motos.mu.Lock()
	defer motos.mu.Unlock()
	for _, s := range motos.all {
		s.Close()
	}
	return code
}

// OnMoto reports whether this test binary's stacks run on moto_server.
func OnMoto() bool { return impl == Moto }

// MotoInstalled reports whether moto_server (local.MotoCommand) is on PATH.
func MotoInstalled() bool {
	_, err := exec.LookPath(local.MotoCommand)
	return err == nil
}

// MotoURL returns the endpoint of a moto_server of t's own until t ends: an idle
// one of this test binary's, else a new one (about 1 s to start); when t ends it
// is reset (every resource of every service forgotten) and kept for the next test.
// It fails t when moto_server is not installed or does not start.
func MotoURL(t testing.TB) string {
	t.Helper()
	motos.mu.Lock()
	var m *local.MotoServer
	if n := len(motos.idle); n > 0 {
		m, motos.idle = motos.idle[n-1], motos.idle[:n-1]
	}
	motos.mu.Unlock()
	if m == nil {
		var err error
		if m, err = local.StartMoto(context.Background(), "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		motos.mu.Lock()
		motos.all = append(motos.all, m)
		motos.mu.Unlock()
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s output, last lines:\n%s", local.MotoCommand, m.Output())
		}
		if err := m.Reset(context.Background()); err != nil {
			t.Errorf("%v; the server is stopped", err)
			m.Close()
			return
		}
		motos.mu.Lock()
		motos.idle = append(motos.idle, m)
		motos.mu.Unlock()
	})
	return m.URL()
}
