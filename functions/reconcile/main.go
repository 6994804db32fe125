// Command reconcile is the reconcile Lambda function: on an EventBridge schedule it
// checks that the stock counters, the stock_log ledger and the open orders agree,
// alerts on differences and repairs only when enabled and inside its window.
// Configuration (environment, set by template.yaml): SKUS_TABLE, ORDERS_TABLE,
// STOCK_LOG_TABLE, ALERTS_TOPIC_ARN, ALERT_MIN_UNITS, ALERT_PERCENT,
// OVERDUE_GRACE_SECONDS, REPAIR_ENABLED, REPAIR_WINDOW, REPAIR_TIMEZONE.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/reconcile"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	rcfg, err := reconcile.Settings{
		RepairEnabled:       os.Getenv("REPAIR_ENABLED"),
		RepairWindow:        os.Getenv("REPAIR_WINDOW"),
		RepairTimezone:      os.Getenv("REPAIR_TIMEZONE"),
		AlertMinUnits:       os.Getenv("ALERT_MIN_UNITS"),
		AlertPercent:        os.Getenv("ALERT_PERCENT"),
		OverdueGraceSeconds: os.Getenv("OVERDUE_GRACE_SECONDS"),
		AlertsTopicARN:      os.Getenv("ALERTS_TOPIC_ARN"),
	}.Config()
	if err != nil {
		log.Error("configure reconcile", "error", err)
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	tables := dynamo.Tables{SKUs: os.Getenv("SKUS_TABLE"), Orders: os.Getenv("ORDERS_TABLE"), StockLog: os.Getenv("STOCK_LOG_TABLE")}
	store := dynamo.New(dynamodb.NewFromConfig(cfg, dynamo.ClientOptions), tables, dynamo.Options{})
	lambda.Start(reconcile.New(store, sns.NewFromConfig(cfg), log, rcfg).Handle)
}
