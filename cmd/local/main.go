// Command local runs the whole stockguard stack in one process, with no AWS account
// and no Docker: an embedded DynamoDB API (minidyn) on 127.0.0.1:8000, an embedded SQS
// API (goaws) on 127.0.0.1:9324, the tables and queues of template.yaml, and the HTTP
// API on 127.0.0.1:3000 serving the same handlers the Lambda functions run, fed the
// same API Gateway payload format 2.0 events.
//
// Usage:
//
//	go run ./cmd/local [-seed FILE] [-payment-timeout 15m] [-addr 127.0.0.1:3000] [-log-format text|json]
//
// It logs one readable line per request and per lifecycle event (released, paid,
// reconcile) to standard output; -log-format json writes the functions' complete
// JSON records instead, as they appear in CloudWatch Logs.
//
// Callers sign in with POST /auth/wechat (code test-<name> → openid o-<name>, at the
// jscode2session stand-in on -wxlogin-addr) and send the token as Authorization: Bearer,
// checked as the JWT authorizer checks it (issuer http://<addr>, whose discovery
// document and JWK set the API serves). Local-only shortcut: the X-User-Id request
// header, copied into the sub claim. The merchant API's /admin/ routes need no SigV4
// signature locally: they get a fixed local operator principal (deployed, API
// Gateway's AWS_IAM authorization verifies the signature); -seed sends each SKU of
// the file through POST /admin/skus. Payments go to the WeChat Pay stand-in on
// -wechatpay-addr; POST /_local/pay/{orderId} plays the buyer paying there. The template's event
// sources run too: closeOrder polls the close-order queue and sweeps on its schedule;
// POST /_local/invoke/closeOrder runs a sweep now and answers with its result. GET
// /openapi.yaml serves the contract as an OpenAPI 3.1 document.
//
// Alerts: reconcile publishes its alerts to the alerts topic of the embedded SNS API
// (goaws, on the SQS port), and the alert function posts them to the chat bots given
// with -alert-webhook KIND=URL (repeatable; KIND wecom, dingtalk, feishu or slack;
// KIND=URL#SECRET for a DingTalk or Feishu bot that signs), at most once per
// -alert-quiet-period per alert and bot.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/stockguard/stockguard/internal/local"
	"github.com/stockguard/stockguard/internal/teamchat"
)

func main() {
	seed := flag.String("seed", "", "JSON seed file: [{\"skuId\",\"name\",\"price\",\"stock\",\"limitPerUser\"?,\"shards\"?}]")
	timeout := flag.Duration("payment-timeout", 15*time.Minute, "how long an order stays PENDING before it may be released")
	addr := flag.String("addr", "127.0.0.1:3000", "HTTP API listen address")
	dynamoAddr := flag.String("dynamodb-addr", "127.0.0.1:8000", "DynamoDB API listen address")
	sqsAddr := flag.String("sqs-addr", "127.0.0.1:9324", "SQS API listen address")
	template := flag.String("template", "template.yaml", "AWS SAM template the stack is built from")
	payAddr := flag.String("wechatpay-addr", "127.0.0.1:9401", "WeChat Pay stand-in (merchant API) listen address")
	loginAddr := flag.String("wxlogin-addr", "127.0.0.1:9402", "jscode2session stand-in listen address")
	refundWindow := flag.String("user-refund-window", "0", "how long after payment a buyer may refund (template parameter UserRefundWindow: seconds or e.g. 24h; 0 = off)")
	logFormat := flag.String("log-format", "text", "log format: text (one readable line per event) or json (every record)")
	var webhooks []teamchat.Webhook
	flag.Func("alert-webhook", "post alerts to this chat bot: `KIND=URL` or KIND=URL#SECRET (KIND: wecom, dingtalk, feishu, slack; SECRET: a signing DingTalk or Feishu bot's); repeatable", func(v string) error {
		w, err := teamchat.ParseFlag(v)
		webhooks = append(webhooks, w)
		return err
	})
	quiet := flag.Duration("alert-quiet-period", time.Hour, "post the same alert to a chat bot at most once per this long (template parameter AlertQuietPeriodSeconds)")
	flag.Parse()
	var handler slog.Handler = local.NewConsoleHandler(os.Stdout)
	switch *logFormat {
	case "json":
		handler = slog.NewJSONHandler(os.Stdout, nil)
	case "text":
	default:
		fmt.Fprintf(os.Stderr, "-log-format must be text or json, got %q\n", *logFormat)
		os.Exit(2)
	}
	log := slog.New(handler)
	if *quiet < time.Second || *quiet%time.Second != 0 {
		fmt.Fprintf(os.Stderr, "-alert-quiet-period must be whole seconds, at least 1s, got %v\n", *quiet)
		os.Exit(2)
	}
	cfg := local.StackConfig{
		Template: *template, DynamoDBAddr: *dynamoAddr, SQSAddr: *sqsAddr, PaymentTimeout: *timeout, Logger: log,
		PayAddr: *payAddr, LoginAddr: *loginAddr, AlertWebhooks: webhooks, Parameters: map[string]string{
			"UserRefundWindow": *refundWindow, "AlertQuietPeriodSeconds": strconv.Itoa(int(*quiet / time.Second))},
	}
	if err := run(log, cfg, *seed, *addr); err != nil {
		log.Error("local stack stopped", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, cfg local.StackConfig, seed, addr string) error {
	if cfg.PaymentTimeout <= 0 {
		return fmt.Errorf("-payment-timeout must be positive, got %v", cfg.PaymentTimeout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg.Issuer = "http://" + ln.Addr().String() // the API serves the issuer's documents
	stack, err := local.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer stack.Close()
	if seed != "" {
		f, err := os.Open(seed)
		if err != nil {
			return err
		}
		err = stack.Seed(ctx, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: stack.API, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ran := make(chan error, 1)
	go func() { ran <- stack.Run(ctx) }()
	for _, w := range cfg.AlertWebhooks {
		log.Info("alerts go to chat", "webhook", w.ID(), "quietPeriod", cfg.Parameters["AlertQuietPeriodSeconds"]+"s")
	}
	// The listener was bound before the stack started: connections queued meanwhile.
	log.Info("ready", "api", "http://"+ln.Addr().String(), "dynamodb", stack.DynamoDB.URL(), "sqs", stack.SQS.URL(),
		"wechatpay", stack.PayServer.URL(), "wxlogin", stack.LoginServer.URL(), "issuer", cfg.Issuer,
		"paymentTimeout", cfg.PaymentTimeout.String(), "seed", seed)
	select {
	case err := <-served:
		return err
	case err := <-ran:
		if err != nil {
			return err
		}
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
