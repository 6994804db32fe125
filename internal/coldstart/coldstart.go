// Package coldstart is what every Lambda function's main does before lambda.Start: a
// JSON logger on standard output, the function's configuration parsed once from the
// environment the main passes in, and the AWS SDK configuration. A function that
// cannot start logs why at error level and exits, so Lambda reports an init error
// instead of answering requests with a bad setting.
package coldstart

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
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
	awsCfg, err := AWSConfig()
	if err != nil {
		Exit(log, "load AWS config", err)
	}
	return log, cfg, awsCfg
}

// AWSConfig returns the AWS SDK configuration a function runs with, read from the
// environment Lambda gives it (Lambda developer guide, "Defined runtime environment
// variables"): the region from AWS_REGION and the execution role's credentials from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, which is where the
// SDK's default credential chain finds them in Lambda too. It honours the SDK's
// environment settings (AWS_MAX_ATTEMPTS, AWS_RETRY_MODE, AWS_ENDPOINT_URL and the
// per-service AWS_ENDPOINT_URL_<SERVICE>, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS) as
// config.LoadDefaultConfig does.
//
// It does not use config.LoadDefaultConfig: that links the shared-config parser and
// the STS, SSO, SSO OIDC and sign-in clients of the full credential chain, which a
// Lambda function never uses, and they are about 1.5 MB of every bootstrap. Errors:
// a malformed SDK environment setting; AWS_REGION or the access key unset.
func AWSConfig() (aws.Config, error) {
	env, err := config.NewEnvConfig()
	if err != nil {
		return aws.Config{}, err
	}
	if env.Region == "" {
		return aws.Config{}, errors.New("AWS_REGION is not set")
	}
	if !env.Credentials.HasKeys() {
		return aws.Config{}, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	c := env.Credentials
	cfg := aws.Config{
		Region:           env.Region,
		Credentials:      credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken),
		RetryMaxAttempts: env.RetryMaxAttempts,
		RetryMode:        env.RetryMode,
		ConfigSources:    []any{env}, // services read AWS_ENDPOINT_URL_<SERVICE> through it
	}
	if env.BaseEndpoint != "" && (env.IgnoreConfiguredEndpoints == nil || !*env.IgnoreConfiguredEndpoints) {
		cfg.BaseEndpoint = aws.String(env.BaseEndpoint)
	}
	return cfg, nil
}

// Store returns the store on tables with opts, through a DynamoDB client built from
// awsCfg with dynamo.ClientOptions, as every function that keeps stock or orders uses.
func Store(awsCfg aws.Config, tables dynamo.Tables, opts dynamo.Options) *dynamo.Store {
	return dynamo.New(dynamodb.NewFromConfig(awsCfg, dynamo.ClientOptions), tables, opts)
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

// WeChatPayClient returns the WeChat Pay merchant API client configured by the
// merchant secret arn (see Secret and wechatpay.ClientConfigFromSecret), read again on
// an answer signed with an unknown Wechatpay-Serial or after a TTL
// (wechatpay.RotatingClient); onReload (may be nil) hears of each re-read. On error it
// calls Exit.
func WeChatPayClient(log *slog.Logger, awsCfg aws.Config, arn string, onReload func(context.Context, error)) *wechatpay.RotatingClient {
	client, err := wechatpay.NewRotatingClient(context.Background(), SecretReader(awsCfg, arn), wechatpay.RotateOptions{OnReload: onReload})
	if err != nil {
		Exit(log, "configure the WeChat Pay merchant client from the secret", err)
	}
	return client
}

// WeChatPayVerifier returns the verifier of WeChat Pay notifications configured by
// the merchant secret arn (see Secret and wechatpay.Secret), read again when a
// notification names an unknown Wechatpay-Serial or after a TTL
// (wechatpay.RotatingVerifier); onReload (may be nil) hears of each re-read. On error
// it calls Exit.
func WeChatPayVerifier(log *slog.Logger, awsCfg aws.Config, arn string, onReload func(context.Context, error)) *wechatpay.RotatingVerifier {
	verifier, err := wechatpay.NewRotatingVerifier(context.Background(), SecretReader(awsCfg, arn), wechatpay.RotateOptions{OnReload: onReload})
	if err != nil {
		Exit(log, "configure WeChat Pay verification from the secret", err)
	}
	return verifier
}
