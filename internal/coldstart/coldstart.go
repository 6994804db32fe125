// Package coldstart is what every Lambda function's main does before lambda.Start: a
// JSON logger on standard output, the function's configuration parsed once from the
// environment the main passes in, and the AWS SDK configuration. A function that
// cannot start logs why at error level and exits, so Lambda reports an init error
// instead of answering requests with a bad setting.
package coldstart

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Load returns the JSON logger on standard output that the function logs to
// (CloudWatch Logs reads Lambda's standard output), its configuration parsed with
// parse from get (the main passes os.Getenv), and the AWS SDK configuration of the
// Lambda environment (see AWSConfig). On either error it calls Exit, naming function
// (e.g. "createOrder") and the bad setting.
func Load[C any](function string, get envvar.Lookup, parse func(envvar.Lookup) (C, error)) (*slog.Logger, C, aws.Config) {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := parse(get)
	if err != nil {
		Exit(log, function+" cannot start", err)
	}
	awsCfg, err := AWSConfig(get)
	if err != nil {
		Exit(log, "load AWS config", err)
	}
	return log, cfg, awsCfg
}

// AWSConfig returns the AWS SDK configuration a function runs with, read with get
// from the environment Lambda gives it (Lambda developer guide, "Defined runtime
// environment variables"): the region from AWS_REGION (or AWS_DEFAULT_REGION) and the
// execution role's credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, which is where the SDK's default credential chain finds them in
// Lambda too. It honours the SDK's environment settings as config.LoadDefaultConfig
// does (AWS SDKs and Tools Reference Guide, "Environment variables support";
// "Service-specific endpoints"): AWS_MAX_ATTEMPTS, AWS_RETRY_MODE, AWS_ENDPOINT_URL
// and the per-service AWS_ENDPOINT_URL_<SERVICE> (the service's SDK id in upper case,
// spaces as underscores), unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true.
//
// It uses neither config.LoadDefaultConfig nor the config package at all: importing it
// links the shared-config parser and the STS, SSO, SSO OIDC and sign-in clients of the
// full credential chain, which a Lambda function never uses, and their package
// initialisation alone is about 0.5 MB of every bootstrap. Errors: a malformed SDK
// environment setting, naming it; AWS_REGION or the access key unset.
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
		ConfigSources: []any{env}, // services read AWS_ENDPOINT_URL_<SERVICE> through it
	}
	var err error
	if v := get("AWS_MAX_ATTEMPTS"); v != "" {
		if cfg.RetryMaxAttempts, err = strconv.Atoi(v); err != nil {
			return aws.Config{}, fmt.Errorf("invalid value AWS_MAX_ATTEMPTS=%s: %w", v, err)
		}
	}
	if v := get("AWS_RETRY_MODE"); v != "" {
		if cfg.RetryMode, err = aws.ParseRetryMode(v); err != nil {
			return aws.Config{}, fmt.Errorf("invalid value AWS_RETRY_MODE=%s: %w", v, err)
		}
	}
	ignore, _, err := env.GetIgnoreConfiguredEndpoints(context.Background())
	if err != nil {
		return aws.Config{}, err
	}
	if base := get("AWS_ENDPOINT_URL"); base != "" && !ignore {
		cfg.BaseEndpoint = aws.String(base)
	}
	return cfg, nil
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

// GetIgnoreConfiguredEndpoints is AWS_IGNORE_CONFIGURED_ENDPOINT_URLS (true or false,
// any case), when set.
func (e sdkEnvironment) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	switch v := e.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"); {
	case v == "":
		return false, false, nil
	case strings.EqualFold(v, "true"):
		return true, true, nil
	case strings.EqualFold(v, "false"):
		return false, true, nil
	default:
		return false, false, fmt.Errorf("invalid value AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=%s: want true or false", v)
	}
}

// DynamoDB returns the DynamoDB client every store of a function is built on: from
// awsCfg with stockguard's retry rules (dynamo.ClientOptions).
func DynamoDB(awsCfg aws.Config) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, dynamo.ClientOptions)
}

// Must returns fn, or calls Exit naming what could not be built.
func Must[F any](log *slog.Logger, what string, fn F, err error) F {
	if err != nil {
		Exit(log, what, err)
	}
	return fn
}

// Exit logs msg with err at error level and ends the process with status 1.
func Exit(log *slog.Logger, msg string, err error) {
	log.Error(msg, "error", err)
	os.Exit(1)
}

// Secret returns the SecretString of the AWS Secrets Manager secret arn (the merchant
// configuration, see wechatpay.Secret), read once at cold start; on error it calls
// Exit. The function's policy must allow secretsmanager:GetSecretValue on arn.
func Secret(log *slog.Logger, awsCfg aws.Config, arn string) []byte {
	data, err := SecretReader(awsCfg, arn)(context.Background())
	if err != nil {
		Exit(log, "read the WeChat Pay secret", err)
	}
	return data
}

// SecretReader returns a function that reads the current SecretString of the AWS
// Secrets Manager secret arn on each call (for wechatpay.RotatingVerifier and
// RotatingClient, which call it at cold start and again when the merchant's keys
// rotate). The function's policy must allow secretsmanager:GetSecretValue on arn.
func SecretReader(awsCfg aws.Config, arn string) func(context.Context) ([]byte, error) {
	client := secretsmanager.NewFromConfig(awsCfg)
	return func(ctx context.Context) ([]byte, error) {
		out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return nil, err
		}
		return []byte(aws.ToString(out.SecretString)), nil
	}
}

// secretReloads reports function's re-reads of the merchant secret
// (wechatpay.RotateOptions.OnReload): a SecretReloaded or SecretReloadFailed count
// with function (its short name) as the Function dimension, and a failure at error
// level (the old keys stay in use).
func secretReloads(log *slog.Logger, function string) func(context.Context, error) {
	return metric.Outcomes(log, function, metric.SecretReloaded, metric.SecretReloadFailed, "merchant secret not re-read; the old keys stay in use")
}

// WeChatPayClient returns the WeChat Pay merchant API client configured by the
// merchant secret arn (see Secret and wechatpay.ClientConfigFromSecret), read again on
// an answer signed with an unknown Wechatpay-Serial or after a TTL
// (wechatpay.RotatingClient); each re-read is counted for function (its short name).
// On error it calls Exit.
func WeChatPayClient(log *slog.Logger, awsCfg aws.Config, arn, function string) *wechatpay.RotatingClient {
	client, err := wechatpay.NewRotatingClient(context.Background(), SecretReader(awsCfg, arn), wechatpay.RotateOptions{OnReload: secretReloads(log, function)})
	if err != nil {
		Exit(log, "configure the WeChat Pay merchant client from the secret", err)
	}
	return client
}

// WeChatPayVerifier returns the verifier of WeChat Pay notifications configured by
// the merchant secret arn (see Secret and wechatpay.Secret), read again when a
// notification names an unknown Wechatpay-Serial or after a TTL
// (wechatpay.RotatingVerifier); each re-read is counted for function (its short name).
// On error it calls Exit.
func WeChatPayVerifier(log *slog.Logger, awsCfg aws.Config, arn, function string) *wechatpay.RotatingVerifier {
	verifier, err := wechatpay.NewRotatingVerifier(context.Background(), SecretReader(awsCfg, arn), wechatpay.RotateOptions{OnReload: secretReloads(log, function)})
	if err != nil {
		Exit(log, "configure WeChat Pay verification from the secret", err)
	}
	return verifier
}
