package httpapi

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// hostName matches a DNS host name (RFC 1123 §2.1): dot-separated labels of letters,
// digits and hyphens, 1 to 63 characters each, not starting or ending with a hyphen.
var hostName = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// pathPrefix matches what may stand before a route's path in rawPath: nothing, or
// non-empty segments of RFC 3986 pchar characters (an API mapping's path, a stage).
var pathPrefix = regexp.MustCompile(`^(/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$`)

// maxHostNameBytes is the longest DNS name (RFC 1035 §2.3.4: 255 octets on the wire,
// 253 characters written out).
const maxHostNameBytes = 253

// BaseURL returns the https URL the caller reached the API at, without a trailing
// slash: "https://" + requestContext.domainName (the execute-api host, or a custom
// domain) + whatever precedes path in rawPath (an API mapping's path on a custom
// domain, a named stage; nothing on the $default stage of the API's own host). path
// is the request's path as the route sees it, e.g. "/orders/0a1b/pay" for the route
// "/orders/{orderId}/pay"; API Gateway payload format 2.0 carries both fields
// (API Gateway developer guide, "Create AWS Lambda proxy integrations for HTTP APIs",
// payload format version 2.0).
//
// Errors (never a panic): a domainName that is empty or not a DNS host name, a
// rawPath that does not end in path, or a prefix that is not a plain path. Answer
// maps them to 500 INTERNAL: the request context comes from API Gateway, not the
// client.
func BaseURL(req events.APIGatewayV2HTTPRequest, path string) (string, error) {
	domain := req.RequestContext.DomainName
	if len(domain) > maxHostNameBytes || !hostName.MatchString(domain) {
		return "", fmt.Errorf("request context: domainName %q is not a DNS host name", truncate(domain, 64))
	}
	prefix, ok := strings.CutSuffix(req.RawPath, path)
	if path == "" || !ok || !pathPrefix.MatchString(prefix) {
		return "", fmt.Errorf("request context: rawPath %q is not a path ending in %q", truncate(req.RawPath, 128), truncate(path, 128))
	}
	return "https://" + domain + prefix, nil
}
