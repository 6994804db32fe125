// Command login is the login Lambda function: POST /auth/wechat exchanges a wx.login
// code for the buyer's openid and answers a login token signed through AWS KMS.
// Configuration: see login.LoadConfig; it refuses to start on a bad setting. The app id
// and AppSecret come from the AWS Secrets Manager secret it names (see
// wechatpay.Secret), read once at cold start.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) { log.Error(msg, "error", err); os.Exit(1) }
	cfg, err := login.LoadConfig(os.Getenv)
	if err != nil {
		fail("login cannot start", err)
	}
	ctx := context.Background()
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fail("load AWS config", err)
	}
	out, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(cfg.SecretARN)})
	if err != nil {
		fail("read the WeChat Pay secret", err)
	}
	secret, err := wechatpay.ParseSecret([]byte(aws.ToString(out.SecretString)))
	if err == nil && secret.AppSecret == "" {
		err = errors.New("appSecret is missing")
	}
	if err != nil {
		fail("parse the WeChat Pay secret", err)
	}
	wechat, err := wxlogin.New(wxlogin.Config{AppID: secret.AppID, AppSecret: secret.AppSecret})
	if err != nil {
		fail("configure WeChat login", err)
	}
	signer, err := idtoken.NewKMSSigner(kms.NewFromConfig(awsCfg), cfg.KeyID)
	if err != nil {
		fail("configure the token signer", err)
	}
	tokens, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: cfg.Issuer, Audience: cfg.Audience, KeyID: cfg.KeyID}, signer)
	if err != nil {
		fail("configure the token issuer", err)
	}
	store := dynamo.New(dynamodb.NewFromConfig(awsCfg, dynamo.ClientOptions), dynamo.Tables{Orders: cfg.OrdersTable}, dynamo.Options{})
	lambda.Start(login.New(wechat, tokens, store, log, login.Options{}).Handle)
}
