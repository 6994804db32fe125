// Command closeOrder is the closeOrder Lambda function: it releases the stock of
// unpaid orders from close-order queue messages (SQS, partial batch responses), from
// a scheduled sweep (EventBridge) and from POST /orders/{orderId}/cancel.
// Configuration (environment, set by template.yaml): SKUS_TABLE, ORDERS_TABLE,
// STOCK_LOG_TABLE, CLOSE_QUEUE_URL.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/apigw"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/closing"
	"github.com/stockguard/stockguard/internal/dynamo"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	tables := dynamo.Tables{SKUs: os.Getenv("SKUS_TABLE"), Orders: os.Getenv("ORDERS_TABLE"), StockLog: os.Getenv("STOCK_LOG_TABLE")}
	store := dynamo.New(dynamodb.NewFromConfig(cfg, dynamo.ClientOptions), tables, dynamo.Options{})
	queue := closeq.New(sqs.NewFromConfig(cfg), os.Getenv("CLOSE_QUEUE_URL"), nil)
	fn := &closing.Function{
		Closer: closing.New(store, queue, log, closing.Options{}),
		API:    apigw.New(store, nil, log, closing.FunctionName),
	}
	lambda.Start(fn.Invoke)
}
