// Package coldstart is what every Lambda function's main does before lambda.Start: a
// JSON logger on standard output, the function's configuration parsed once from the
// environment the main passes in, and the AWS SDK configuration. A function that
// cannot start logs why at error level and exits, so Lambda reports an init error
// instead of answering requests with a bad setting.
package coldstart

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/stockguard/stockguard/internal/envvar"
)

// Load returns the JSON logger on standard output that the function logs to
// (CloudWatch Logs reads Lambda's standard output), its configuration parsed with
// parse from get (the main passes os.Getenv), and the AWS SDK's default configuration
// (region and credentials from the Lambda environment). On either error it calls
// Exit, naming function (e.g. "createOrder") and the bad setting.
func Load[C any](function string, get envvar.Lookup, parse func(envvar.Lookup) (C, error)) (*slog.Logger, C, aws.Config) {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := parse(get)
	if err != nil {
		Exit(log, function+" cannot start", err)
	}
	awsCfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		Exit(log, "load AWS config", err)
	}
	return log, cfg, awsCfg
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
