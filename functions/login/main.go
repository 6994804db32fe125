// Command login is the login Lambda function: POST /auth/wechat exchanges a wx.login
// code for the buyer's openid and answers a login token signed through AWS KMS, or the
// buyer's last one while it has half its life left (wiring.Login). Configuration: see wiring.Load; it refuses to start on a bad setting.
// The app id and AppSecret come from the AWS Secrets Manager secret it names (see
// wechatpay.Secret), read once at cold start.
package main

import (
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

func main() {
	log, cfg, aws := coldstart.Load("login", os.Getenv, wiring.Login.Load)
	secret, err := wechatpay.ParseSecret(coldstart.Secret(log, aws, cfg.SecretARN))
	if err == nil && secret.AppSecret == "" {
		err = errors.New("appSecret is missing")
	}
	if err != nil {
		coldstart.Exit(log, "parse the WeChat Pay secret", err)
	}
	wechat, err := wxlogin.New(wxlogin.Config{AppID: secret.AppID, AppSecret: secret.AppSecret})
	if err != nil {
		coldstart.Exit(log, "configure WeChat login", err)
	}
	signer, err := kmssign.New(kms.NewFromConfig(aws), cfg.KeyID)
	if err != nil {
		coldstart.Exit(log, "configure the token signer", err)
	}
	seal, err := login.SealKey(secret.AppSecret)
	if err != nil {
		coldstart.Exit(log, "derive the token seal key", err)
	}
	fn, err := wiring.Login.Build(cfg, wiring.Clients{Log: log, DynamoDB: coldstart.DynamoDB(aws), WeChatLogin: wechat, Signer: signer, TokenSealKey: seal})
	lambda.Start(coldstart.Must(log, "wire login", fn, err).Invoke)
}
