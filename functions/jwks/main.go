// Command jwks is the token issuer's Lambda function: it serves the OpenID discovery
// document and the JWK set (the KMS signing key's public key, read once at cold start)
// that the HTTP API's JWT authorizer fetches. Configuration: see
// login.LoadIssuerConfig; it refuses to start on a bad setting.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/login"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) { log.Error(msg, "error", err); os.Exit(1) }
	cfg, err := login.LoadIssuerConfig(os.Getenv)
	if err != nil {
		fail("jwks cannot start", err)
	}
	ctx := context.Background()
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fail("load AWS config", err)
	}
	signer, err := idtoken.NewKMSSigner(kms.NewFromConfig(awsCfg), cfg.KeyID)
	if err != nil {
		fail("configure the signing key", err)
	}
	pub, err := signer.PublicKey(ctx)
	if err != nil {
		fail("read the signing key's public key", err)
	}
	jwk, err := idtoken.NewJWK(cfg.KeyID, pub)
	if err != nil {
		fail("publish the signing key", err)
	}
	h, err := login.NewIssuerRoutes(cfg.Issuer, idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}, log)
	if err != nil {
		fail("serve the issuer documents", err)
	}
	lambda.Start(h.Handle)
}
