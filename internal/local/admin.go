package local

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/admin"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refund"
)

// OperatorHeader is the local-only request header that names the operator of an
// /admin/ request (the OpenAPI document's localOperator scheme, beside SigV4): its
// value, an IAM user name, becomes the principal arn:aws:iam::<AccountID>:user/<value>
// that the merchant API records with every change. Without it the principal is
// LocalOperatorARN. Deployed the header means nothing: API Gateway's AWS_IAM
// authorization verifies the SigV4 signature and names the caller.
const OperatorHeader = "X-Operator-Id"

// LocalOperator is the operator name stockctl and the load tool send locally, and the
// one an /admin/ request without OperatorHeader gets.
const LocalOperator = "local-operator"

// LocalOperatorARN is the principal of LocalOperator.
const LocalOperatorARN = "arn:aws:iam::" + AccountID + ":user/" + LocalOperator

// iamUserName matches an IAM user name (IAM API Reference, CreateUser, UserName:
// 1-64 characters of letters, digits and +=,.@_-).
var iamUserName = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)

// localIAMAuthorizer returns what API Gateway's AWS_IAM authorization puts in the
// event (requestContext.authorizer.iam) for the local operator named operator
// (LocalOperator when ""), and false when operator is not an IAM user name (the
// gateway then answers 403, as API Gateway does to a request it cannot authorize).
func localIAMAuthorizer(operator string) (*events.APIGatewayV2HTTPRequestContextAuthorizerDescription, bool) {
	operator = cmp.Or(operator, LocalOperator)
	if !iamUserName.MatchString(operator) {
		return nil, false
	}
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
			// One user id for every local operator: the merchant API records userArn.
			AccountID: AccountID, UserARN: "arn:aws:iam::" + AccountID + ":user/" + operator, UserID: "AIDALOCALOPERATOR",
		},
	}, true
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
// overrides. Alerts go to the alerts topic of the embedded SNS API when the stack runs
// an SQS server (which serves it); without one, the error-level log lines are all.
func (s *Stack) reconciler(cfg StackConfig, c reconcile.FunctionConfig, log *slog.Logger) (*dynamo.Store, *reconcile.Reconciler) {
	c.Reconcile.Now = cfg.Now
	var alerts reconcile.Publisher
	if s.alerts != nil {
		alerts = s.alerts
	} else {
		c.Reconcile.Topic = ""
	}
	if cfg.Reconcile != nil {
		cfg.Reconcile(&c.Reconcile)
	}
	store := dynamo.New(s.DB, c.Tables, s.storeOptions(dynamo.Options{}))
	return store, reconcile.New(store, alerts, log, c.Reconcile)
}

// Seed creates the SKUs of a seed file (CONTRACT.md, "Seed file": a JSON array of
// POST /admin/skus bodies) by sending each through the HTTP API's POST /admin/skus
// route as LocalOperator, so the local stack and the merchant API create SKUs with the
// same code. A
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
		req.Header.Set(OperatorHeader, LocalOperator)
		rec := httptest.NewRecorder()
		s.gateway.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
			return fmt.Errorf("seed entry %d: %d %s", i, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
		}
	}
	return nil
}
