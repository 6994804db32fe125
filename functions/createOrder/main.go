// Command createOrder is the createOrder Lambda function: POST /orders reserves stock
// and opens a PENDING order; GET /orders/{orderId} and GET /skus/{skuId} read them.
// Configuration (environment, set by template.yaml): SKUS_TABLE, ORDERS_TABLE,
// STOCK_LOG_TABLE, PAYMENT_TIMEOUT_SECONDS, CLOSE_QUEUE_URL.
package main

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/apigw"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	timeout, err := strconv.Atoi(os.Getenv("PAYMENT_TIMEOUT_SECONDS"))
	if err != nil || timeout < 1 {
		log.Error("PAYMENT_TIMEOUT_SECONDS must be a positive number of seconds")
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	tables := dynamo.Tables{SKUs: os.Getenv("SKUS_TABLE"), Orders: os.Getenv("ORDERS_TABLE"), StockLog: os.Getenv("STOCK_LOG_TABLE")}
	store := dynamo.New(dynamodb.NewFromConfig(cfg, dynamo.ClientOptions), tables, dynamo.Options{PaymentTimeout: time.Duration(timeout) * time.Second})
	queue := closeq.New(sqs.NewFromConfig(cfg), os.Getenv("CLOSE_QUEUE_URL"), nil)
	lambda.Start(apigw.New(store, queue, log, "createOrder").Handle)
}
