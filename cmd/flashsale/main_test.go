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

	"github.com/stockguard/stockguard/internal/flashsale"
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
		{"help", []string{"-h"}, exitPass, "-same-user"},
		{"unknown flag", []string{"-nope"}, exitSetup, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, exitSetup, "unexpected arguments"},
		{"bad qty", []string{"-qty", "0"}, exitSetup, "qty 0"},
		{"both token flags", []string{"-token", "a", "-token-file", "x"}, exitSetup, "not both"},
		{"missing token file", []string{"-token-file", filepath.Join(t.TempDir(), "none")}, exitSetup, "token file"},
		{"unreachable server", []string{"-url", gone.URL, "-timeout", "1s"}, exitSetup, "read sku cup-01"},
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
	cfg, err := parseFlags([]string{"-token-file", path, "-buyers", "7", "-idempotency", "-json"}, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("parseFlags: %v", err)
	}
	if strings.Join(cfg.Tokens, ",") != "tok-1,tok-2" || cfg.Buyers != 7 || !cfg.Idempotency || !cfg.JSON {
		t.Errorf("config %+v, want 2 tokens, 7 buyers, idempotency and JSON", cfg)
	}
}
