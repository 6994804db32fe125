package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func request(domain, rawPath string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{RawPath: rawPath, RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: domain}}
}

func TestBaseURL_IsTheHostAndPrefixTheCallerReached(t *testing.T) {
	for _, tt := range []struct{ domain, rawPath, path, want string }{
		// The API's own host on the $default stage.
		{"a1b2c3d4e5.execute-api.us-east-1.amazonaws.com", "/orders/0a1b/pay", "/orders/0a1b/pay", "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"},
		// A custom domain with an API mapping under /shop.
		{"api.example.com", "/shop/orders/0a1b/pay", "/orders/0a1b/pay", "https://api.example.com/shop"},
		{"api.example.com", "/v1/shop/.well-known/openid-configuration", "/.well-known/openid-configuration", "https://api.example.com/v1/shop"},
		// China regions' suffix.
		{"abc.execute-api.cn-north-1.amazonaws.com.cn", "/orders/x/pay", "/orders/x/pay", "https://abc.execute-api.cn-north-1.amazonaws.com.cn"},
	} {
		got, err := BaseURL(request(tt.domain, tt.rawPath), tt.path)
		if err != nil || got != tt.want {
			t.Errorf("BaseURL(%s, %s, %s) = %q, %v; want %q", tt.domain, tt.rawPath, tt.path, got, err, tt.want)
		}
	}
}

// A request context that does not name a host, or whose path does not end in the
// route's, is an error (answered 500 INTERNAL), never a panic or a URL elsewhere.
func TestBaseURL_RefusesWhatIsNotAHostAndPath(t *testing.T) {
	for _, tt := range []struct{ domain, rawPath, path string }{
		{"", "/orders/x/pay", "/orders/x/pay"},
		{"evil.example.com/x", "/orders/x/pay", "/orders/x/pay"},
		{"evil.example.com?x=", "/orders/x/pay", "/orders/x/pay"},
		{"user@evil.example.com", "/orders/x/pay", "/orders/x/pay"},
		{"-bad.example.com", "/orders/x/pay", "/orders/x/pay"},
		{"a..b", "/orders/x/pay", "/orders/x/pay"},
		{"host:8443", "/orders/x/pay", "/orders/x/pay"},
		{strings.Repeat("a.", 127) + "com", "/orders/x/pay", "/orders/x/pay"},
		{"api.example.com", "/orders/y/pay", "/orders/x/pay"},
		{"api.example.com", "", "/orders/x/pay"},
		{"api.example.com", "/orders/x/pay", ""},
		{"api.example.com", "shop/orders/x/pay", "/orders/x/pay"},
		{"api.example.com", "//orders/x/pay", "/orders/x/pay"},
		{"api.example.com", "/a?b/orders/x/pay", "/orders/x/pay"},
		{"api.example.com", "/a#b/orders/x/pay", "/orders/x/pay"},
	} {
		got, err := BaseURL(request(tt.domain, tt.rawPath), tt.path)
		if err == nil {
			t.Errorf("BaseURL(%q, %q, %q) = %q, want an error", tt.domain, tt.rawPath, tt.path, got)
			continue
		}
		if resp := Answer(err); resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("BaseURL(%q, %q): answered %d, want 500", tt.domain, tt.rawPath, resp.StatusCode)
		}
	}
}
