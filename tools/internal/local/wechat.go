package local

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
	"github.com/stockguard/stockguard/internal/wxlogin/wxlogintest"
	"github.com/stockguard/stockguard/tools/internal/apigw"
)

// LocalAppSecret is the mini-program AppSecret the local jscode2session stand-in accepts.
const LocalAppSecret = "local-app-secret"

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
	if cfg.RefundInterval > 0 {
		s.PayServer.SetRefundInterval(cfg.RefundInterval)
	}
	if err := s.PayServer.Start(cfg.PayAddr); err != nil {
		return err
	}
	s.LoginServer = wxlogintest.NewServer(LocalAppID, LocalAppSecret)
	if err := s.LoginServer.Start(cfg.LoginAddr); err != nil {
		return err
	}
	if err := s.startWxAPI(cfg); err != nil {
		return err
	}
	s.Signer, err = idtoken.GenerateKeySigner()
	return err
}

// Local subscribe-message templates: the template parameters' values on the local
// stack unless StackConfig.Parameters sets them.
const (
	LocalPayReminderTemplate = "local-pay-reminder"
	LocalRefundDoneTemplate  = "local-refund-done"
	LocalAftersaleTemplate   = "local-aftersale"
	LocalWaitlistTemplate    = "local-waitlist"
)

// startWxAPI starts the stand-in of WeChat's server API with the local subscribe
// templates, and the one client of it.
func (s *Stack) startWxAPI(cfg StackConfig) error {
	s.WxAPIServer = wxapitest.NewServer(LocalAppID, LocalAppSecret, wxapitest.Options{Now: cfg.Now})
	if err := s.WxAPIServer.Start(cmp.Or(cfg.WxAPIAddr, "127.0.0.1:0")); err != nil {
		return err
	}
	s.WxAPIServer.AddTemplate(cmp.Or(cfg.Parameters["PayReminderTemplateId"], LocalPayReminderTemplate), notices.PayReminderKeywords...)
	s.WxAPIServer.AddTemplate(cmp.Or(cfg.Parameters["RefundDoneTemplateId"], LocalRefundDoneTemplate), notices.RefundDoneKeywords...)
	s.WxAPIServer.AddTemplate(cmp.Or(cfg.Parameters["AftersaleTemplateId"], LocalAftersaleTemplate), notices.AftersaleKeywords...)
	s.WxAPIServer.AddTemplate(cmp.Or(cfg.Parameters["WaitlistTemplateId"], LocalWaitlistTemplate), notices.WaitlistKeywords...)
	var err error
	s.wxClient, err = wxapi.New(wxapi.Config{AppID: LocalAppID, AppSecret: LocalAppSecret, BaseURL: s.WxAPIServer.URL(), Now: cfg.Now})
	return err
}

// paidAtWeChat gives WxAPIServer the payment of order id once it is paid, as WeChat
// learns of every payment: its transaction_id, the local merchant, the payer (the
// order's user id, the buyer's openid on tokens whose sub is the openid) and when.
func (s *Stack) paidAtWeChat(ctx context.Context, id string) {
	o, err := s.Store.Lookup(ctx, id)
	if err != nil || o.TransactionID == "" || o.PaidAt == nil {
		return
	}
	if _, added := s.paidAdded.LoadOrStore(id, true); added {
		return
	}
	s.WxAPIServer.AddPayment(wxapitest.Payment{TransactionID: o.TransactionID, MchID: LocalMchID, OutTradeNo: o.ID, OpenID: o.UserID, PaidAt: *o.PaidAt})
}

// authorizer is the HttpApi's JWT authorizer, as API Gateway runs it: the local issuer
// (whose discovery document and key set it fetches over HTTP, as the stack serves
// them at the issuer's URL), the template's audience, the stack's clock (its key cache
// expires on it too).
func (s *Stack) authorizer(cfg StackConfig, audience string) (*apigw.JWTAuthorizer, error) {
	a, err := apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: cfg.Issuer, Audience: []string{audience},
		Client: &http.Client{Timeout: 10 * time.Second}, Now: cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("local JWT authorizer: %w", err)
	}
	return a, nil
}

// payAtStandIn plays the buyer paying the order's JSAPI order at the WeChat Pay
// stand-in (see servePay), opening it from req first when req is not nil, and answers
// with the notify route's answer.
func (s *Stack) payAtStandIn(w http.ResponseWriter, r *http.Request, req *wechatpay.JSAPIRequest, amount *int64, state *string) {
	var opts paytest.PayOptions
	if amount != nil {
		opts.Amount = *amount
	}
	if state != nil {
		opts.State = wechatpay.TradeState(*state)
	}
	var d paytest.Delivery
	var err error
	if req != nil {
		d, err = s.PayServer.PayUnopened(r.Context(), *req, opts)
	} else {
		d, err = s.PayServer.Pay(r.Context(), r.PathValue("orderId"), opts)
	}
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

// LocalMessageToken is the Token of the local mini-program's message push: payCallback
// verifies pushes with it, and POST /_local/receipt signs with it as WeChat signs with
// the Token configured in the mini-program admin.
const LocalMessageToken = "local-message-token"

// maxReceiptBodyBytes bounds the optional body of POST /_local/receipt/{orderId}.
const maxReceiptBodyBytes = 1 << 10

// serveReceipt serves POST /_local/receipt/{orderId} (docs/contract.md, "Local-only
// routes"): the receipt of the order is confirmed at the WeChat stand-in (body optional
// {"method": "buyer" (the default: the buyer in the confirm-receipt component) or
// "auto"}), which pushes the signed trade_manage_order_settlement event to POST
// /wechat/messages as WeChat does (wxapitest.ConfirmReceipt, SignPush); the answer is
// that route's status and body. WeChat confirms only a payment whose shipping it holds:
// anything else is 409 NOT_CONFIRMABLE, nothing pushed.
func (s *Stack) serveReceipt(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Method *string `json:"method"`
	}
	body, ok := localRequest(w, r, maxReceiptBodyBytes, "orderId")
	if !ok || s.hungUp(w, r, "local receipt") {
		return
	}
	r = r.WithContext(context.WithoutCancel(r.Context())) // see hungUp
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	method := wxapi.ConfirmManual
	err := dec.Decode(&in)
	switch {
	case err != nil && !errors.Is(err, io.EOF), dec.More(), in.Method != nil && *in.Method != "buyer" && *in.Method != "auto":
		writeLocalJSON(w, http.StatusBadRequest, []byte(`{"code":"INVALID_REQUEST","message":"body must be {\"method\": \"buyer\" or \"auto\"} or empty"}`))
		return
	case in.Method != nil && *in.Method == "auto":
		method = wxapi.ConfirmAuto
	}
	push, err := s.WxAPIServer.ConfirmReceipt(r.PathValue("orderId"), method)
	if err != nil {
		writeLocalJSON(w, http.StatusConflict, []byte(`{"code":"NOT_CONFIRMABLE","message":"WeChat confirms the receipt of a paid order only once its shipping was uploaded"}`))
		return
	}
	query, body := wxapitest.SignPush(LocalMessageToken, push, s.Store.Now())
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, "/wechat/messages?"+query.Encode(), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = r.RemoteAddr
	rec := httptest.NewRecorder()
	s.API.ServeHTTP(rec, req)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// maxRiskRankBodyBytes bounds the body of POST /_local/riskrank/{openid}, a
// {"riskRank"} object.
const maxRiskRankBodyBytes = 1 << 10

// serveRiskRank serves POST /_local/riskrank/{openid} (docs/contract.md, "Local-only
// routes"): body {"riskRank": 0..4}; from then on the WeChat stand-in's getUserRiskRank
// answers that rank for the buyer (wxapitest.SetRiskRank), so that an order of a SKU
// whose riskThreshold is at or below it answers 403 RISK_REJECTED. Locally the buyer's
// openid is their user id (the X-User-Id header or the token's sub). 204; a bad body 400.
func (s *Stack) serveRiskRank(w http.ResponseWriter, r *http.Request) {
	var in struct {
		RiskRank *int `json:"riskRank"`
	}
	body, ok := localRequest(w, r, maxRiskRankBodyBytes, "openid")
	if !ok {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || dec.More() || in.RiskRank == nil || *in.RiskRank < 0 || *in.RiskRank > wxapi.MaxRiskRank {
		writeLocalJSON(w, http.StatusBadRequest, []byte(`{"code":"INVALID_REQUEST","message":"body must be {\"riskRank\": 0 to 4}"}`))
		return
	}
	s.WxAPIServer.SetRiskRank(r.PathValue("openid"), *in.RiskRank)
	w.WriteHeader(http.StatusNoContent)
}
