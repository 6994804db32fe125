// Command jwks is the token issuer's Lambda function: it serves the OpenID discovery
// document and the JWK set (the public key of the KMS signing key, and during a key
// rotation of the other key, read once at cold start) that the HTTP API's JWT
// authorizer fetches (wiring.Jwks). Configuration: see wiring.Load; it refuses to start
// on a bad setting or a key that is not RSA_2048.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/internal/wiring"
)

func main() {
	log, cfg, aws := coldstart.Load("jwks", os.Getenv, wiring.Jwks.Load)
	keyIDs := []string{cfg.KeyID}
	if cfg.OtherKeyID != "" {
		keyIDs = append(keyIDs, cfg.OtherKeyID)
	}
	keys, err := kmssign.PublishedKeys(context.Background(), kms.NewFromConfig(aws), keyIDs...)
	if err != nil {
		coldstart.Exit(log, "read the signing keys' public keys", err)
	}
	fn, err := wiring.Jwks.Build(cfg, wiring.Clients{Log: log, Keys: keys})
	lambda.Start(coldstart.Must(log, "wire jwks", fn, err).Invoke)
}
