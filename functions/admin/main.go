// Command admin is the admin Lambda function: the merchant API under /admin/ (SKUs,
// adjustments, reshards, ledgers, orders, refunds, reconcile), behind the HTTP API's
// AWS_IAM authorization (wiring.Admin). Configuration: see wiring.Load; it refuses to
// start on a bad setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	log, cfg, aws := coldstart.Load("admin", os.Getenv, wiring.Admin.Load)
	fn, err := wiring.Admin.Build(cfg, wiring.Clients{
		Log: log, DynamoDB: coldstart.DynamoDB(aws), Alerts: sns.NewFromConfig(aws),
		RefundQueue: refunds.NewQueue(sqs.NewFromConfig(aws), cfg.RefundQueueURL),
		WeChatQueue: wxqueue.New(sqs.NewFromConfig(aws), cfg.WeChatQueueURL),
	})
	lambda.Start(coldstart.Must(log, "wire admin", fn, err).Invoke)
}
