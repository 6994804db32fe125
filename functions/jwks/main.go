// Command jwks is the token issuer's Lambda function: it serves the OpenID discovery
// document and the JWK set (the KMS signing key's public key, read once at cold start)
// that the HTTP API's JWT authorizer fetches. Configuration: see
// login.LoadIssuerConfig; it refuses to start on a bad setting.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/login"
)

func main() {
	log, cfg, awsCfg := coldstart.Load("jwks", os.Getenv, login.LoadIssuerConfig)
	signer, err := idtoken.NewKMSSigner(kms.NewFromConfig(awsCfg), cfg.KeyID)
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
	h, err := login.NewIssuerRoutes(cfg.Issuer, idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}, log)
	if err != nil {
		coldstart.Exit(log, "serve the issuer documents", err)
	}
	lambda.Start(h.Handle)
}
