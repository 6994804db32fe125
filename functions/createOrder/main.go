// Command createOrder is the createOrder Lambda function: POST /orders reserves stock
// and opens a PENDING order; GET /orders/{orderId} and GET /skus/{skuId} read them.
// Configuration: see createorder.LoadConfig; it refuses to start on a bad setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/createorder"
	"github.com/stockguard/stockguard/internal/dynamo"
)

func main() {
	log, cfg, aws := coldstart.Load("createOrder", os.Getenv, createorder.LoadConfig)
	store := coldstart.Store(aws, cfg.Tables, dynamo.Options{PaymentTimeout: cfg.PaymentTimeout, Shaping: cfg.Shaping})
	queue := closeq.New(sqs.NewFromConfig(aws), cfg.CloseQueueURL, nil)
	lambda.Start(createorder.New(store, queue, log).Handle)
}
