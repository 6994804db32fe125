package local

import (
	"context"
	"net"
	"net/http"
)

// LoopbackAddr reports whether a listen address ("host:port") is on a loopback
// address only: its host is "localhost" or a loopback IP (127.0.0.0/8, ::1). A
// missing host (":3000", which listens on every interface), another name or any
// other IP is not, and neither is a malformed address.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// networkKey marks the context of a request that came from another machine (see
// ExposedAPI): the gateway then grants it only what the deployed API grants.
type networkKey struct{}

// fromNetwork reports whether ctx is a request's that came from another machine.
func fromNetwork(ctx context.Context) bool {
	on, _ := ctx.Value(networkKey{}).(bool)
	return on
}

// ExposedAPI is the handler cmd/local serves on its listener. A request that arrived
// at a loopback address (127.0.0.0/8 or ::1, so it was sent from this machine) gets
// API, every local-only convenience included. Any other request (one that arrived at
// the address of a network interface, as when the listener is on 0.0.0.0 or a LAN
// address, or whose arrival address is unknown) gets only what the deployed API
// serves:
//
//   - the template's routes, nothing else: the /_local/ routes and GET /openapi.yaml
//     (the routes the OpenAPI document marks x-local-only) answer API Gateway's 404
//     {"message":"Not Found"};
//   - buyers are known by their token alone: the Authorization header is checked as
//     the JWT authorizer checks it, and the X-User-Id header is not read (deployed it
//     is a plain header that no function trusts), so a request without a token is
//     answered API Gateway's 401 {"message":"Unauthorized"} and no function runs;
//   - the merchant routes under /admin/ answer 403 {"message":"Forbidden"} to every
//     request, X-Operator-Id or not. Deployed, API Gateway's AWS_IAM authorization
//     invokes them only for a request signed with SigV4 by a principal allowed
//     execute-api:Invoke, and answers 403 to an unsigned one or a bad signature (API
//     Gateway Developer Guide, "Control access to HTTP APIs with IAM authorization";
//     AWS Knowledge Center, "How do I troubleshoot 403 errors from API Gateway?");
//     locally there is no IAM to verify a signature against, so nothing is let in.
//
// The arrival address is the one http.Server puts in each request's context
// (http.LocalAddrContextKey).
func (s *Stack) ExposedAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrivedAtLoopback(r) {
			s.API.ServeHTTP(w, r)
			return
		}
		s.gateway.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), networkKey{}, true)))
	})
}

// arrivedAtLoopback reports whether r came in through a connection to a loopback
// address of this machine.
func arrivedAtLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return ok && addr.IP.IsLoopback()
}
