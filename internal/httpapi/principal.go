package httpapi

import (
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// maxPrincipalBytes bounds a principal ARN stored with a change (IAM ARNs are at most
// 2048 characters: IAM User Guide, "IAM object quotas").
const maxPrincipalBytes = 2048

// Principal reads the caller's IAM principal ARN that an HTTP API route with AWS_IAM
// authorization puts in requestContext.authorizer.iam.userArn (API Gateway Developer
// Guide, "Control access to HTTP APIs with IAM authorization"). A request without one
// is answered 401 UNAUTHORIZED by Answer.
func Principal(req events.APIGatewayV2HTTPRequest) (string, error) {
	auth := req.RequestContext.Authorizer
	if auth == nil || auth.IAM == nil {
		return "", ErrUnauthorized
	}
	arn := auth.IAM.UserARN
	if !strings.HasPrefix(arn, "arn:") || len(arn) > maxPrincipalBytes || !utf8.ValidString(arn) {
		return "", ErrUnauthorized
	}
	return arn, nil
}
