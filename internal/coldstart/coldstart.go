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
	"github.com/stockguard/stockguard/internal/wechatpay"
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
	out, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		Exit(log, "read the WeChat Pay secret", err)
	}
	return []byte(aws.ToString(out.SecretString))
}

// WeChatPayClient returns the WeChat Pay merchant API client configured by the
// merchant secret arn (see Secret and wechatpay.ClientConfigFromSecret); on error it
// calls Exit.
func WeChatPayClient(log *slog.Logger, awsCfg aws.Config, arn string) *wechatpay.Client {
	payCfg, err := wechatpay.ClientConfigFromSecret(Secret(log, awsCfg, arn))
	if err != nil {
		Exit(log, "parse the WeChat Pay secret", err)
	}
	client, err := wechatpay.NewClient(payCfg)
	if err != nil {
		Exit(log, "configure the WeChat Pay merchant client", err)
	}
	return client
}
