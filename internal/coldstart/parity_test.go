package coldstart_test

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/coldstart"
)

// errSent ends a request at the transport, once its URL and signature are recorded.
var errSent = errors.New("recorded, not sent")

// sentTo is the host and the signature's credential scope of a DynamoDB ListTables
// made with cfg (the transport replaced by a recorder when record is true).
func sentTo(t *testing.T, cfg aws.Config, record bool) (host, auth string, err error) {
	t.Helper()
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.RetryMaxAttempts = 1
		if record {
			o.HTTPClient = recorder(func(r *http.Request) { host, auth = r.URL.Host, r.Header.Get("Authorization")[:60] })
		}
	})
	_, err = client.ListTables(t.Context(), &dynamodb.ListTablesInput{})
	return host, auth, err
}

type recorder func(*http.Request)

func (f recorder) Do(r *http.Request) (*http.Response, error) { f(r); return nil, errSent }

// AWSConfig and the SDK's config.LoadDefaultConfig read every setting the functions
// rely on alike (AWS SDKs and Tools Reference Guide, "Environment variables support",
// "Service-specific endpoints", "Dual-stack and FIPS endpoints"): the same region,
// retries and credentials, the same endpoint for DynamoDB, and both refuse a malformed
// setting.
func TestAWSConfig_ReadsTheSDKsSettingsAsLoadDefaultConfigDoes(t *testing.T) {
	cases := map[string]map[string]string{
		"Lambda's variables":       {},
		"default region":           {"AWS_REGION": "", "AWS_DEFAULT_REGION": "cn-northwest-1"},
		"retries":                  {"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive"},
		"one endpoint":             {"AWS_ENDPOINT_URL": "http://127.0.0.1:4566"},
		"a service's endpoint":     {"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8001"},
		"endpoints ignored":        {"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8001", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "TRUE"},
		"FIPS":                     {"AWS_REGION": "us-east-1", "AWS_USE_FIPS_ENDPOINT": "true"},
		"dual-stack":               {"AWS_REGION": "us-east-1", "AWS_USE_DUALSTACK_ENDPOINT": "true"},
		"FIPS off":                 {"AWS_REGION": "us-east-1", "AWS_USE_FIPS_ENDPOINT": "false"},
		"malformed attempts":       {"AWS_MAX_ATTEMPTS": "many"},
		"malformed retry mode":     {"AWS_RETRY_MODE": "eager"},
		"malformed FIPS":           {"AWS_USE_FIPS_ENDPOINT": "yes"},
		"malformed ignore setting": {"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "1"},
	}
	for name, env := range cases {
		t.Run(name, func(t *testing.T) {
			lambdaEnvironment(t, env)
			ours, oursErr := coldstart.AWSConfig(os.Getenv)
			sdk, sdkErr := config.LoadDefaultConfig(t.Context())
			if (oursErr == nil) != (sdkErr == nil) {
				t.Fatalf("AWSConfig: %v; LoadDefaultConfig: %v", oursErr, sdkErr)
			}
			if oursErr != nil {
				return
			}
			if ours.Region != sdk.Region || ours.RetryMaxAttempts != sdk.RetryMaxAttempts || ours.RetryMode != sdk.RetryMode ||
				aws.ToString(ours.BaseEndpoint) != aws.ToString(sdk.BaseEndpoint) {
				t.Errorf("AWSConfig %s/%d/%s/%s, LoadDefaultConfig %s/%d/%s/%s", ours.Region, ours.RetryMaxAttempts, ours.RetryMode,
					aws.ToString(ours.BaseEndpoint), sdk.Region, sdk.RetryMaxAttempts, sdk.RetryMode, aws.ToString(sdk.BaseEndpoint))
			}
			oursHost, oursAuth, _ := sentTo(t, ours, true)
			sdkHost, sdkAuth, _ := sentTo(t, sdk, true)
			if oursHost != sdkHost || oursAuth != sdkAuth {
				t.Errorf("AWSConfig sends to %s as %q, LoadDefaultConfig to %s as %q", oursHost, oursAuth, sdkHost, sdkAuth)
			}
		})
	}
}

// AWS_CA_BUNDLE: a server whose certificate only that bundle trusts is reached with
// either configuration; a bundle without a certificate is refused by both.
func TestAWSConfig_TrustsAWS_CA_BUNDLEAsLoadDefaultConfigDoes(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Write([]byte(`{"TableNames":[]}`))
	}))
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	lambdaEnvironment(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": srv.URL, "AWS_CA_BUNDLE": bundle})
	ours, err := coldstart.AWSConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	sdk, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sentTo(t, ours, false); err != nil {
		t.Errorf("AWSConfig with AWS_CA_BUNDLE: %v", err)
	}
	if _, _, err := sentTo(t, sdk, false); err != nil {
		t.Errorf("LoadDefaultConfig with AWS_CA_BUNDLE: %v", err)
	}
	os.WriteFile(bundle, []byte("not a certificate"), 0o600)
	_, oursErr := coldstart.AWSConfig(os.Getenv)
	_, sdkErr := config.LoadDefaultConfig(t.Context())
	if oursErr == nil || sdkErr == nil {
		t.Errorf("a bundle without a certificate: AWSConfig %v, LoadDefaultConfig %v; want both refused", oursErr, sdkErr)
	}
}

// lambdaEnvironment sets the variables Lambda gives a function, then env over them,
// with no shared config or credentials file to read.
func lambdaEnvironment(t *testing.T, env map[string]string) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	base := map[string]string{"AWS_REGION": "cn-north-1", "AWS_ACCESS_KEY_ID": "AKIDROLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN": "token", "AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none}
	for _, name := range []string{"AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE", "AWS_ENDPOINT_URL",
		"AWS_ENDPOINT_URL_DYNAMODB", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT", "AWS_CA_BUNDLE"} {
		t.Setenv(name, "")
	}
	for k, v := range base {
		t.Setenv(k, v)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}
