package testkit

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// readHeaderTimeout bounds how long a Background waits for a request's headers.
const readHeaderTimeout = 10 * time.Second

// Background serves an http.Handler on a listener of its own until Close: the serving
// half of the stand-ins for outside APIs (paytest.Server, wxlogintest.Server), which
// cmd/local runs too. Its zero value is ready to Start; it is started once.
type Background struct {
	server *http.Server
	url    string
	served chan error
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves h in the
// background until Close. URL then returns the base URL.
func (b *Background) Start(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	b.server = &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout}
	b.url = "http://" + ln.Addr().String()
	b.served = make(chan error, 1)
	go func() { b.served <- b.server.Serve(ln) }()
	return nil
}

// URL is the base URL ("http://127.0.0.1:port") after Start; empty before.
func (b *Background) URL() string { return b.url }

// Close stops serving and returns what stopping or serving failed with; before Start
// it does nothing.
func (b *Background) Close() error {
	if b.server == nil {
		return nil
	}
	err := b.server.Close()
	if serr := <-b.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
