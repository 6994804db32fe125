package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// Middleware wraps an embedded server's handler, e.g. to inject faults
// ("apply the request, then drop the response") or to log traffic.
type Middleware func(http.Handler) http.Handler

// httpServer serves one handler on one TCP listener until closed.
type httpServer struct {
	url    string
	h      http.Handler // what srv serves
	srv    *http.Server
	served chan error // receives Serve's result once it returns
	cancel context.CancelFunc
	close  func() error   // shutdown, run once
	active sync.WaitGroup // handlers running
}

// listen opens a TCP listener on addr ("host:port"; port 0 picks a free one).
func listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// serve serves h, wrapped by wrap when it is not nil, on ln until close is
// called. close cancels the requests' contexts.
func serve(ln net.Listener, h http.Handler, wrap Middleware) *httpServer {
	if wrap != nil {
		h = wrap(h)
	}
	base, cancel := context.WithCancel(context.Background())
	s := &httpServer{
		url: "http://" + ln.Addr().String(),
		h:   h,
		srv: &http.Server{
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return base },
		},
		served: make(chan error, 1),
		cancel: cancel,
	}
	s.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.Add(1)
		defer s.active.Done()
		h.ServeHTTP(w, r)
	})
	s.close = sync.OnceValue(s.shutdown)
	go func() { s.served <- s.srv.Serve(ln) }()
	return s
}

// shutdown cancels in-flight requests (long polls end early) and closes the
// listener and every connection at once. A graceful http.Server.Shutdown would
// wait for connections a client opened but never used (Go counts them as
// active for 5 s), which only slows tests down: these servers hold nothing
// that a cut connection could lose. It returns once every handler has returned
// (http.Server.Close does not wait for them), so that what a server shares with
// the next one started in this process (goaws' package-level queues) is no longer
// read when it is reset.
func (s *httpServer) shutdown() error {
	s.cancel()
	err := s.srv.Close()
	s.active.Wait()
	if served := <-s.served; !errors.Is(served, http.ErrServerClosed) {
		err = errors.Join(err, served)
	}
	if err != nil {
		return fmt.Errorf("close server at %s: %w", s.url, err)
	}
	return nil
}

// inProcess answers each request by calling serve (a handler's ServeHTTP) in this
// process, without a socket: the bytes sent and received are the same, only
// loopback TCP and its goroutines are saved. It is both an http.RoundTripper (the
// stand-in WeChat Pay's notifications to the stack's API) and an aws.HTTPClient (the
// SDK clients of StackConfig.InProcess). A request's context is the caller's; the
// handler sees no RemoteAddr.
type inProcess struct {
	serve func(http.ResponseWriter, *http.Request)
}

// RoundTrip serves r in-process and returns the recorded response.
func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.serve(rec, r)
	return rec.Result(), nil
}

// Do is RoundTrip, for the SDK.
func (t inProcess) Do(r *http.Request) (*http.Response, error) { return t.RoundTrip(r) }

// forward returns a handler that sends every request on to the AWS API endpoint at
// endpoint ("http://host:port", e.g. MotoServer.URL()) as it came: method, path,
// headers (Host too, so that the URLs the endpoint builds from it, such as SQS queue
// URLs, name this server) and body, and answers with the endpoint's answer. When the
// endpoint cannot be reached it answers 502.
func forward(endpoint string) (http.Handler, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("AWS endpoint %q is not a URL such as http://127.0.0.1:5000", endpoint)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		http.Error(w, "the AWS endpoint "+endpoint+" did not answer: "+err.Error(), http.StatusBadGateway)
	}
	return p, nil
}

// oneAtATime serves one request of h at a time.
func oneAtATime(h http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		h.ServeHTTP(w, r)
	})
}
