// Command jwks is the token issuer's Lambda function: it serves the OpenID discovery
// document and the JWK set (the KMS signing key's public key, read once at cold start)
// that the HTTP API's JWT authorizer fetches (wiring.Jwks). Configuration: see
// wiring.Load; it refuses to start on a bad setting.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/internal/wiring"
)

func main() {
	log, cfg, aws := coldstart.Load("jwks", os.Getenv, wiring.Jwks.Load)
	signer, err := kmssign.New(kms.NewFromConfig(aws), cfg.KeyID)
	if err != nil {
		coldstart.Exit(log, "configure the signing key", err)
	}
	pub, err := signer.PublicKey(context.Background())
	if err != nil {
		coldstart.Exit(log, "read the signing key's public key", err)
	}
	jwk, err := idtoken.NewJWK(cfg.KeyID, pub)
	if err != nil {
		coldstart.Exit(log, "publish the signing key", err)
	}
	fn, err := wiring.Jwks.Build(cfg, wiring.Clients{Log: log, Keys: idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}})
	lambda.Start(coldstart.Must(log, "wire jwks", fn, err).Invoke)
}
