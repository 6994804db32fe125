// Command login is the login Lambda function: POST /auth/wechat exchanges a wx.login
// code for the buyer's openid and answers a login token signed through AWS KMS, or the
// buyer's last one while it has half its life left (package login, whose configuration
// it refuses to start without). The app id and AppSecret come from the AWS Secrets
// Manager secret it names (see wechatpay.Secret), read once at cold start.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	tokens "github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring/function/login"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxlogin"
)

func main() {
	coldstart.Run(login.Function, os.Getenv, login.Load, func(s coldstart.Start[login.Config]) (*lambdaevent.Function, error) {
		app, err := secret.App(context.Background(), s.AWS, s.Config.SecretARN)
		if err != nil {
			return nil, err
		}
		wechat, err := wxlogin.New(wxlogin.Config{AppID: app.AppID, AppSecret: app.AppSecret})
		if err != nil {
			return nil, err
		}
		signer, err := kmssign.New(kms.NewFromConfig(s.AWS), s.Config.KeyID)
		if err != nil {
			return nil, err
		}
		seal, err := tokens.SealKey(app.AppSecret)
		if err != nil {
			return nil, err
		}
		return login.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.StoreTables()), wechat, signer, seal)
	})
}
