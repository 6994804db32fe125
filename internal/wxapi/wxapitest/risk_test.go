package wxapitest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

// riskAnswer is a decoded getUserRiskRank answer.
type riskAnswer struct {
	ErrCode  int    `json:"errcode"`
	ErrMsg   string `json:"errmsg"`
	RiskRank *int   `json:"risk_rank"`
	UnoinID  int64  `json:"unoin_id"`
}

// risk sends body to getUserRiskRank with tok and decodes the answer.
func (s *standIn) risk(tok, body string) riskAnswer {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.srv.URL()+wxapi.PathGetUserRiskRank+"?access_token="+tok, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var a riskAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		s.t.Fatal(err)
	}
	return a
}

const riskBody = `{"appid":"` + appID + `","openid":"o-buyer","scene":1,"client_ip":"203.0.113.7"}`

func TestGetUserRiskRank_AnswersTheRankSetForTheOpenID(t *testing.T) {
	s := start(t, wxapitest.Options{})
	tok := s.token(false).AccessToken
	if a := s.risk(tok, riskBody); a.ErrCode != 0 || a.RiskRank == nil || *a.RiskRank != 0 || a.UnoinID == 0 {
		t.Errorf("unrated buyer: %+v, want errcode 0, risk_rank 0 and a unoin_id", a)
	}
	s.srv.SetRiskRank("o-buyer", 3)
	if a := s.risk(tok, riskBody); a.ErrCode != 0 || a.RiskRank == nil || *a.RiskRank != 3 {
		t.Errorf("rated buyer: %+v, want risk_rank 3", a)
	}
	s.srv.SetRiskRank("o-buyer", -1)
	if a := s.risk(tok, riskBody); a.RiskRank == nil || *a.RiskRank != 0 {
		t.Errorf("forgotten rank: %+v, want risk_rank 0", a)
	}
}

func TestGetUserRiskRank_RefusesWhatThePageRefuses(t *testing.T) {
	s := start(t, wxapitest.Options{})
	tok := s.token(false).AccessToken
	for _, tc := range []struct {
		name, tok, body string
		want            int
	}{
		{"no appid", tok, `{"openid":"o-buyer","scene":1,"client_ip":"203.0.113.7"}`, wxapi.CodeEmptyPostData},
		{"no openid", tok, `{"appid":"` + appID + `","scene":1,"client_ip":"203.0.113.7"}`, wxapi.CodeEmptyPostData},
		{"no client_ip", tok, `{"appid":"` + appID + `","openid":"o-buyer","scene":1}`, wxapi.CodeEmptyPostData},
		{"empty client_ip", tok, strings.Replace(riskBody, "203.0.113.7", "", 1), wxapi.CodeEmptyPostData},
		{"no scene", tok, `{"appid":"` + appID + `","openid":"o-buyer","client_ip":"203.0.113.7"}`, wxapi.CodeEmptyPostData},
		{"unlisted scene", tok, strings.Replace(riskBody, `"scene":1`, `"scene":7`, 1), wxapitest.CodeInvalidScene},
		{"another app", tok, strings.Replace(riskBody, appID, "wx0000000000000000", 1), wxapi.CodeInvalidAppID},
		{"undocumented field", tok, strings.Replace(riskBody, "}", `,"bank_card_no":"1"}`, 1), wxapi.CodeDataFormat},
		{"no token", "", riskBody, wxapi.CodeAccessTokenMissing},
		{"unknown token", "ACCESS_TOKEN", riskBody, wxapi.CodeInvalidCredential},
	} {
		if a := s.risk(tc.tok, tc.body); a.ErrCode != tc.want || a.RiskRank != nil {
			t.Errorf("%s: %+v, want errcode %d and no risk_rank", tc.name, a, tc.want)
		}
	}
}
