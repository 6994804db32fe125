// Command jwks is the token issuer's Lambda function: it serves the OpenID discovery
// document and the JWK set (the public key of the KMS signing key, and during a key
// rotation of the other key, read once at cold start) that the HTTP API's JWT
// authorizer fetches (package jwks). It refuses to start on a bad setting or a key
// that is not RSA_2048.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/wiring/function/jwks"
)

func main() {
	coldstart.Run(jwks.Function, os.Getenv, jwks.Load, func(s coldstart.Start[jwks.Config]) (*lambdaevent.Function, error) {
		keys, err := kmssign.PublishedKeys(context.Background(), kms.NewFromConfig(s.AWS), s.Config.KeyIDs()...)
		if err != nil {
			return nil, err
		}
		return jwks.Build(s.Config, s.Log, keys)
	})
}
