// Package coldstart is what every Lambda function's main does (Run): a JSON logger
// on standard output whose lines carry the invocation they belong to (Logger), at the
// level of the function's logging configuration; the function's configuration parsed
// once from the environment the main passes in; the AWS SDK configuration; the
// function's handler built from them; lambda.Start. A function that cannot start logs
// why at error level and exits, so Lambda reports an init error instead of answering
// requests with a bad setting.
package coldstart

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/xray"
)

// Start is what a function's build is given at cold start: its logger, its
// configuration (read by its Load) and the AWS SDK configuration its clients are made
// from.
type Start[C any] struct {
	Log    *slog.Logger
	Config C
	AWS    aws.Config
}

// Run is a function's main: it builds fn's logger (Logger, at AWS_LAMBDA_LOG_LEVEL),
// reads its configuration with load from get (the main passes os.Getenv), the AWS
// configuration (AWSConfig) with its clients' calls traced (xray.Instrument), builds its handler with build and hands it to
// lambda.Start, each invocation's context carrying what its log lines name
// (Invocations). A bad setting, an AWS configuration it cannot load or a build error
// ends the process (Exit) naming it.
func Run[C any](fn wiring.Function, get envvar.Lookup, load func(envvar.Lookup) (C, error), build func(Start[C]) (*lambdaevent.Function, error)) {
	log := Logger(os.Stdout, fn.Short, get)
	cfg, err := load(get)
	if err != nil {
		Exit(log, fn.Short+" cannot start", err)
	}
	awsCfg, err := AWSConfig(get)
	if err != nil {
		Exit(log, "load AWS config", err)
	}
	xray.Instrument(&awsCfg, get("AWS_XRAY_DAEMON_ADDRESS"))
	h, err := build(Start[C]{Log: log, Config: cfg, AWS: awsCfg})
	if err != nil {
		Exit(log, "wire "+fn.Short, err)
	}
	lambda.Start(Invocations(h.Invoke))
}

// AWSConfig returns the AWS SDK configuration a function runs with, read with get
// from the environment Lambda gives it (Lambda developer guide, "Defined runtime
// environment variables"): the region from AWS_REGION (or AWS_DEFAULT_REGION) and the
// execution role's credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, which is where the SDK's default credential chain finds them in
// Lambda too. It honours the SDK's environment settings as config.LoadDefaultConfig
// does (AWS SDKs and Tools Reference Guide, "Environment variables support",
// "Service-specific endpoints", "Dual-stack and FIPS endpoints"): AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE, AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> (unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true), AWS_USE_FIPS_ENDPOINT,
// AWS_USE_DUALSTACK_ENDPOINT and AWS_CA_BUNDLE; a parity test compares each with
// config.LoadDefaultConfig.
//
// It does not use config.LoadDefaultConfig: importing the config package links the
// shared-config parser and the STS, SSO, SSO OIDC and sign-in clients of the full
// credential chain, which a Lambda function never uses: measured, 1.7 to 2.0 MB more
// in every bootstrap, every one of them then over Lambda's 10 MiB budget of ours
// (README, "Test it"). Errors: a malformed SDK environment setting or an unreadable
// CA bundle, naming it; AWS_REGION or the access key unset.
func AWSConfig(get envvar.Lookup) (aws.Config, error) {
	env := sdkEnvironment{get: get}
	region := cmp.Or(get("AWS_REGION"), get("AWS_DEFAULT_REGION"))
	if region == "" {
		return aws.Config{}, errors.New("AWS_REGION is not set")
	}
	key, secret := get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY")
	if key == "" || secret == "" {
		return aws.Config{}, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	cfg := aws.Config{
		Region:        region,
		Credentials:   credentials.NewStaticCredentialsProvider(key, secret, get("AWS_SESSION_TOKEN")),
		ConfigSources: []any{env}, // services read endpoints, FIPS and dual-stack through it
	}
	if err := env.apply(&cfg); err != nil {
		return aws.Config{}, err
	}
	return cfg, nil
}

// apply sets cfg's retries, base endpoint and CA bundle from the environment.
func (e sdkEnvironment) apply(cfg *aws.Config) error {
	var err error
	if v := e.get("AWS_MAX_ATTEMPTS"); v != "" {
		if cfg.RetryMaxAttempts, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("invalid value AWS_MAX_ATTEMPTS=%s: %w", v, err)
		}
	}
	if v := e.get("AWS_RETRY_MODE"); v != "" {
		if cfg.RetryMode, err = aws.ParseRetryMode(v); err != nil {
			return fmt.Errorf("invalid value AWS_RETRY_MODE=%s: %w", v, err)
		}
	}
	for _, name := range []string{"AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT"} {
		if _, _, err := e.flag(name); err != nil {
			return err
		}
	}
	ignore, _, err := e.GetIgnoreConfiguredEndpoints(context.Background())
	if err != nil {
		return err
	}
	if base := e.get("AWS_ENDPOINT_URL"); base != "" && !ignore {
		cfg.BaseEndpoint = aws.String(base)
	}
	if file := e.get("AWS_CA_BUNDLE"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("AWS_CA_BUNDLE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("AWS_CA_BUNDLE=%s: no PEM certificate in it", file)
		}
		cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		})
	}
	return nil
}

// sdkEnvironment is the SDK's endpoint settings in the environment, as the service
// clients ask their ConfigSources for them (the methods of the SDK's
// internal/configsources providers, which config.EnvConfig also implements).
type sdkEnvironment struct{ get envvar.Lookup }

// GetServiceBaseEndpoint is AWS_ENDPOINT_URL_<sdkID in upper case, spaces as
// underscores>, when set.
func (e sdkEnvironment) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := e.get("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}

// GetIgnoreConfiguredEndpoints is AWS_IGNORE_CONFIGURED_ENDPOINT_URLS, when set.
func (e sdkEnvironment) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	return e.flag("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
}

// GetUseFIPSEndpoint is AWS_USE_FIPS_ENDPOINT, when set.
func (e sdkEnvironment) GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error) {
	on, found, err := e.flag("AWS_USE_FIPS_ENDPOINT")
	if on {
		return aws.FIPSEndpointStateEnabled, found, err
	}
	return aws.FIPSEndpointStateDisabled, found, err
}

// GetUseDualStackEndpoint is AWS_USE_DUALSTACK_ENDPOINT, when set.
func (e sdkEnvironment) GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error) {
	on, found, err := e.flag("AWS_USE_DUALSTACK_ENDPOINT")
	if on {
		return aws.DualStackEndpointStateEnabled, found, err
	}
	return aws.DualStackEndpointStateDisabled, found, err
}

// flag is the boolean setting name (true or false, any case), and whether it is set.
func (e sdkEnvironment) flag(name string) (value, found bool, err error) {
	switch v := e.get(name); {
	case v == "":
		return false, false, nil
	case strings.EqualFold(v, "true"):
		return true, true, nil
	case strings.EqualFold(v, "false"):
		return false, true, nil
	default:
		return false, false, fmt.Errorf("invalid value %s=%s: want true or false", name, v)
	}
}

// Exit logs msg with err at error level and ends the process with status 1.
func Exit(log *slog.Logger, msg string, err error) {
	log.LogAttrs(context.Background(), slog.LevelError, msg, slog.String("error", err.Error()))
	os.Exit(1)
}
