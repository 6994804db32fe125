// Package origin checks the base URL an outbound API client (WeChat Pay, WeChat login)
// is configured with: an origin in the sense of RFC 6454, scheme and host only.
package origin

import (
	"fmt"
	"net/url"
)

// Parse returns base as "scheme://host[:port]", or def's when base is empty. base must
// be an absolute http or https URL without user info, path (a lone "/" is allowed),
// query or fragment; otherwise the error quotes it.
func Parse(base, def string) (string, error) {
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q must be an http(s) scheme and host only", base)
	}
	return u.Scheme + "://" + u.Host, nil
}
