package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stockguard/stockguard/tools/internal/apigw"
	"github.com/stockguard/stockguard/tools/internal/local/staffidp"
)

// Where the merchant console lives on the local API (docs/contract.md, "Local-only
// routes"; README, "The merchant console"):
//
//   - ConsolePath serves the built console (StackConfig.ConsoleDir) and its config.json;
//   - ConsoleAPIPath + "/admin/…" is ConsoleApi, the template's merchant routes for
//     staff: the same admin function, behind a JWT authorizer of the staff issuer for
//     the console's client, as deployed (no local shortcut: no X-Operator-Id, no
//     X-User-Id; a request without a token the authorizer takes is answered 401);
//   - StaffIssuerPath, on the issuer's URL (Stack.StaffIssuer), is the local staff
//     sign-in (package staffidp), which plays the user pool's managed login.
const (
	ConsolePath     = "/console/"
	ConsoleAPIPath  = "/console/api"
	StaffIssuerPath = "/_local/oidc"
)

// ConsoleAPI is the logical id of the template's HTTP API for the console.
const ConsoleAPI = "ConsoleApi"

// StaffIssuer is the iss of the staff's access tokens and the console's OpenID
// provider: the issuer's URL (Stack.Issuer) + StaffIssuerPath.
func (s *Stack) StaffIssuer() string { return s.cfg.Issuer + StaffIssuerPath }

// serveConsole adds the console, its API (routes: the template's ConsoleApi routes) and
// the staff sign-in (with StackConfig.Staff) to mux.
func (s *Stack) serveConsole(mux *http.ServeMux, routes []Route, wrap Middleware) error {
	authorizer, err := apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: s.StaffIssuer(), Audience: []string{staffidp.ClientID},
		Client: &http.Client{Timeout: 10 * time.Second}, Now: s.cfg.Now})
	if err != nil {
		return fmt.Errorf("console JWT authorizer: %w", err)
	}
	if len(routes) > 0 {
		gw := NewGateway(routes, s.Handlers, GatewayOptions{Logger: s.cfg.Logger, Authorizer: authorizer, APIID: "console"})
		// Every request is treated as one from another machine: the console's API has
		// none of HttpApi's local shortcuts, exactly as deployed.
		deployed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gw.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), networkKey{}, true)))
		})
		mux.Handle(ConsoleAPIPath+"/", http.StripPrefix(ConsoleAPIPath, wrap(deployed)))
	}
	if len(s.cfg.Staff) > 0 {
		provider, err := staffidp.New(staffidp.Config{Issuer: s.StaffIssuer(), Accounts: s.cfg.Staff, RedirectPath: ConsolePath,
			Logger: s.cfg.Logger.With("component", "staffidp")})
		if err != nil {
			return err
		}
		mux.Handle(StaffIssuerPath+"/", http.StripPrefix(StaffIssuerPath, provider))
	}
	mux.Handle("GET "+ConsolePath+"config.json", http.HandlerFunc(s.serveConsoleConfig))
	mux.Handle(ConsolePath, s.consoleFiles())
	mux.Handle("GET /console", http.RedirectHandler(ConsolePath, http.StatusFound))
	return nil
}

// serveConsoleConfig answers the console's config.json: the staff issuer, the client,
// and the console's API under this host.
func (s *Stack) serveConsoleConfig(w http.ResponseWriter, _ *http.Request) {
	body, _ := json.Marshal(map[string]string{"authority": s.StaffIssuer(), "clientId": staffidp.ClientID, "api": ConsoleAPIPath})
	w.Header().Set("Cache-Control", "no-cache")
	writeLocalJSON(w, http.StatusOK, body)
}

// consoleFiles serves StackConfig.ConsoleDir at ConsolePath with the security headers
// the deployed distribution adds (template.yaml, ConsoleResponseHeadersPolicy: its
// content security policy with this stack's issuer in connect-src), index.html for a
// path without a file; without a built console, a page saying how to build it.
func (s *Stack) consoleFiles() http.Handler {
	origin := s.cfg.Issuer
	if u, err := url.Parse(s.cfg.Issuer); err == nil {
		origin = u.Scheme + "://" + u.Host
	}
	csp := "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
		"connect-src 'self' " + origin + "; frame-ancestors 'none'; base-uri 'self'; form-action 'self' " + origin + "; object-src 'none'"
	files := http.StripPrefix(ConsolePath, http.FileServer(http.Dir(s.cfg.ConsoleDir)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeGatewayError(w, http.StatusNotFound) // as the distribution, which allows GET and HEAD only
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if _, err := os.Stat(filepath.Join(s.cfg.ConsoleDir, "index.html")); s.cfg.ConsoleDir == "" || err != nil {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "The console is not built (no index.html in %q). Build it: cd console && npm ci && npm run build\n", s.cfg.ConsoleDir)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "/console/index.html" {
			h.Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}
