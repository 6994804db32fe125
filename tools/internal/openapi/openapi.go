// Package openapi holds the OpenAPI 3.1 document of stockguard's HTTP API: every
// route of docs/contract.md with its request bodies and their bounds, its answers by
// status with the error codes each can carry, its headers and its authorization,
// plus the issuer's discovery routes and the local runner's routes (marked
// x-local-only). The local stack serves it at Path; package openapitest checks test
// traffic against it.
package openapi

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed openapi.yaml
var document []byte

// Path is the route the local stack serves the document on (GET, local only).
const Path = "/openapi.yaml"

// YAML returns a copy of the document's YAML text.
func YAML() []byte { return append([]byte(nil), document...) }

// Load parses the document and validates it against the OpenAPI 3.1 specification
// (kin-openapi's loader and openapi3.T.Validate, with its examples and schema
// patterns checked). It returns an error naming the first problem found.
func Load(ctx context.Context) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx, openapi3.EnableExamplesValidation(), openapi3.EnableSchemaPatternValidation()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	return doc, nil
}

// Handler serves the document as application/yaml to GET and HEAD.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(document)
	})
}
