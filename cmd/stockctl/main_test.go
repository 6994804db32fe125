package main

import (
	"net/http"
	"testing"
	"time"
)

// A request waits a little longer than API Gateway does for the function behind it
// (30 s): past that the gateway has answered 503 or the answer is not coming, and an
// operator waiting longer only waits.
func TestNewEnv_WaitsForAnAnswerJustLongerThanAPIGateway(t *testing.T) {
	const gateway = 30 * time.Second
	if wait := newEnv().HTTP.Timeout; wait <= gateway || wait > gateway+5*time.Second {
		t.Errorf("a request waits %v; want just over API Gateway's %v", wait, gateway)
	}
}

// No connection is kept idle after an answer: bytes a server sends past its answer's
// Content-Length on an idle connection make Go's transport log them to stderr
// ("Unsolicited response received on idle HTTP channel starting with …"), which
// could print the server's personal data and a second line besides stockctl's.
func TestNewEnv_KeepsNoIdleConnectionForAServerToWriteOn(t *testing.T) {
	tr, ok := newEnv().HTTP.Transport.(*http.Transport)
	if !ok || !tr.DisableKeepAlives {
		t.Errorf("transport %T keeps connections alive; want an *http.Transport with DisableKeepAlives", newEnv().HTTP.Transport)
	}
}
