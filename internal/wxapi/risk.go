package wxapi

import (
	"context"
	"fmt"
	"net/netip"
)

// getUserRiskRank ("获取用户安全等级",
// https://developers.weixin.qq.com/miniprogram/dev/server/API/sec-center/safety-control-capability/api_getuserriskrank.html):
// the scenes, the legal risk ranks and the errcodes of its 错误码 section.
const (
	SceneRegistration = 0 // scene 0: 注册 (registration)
	SceneMarketing    = 1 // scene 1: 营销作弊 (marketing fraud): a flash sale's buyer
	MaxRiskRank       = 4 // risk_rank: 合法值为0,1,2,3,4, higher riskier

	CodeNoRecentVisit = 61010   // the user has not visited the mini-program in the last two hours
	CodeTestQuota     = 9410009 // is_test calls beyond their quota
)

// RiskRequest is one getUserRiskRank request. The app id is the Client's. Mobile,
// Email and ExtendedInfo are personal or free data WeChat may use; leave them empty
// unless the buyer gave them for this purpose.
type RiskRequest struct {
	OpenID string // openid: the buyer, 1..MaxOpenIDBytes printable ASCII; required
	// Scene is scene: SceneRegistration or SceneMarketing.
	Scene int
	// ClientIP is client_ip: the address the buyer's request came from (API Gateway
	// HTTP API's requestContext.http.sourceIp), IPv4 or IPv6; required.
	ClientIP     string
	Mobile       string // mobile_no, optional
	Email        string // email_address, optional
	ExtendedInfo string // extended_info, optional
	Test         bool   // is_test: a test call, counted against the test quota (9410009)
}

type riskWire struct {
	AppID        string `json:"appid"`
	OpenID       string `json:"openid"`
	Scene        int    `json:"scene"`
	ClientIP     string `json:"client_ip"`
	Mobile       string `json:"mobile_no,omitempty"`
	Email        string `json:"email_address,omitempty"`
	ExtendedInfo string `json:"extended_info,omitempty"`
	Test         bool   `json:"is_test,omitempty"`
}

// RiskRank is getUserRiskRank's answer.
type RiskRank struct {
	Rank int // risk_rank, 0..MaxRiskRank, higher riskier
	// RequestID is unoin_id (sic): WeChat's id of this one request, for its support.
	RequestID int64
}

// GetUserRiskRank asks WeChat for the buyer's risk rank ("获取用户安全等级": POST
// /wxa/getuserriskrank). Errors: ErrInvalidArgument (nothing sent: a bad openid, scene
// or client_ip); ErrUnavailable (retry later: -1 busy, rate limits, no answer, or an
// answer without a legal risk_rank); final *Error values such as CodeNoRecentVisit
// (61010) and CodeTestQuota (9410009).
func (c *Client) GetUserRiskRank(ctx context.Context, r RiskRequest) (RiskRank, error) {
	const op = OpGetUserRiskRank
	switch {
	case r.OpenID == "" || len(r.OpenID) > MaxOpenIDBytes || !printable(r.OpenID):
		return RiskRank{}, invalid(op, "openid must be 1..%d printable ASCII characters", MaxOpenIDBytes)
	case r.Scene != SceneRegistration && r.Scene != SceneMarketing:
		return RiskRank{}, invalid(op, "scene must be %d or %d", SceneRegistration, SceneMarketing)
	case !validIP(r.ClientIP):
		return RiskRank{}, invalid(op, "client_ip must be an IPv4 or IPv6 address")
	case !text(r.Mobile) || !text(r.Email) || !text(r.ExtendedInfo):
		return RiskRank{}, invalid(op, "mobile_no, email_address and extended_info must be text")
	}
	var out struct {
		RiskRank *int  `json:"risk_rank"`
		UnoinID  int64 `json:"unoin_id"`
	}
	w := riskWire{AppID: c.appID, OpenID: r.OpenID, Scene: r.Scene, ClientIP: r.ClientIP,
		Mobile: r.Mobile, Email: r.Email, ExtendedInfo: r.ExtendedInfo, Test: r.Test}
	if err := c.callInto(ctx, op, PathGetUserRiskRank, w, &out); err != nil {
		return RiskRank{}, err
	}
	if out.RiskRank == nil || *out.RiskRank < 0 || *out.RiskRank > MaxRiskRank {
		return RiskRank{}, fmt.Errorf("%w: %s: the answer has no legal risk_rank", ErrUnavailable, op)
	}
	return RiskRank{Rank: *out.RiskRank, RequestID: out.UnoinID}, nil
}

// validIP reports whether s is an IPv4 or IPv6 address.
func validIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
