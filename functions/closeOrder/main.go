// Command closeOrder is the closeOrder Lambda function: it releases the stock of
// unpaid orders from close-order queue messages (SQS, partial batch responses), from
// a scheduled sweep (EventBridge) and from POST /orders/{orderId}/cancel.
// Configuration: see closeorder.LoadConfig; it refuses to start on a bad setting.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/closeorder"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/dynamo"
)

func main() {
	log, cfg, aws := coldstart.Load("closeOrder", os.Getenv, closeorder.LoadConfig)
	store := dynamo.New(dynamodb.NewFromConfig(aws, dynamo.ClientOptions), cfg.Tables, dynamo.Options{})
	queue := closeq.New(sqs.NewFromConfig(aws), cfg.CloseQueueURL, nil)
	lambda.Start(closeorder.NewFunction(closeorder.New(store, queue, log, closeorder.Options{}), log).Invoke)
}
