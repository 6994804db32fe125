package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/admin"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refund"
)

// LocalOperatorARN is the IAM principal every /admin/ request carries locally: the
// local runner asks for no SigV4 signature (local only; deployed, API Gateway's
// AWS_IAM authorization verifies it and names the caller).
const LocalOperatorARN = "arn:aws:iam::" + AccountID + ":user/local-operator"

// localIAMAuthorizer returns what API Gateway's AWS_IAM authorization puts in the
// event (requestContext.authorizer.iam) for the local operator.
func localIAMAuthorizer() *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
			AccountID: AccountID, UserARN: LocalOperatorARN, UserID: "AIDALOCALOPERATOR",
		},
	}
}

// wireAdmin builds the admin function as its main does, on the local clients.
func (s *Stack) wireAdmin(cfg StackConfig, env envvar.Lookup, log *slog.Logger) (lambda.Handler, error) {
	c, err := admin.LoadConfig(env)
	if err != nil {
		return nil, err
	}
	store, recon := s.reconciler(cfg, c.FunctionConfig, log)
	return newHandler(admin.New(store, recon, refund.NewStarter(store, s.refundQueue(c.RefundQueueURL), log), log).Handle), nil
}

// reconciler builds a store and reconcile as the mains of the reconcile and admin
// functions do, on the local clients and the stack's clock, with cfg.Reconcile's
// overrides. Locally there is no SNS: alerts are the error-level log lines.
func (s *Stack) reconciler(cfg StackConfig, c reconcile.FunctionConfig, log *slog.Logger) (*dynamo.Store, *reconcile.Reconciler) {
	c.Reconcile.Topic, c.Reconcile.Now = "", cfg.Now
	if cfg.Reconcile != nil {
		cfg.Reconcile(&c.Reconcile)
	}
	store := dynamo.New(s.DB, c.Tables, s.storeOptions(dynamo.Options{}))
	return store, reconcile.New(store, nil, log, c.Reconcile)
}

// Seed creates the SKUs of a seed file (CONTRACT.md, "Seed file": a JSON array of
// POST /admin/skus bodies) by sending each through the HTTP API's POST /admin/skus
// route, so the local stack and the merchant API create SKUs with the same code. A
// SKU already created with the same fields is left as it is; anything else refused
// stops the seed with the route's answer.
func (s *Stack) Seed(ctx context.Context, r io.Reader) error {
	var skus []json.RawMessage
	if err := json.NewDecoder(r).Decode(&skus); err != nil {
		return fmt.Errorf("read seed: %w", err)
	}
	for i, body := range skus {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/admin/skus", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.gateway.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
			return fmt.Errorf("seed entry %d: %d %s", i, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
		}
	}
	return nil
}
