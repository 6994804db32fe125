package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/apigw"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/sam"
)

// StackConfig configures Start. Zero values take the defaults noted.
type StackConfig struct {
	// Template is the path of template.yaml; tables, queues, routes and each
	// function's environment come from it.
	Template string
	// DynamoDBAddr is where the DynamoDB API listens; default "127.0.0.1:0" (a free port).
	DynamoDBAddr string
	// SQSAddr is where the SQS API listens; "" starts no SQS server (goaws keeps
	// global state, so only one may run per process).
	SQSAddr string
	// PaymentTimeout, when positive, replaces the template's PAYMENT_TIMEOUT_SECONDS.
	PaymentTimeout time.Duration
	// Logger receives the functions' and the gateway's JSON logs; default: discarded.
	Logger *slog.Logger
	// DynamoDBWrap wraps the DynamoDB server's handler (tests inject faults with it).
	DynamoDBWrap Middleware
	// DynamoDBOptions are applied to the stack's DynamoDB client after
	// dynamo.ClientOptions (tests count requests with them).
	DynamoDBOptions []func(*dynamodb.Options)
}

// Stack is the whole of stockguard in one process: the embedded servers with the
// template's tables and queues, the functions wired as template.yaml wires them, and
// API, the HTTP API gateway in front of them.
type Stack struct {
	DynamoDB *DynamoDBServer   // the embedded DynamoDB API
	SQS      *SQSServer        // the embedded SQS API; nil when StackConfig.SQSAddr is ""
	DB       *dynamodb.Client  // a client of DynamoDB, built with dynamo.ClientOptions
	Queues   map[string]string // queue logical id → queue URL
	Tables   dynamo.Tables     // table names, from createOrder's environment
	Store    *dynamo.Store     // the store createOrder uses
	API      http.Handler      // the HTTP API: routes of template.yaml → function handlers
}

// Start brings the stack up. Every AWS::Serverless::Function of the template must have
// local wiring here; an unknown one is an error, so a new function cannot be silently
// missing locally. Call Close to stop it.
func Start(ctx context.Context, cfg StackConfig) (_ *Stack, err error) {
	if cfg.DynamoDBAddr == "" {
		cfg.DynamoDBAddr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	tpl, err := sam.Load(cfg.Template)
	if err != nil {
		return nil, err
	}
	s := &Stack{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.DynamoDB, err = StartDynamoDB(ctx, cfg.DynamoDBAddr, DynamoDBOptions{Wrap: cfg.DynamoDBWrap}); err != nil {
		return nil, err
	}
	s.DB = NewDynamoDBClient(s.DynamoDB.URL(), append([]func(*dynamodb.Options){dynamo.ClientOptions}, cfg.DynamoDBOptions...)...)
	tables, err := tpl.Tables()
	if err != nil {
		return nil, err
	}
	if err := CreateTables(ctx, s.DB, tables); err != nil {
		return nil, err
	}
	if cfg.SQSAddr != "" {
		if err := s.startSQS(ctx, cfg.SQSAddr, tpl); err != nil {
			return nil, err
		}
	}
	handlers, err := s.wire(tpl, cfg)
	if err != nil {
		return nil, err
	}
	routes, err := tpl.Routes()
	if err != nil {
		return nil, err
	}
	gwRoutes := make([]Route, len(routes))
	for i, r := range routes {
		gwRoutes[i] = Route{Method: r.Method, Path: r.Path, Function: r.Function, Public: r.Public}
	}
	s.API = NewGateway(gwRoutes, handlers, GatewayOptions{Logger: cfg.Logger})
	return s, nil
}

func (s *Stack) startSQS(ctx context.Context, addr string, tpl *sam.Template) error {
	var err error
	if s.SQS, err = StartSQS(ctx, addr, SQSOptions{}); err != nil {
		return err
	}
	queues, err := tpl.Queues()
	if err != nil {
		return err
	}
	qs := make([]Queue, len(queues))
	for i, q := range queues {
		qs[i] = Queue{Name: q.Name, Attributes: q.Attributes}
	}
	s.Queues, err = CreateQueues(ctx, NewSQSClient(s.SQS.URL()), qs)
	return err
}

// wire builds each template function's handler from its template environment, the way
// its functions/<name>/main.go does from the deployed environment.
func (s *Stack) wire(tpl *sam.Template, cfg StackConfig) (map[string]lambda.Handler, error) {
	functions, err := tpl.Functions()
	if err != nil {
		return nil, err
	}
	handlers := map[string]lambda.Handler{}
	for _, f := range functions {
		env := f.Environment
		switch f.Name {
		case "CreateOrderFunction":
			timeout := cfg.PaymentTimeout
			if timeout <= 0 {
				secs, err := strconv.Atoi(env["PAYMENT_TIMEOUT_SECONDS"])
				if err != nil || secs < 1 {
					return nil, fmt.Errorf("%s: PAYMENT_TIMEOUT_SECONDS %q is not a positive number of seconds", f.Name, env["PAYMENT_TIMEOUT_SECONDS"])
				}
				timeout = time.Duration(secs) * time.Second
			}
			s.Tables = dynamo.Tables{SKUs: env["SKUS_TABLE"], Orders: env["ORDERS_TABLE"], StockLog: env["STOCK_LOG_TABLE"]}
			s.Store = dynamo.New(s.DB, s.Tables, dynamo.Options{PaymentTimeout: timeout})
			handlers[f.Name] = lambda.NewHandler(apigw.New(s.Store, cfg.Logger.With("function", f.Name)).Handle)
		default:
			return nil, fmt.Errorf("function %s has no local wiring in internal/local", f.Name)
		}
	}
	return handlers, nil
}

// SeedSKU is one entry of a seed file: a JSON array of these objects.
type SeedSKU struct {
	SKU          string `json:"skuId"`                  // SKU id
	Name         string `json:"name"`                   // shown to buyers
	Price        int64  `json:"price"`                  // fen
	Stock        int    `json:"stock"`                  // initial on-hand units
	LimitPerUser int    `json:"limitPerUser,omitempty"` // units per user, 0 = no limit
	Shards       int    `json:"shards,omitempty"`       // stock shard items, default 1
}

// Seed creates the SKUs of a seed file (CONTRACT.md, "Seed file"), each with its
// initial ADJUST ledger entry. Unknown fields are rejected.
func (s *Stack) Seed(ctx context.Context, r io.Reader) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var skus []SeedSKU
	if err := dec.Decode(&skus); err != nil {
		return fmt.Errorf("read seed: %w", err)
	}
	for _, k := range skus {
		if err := s.Store.CreateSKU(ctx, dynamo.NewSKU{
			ID: k.SKU, Name: k.Name, Price: k.Price, Stock: k.Stock, LimitPerUser: k.LimitPerUser, Shards: k.Shards,
		}); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

// Close stops the servers.
func (s *Stack) Close() error {
	var errs []error
	if s.SQS != nil {
		errs = append(errs, s.SQS.Close())
	}
	if s.DynamoDB != nil {
		errs = append(errs, s.DynamoDB.Close())
	}
	return errors.Join(errs...)
}
