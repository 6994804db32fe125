package local

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"

	"github.com/aws/aws-lambda-go/events"
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

// Seed creates the SKUs of a seed file (docs/contract.md, "Seed file": a JSON array of
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
			return fmt.Errorf("seed entry %d: %d %s", i+1, rec.Code, bytes.TrimSpace(rec.Body.Bytes())) // counting from 1
		}
	}
	return nil
}
