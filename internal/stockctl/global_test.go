package stockctl_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// fakeAPI answers every request with an empty SKU and records the paths asked.
func fakeAPI(t *testing.T) (*httptest.Server, *[]string) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		body, _ := io.ReadAll(r.Body)
		w.Write(echoIDs(r, body))
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

// echoIDs is the answer of a route about the SKU or order the request r with body
// names, what the routes' answers the tests send hold first: {"orderId"} of the order
// in an order's path, else {"skuId"} of the SKU in its path, or of a creation's body,
// or cup-01; with the shipment a body names, and the refund a body or path names.
func echoIDs(r *http.Request, body []byte) []byte {
	type refund struct {
		RefundID    string `json:"refundId,omitempty"`
		OutRefundNo string `json:"outRefundNo,omitempty"`
	}
	answer := struct {
		SKU      string                       `json:"skuId,omitempty"`
		Order    string                       `json:"orderId,omitempty"`
		Shipment *struct{ ShipmentID string } `json:"shipment,omitempty"`
		Refunds  []refund                     `json:"refunds,omitempty"`
	}{SKU: "cup-01"}
	json.Unmarshal(body, &answer)
	var sent refund
	json.Unmarshal(body, &sent)
	if sent.RefundID != "" {
		answer.Refunds = []refund{sent}
	}
	if id := stringField(body, "shipmentId"); id != "" {
		answer.Shipment = &struct{ ShipmentID string }{id}
	}
	parts := strings.Split(r.URL.Path, "/") // "", admin, skus|orders, ID, …
	switch {
	case len(parts) > 5 && parts[4] == "refunds":
		answer.Refunds = []refund{{OutRefundNo: parts[5]}}
		fallthrough
	case len(parts) > 3 && parts[2] == "orders":
		answer.SKU, answer.Order = "", parts[3]
	case len(parts) > 3:
		answer.SKU = parts[3]
	}
	data, _ := json.Marshal(answer)
	return data
}

// stringField is body's string field key, or "".
func stringField(body []byte, key string) string {
	var fields map[string]any
	json.Unmarshal(body, &fields)
	s, _ := fields[key].(string)
	return s
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
			return nil, &smithy.GenericAPIError{Code: "ValidationError", Message: "Stack with id " + name + " does not exist"}
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

// --region must have the shape of a region's name: anything else is a usage error
// naming --region, with nothing loaded or sent; the shapes AWS uses (its partitions'
// too) are taken.
func TestRun_RefusesARegionNotShapedAsOne(t *testing.T) {
	srv, paths := fakeAPI(t)
	for _, region := range []string{"us-east-1x", "../x", "", " ", "us east 1", "US-EAST-1", "us-east-", "useast1", "-us-east-1", "us-east-1/", "us-east-1\n"} {
		var loaded []stockctl.ConfigOptions
		code, out, errOut := run([]string{"--endpoint", srv.URL, "--region", region, "get", "cup-01"}, nil, &loaded)
		if code != stockctl.ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "--region") || len(loaded) != 0 {
			t.Errorf("--region %q: exit %d, out %q, err %q, configuration loaded %d times; want exit 2, one line naming --region, nothing loaded", region, code, out, errOut, len(loaded))
		}
	}
	if len(*paths) != 0 {
		t.Errorf("sent %q with a bad --region", *paths)
	}
	// --stack names a stack or its id: anything else is a usage error, its value made
	// printable, nothing loaded.
	for _, stack := range []string{"a\x1b[31mb", "1shop", "shop_1", strings.Repeat("s", 129), "arn:aws:s3:::bucket"} {
		var loaded []stockctl.ConfigOptions
		code, _, errOut := run([]string{"--stack", stack, "--region", "us-east-1", "list"}, nil, &loaded)
		if code != stockctl.ExitUsage || strings.ContainsRune(errOut, 0x1b) || !strings.Contains(errOut, "is not a CloudFormation stack's name") || len(loaded) != 0 {
			t.Errorf("--stack %q: exit %d, err %q, loaded %d; want exit 2 naming the rule, no escape character, nothing loaded", stack, code, errOut, len(loaded))
		}
	}
	for _, region := range []string{"us-east-1", "cn-north-1", "us-gov-west-1", "ap-southeast-5", "eu-central-2"} {
		var loaded []stockctl.ConfigOptions
		if code, _, errOut := run([]string{"--endpoint", srv.URL, "--region=" + region, "get", "cup-01"}, nil, &loaded); code != stockctl.ExitOK || len(loaded) != 1 || loaded[0].Region != region {
			t.Errorf("--region %s: exit %d, err %q, loaded %+v; want it taken", region, code, errOut, loaded)
		}
	}
}

// --stack reads the API URL from the stack's ApiUrl output; a stack without one, a
// missing stack, or --stack with --endpoint are clear errors that send nothing.
func TestRun_StackReadsTheAPIFromTheStacksOutputs(t *testing.T) {
	srv, paths := fakeAPI(t)
	stacks := map[string]map[string]string{"shop": {"ApiUrl": srv.URL, "IssuerUrl": "x"}, "other": {"BucketName": "b"},
		"odd": {"ApiUrl": "abc123.execute-api\x1b[31m"}, "ftp": {"ApiUrl": "ftp://files.example.com"},
		"spaced": {"ApiUrl": " https://abc123.execute-api.cn-north-1.amazonaws.com.cn\n"},
		"port":   {"ApiUrl": "https://abc123.execute-api.cn-north-1.amazonaws.com.cn:99999"}}
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
		// An ApiUrl that is not an http(s) URL is the stack's fault, not the command
		// line's; it is named as given, quoted (white space and escape sequences shown
		// as Go escapes), and one with a port past 65535 is no more a URL to send to.
		{[]string{"get", "cup-01", "--stack", "odd"}, stockctl.ExitError, `stockctl: stack odd's ApiUrl output "abc123.execute-api\x1b[31m" is not an http(s) URL: is it a stockguard stack?` + "\n"},
		{[]string{"get", "cup-01", "--stack", "spaced"}, stockctl.ExitError, `stockctl: stack spaced's ApiUrl output " https://abc123.execute-api.cn-north-1.amazonaws.com.cn\n" is not an http(s) URL`},
		{[]string{"get", "cup-01", "--stack", "port"}, stockctl.ExitError, `stockctl: stack port's ApiUrl output "https://abc123.execute-api.cn-north-1.amazonaws.com.cn:99999" is not an http(s) URL`},
		{[]string{"get", "cup-01", "--endpoint", "http://127.0.0.1:99999"}, stockctl.ExitUsage, `endpoint "http://127.0.0.1:99999" is not an http(s) URL`},
		{[]string{"get", "cup-01", "--stack", "ftp"}, stockctl.ExitError, `stack ftp's ApiUrl output "ftp://files.example.com" is not an http(s) URL`},
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
	// --version ends a command line: an argument after it is a usage error.
	for _, args := range [][]string{{"--version", "extra"}, {"--version", "get", "cup-01"}, {"--version", "-o", "json"}} {
		if code, out, errOut := run(args, nil, &loaded); code != stockctl.ExitUsage || out != "" || !strings.Contains(errOut, "--version takes nothing after it") {
			t.Errorf("%q: exit %d, out %q, err %q; want exit 2", args, code, out, errOut)
		}
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
		code int
	}{
		// A missing region is a usage error, as for a custom-domain --endpoint.
		{aws.Config{}, "no AWS region for --stack: give --region", stockctl.ExitUsage},
		// A region from AWS_REGION or the profile has a region name's shape too.
		{aws.Config{Region: "../x\x1b[31m"}, `the region from AWS_REGION or the profile, "../x [31m" is not an AWS region name`, stockctl.ExitUsage},
		{aws.Config{Region: "cn-north-1"}, "no AWS credentials found: give --profile", stockctl.ExitError},
		{aws.Config{Region: "cn-north-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no EC2 IMDS role found")
		})}, "no AWS credentials found: give --profile", stockctl.ExitError},
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
		if code := stockctl.Run(context.Background(), []string{"--stack", "shop", "list"}, env); code != c.code || !strings.Contains(errOut.String(), c.want) || called {
			t.Errorf("%+v: exit %d, err %q, DescribeStacks called %v; want exit %d and %q", c.cfg, code, errOut.String(), called, c.code, c.want)
		}
	}
}

// sdkCredentialsError is the text the AWS SDK gives when the default chain finds no
// credentials: none of it may reach the operator.
const sdkCredentialsError = "failed to refresh cached credentials, no EC2 IMDS role found, operation error ec2imds: GetMetadata, http response error StatusCode: 403, request to EC2 IMDS failed"

// Without usable AWS credentials, or with a profile that cannot be loaded, stockctl
// says in one line what is missing and how to give it (the profile, when one is
// named by --profile or AWS_PROFILE), exits 1 and sends nothing; no text of the SDK's
// error reaches its output. The same holds for --stack; credentials that
// CloudFormation refuses are said as AWS refusing them, with the error code alone.
func TestRun_SaysWhatCredentialsAreMissingWithoutTheSDKsError(t *testing.T) {
	noCredentials := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New(sdkCredentialsError)
	})
	good := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
	})
	const deployed = "https://abc123.execute-api.cn-north-1.amazonaws.com.cn"
	for _, c := range []struct {
		name       string
		args       []string
		awsProfile string // $AWS_PROFILE
		cfg        aws.Config
		loadErr    error
		stackErr   error
		want       string
	}{
		{"no credentials", []string{"--endpoint", deployed, "get", "cup-01"}, "", aws.Config{Credentials: noCredentials}, nil, nil,
			"no AWS credentials found: give --profile NAME, or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"none in the chain", []string{"--endpoint", deployed, "list"}, "", aws.Config{}, nil, nil, "no AWS credentials found: give --profile NAME"},
		{"a profile without credentials", []string{"--endpoint", deployed, "--profile", "shop-ops", "list"}, "", aws.Config{Credentials: noCredentials}, nil, nil,
			`AWS profile "shop-ops" gives no usable credentials: check its keys or role in ~/.aws/config and ~/.aws/credentials (an SSO profile: aws sso login --profile shop-ops)`},
		{"AWS_PROFILE not found", []string{"--endpoint", deployed, "list"}, "shop-ops", aws.Config{}, errors.New("failed to get shared config profile, shop-ops"), nil,
			`cannot load AWS profile "shop-ops": check that ~/.aws/config and ~/.aws/credentials define it`},
		{"a malformed configuration", []string{"--endpoint", deployed, "list"}, "", aws.Config{}, errors.New("failed to load config file ~/.aws/config: invalid state"), nil,
			"cannot load the AWS configuration: check that ~/.aws/config and ~/.aws/credentials and the AWS_ environment variables are well formed"},
		{"--stack without credentials", []string{"--stack", "shop", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: noCredentials}, nil, nil, "no AWS credentials found: give --profile NAME"},
		{"--stack, credentials refused", []string{"--stack", "shop", "--profile", "old", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "InvalidClientTokenId", Message: "The security token included in the request is invalid."},
			`read stack shop: AWS refused the credentials of profile "old" (InvalidClientTokenId): check its keys or role in ~/.aws/config and ~/.aws/credentials (an SSO profile: aws sso login --profile old), or give another with --profile`},
		{"--stack, credentials expired", []string{"--stack", "shop", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "ExpiredToken", Message: "The security token included in the request is expired"},
			"read stack shop: AWS refused these credentials (ExpiredToken): renew or replace them: give --profile NAME, or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"--stack, ExpiredTokenException", []string{"--stack", "shop", "list"}, "ops", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "ExpiredTokenException", Message: "The security token included in the request is expired"}, `AWS refused the credentials of profile "ops" (ExpiredTokenException)`},
		{"--stack, UnrecognizedClientException", []string{"--stack", "shop", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}, "AWS refused these credentials (UnrecognizedClientException)"},
		{"--stack, SignatureDoesNotMatch", []string{"--stack", "shop", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "SignatureDoesNotMatch", Message: "The request signature we calculated does not match the security token"}, "AWS refused these credentials (SignatureDoesNotMatch)"},
		// A signing time AWS does not take is this machine's clock, not the credentials.
		{"--stack, the clock is off", []string{"--stack", "shop", "--profile", "ops", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "RequestExpired", Message: "Request has expired."},
			"read stack shop: AWS refused the request as signed at another time than its own (RequestExpired): check this machine's clock (AWS takes a request signed within 15 minutes of its time)"},
		{"--stack, not allowed", []string{"--stack", "shop", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "AccessDenied", Message: "User: arn:aws:iam::123456789012:user/x is not authorized"},
			"read stack shop: AWS refused these credentials (AccessDenied): they may not call cloudformation:DescribeStacks; use a profile that may"},
		{"--stack, not allowed (JSON protocols' code)", []string{"--stack", "shop", "list"}, "", aws.Config{Region: "cn-north-1", Credentials: good}, nil,
			&smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User: arn:aws:iam::123456789012:user/x is not authorized"},
			"AWS refused these credentials (AccessDeniedException): they may not call cloudformation:DescribeStacks"},
	} {
		var errOut bytes.Buffer
		sent := false
		env := stockctl.Env{Stdout: io.Discard, Stderr: &errOut, HTTP: sendsNothing(&sent),
			Getenv:     func(k string) string { return map[string]string{"AWS_PROFILE": c.awsProfile}[k] },
			LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) { return c.cfg, c.loadErr },
			StackOutputs: func(context.Context, aws.Config, string) (map[string]string, error) {
				return map[string]string{stockctl.ApiURLOutput: deployed}, c.stackErr
			},
		}
		code := stockctl.Run(context.Background(), c.args, env)
		got := errOut.String()
		if code != stockctl.ExitError || sent || strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "stockctl: ") || !strings.Contains(got, c.want) {
			t.Errorf("%s: exit %d, sent %v, err %q; want exit 1, nothing sent, %q", c.name, code, sent, got, c.want)
		}
		for _, sdk := range []string{"IMDS", "ec2imds", "operation error", "StatusCode", "failed to", "invalid state", "security token", "arn:aws", "has expired"} {
			if strings.Contains(got, sdk) {
				t.Errorf("%s: the SDK's error text %q reached the operator: %q", c.name, sdk, got)
			}
		}
	}
}

// cloudFormation stands in for CloudFormation's endpoint: it answers every request
// with status and body; its URL is the endpoint the SDK is given.
func cloudFormation(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// internalFailure is CloudFormation's answer to a request it failed (an AWS query
// API's error: AWS CloudFormation API Reference, "Common Errors", InternalFailure).
const internalFailure = `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Receiver</Type>` +
	`<Code>%s</Code><Message>Secret internal details</Message></Error><RequestId>b9b4e5a2-0000-4000-8000-000000000001</RequestId></ErrorResponse>`

// describeStacks is CloudFormation's DescribeStacks answer listing a stack named shop
// for each ApiUrl output value given (AWS CloudFormation API Reference,
// "DescribeStacks", its sample response).
func describeStacks(apiURLs ...string) string {
	var b strings.Builder
	b.WriteString(`<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks>`)
	for _, u := range apiURLs {
		fmt.Fprintf(&b, `<member><StackName>shop</StackName><StackStatus>CREATE_COMPLETE</StackStatus><Outputs><member><OutputKey>ApiUrl</OutputKey><OutputValue>%s</OutputValue></member></Outputs></member>`, u)
	}
	b.WriteString(`</Stacks></DescribeStacksResult><ResponseMetadata><RequestId>b9b4e5a2-0000-4000-8000-000000000002</RequestId></ResponseMetadata></DescribeStacksResponse>`)
	return b.String()
}

// stackAnswer is a DescribeStacks answer listing one stack named name, its id
// stackARN, with an ApiUrl output for each value given.
func stackAnswer(name string, apiURLs ...string) string {
	var outputs strings.Builder
	for _, u := range apiURLs {
		fmt.Fprintf(&outputs, `<member><OutputKey>ApiUrl</OutputKey><OutputValue>%s</OutputValue></member>`, u)
	}
	return fmt.Sprintf(`<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks>`+
		`<member><StackName>%s</StackName><StackId>%s</StackId><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>%s</Outputs></member>`+
		`</Stacks></DescribeStacksResult></DescribeStacksResponse>`, name, stackARN, outputs.String())
}

// stackARN is the id of the stack stackAnswer lists.
const stackARN = "arn:aws:cloudformation:cn-north-1:123456789012:stack/shop/0a1b2c3d-0000-4000-8000-000000000001"

// --stack's DescribeStacks (the SDK's own, against a server standing in for
// CloudFormation) that CloudFormation answers with a failure (a 5xx, an answer that is
// not CloudFormation's) is said as CloudFormation's failure, with its status and error
// code but none of the AWS error text, exit 1: it was reached. Only no answer at all
// (connection refused) is said as CloudFormation not reached, exit 5. The API is
// never called.
func TestRun_StackSaysCloudFormationFailedOrWasNotReached(t *testing.T) {
	untrustedServer := httptest.NewTLSServer(http.NotFoundHandler()) // its certificate is its own
	defer untrustedServer.Close()
	for _, c := range []struct {
		name, endpoint string
		code           int
		want           string
		client         aws.HTTPClient // the SDK's; nil: its own
	}{
		{"500 InternalFailure", cloudFormation(t, 500, fmt.Sprintf(internalFailure, "InternalFailure")), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 failed: 500 Internal Server Error (InternalFailure)\n", nil},
		{"503, a code with a format character", cloudFormation(t, 503, fmt.Sprintf(internalFailure, "Service&#x202E;Unavailable")), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 failed: 503 Service Unavailable (Service Unavailable)\n", nil},
		{"500 garbage", cloudFormation(t, 500, "<html>upstream}}"), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 failed: 500 Internal Server Error (an answer stockctl cannot read)\n", nil},
		{"599 garbage", cloudFormation(t, 599, "<html>upstream}}"), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 failed: 599 unknown status (an answer stockctl cannot read)\n", nil},
		{"200 garbage", cloudFormation(t, 200, "}}not XML{{"), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 failed: 200 OK (an answer stockctl cannot read)\n", nil},
		// An answer listing other than the one stack asked for is not used (the last
		// stack's ApiUrl was).
		{"two stacks", cloudFormation(t, 200, describeStacks("https://a.example.com", "https://b.example.com")), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 answered 2 stacks, not the one stack asked for: none of its outputs is used\n", nil},
		{"no stack", cloudFormation(t, 200, describeStacks()), stockctl.ExitError,
			"stockctl: read stack shop: CloudFormation in cn-north-1 answered 0 stacks, not the one stack asked for: none of its outputs is used\n", nil},
		// CloudFormation itself refusing the credentials: its error code, never its message.
		{"403 InvalidClientTokenId", cloudFormation(t, 403, `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>The security token included in the request is invalid.</Message></Error></ErrorResponse>`),
			stockctl.ExitError, "stockctl: read stack shop: AWS refused these credentials (InvalidClientTokenId): renew or replace them: give --profile NAME, or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY\n", nil},
		{"403 AccessDenied", cloudFormation(t, 403, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/x is not authorized</Message></Error></ErrorResponse>`),
			stockctl.ExitError, "stockctl: read stack shop: AWS refused these credentials (AccessDenied): they may not call cloudformation:DescribeStacks; use a profile that may\n", nil},
		// A 4xx without a message: its status and code, and that it gave no reason.
		{"400 without a message", cloudFormation(t, 400, `<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code></Error></ErrorResponse>`),
			stockctl.ExitError, "stockctl: read stack shop: CloudFormation in cn-north-1 answered 400 Bad Request (Throttling) and gave no reason\n", nil},
		{"409 with an empty message", cloudFormation(t, 409, `<ErrorResponse><Error><Type>Sender</Type><Code>Busy</Code><Message>&#x200B;</Message></Error></ErrorResponse>`),
			stockctl.ExitError, "stockctl: read stack shop: CloudFormation in cn-north-1 answered 409 Conflict (Busy) and gave no reason\n", nil},
		{"400 without a code or a message", cloudFormation(t, 400, `<ErrorResponse><Error><Type>Sender</Type></Error></ErrorResponse>`),
			stockctl.ExitError, "stockctl: read stack shop: CloudFormation in cn-north-1 answered 400 Bad Request and gave no reason\n", nil},
		{"400 ValidationError", cloudFormation(t, 400, `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id shop does not exist</Message></Error></ErrorResponse>`),
			stockctl.ExitError, "stockctl: read stack shop: Stack with id shop does not exist\n", nil},
		// No answer: what failed, when the SDK's error says it, never its text.
		{"connection refused", closedURL(t), stockctl.ExitUnreachable,
			"stockctl: read stack shop: cannot reach CloudFormation in cn-north-1: connection refused (check the network and --region)\n", nil},
		{"no such host", "https://cloudformation.cn-north-1.amazonaws.com.cn", stockctl.ExitUnreachable,
			"stockctl: read stack shop: cannot reach CloudFormation in cn-north-1: no such host (check the network and --region)\n", &http.Client{Transport: noHostTransport()}},
		{"timed out", silentServer(t).URL, stockctl.ExitUnreachable,
			"stockctl: read stack shop: cannot reach CloudFormation in cn-north-1: timed out (check the network and --region)\n", &http.Client{Timeout: 50 * time.Millisecond}},
		{"untrusted certificate", untrustedServer.URL, stockctl.ExitUnreachable,
			"stockctl: read stack shop: cannot reach CloudFormation in cn-north-1: its TLS certificate is not trusted (check the network and --region)\n", nil},
		{"a failure it does not name", "http://127.0.0.1:1", stockctl.ExitUnreachable,
			"stockctl: read stack shop: cannot reach CloudFormation in cn-north-1: check the network and --region\n", &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, errors.New("proxyconnect tcp: secret proxy details")
			})}},
	} {
		var errOut bytes.Buffer
		sent := false
		env := cloudFormationEnv(c.endpoint, c.client, &errOut, &sent)
		code := stockctl.Run(context.Background(), []string{"--stack", "shop", "list"}, env)
		if got := errOut.String(); code != c.code || sent || got != c.want {
			t.Errorf("%s: exit %d, API called %v, err %q; want exit %d, the API not called, %q", c.name, code, sent, got, c.code, c.want)
		}
	}
}

// cloudFormationEnv is an Env whose DescribeStacks (the SDK's own) goes to endpoint
// through client (nil: the SDK's own), once, with credentials, in cn-north-1; its
// errors go to errOut, and *sent is set if the API is called.
func cloudFormationEnv(endpoint string, client aws.HTTPClient, errOut *bytes.Buffer, sent *bool) stockctl.Env {
	return stockctl.Env{Stdout: io.Discard, Stderr: errOut, Getenv: func(string) string { return "" }, HTTP: sendsNothing(sent),
		LoadConfig: func(context.Context, stockctl.ConfigOptions) (aws.Config, error) {
			return aws.Config{Region: "cn-north-1", BaseEndpoint: aws.String(endpoint), HTTPClient: client,
				Retryer: func() aws.Retryer { return aws.NopRetryer{} }, // one request: the SDK's retries wait seconds
				Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
					return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
				})}, nil
		},
		StackOutputs: stockctl.DescribeStackOutputs,
	}
}

// --stack NAME takes only an answer about stack NAME, exactly (names are case
// sensitive), or for an ARN the stack of that id, with one ApiUrl output: another
// stack's outputs are never used (exit 1, the API not called).
func TestRun_StackRefusesAnAnswerAboutAnotherStack(t *testing.T) {
	const otherARN = "arn:aws:cloudformation:cn-north-1:123456789012:stack/shop/0a1b2c3d-0000-4000-8000-000000000002"
	for _, c := range []struct{ name, stack, answer, want string }{
		{"another stack's name", "shop", stackAnswer("other", "https://a.example.com"), `stack "other"`},
		{"the name in another case", "shop", stackAnswer("SHOP", "https://a.example.com"), `stack "SHOP"`},
		{"another stack's id", otherARN, stackAnswer("shop", "https://a.example.com"), `stack id "` + stackARN + `"`},
		{"two ApiUrl outputs", "shop", stackAnswer("shop", "https://a.example.com", "https://b.example.com"), "two ApiUrl outputs"},
	} {
		var errOut bytes.Buffer
		sent := false
		code := stockctl.Run(context.Background(), []string{"--stack", c.stack, "list"}, cloudFormationEnv(cloudFormation(t, 200, c.answer), nil, &errOut, &sent))
		want := "stockctl: read stack " + c.stack + ": CloudFormation in cn-north-1 answered " + c.want + ", not the one stack asked for: none of its outputs is used\n"
		if got := errOut.String(); code != stockctl.ExitError || sent || got != want {
			t.Errorf("%s: exit %d, API called %v, err %q; want exit 1, the API not called, %q", c.name, code, sent, got, want)
		}
	}
	var errOut bytes.Buffer
	sent := false
	code := stockctl.Run(context.Background(), []string{"--stack", stackARN, "list"}, cloudFormationEnv(cloudFormation(t, 200, stackAnswer("shop", "https://a.example.com")), nil, &errOut, &sent))
	if !sent { // its own id: the API is called (and fails here)
		t.Errorf("the stack's own id: exit %d, err %q; want the API called", code, errOut.String())
	}
}

// sendsNothing is an HTTP client that fails every request, setting *sent.
func sendsNothing(sent *bool) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		*sent = true
		return nil, errors.New("sent")
	})}
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A role profile (role_arn with a source_profile: credentials from STS AssumeRole,
// through the SDK's own configuration loading) whose STS does not answer is said as
// STS not reached, exit 5, naming what failed, not as a profile without usable
// credentials; nothing is sent. An STS that answers and refuses stays a profile
// without usable credentials, and the EC2 instance metadata service not answering
// (the default chain's last resort, off EC2) no credentials found, exit 1.
func TestRun_SaysAnUnreachableSTSForARoleProfileAsUnreachable(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT"} {
		t.Setenv(k, "")
	}
	configFile := filepath.Join(t.TempDir(), "config")
	const profiles = "[profile ops]\nrole_arn = arn:aws:iam::123456789012:role/ops\nsource_profile = base\n\n" +
		"[profile base]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = secret\n"
	if err := os.WriteFile(configFile, []byte(profiles), 0o600); err != nil {
		t.Fatal(err)
	}
	closed := closedURL(t)
	refused := cloudFormation(t, 403, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/x is not authorized</Message></Error></ErrorResponse>`)
	for _, c := range []struct {
		name, profile, sts string
		code               int
		want               string
	}{
		{"STS refuses the connection", "ops", closed, stockctl.ExitUnreachable, `stockctl: cannot reach STS for the AWS credentials of profile "ops": connection refused` + "\n"},
		{"STS refuses the role", "ops", refused, stockctl.ExitError, `stockctl: AWS profile "ops" gives no usable credentials: check its keys or role in`},
		{"no profile, no EC2 instance metadata service", "", closed, stockctl.ExitError, "stockctl: no AWS credentials found: give --profile NAME"},
	} {
		var errOut bytes.Buffer
		sent := false
		env := stockctl.Env{Stdout: io.Discard, Stderr: &errOut, Getenv: func(string) string { return "" }, HTTP: sendsNothing(&sent),
			LoadConfig: func(ctx context.Context, o stockctl.ConfigOptions) (aws.Config, error) {
				return config.LoadDefaultConfig(ctx, config.WithRegion(o.Region), config.WithSharedConfigProfile(o.Profile),
					config.WithSharedConfigFiles([]string{configFile}), config.WithSharedCredentialsFiles([]string{}),
					config.WithBaseEndpoint(c.sts), config.WithRetryMaxAttempts(1), config.WithLogger(logging.Nop{}),
					config.WithEC2RoleCredentialOptions(func(o *ec2rolecreds.Options) { // one request: its retries wait seconds
						o.Client = imds.New(imds.Options{Endpoint: closed, Retryer: aws.NopRetryer{}})
					}))
			},
		}
		args := []string{"--endpoint", "https://abc123.execute-api.cn-north-1.amazonaws.com.cn", "list"}
		if c.profile != "" {
			args = append(args, "--profile", c.profile)
		}
		code := stockctl.Run(context.Background(), args, env)
		if got := errOut.String(); code != c.code || sent || !strings.HasPrefix(got, c.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("%s: exit %d, sent %v, err %q; want exit %d, nothing sent, %q", c.name, code, sent, got, c.code, c.want)
		}
	}
}

// An endpoint holding a user and password (Go's client sent them as Basic
// authorization), a query or a fragment (dropped from every request) is refused before
// anything is sent: from --endpoint a usage error, from a stack's ApiUrl the stack's
// fault (exit 1); the message says what is wrong and never shows the password or the
// query's value.
func TestRun_RefusesAnEndpointWithCredentialsOrAQuery(t *testing.T) {
	srv, paths := fakeAPI(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	withUser := "http://ops:s3cret@" + host
	stacks := map[string]map[string]string{"user": {"ApiUrl": withUser}, "query": {"ApiUrl": srv.URL + "/?key=s3cret"}}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--endpoint", withUser, "get", "cup-01"}, stockctl.ExitUsage, "credentials do not belong in the URL"},
		{[]string{"--endpoint", "ftp://ops:s3cret@" + host, "get", "cup-01"}, stockctl.ExitUsage, "is not an http(s) URL"},
		{[]string{"--endpoint", srv.URL + "/?key=s3cret", "get", "cup-01"}, stockctl.ExitUsage, "query or fragment"},
		{[]string{"--endpoint", srv.URL + "?", "get", "cup-01"}, stockctl.ExitUsage, "query or fragment"},
		{[]string{"--endpoint", srv.URL + "/#s3cret", "get", "cup-01"}, stockctl.ExitUsage, "query or fragment"},
		{[]string{"--stack", "user", "--region", "cn-north-1", "get", "cup-01"}, stockctl.ExitError, "credentials do not belong in the URL"},
		{[]string{"--stack", "query", "--region", "cn-north-1", "get", "cup-01"}, stockctl.ExitError, "query or fragment"},
	} {
		code, out, errOut := run(c.args, stacks, new([]stockctl.ConfigOptions))
		if code != c.code || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "s3cret") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, out %q, err %q; want exit %d, one line with %q, no password", c.args, code, out, errOut, c.code, c.want)
		}
	}
	if len(*paths) != 0 {
		t.Errorf("sent %q to an endpoint with credentials or a query", *paths)
	}
}
