package wxapitest

import (
	"github.com/stockguard/stockguard/internal/wxapi"
)

// SetRiskRank makes getUserRiskRank answer rank (0..wxapi.MaxRiskRank) for openid; a
// rank outside that range forgets it. An openid without a rank is rank 0, as WeChat
// rates a buyer it knows nothing against.
func (s *Server) SetRiskRank(openid string, rank int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rank < 0 || rank > wxapi.MaxRiskRank {
		delete(s.ranks, openid)
		return
	}
	s.ranks[openid] = rank
}

// riskRequest is a getUserRiskRank body as the page documents it ("获取用户安全等级",
// 请求参数); pointers tell a missing field from an empty one.
type riskRequest struct {
	AppID        *string `json:"appid"`
	OpenID       *string `json:"openid"`
	Scene        *int    `json:"scene"`
	MobileNo     *string `json:"mobile_no"`
	ClientIP     *string `json:"client_ip"`
	EmailAddress *string `json:"email_address"`
	ExtendedInfo *string `json:"extended_info"`
	IsTest       *bool   `json:"is_test"`
}

// getUserRiskRank serves "获取用户安全等级"
// (https://developers.weixin.qq.com/miniprogram/dev/server/API/sec-center/safety-control-capability/api_getuserriskrank.html):
// appid, openid, scene and client_ip are required (missing or empty: 44002, as WeChat
// answers a body without them), appid must be the app's (40013), scene one the page
// lists, 0 registration or 1 marketing fraud (40129); the answer is the rank set with
// SetRiskRank and a unoin_id.
func (s *Server) getUserRiskRank(body []byte) (int, string, map[string]any) {
	var r riskRequest
	switch {
	case !decode(body, &r):
		return wxapi.CodeDataFormat, "data format error", nil
	case r.AppID == nil || *r.AppID == "" || r.OpenID == nil || *r.OpenID == "" || r.Scene == nil || r.ClientIP == nil || *r.ClientIP == "":
		return wxapi.CodeEmptyPostData, "empty post data: appid, openid, scene and client_ip are required", nil
	case *r.AppID != s.appID:
		return wxapi.CodeInvalidAppID, "invalid appid", nil
	case *r.Scene != wxapi.SceneRegistration && *r.Scene != wxapi.SceneMarketing:
		return CodeInvalidScene, "invalid scene", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.riskAsked++
	return 0, "getuserriskrank succ", map[string]any{"risk_rank": s.ranks[*r.OpenID], "unoin_id": s.riskAsked}
}

// CodeInvalidScene is the errcode the stand-in answers for a scene the page does not
// list (全局错误码 40129: invalid scene).
const CodeInvalidScene = 40129
