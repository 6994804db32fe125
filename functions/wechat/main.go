// Command wechat is the wechat Lambda function: it takes the WeChat queue's messages
// (SQS, partial batch responses) and calls WeChat's mini-program server API for them:
// shipping uploads and subscribe messages (wiring.WeChat). Configuration: see
// wiring.Load; it refuses to start on a bad setting. The app id and AppSecret come
// from the AWS Secrets Manager secret it names (see wechatpay.Secret), read once at
// cold start; at cold start it also sets the order center's detail path
// (update_order_detail_path; a failure is logged and the next cold start tries again).
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	log, cfg, aws := coldstart.Load("wechat", os.Getenv, wiring.WeChat.Load)
	secret, err := wechatpay.ParseSecret(coldstart.Secret(log, aws, cfg.SecretARN))
	if err == nil && secret.AppSecret == "" {
		err = errors.New("appSecret is missing")
	}
	if err != nil {
		coldstart.Exit(log, "parse the WeChat Pay secret", err)
	}
	api, err := wxapi.New(wxapi.Config{AppID: secret.AppID, AppSecret: secret.AppSecret})
	if err != nil {
		coldstart.Exit(log, "configure WeChat's server API", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := api.UpdateOrderDetailPath(ctx, cfg.OrderDetailPath); err != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "order detail path not set", slog.String("error", err.Error()))
	}
	cancel()
	fn, err := wiring.WeChat.Build(cfg, wiring.Clients{
		Log: log, DynamoDB: coldstart.DynamoDB(aws), WeChatQueue: wxqueue.New(sqs.NewFromConfig(aws), cfg.WeChatQueueURL), WxAPI: api,
	})
	lambda.Start(coldstart.Must(log, "wire wechat", fn, err).Invoke)
}
