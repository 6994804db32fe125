// Package stockctl is the merchant API's command-line client (docs/contract.md,
// "Merchant API"): it sends each command to its /admin/ route signed with AWS
// Signature Version 4 for the service execute-api, with credentials from the default
// AWS credential chain (aws-sdk-go-v2's signer; IAM User Guide, "Signing AWS API
// requests"), and prints the answer as tables for people or, with -o json, the
// route's JSON for scripts.
package stockctl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Service is the SigV4 service name of API Gateway's execute-api (API Gateway
// Developer Guide, "Control access to HTTP APIs with IAM authorization").
const Service = "execute-api"

// LocalOperator is the operator an unsigned request names in its X-Operator-Id header:
// the local stack's merchant routes take it as the caller's IAM user (the OpenAPI
// document's local-only localOperator scheme) and record
// arn:aws:iam::000000000000:user/local-operator with each change.
const LocalOperator = "local-operator"

// maxAnswerBytes bounds a route's answer read into memory.
const maxAnswerBytes = 16 << 20

// Client sends signed requests to the merchant API at Endpoint.
type Client struct {
	Endpoint    *url.URL                // e.g. https://abc.execute-api.ap-east-1.amazonaws.com or http://127.0.0.1:3000
	Region      string                  // signing region
	Credentials aws.CredentialsProvider // nil: requests go unsigned, naming LocalOperator (local stack only)
	HTTP        *http.Client
	Now         func() time.Time // signing time; default time.Now
}

// APIError is an answer other than 2xx: its status and the contract's error body.
type APIError struct {
	Method, Path string
	Status       int
	Code         string // e.g. STOCK_OUT; "" when the body is not a contract error
	Message      string
}

// Error names the request, the status, the code and the message.
func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// Do sends method path (with query) and body (nil: none), signed when the client has
// credentials, and returns the answer's body. It returns an *APIError for an answer
// other than 2xx, and another error when the request cannot be signed or sent.
func (c *Client) Do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	u := c.Endpoint.JoinPath()
	rel, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	// Keep the escaped form: an id's "/" or ".." (escaped by the caller) must stay
	// inside its path segment, never become one.
	u.Path, u.RawQuery = strings.TrimSuffix(u.Path, "/")+rel.Path, rel.RawQuery
	u.RawPath = strings.TrimSuffix(c.Endpoint.EscapedPath(), "/") + rel.EscapedPath()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := c.sign(ctx, req, body); err != nil {
		return nil, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		apiErr := &APIError{Method: method, Path: rel.Path, Status: resp.StatusCode}
		var e struct{ Code, Message string }
		if json.Unmarshal(data, &e) == nil {
			apiErr.Code, apiErr.Message = e.Code, e.Message
		}
		return nil, apiErr
	}
	return data, nil
}

// sign adds the SigV4 headers (Authorization, X-Amz-Date, X-Amz-Security-Token) for
// Service in c.Region, over the body's SHA-256; without credentials (local stack
// only) it names LocalOperator in X-Operator-Id instead.
func (c *Client) sign(ctx context.Context, req *http.Request, body []byte) error {
	if c.Credentials == nil {
		req.Header.Set("X-Operator-Id", LocalOperator)
		return nil
	}
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return credentialsProblem("", false) // not the SDK's error text (credentialsProblem)
	}
	sum := sha256.Sum256(body)
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), Service, c.Region, now())
}

// Loopback reports whether the endpoint is on this machine (the local stack).
func Loopback(u *url.URL) bool {
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// RegionOf reads the region of an execute-api endpoint host
// ({api-id}.execute-api.{region}.amazonaws.com), "" for another host.
func RegionOf(u *url.URL) string {
	parts := strings.Split(u.Hostname(), ".")
	if len(parts) >= 4 && parts[1] == "execute-api" {
		return parts[2]
	}
	return ""
}
