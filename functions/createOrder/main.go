// Command createOrder is the createOrder Lambda function: POST /orders reserves stock
// and opens a PENDING order; GET /orders/{orderId} and GET /skus/{skuId} read them
// (wiring.CreateOrder). Configuration: see wiring.Load; it refuses to start on a bad
// setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	log, cfg, aws := coldstart.Load("createOrder", os.Getenv, wiring.CreateOrder.Load)
	fn, err := wiring.CreateOrder.Build(cfg, wiring.Clients{
		Log: log, DynamoDB: coldstart.DynamoDB(aws), CloseQueue: closeq.New(sqs.NewFromConfig(aws), cfg.CloseQueueURL, nil),
		WeChatQueue: wxqueue.New(sqs.NewFromConfig(aws), cfg.WeChatQueueURL),
	})
	lambda.Start(coldstart.Must(log, "wire createOrder", fn, err).Invoke)
}
