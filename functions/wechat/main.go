// Command wechat is the wechat Lambda function: it takes the WeChat queue's messages
// (SQS, partial batch responses) and calls WeChat's mini-program server API for them:
// shipping uploads and subscribe messages (package wechat, whose configuration it
// refuses to start without). The app id and AppSecret come from the AWS Secrets
// Manager secret it names (see wechatpay.Secret), read once at cold start; at cold
// start it also sets the order center's detail path (update_order_detail_path; a
// failure is logged and the next cold start tries again).
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wiring/function/wechat"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	coldstart.Run(wechat.Function, os.Getenv, wechat.Load, func(s coldstart.Start[wechat.Config]) (*lambdaevent.Function, error) {
		app, err := secret.App(context.Background(), s.AWS, s.Config.SecretARN)
		if err != nil {
			return nil, err
		}
		api, err := wxapi.New(wxapi.Config{AppID: app.AppID, AppSecret: app.AppSecret})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := api.UpdateOrderDetailPath(ctx, s.Config.OrderDetailPath); err != nil {
			s.Log.LogAttrs(ctx, slog.LevelWarn, "order detail path not set", slog.String("error", err.Error()))
		}
		return wechat.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables), wxqueue.New(sqs.NewFromConfig(s.AWS), s.Config.WeChatQueueURL), api)
	})
}
