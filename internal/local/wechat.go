package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/closeorder"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/refund"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/internal/wxlogin"
	"github.com/stockguard/stockguard/internal/wxlogin/wxlogintest"
)

// LocalAppSecret is the mini-program AppSecret the local jscode2session stand-in accepts.
const LocalAppSecret = "local-app-secret"

// DefaultIssuer is the iss of the local stack's login tokens when StackConfig.Issuer
// is empty.
const DefaultIssuer = "http://127.0.0.1"

// startWeChat starts the stand-ins for WeChat Pay and WeChat login on their own ports
// and makes the in-memory token signing key. The WeChat Pay stand-in delivers its
// notifications to the stack's own HTTP API in-process, whatever host notify_url
// names (deployed, the API's URL; locally there may be no listener yet).
func (s *Stack) startWeChat(cfg StackConfig) error {
	var err error
	if s.Payments, err = paytest.NewPlatform(LocalMchID, LocalAppID); err != nil {
		return err
	}
	if s.merchant, err = paytest.NewMerchant(); err != nil {
		return err
	}
	s.PayServer = paytest.NewServer(s.Payments, s.merchant, paytest.ServerOptions{
		Now: cfg.Now, RetryInterval: 100 * time.Millisecond,
		HTTPClient: &http.Client{Transport: inProcess{func(w http.ResponseWriter, r *http.Request) { s.API.ServeHTTP(w, r) }}},
	})
	if err := s.PayServer.Start(cfg.PayAddr); err != nil {
		return err
	}
	s.LoginServer = wxlogintest.NewServer(LocalAppID, LocalAppSecret)
	if err := s.LoginServer.Start(cfg.LoginAddr); err != nil {
		return err
	}
	s.Signer, err = idtoken.GenerateKeySigner()
	return err
}

// keys is the local issuer's JWK set: the in-memory signing key named kid.
func (s *Stack) keys(kid string) (idtoken.JWKSet, error) {
	jwk, err := idtoken.NewJWK(kid, s.Signer.PublicKey())
	return idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}, err
}

// merchantWiring is what closeOrder and refund both start from: a store on tables and
// the merchant API client of the local merchant, calling the stand-in. Deployed, the
// client's configuration is the Secrets Manager secret's; locally it is the local
// platform's secret, read the same way.
func (s *Stack) merchantWiring(cfg StackConfig, tables dynamo.Tables) (*dynamo.Store, *wechatpay.RotatingClient, error) {
	read := func(context.Context) ([]byte, error) { return s.Payments.MerchantSecret(s.merchant, "") }
	client, err := wechatpay.NewRotatingClient(context.Background(), read, wechatpay.RotateOptions{Now: cfg.Now, BaseURL: s.PayServer.URL()})
	if err != nil {
		return nil, nil, err
	}
	return dynamo.New(s.DB, tables, s.storeOptions(dynamo.Options{})), client, nil
}

// wireCloseOrder builds closeOrder with the local merchant client. Its notify_url base
// is the template's NOTIFY_BASE_URL when set, else StackConfig.Issuer, the local API's
// own URL (deployed, closeOrder builds it from the pay request's https domain, which
// the local API does not serve).
func (s *Stack) wireCloseOrder(cfg StackConfig, env envvar.Lookup, log *slog.Logger) (lambda.Handler, error) {
	c, err := closeorder.LoadConfig(env)
	if err != nil {
		return nil, err
	}
	c.NotifyBaseURL = cmp.Or(c.NotifyBaseURL, cfg.Issuer)
	store, client, err := s.merchantWiring(cfg, c.Tables)
	if err != nil {
		return nil, err
	}
	closer := closeorder.New(store, s.closeQueue(c.CloseQueueURL), log, closeorder.Options{
		Now: cfg.Now, WeChatPay: client, NotifyBaseURL: c.NotifyBaseURL, OpenIDClaim: c.OpenIDClaim,
		Refunds: refund.NewStarter(store, s.refundQueue(c.RefundQueueURL), log), UserRefundWindow: c.UserRefundWindow,
	})
	return newHandler(closeorder.NewFunction(closer, log).Invoke), nil
}

// wireRefund builds the refund function with the local merchant client, as
// functions/refund does with the deployed one.
func (s *Stack) wireRefund(cfg StackConfig, env envvar.Lookup, log *slog.Logger) (lambda.Handler, error) {
	c, err := refund.LoadConfig(env)
	if err != nil {
		return nil, err
	}
	store, client, err := s.merchantWiring(cfg, c.Tables)
	if err != nil {
		return nil, err
	}
	opts := refund.Options{NotifyURL: c.NotifyURL, StuckAfter: c.StuckAfter, Now: cfg.Now}
	if cfg.Refund != nil {
		cfg.Refund(&opts)
	}
	s.Refunder = refund.NewRefunder(store, client, s.refundQueue(c.RefundQueueURL), log, opts)
	return newHandler(s.Refunder.Invoke), nil
}

// wireLogin builds the login function over the jscode2session stand-in and the
// in-memory key. Deployed, the app secret comes from the secret and tokens are signed
// by KMS with TOKEN_ISSUER as iss; locally the issuer is StackConfig.Issuer.
func (s *Stack) wireLogin(cfg StackConfig, env envvar.Lookup, log *slog.Logger) (lambda.Handler, error) {
	c, err := login.LoadConfig(env)
	if err != nil {
		return nil, err
	}
	wechat, err := wxlogin.New(wxlogin.Config{AppID: LocalAppID, AppSecret: LocalAppSecret, BaseURL: s.LoginServer.URL()})
	if err != nil {
		return nil, err
	}
	s.keyID = c.KeyID
	tokens, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: cfg.Issuer, Audience: c.Audience, KeyID: c.KeyID, Now: cfg.Now}, s.Signer)
	if err != nil {
		return nil, err
	}
	store := dynamo.New(s.DB, dynamo.Tables{Orders: c.OrdersTable}, s.storeOptions(dynamo.Options{}))
	return newHandler(login.New(wechat, tokens, store, log, login.Options{Now: cfg.Now}).Handle), nil
}

// wireJWKS builds the issuer's documents function over the in-memory key.
func (s *Stack) wireJWKS(cfg StackConfig, env envvar.Lookup, log *slog.Logger) (lambda.Handler, error) {
	c, err := login.LoadIssuerConfig(env)
	if err != nil {
		return nil, err
	}
	keys, err := s.keys(c.KeyID)
	if err != nil {
		return nil, err
	}
	h, err := login.NewIssuerRoutes(cfg.Issuer, keys, log)
	if err != nil {
		return nil, err
	}
	return newHandler(h.Handle), nil
}

// verifier checks Bearer tokens as the HTTP API's JWT authorizer does: the local
// issuer, the template's audience, the in-memory key under the kid login signs with.
func (s *Stack) verifier(cfg StackConfig, audience string) (*idtoken.Verifier, error) {
	if s.keyID == "" {
		return nil, errors.New("no login function wired: no token key id")
	}
	keys, err := s.keys(s.keyID)
	if err != nil {
		return nil, err
	}
	v, err := idtoken.NewVerifier(idtoken.VerifierConfig{Issuer: cfg.Issuer, Audiences: []string{audience}, Keys: keys, Now: cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("local JWT authorizer: %w", err)
	}
	return v, nil
}

// payAtStandIn plays the buyer paying the order's JSAPI order at the WeChat Pay
// stand-in (see servePay) and answers with the notify route's answer.
func (s *Stack) payAtStandIn(w http.ResponseWriter, r *http.Request, amount *int64, state *string) {
	var opts paytest.PayOptions
	if amount != nil {
		opts.Amount = *amount
	}
	if state != nil {
		opts.State = wechatpay.TradeState(*state)
	}
	d, err := s.PayServer.Pay(r.Context(), r.PathValue("orderId"), opts)
	switch {
	case errors.Is(err, paytest.ErrNotPayable):
		writeLocalJSON(w, http.StatusConflict, []byte(`{"code":"ORDER_NOT_PAYABLE","message":"WeChat Pay refuses this payment (paid, closed or past time_expire)"}`))
	case err != nil:
		writeLocalJSON(w, http.StatusBadRequest, []byte(`{"code":"INVALID_REQUEST","message":"cannot pay that order"}`))
	case d.Dropped || d.Delayed:
		w.WriteHeader(http.StatusAccepted) // paid; the notification is lost or late on purpose
	case d.StatusCode == 0:
		writeLocalJSON(w, http.StatusBadGateway, []byte(`{"code":"NOT_DELIVERED","message":"the notification could not be delivered"}`))
	default:
		if len(d.Body) > 0 {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(d.StatusCode)
		w.Write(d.Body)
	}
}
