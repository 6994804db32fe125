package stockctl_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// fakeAPI answers every request with an empty SKU and records the paths asked.
func fakeAPI(t *testing.T) (*httptest.Server, *[]string) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"skuId":"cup-01"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

// run runs stockctl with args, loading the AWS configuration through load and reading
// stacks' outputs from stacks (name → outputs).
func run(args []string, stacks map[string]map[string]string, loaded *[]stockctl.ConfigOptions) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	env := stockctl.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, HTTP: http.DefaultClient,
		Version: "stockctl v9.9.9 (go1.26.0)",
		LoadConfig: func(_ context.Context, o stockctl.ConfigOptions) (aws.Config, error) {
			*loaded = append(*loaded, o)
			return aws.Config{Region: cmp.Or(o.Region, "cn-north-1"), Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
			})}, nil
		},
		StackOutputs: func(_ context.Context, _ aws.Config, name string) (map[string]string, error) {
			if o, ok := stacks[name]; ok {
				return o, nil
			}
			return nil, errors.New("Stack with id " + name + " does not exist")
		},
	}
	code = stockctl.Run(context.Background(), args, env)
	return code, out.String(), errOut.String()
}

// Global flags work before and after the command, in every form the flag package
// takes; --profile reaches the AWS configuration.
func TestRun_TakesGlobalFlagsAfterTheCommand(t *testing.T) {
	srv, paths := fakeAPI(t)
	for _, args := range [][]string{
		{"--endpoint", srv.URL, "-o", "json", "--profile", "shop", "get", "cup-01"},
		{"get", "cup-01", "--endpoint", srv.URL, "-o=json", "--profile=shop"},
		{"get", "-endpoint=" + srv.URL, "cup-01", "--profile", "shop", "-o", "json"},
		{"--endpoint", srv.URL, "--profile", "shop", "-o", "json", "--", "get", "cup-01"},
		{"--endpoint", srv.URL, "--profile", "shop", "-o", "json", "get", "--", "cup-01"},
	} {
		var loaded []stockctl.ConfigOptions
		code, out, errOut := run(args, nil, &loaded)
		if code != stockctl.ExitOK || strings.TrimSpace(out) != `{"skuId":"cup-01"}` {
			t.Errorf("%q: exit %d, out %q, err %q", args, code, out, errOut)
		}
		if len(loaded) != 1 || loaded[0].Profile != "shop" || !loaded[0].Local {
			t.Errorf("%q: configuration loaded with %+v, want profile shop, local", args, loaded)
		}
	}
	if len(*paths) != 5 || (*paths)[0] != "/admin/skus/cup-01" {
		t.Errorf("paths %q", *paths)
	}
}

// --stack reads the API URL from the stack's ApiUrl output; a stack without one, a
// missing stack, or --stack with --endpoint are clear errors that send nothing.
func TestRun_StackReadsTheAPIFromTheStacksOutputs(t *testing.T) {
	srv, paths := fakeAPI(t)
	stacks := map[string]map[string]string{"shop": {"ApiUrl": srv.URL, "IssuerUrl": "x"}, "other": {"BucketName": "b"}}
	var loaded []stockctl.ConfigOptions
	if code, out, errOut := run([]string{"get", "cup-01", "--stack", "shop", "--region", "cn-north-1"}, stacks, &loaded); code != stockctl.ExitOK {
		t.Fatalf("--stack shop: exit %d, out %q, err %q", code, out, errOut)
	}
	if len(loaded) != 2 || loaded[0].Region != "cn-north-1" || len(*paths) != 1 {
		t.Errorf("configurations %+v, requests %q", loaded, *paths)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"get", "cup-01", "--stack", "other"}, stockctl.ExitError, "stack other has no ApiUrl output"},
		{[]string{"get", "cup-01", "--stack", "gone"}, stockctl.ExitError, "read stack gone: Stack with id gone does not exist"},
		{[]string{"get", "cup-01", "--stack", "shop", "--endpoint", srv.URL}, stockctl.ExitUsage, "give --endpoint or --stack, not both"},
		{[]string{"get", "cup-01", "--stack"}, stockctl.ExitUsage, "flag needs an argument: --stack"},
	} {
		code, _, errOut := run(c.args, stacks, &loaded)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, err %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	if len(*paths) != 1 {
		t.Errorf("a refused command line sent requests: %q", *paths)
	}
}

func TestRun_VersionAndCompletion(t *testing.T) {
	var loaded []stockctl.ConfigOptions
	for _, args := range [][]string{{"--version"}, {"get", "cup-01", "--version"}} {
		if code, out, _ := run(args, nil, &loaded); code != stockctl.ExitOK || out != "stockctl v9.9.9 (go1.26.0)\n" {
			t.Errorf("%q: exit %d, out %q", args, code, out)
		}
	}
	for shell, want := range map[string]string{"bash": "complete -F _stockctl stockctl", "zsh": "#compdef stockctl", "fish": "complete -c stockctl -l stack"} {
		code, out, _ := run([]string{"completion", shell}, nil, &loaded)
		if code != stockctl.ExitOK || !strings.Contains(out, want) || !strings.Contains(out, "reshard") {
			t.Errorf("completion %s: exit %d, out %q", shell, code, out)
		}
	}
	if code, _, errOut := run([]string{"completion", "tcsh"}, nil, &loaded); code != stockctl.ExitUsage || !strings.Contains(errOut, "bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d, err %q", code, errOut)
	}
	if len(loaded) != 0 {
		t.Errorf("--version or completion loaded an AWS configuration: %+v", loaded)
	}
}

// --stack without a region, or without usable credentials, says what to give before
// any call to CloudFormation.
func TestRun_StackNamesAMissingRegionOrCredentials(t *testing.T) {
	for _, c := range []struct {
		cfg  aws.Config
		want string
	}{
		{aws.Config{}, "no AWS region for --stack: give --region"},
		{aws.Config{Region: "cn-north-1"}, "no AWS credentials found: give --profile"},
		{aws.Config{Region: "cn-north-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no EC2 IMDS role found")
		})}, "no usable AWS credentials (give --profile"},
	} {
		var errOut bytes.Buffer
		called := false
		env := stockctl.Env{Stdout: io.Discard, Stderr: &errOut, Getenv: func(string) string { return "" }, HTTP: http.DefaultClient,
			LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) { return c.cfg, nil },
			StackOutputs: func(context.Context, aws.Config, string) (map[string]string, error) {
				called = true
				return nil, errors.New("DescribeStacks")
			},
		}
		if code := stockctl.Run(context.Background(), []string{"--stack", "shop", "list"}, env); code != stockctl.ExitError || !strings.Contains(errOut.String(), c.want) || called {
			t.Errorf("%+v: exit %d, err %q, DescribeStacks called %v; want %q", c.cfg, code, errOut.String(), called, c.want)
		}
	}
}
