// Command admin is the admin Lambda function: the merchant API under /admin/ (SKUs,
// adjustments, reshards, ledgers, orders, refunds, shipments, reconcile), behind the
// HTTP API's AWS_IAM authorization (package admin, whose configuration it refuses to
// start without).
package main

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/wiring/function/admin"
	"github.com/stockguard/stockguard/internal/wiring/function/tables"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

func main() {
	coldstart.Run(admin.Function, os.Getenv, admin.Load, func(s coldstart.Start[admin.Config]) (*lambdaevent.Function, error) {
		queues := sqs.NewFromConfig(s.AWS)
		return admin.Build(s.Config, s.Log, tables.Open(s.AWS, s.Config.Tables), sns.NewFromConfig(s.AWS),
			refunds.NewQueue(queues, s.Config.RefundQueueURL), wxqueue.New(queues, s.Config.WeChatQueueURL))
	})
}
