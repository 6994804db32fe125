// Command login is the login Lambda function: POST /auth/wechat exchanges a wx.login
// code for the buyer's openid and answers a login token signed through AWS KMS.
// Configuration: see login.LoadConfig; it refuses to start on a bad setting. The app id
// and AppSecret come from the AWS Secrets Manager secret it names (see
// wechatpay.Secret), read once at cold start.
package main

import (
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

func main() {
	log, cfg, awsCfg := coldstart.Load("login", os.Getenv, login.LoadConfig)
	secret, err := wechatpay.ParseSecret(coldstart.Secret(log, awsCfg, cfg.SecretARN))
	if err != nil {
		coldstart.Exit(log, "parse the WeChat Pay secret", err)
	}
	if secret.AppSecret == "" {
		coldstart.Exit(log, "parse the WeChat Pay secret", errors.New("appSecret is missing"))
	}
	wechat, err := wxlogin.New(wxlogin.Config{AppID: secret.AppID, AppSecret: secret.AppSecret})
	if err != nil {
		coldstart.Exit(log, "configure WeChat login", err)
	}
	signer, err := idtoken.NewKMSSigner(kms.NewFromConfig(awsCfg), cfg.KeyID)
	if err != nil {
		coldstart.Exit(log, "configure the token signer", err)
	}
	tokens, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: cfg.Issuer, Audience: cfg.Audience, KeyID: cfg.KeyID}, signer)
	if err != nil {
		coldstart.Exit(log, "configure the token issuer", err)
	}
	store := coldstart.Store(awsCfg, dynamo.Tables{Orders: cfg.OrdersTable}, dynamo.Options{})
	lambda.Start(login.New(wechat, tokens, store, log, login.Options{}).Handle)
}
