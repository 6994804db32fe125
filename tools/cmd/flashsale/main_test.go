package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/flashsale"
)

func TestExitCode_MapsErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"pass", nil, exitPass},
		{"verification failed", fmt.Errorf("run: %w", flashsale.ErrVerificationFailed), exitFail},
		{"unknown sku", fmt.Errorf("read: %w", flashsale.ErrSKUNotFound), exitSetup},
		{"invalid config", flashsale.ErrInvalidConfig, exitSetup},
		{"unreachable", errors.New("connection refused"), exitSetup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestRun_UsageAndSetupErrorsExitTwo(t *testing.T) {
	gone := httptest.NewServer(nil)
	gone.Close()
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"unknown flag", []string{"-nope"}, exitSetup, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, exitSetup, "unexpected arguments"},
		{"bad qty", []string{"-qty", "0"}, exitSetup, "qty 0"},
		{"both token flags", []string{"-token", "a", "-token-file", "x"}, exitSetup, "not both"},
		{"missing token file", []string{"-token-file", filepath.Join(t.TempDir(), "none")}, exitSetup, "token file"},
		{"unreachable server", []string{"-url", gone.URL, "-timeout", "1s"}, exitSetup, "read sku cup-01"},
		{"pay ratio above 1", []string{"-pay-ratio", "1.5"}, exitSetup, "pay ratio 1.5"},
		{"pay ratio negative", []string{"-pay-ratio", "-0.1"}, exitSetup, "pay ratio -0.1"},
		{"pay ratio not a number", []string{"-pay-ratio", "half"}, exitSetup, "invalid value \"half\" for flag -pay-ratio"},
		{"pay ratio NaN", []string{"-pay-ratio", "NaN"}, exitSetup, "pay ratio NaN"},
		{"no such flag any more", []string{"-dynamodb-endpoint", "http://127.0.0.1:8000"}, exitSetup, "flag provided but not defined: -dynamodb-endpoint"},
		{"cancel unpaid not a bool", []string{"-cancel-unpaid=maybe"}, exitSetup, "-cancel-unpaid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(context.Background(), tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.msg) {
				t.Errorf("stderr lacks %q:\n%s", tt.msg, stderr.String())
			}
		})
	}
}

func TestParseFlags_ReadsTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("tok-1\ntok-2\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := parseFlags([]string{"-token-file", path, "-buyers", "7", "-idempotency", "-json"}, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	if strings.Join(cfg.Tokens, ",") != "tok-1,tok-2" || cfg.Buyers != 7 || !cfg.Idempotency || !cfg.JSON {
		t.Errorf("config %+v, want 2 tokens, 7 buyers, idempotency and JSON", cfg)
	}
}

func TestParseFlags_SettlementFlags(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		ratio        float64
		cancelUnpaid bool
	}{
		{"defaults: no settling", nil, 0, false},
		{"pay ratio turns cancel unpaid on", []string{"-pay-ratio", "0.5"}, 0.5, true},
		{"pay ratio 1", []string{"-pay-ratio", "1"}, 1, true},
		{"cancel unpaid turned off", []string{"-pay-ratio", "0.5", "-cancel-unpaid=false"}, 0.5, false},
		{"cancel unpaid off before the ratio", []string{"-cancel-unpaid=false", "-pay-ratio", "0.2"}, 0.2, false},
		{"cancel unpaid alone cancels every order", []string{"-cancel-unpaid"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := parseFlags(tt.args, &bytes.Buffer{})
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", tt.args, err)
			}
			if cfg.PayRatio != tt.ratio || cfg.CancelUnpaid != tt.cancelUnpaid {
				t.Errorf("pay ratio %v, cancel unpaid %v; want %v, %v", cfg.PayRatio, cfg.CancelUnpaid, tt.ratio, tt.cancelUnpaid)
			}
		})
	}
}

// -h explains the run: exit status 0, the help on stdout (nothing on stderr), every
// flag, the steps, the exit statuses and examples.
func TestRun_HelpExplainsTheRunAndEveryFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr); code != exitPass || stderr.Len() > 0 {
		t.Fatalf("-h: exit %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
	help := stdout.String()
	names := []string{"url", "sku", "buyers", "concurrency", "qty", "user-prefix", "same-user", "token", "token-file", "timeout",
		"idempotency", "json", "report", "pay-ratio", "refund-ratio", "refund-wait", "cancel-unpaid"}
	for _, name := range names {
		if !strings.Contains(help, "\n  -"+name+" ") && !strings.Contains(help, "\n  -"+name+"\n") {
			t.Errorf("the help does not list -%s", name)
		}
	}
	if n := strings.Count(help, "\n  -"); n != len(names) {
		t.Errorf("the help lists %d flags, the test knows %d: explain the new ones here", n, len(names))
	}
	for _, want := range []string{"GET /admin/skus/{skuId}", "Exit status: 0", "Examples:\n  go run ./tools/cmd/flashsale ", "-url http://127.0.0.1:3001 -pay-ratio"} {
		if !strings.Contains(help, want) {
			t.Errorf("the help does not say %q", want)
		}
	}
	for _, gone := range []string{"dynamodb-endpoint", "skus-table"} {
		if strings.Contains(help, gone) {
			t.Errorf("the help still mentions %s", gone)
		}
	}
}

func TestParseFlags_ReportSamplesStock(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		report string
		every  bool
	}{{nil, "", false}, {[]string{"-report", "sale.html"}, "sale.html", true}} {
		cfg, report, err := parseFlags(tt.args, &bytes.Buffer{})
		if err != nil || report != tt.report || (cfg.SampleEvery > 0) != tt.every {
			t.Errorf("parseFlags(%q) = report %q, sample every %v, %v; want %q, sampling %v", tt.args, report, cfg.SampleEvery, err, tt.report, tt.every)
		}
	}
}
