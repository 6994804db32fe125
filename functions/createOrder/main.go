// Command createOrder is the createOrder Lambda function: POST /orders reserves stock
// and opens a PENDING order; GET /orders/{orderId} and GET /skus/{skuId} read them
// (package createorder: its configuration, which it refuses to start without, and its
// handler); POST /skus/{skuId}/queue, GET /queue/{ticket} and GET /skus/{skuId}/line
// serve the waiting room, whose admission signing secret it reads once at cold start.
// The scalper check asks WeChat's server API with the app id and AppSecret of the AWS
// Secrets Manager secret it names, read at the first check.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/secret"
	"github.com/stockguard/stockguard/internal/wiring/function/createorder"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	coldstart.Run(createorder.Function, os.Getenv, createorder.Load, func(s coldstart.Start[createorder.Config]) (*lambdaevent.Function, error) {
		keys, err := secret.AdmissionKeys(context.Background(), s.AWS, s.Config.AdmissionSecretARN)
		if err != nil {
			return nil, err
		}
		queues := sqs.NewFromConfig(s.AWS)
		ask := createorder.RiskAsker(func(ctx context.Context) (*wxapi.Client, error) {
			app, err := secret.App(ctx, s.AWS, s.Config.SecretARN)
			if err != nil {
				return nil, err
			}
			return wxapi.New(wxapi.Config{AppID: app.AppID, AppSecret: app.AppSecret})
		})
		return createorder.Build(s.Config, s.Log, s.Config.OpenStore(s.AWS),
			closeq.New(queues, s.Config.CloseQueueURL, nil), wxqueue.New(queues, s.Config.WeChatQueueURL), keys, ask)
	})
}
