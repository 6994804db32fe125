package stockctl_test

import (
	"net/url"
	"testing"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// A host name is matched without regard to letter case (RFC 4343): LOCALHOST is as
// local as localhost, as are loopback addresses; other hosts are not.
func TestLoopback_TakesLocalhostInAnyCase(t *testing.T) {
	for endpoint, want := range map[string]bool{
		"http://localhost:3000": true, "http://LOCALHOST:3000": true, "http://LocalHost": true,
		"http://127.0.0.1:3000": true, "http://[::1]:3000": true,
		"http://localhost.example.com": false, "https://abc.execute-api.ap-east-1.amazonaws.com": false,
	} {
		u, err := url.Parse(endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if got := stockctl.Loopback(u); got != want {
			t.Errorf("Loopback(%s) = %v, want %v", endpoint, got, want)
		}
	}
}
