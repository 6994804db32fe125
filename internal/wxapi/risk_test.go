package wxapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

func riskRequest() wxapi.RiskRequest {
	return wxapi.RiskRequest{OpenID: buyer, Scene: wxapi.SceneMarketing, ClientIP: "2001:db8::7"}
}

func TestGetUserRiskRank_ReadsTheRankWeChatGives(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	h.srv.SetRiskRank(buyer, 4)
	got, err := h.c.GetUserRiskRank(context.Background(), riskRequest())
	if err != nil || got.Rank != 4 || got.RequestID == 0 {
		t.Fatalf("GetUserRiskRank = %+v, %v; want rank 4 and a request id", got, err)
	}
	h.srv.RevokeTokens() // a forced refresh elsewhere: the client fetches the current token and asks again
	if got, err := h.c.GetUserRiskRank(context.Background(), riskRequest()); err != nil || got.Rank != 4 {
		t.Fatalf("after the token was revoked: %+v, %v", got, err)
	}
	if c := h.counts(wxapi.PathGetUserRiskRank); c != (counts{2, 3}) {
		t.Errorf("%+v, want 2 fetches and 3 calls", c)
	}
}

func TestGetUserRiskRank_RefusesBadArgumentsBeforeSending(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	for name, edit := range map[string]func(*wxapi.RiskRequest){
		"no openid":     func(r *wxapi.RiskRequest) { r.OpenID = "" },
		"no client_ip":  func(r *wxapi.RiskRequest) { r.ClientIP = "" },
		"bad client_ip": func(r *wxapi.RiskRequest) { r.ClientIP = "203.0.113" },
		"scene 2":       func(r *wxapi.RiskRequest) { r.Scene = 2 },
	} {
		r := riskRequest()
		edit(&r)
		if _, err := h.c.GetUserRiskRank(context.Background(), r); !errors.Is(err, wxapi.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if c := h.counts(wxapi.PathGetUserRiskRank); c != (counts{}) {
		t.Errorf("%+v, want nothing sent", c)
	}
}

func TestGetUserRiskRank_BusyIsRetryable(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	h.srv.FailNext(wxapi.PathGetUserRiskRank, wxapitest.FailBusy, 1)
	_, err := h.c.GetUserRiskRank(context.Background(), riskRequest())
	var werr *wxapi.Error
	if !wxapi.Retryable(err) || !errors.As(err, &werr) || werr.Code != wxapi.CodeSystemBusy {
		t.Fatalf("busy: %v, want retryable errcode -1", err)
	}
}
