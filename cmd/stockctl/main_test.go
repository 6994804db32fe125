package main

import (
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
