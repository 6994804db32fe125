// Package wxapi calls WeChat's mini-program server API (https://api.weixin.qq.com) with the
// app's access token: shipping information (小程序发货信息管理服务: upload_shipping_info,
// opspecialorder), the order center's detail path (小程序购物订单: update_order_detail_path)
// one-time subscribe messages (subscribeMessage.send) and the buyer's risk rank
// (getUserRiskRank, 获取用户安全等级).
//
// # The access token
//
// Every call carries an access_token in its query string. A Client gets it from the app id
// and secret through getStableAccessToken ("获取稳定版接口调用凭据": POST /cgi-bin/stable_token,
// grant_type client_credential, force_refresh false) and keeps it in memory until
// RefreshMargin before it expires; concurrent callers share one fetch, and after a failed
// fetch the next waits RefreshRetry (meanwhile an unexpired token is still used).
//
// The stable token is what makes one token per app safe to fetch from many places: in its
// normal mode a fetch while the token is valid returns the same token, the platform hands
// out the next token in the last 5 minutes of the old one, and the old one stays valid
// through those 5 minutes (same page, "access_token 的存储与更新"). So every Lambda container
// may fetch its own copy without invalidating the others' — unlike getAccessToken
// ("获取接口调用凭据": "重复获取将导致上次获取的 access_token 失效"), whose docs ask for one
// central server to fetch it. The Client never sends force_refresh true: that mode
// invalidates the token of every container at once and is limited to 20 calls a day, 30
// seconds apart (stable token page).
//
// When WeChat answers a call with errcode 40001, 40014 or 42001 (the token is invalid or
// expired, e.g. after someone force-refreshed it), the Client drops that token, fetches the
// current one once — concurrent callers that hit the same token share that fetch — and
// sends the call once more.
//
// # Errors
//
// WeChat answers errors with HTTP 200 and a JSON errcode. A non-zero errcode becomes an
// *Error; Error.Retryable says whether the same request may succeed later (documented busy
// and rate-limit codes, and 10060001 "支付单不存在", which WeChat answers for a payment it
// has not stored yet), and errors.Is selects ErrUnavailable (retry later), ErrAlreadyApplied
// (WeChat already holds what was sent) and ErrNotSubscribed (the buyer has no subscription
// left for the template). Arguments WeChat would refuse are refused before sending with
// ErrInvalidArgument. No error quotes the access token, the app secret or a request URL.
//
// Doc pages cited by title below (all under https://developers.weixin.qq.com/miniprogram/dev/):
//   - "获取稳定版接口调用凭据" (getStableAccessToken): OpenApiDoc/mp-access-token/getStableAccessToken.html
//   - "小程序发货信息管理服务": platform-capabilities/business-capabilities/order-shipping/order-shipping.html
//   - "发货信息录入" (uploadShippingInfo): server/API/order_shipping/api_uploadshippinginfo.html
//   - "特殊发货报备" (opspecialorder): server/API/order_shipping/api_opspecialorder.html
//   - "小程序购物订单" (3.1 配置订单详情路径): platform-capabilities/business-capabilities/order_center/order_center.html
//   - "发送订阅消息" (subscribeMessage.send): OpenApiDoc/mp-message-management/subscribe-message/sendMessage.html
//   - "订阅消息" (订阅消息参数值内容限制说明): framework/open-ability/subscribe-message.html
//   - "获取接口调用凭据" (getAccessToken): OpenApiDoc/mp-access-token/getAccessToken.html
//   - "获取用户安全等级" (getUserRiskRank): server/API/sec-center/safety-control-capability/api_getuserriskrank.html
//   - "通用错误码" (global errcodes), linked from each API page's 错误码 section.
//
// Two rules come from WeChat's staff in its developer community, not from a doc page:
// retrying 10060001 a minute later (https://developers.weixin.qq.com/community/develop/doc/000228a29bcd50501001954d06b000)
// and errcode 10060035 for a refused detail path (https://developers.weixin.qq.com/community/develop/doc/0002c868e7c1a090bb439734b61000).
package wxapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stockguard/stockguard/internal/origin"
)

// DefaultBaseURL is the scheme and host of WeChat's server API.
const DefaultBaseURL = "https://api.weixin.qq.com"

// Paths of the calls a Client makes (each API page, "调用方式").
const (
	PathStableToken           = "/cgi-bin/stable_token"
	PathUploadShippingInfo    = "/wxa/sec/order/upload_shipping_info"
	PathOpSpecialOrder        = "/wxa/sec/order/opspecialorder"
	PathUpdateOrderDetailPath = "/wxa/sec/order/update_order_detail_path"
	PathSubscribeSend         = "/cgi-bin/message/subscribe/send"
	PathGetUserRiskRank       = "/wxa/getuserriskrank"
)

// Operation names, as in Error.Op: the API's English name on its doc page.
const (
	OpStableToken           = "getStableAccessToken"
	OpUploadShippingInfo    = "uploadShippingInfo"
	OpSpecialOrder          = "opspecialorder"
	OpUpdateOrderDetailPath = "update_order_detail_path"
	OpSubscribeSend         = "subscribeMessage.send"
	OpGetUserRiskRank       = "getUserRiskRank"
)

// DefaultTimeout bounds one HTTP exchange with WeChat when Config.HTTPClient is nil (5
// seconds: the same bound as the WeChat login and WeChat Pay clients).
const DefaultTimeout = 5 * time.Second

// Access token rules ("获取稳定版接口调用凭据"): expires_in is "目前是7200秒之内的值"; at any time
// a normal-mode fetch returns a token valid at least 5 minutes (expires_in >= 300), since the
// platform hands out the next token in the old one's last 5 minutes; callers must keep room
// for 512 characters.
const (
	MaxTokenTTL          = 7200 * time.Second // longest expires_in; a longer answer is cached this long only
	MinTokenTTL          = 300 * time.Second  // shortest expires_in a normal-mode fetch returns
	DefaultRefreshMargin = MinTokenTTL        // refresh when the platform already has the next token
	MaxAccessTokenLen    = 512                // bytes
	RefreshRetry         = 10 * time.Second   // from a failed fetch to the next attempt
	GrantType            = "client_credential"
)

// maxAnswerBytes bounds an answer body: every documented answer is a small JSON object.
const maxAnswerBytes = 64 << 10

// Global errcodes ("通用错误码") and those of getStableAccessToken and subscribeMessage.send
// ("发送订阅消息", errcode 的合法值). See Error.Retryable for how each is classified.
const (
	CodeSystemBusy         = -1    // system error: 系统繁忙，此时请开发者稍候再试
	CodeInvalidCredential  = 40001 // access_token is invalid or not latest (e.g. force-refreshed elsewhere)
	CodeInvalidGrantType   = 40002 // invalid grant_type
	CodeInvalidOpenID      = 40003 // touser is empty or not an openid of the app
	CodeInvalidAppID       = 40013 // invalid appid
	CodeInvalidAccessToken = 40014 // invalid access_token
	CodeInvalidTemplateID  = 40037 // template_id empty or not the app's
	CodeInvalidAppSecret   = 40125 // invalid appsecret
	CodeIPNotWhitelisted   = 40164 // the caller's IP is not on the app's IP whitelist
	CodeAccessTokenMissing = 41001 // access_token missing
	CodeAppIDMissing       = 41002 // appid missing
	CodeAppSecretMissing   = 41004 // appsecret missing
	CodeInvalidPage        = 41030 // page is not a page of the released mini-program
	CodeAccessTokenExpired = 42001 // access_token expired
	CodeRequirePOST        = 43002 // require POST method
	CodeUserRefused        = 43101 // the user has no (more) subscription to this template: user refuse to accept the msg
	CodeEmptyPostData      = 44002 // empty post data
	CodeFrequencyLimited   = 44990 // 达到频控上限 (per-second frequency limit)
	CodeDailyQuota         = 45009 // reach max api daily quota limit
	CodeMinuteQuota        = 45011 // api minute-quota reach limit, retry next minute
	CodeDataFormat         = 47001 // data format error: the body is not the documented JSON
	CodeTemplateData       = 47003 // template data empty or breaking a keyword's rule; errmsg names the keyword
	CodeAPIUnauthorized    = 48001 // api unauthorized: the app lacks the permission
)

// errcodes of the shipping APIs ("发货信息录入", "特殊发货报备": 错误码) and of the order center.
const (
	CodePaymentNotFound        = 10060001  // 支付单不存在: also answered for minutes after a payment, until WeChat has stored it
	CodeShippingFinished       = 10060002  // 支付单已完成发货，无法继续发货
	CodeReshipUsed             = 10060003  // 支付单已使用重新发货机会 (one re-shipment per payment)
	CodeNotShippable           = 10060004  // 支付单处于不可发货的状态 (e.g. refunded)
	CodeInvalidLogisticsType   = 10060005  // 物流类型有误
	CodeSplitNeedsExpress      = 10060006  // 非快递发货时不允许分拆发货
	CodeAllDeliveredMissing    = 10060007  // 分拆发货模式下必须填写 is_all_delivered
	CodeItemDescEmpty          = 10060008  // item_desc 不能为空
	CodeItemDescTooLong        = 10060009  // item_desc 太长
	CodeShippingBusy           = 10060012  // 系统错误：系统繁忙，此时请开发者稍候再试
	CodeInvalidParam           = 10060014  // 参数错误：根据错误原因描述修改参数
	CodeShippingBusyToo        = 10060019  // 系统错误：系统繁忙，此时请开发者稍候再试
	CodeNoItemDesc             = 10060020  // 没有任何商品描述的情况下不允许完成发货
	CodeShippingNotUpdated     = 10060023  // 发货信息未更新：支付单信息不变 (the same information again)
	CodeShippingListTooLong    = 10060024  // 物流信息列表太长 (more than MaxPackages)
	CodeExpressCompanyTooLong  = 10060025  // 物流公司编码太长
	CodeTrackingNoTooLong      = 10060026  // 物流单号太长
	CodePayerMismatch          = 10060031  // 该笔支付单不属于 openid 所指定的用户
	CodeInvalidDetailPath      = 10060035  // 无效的路径 (update_order_detail_path; seen in WeChat's developer community, not on the doc page)
	CodeInvalidOrderNumberType = 268485194 // 订单单号类型非法
	CodeTransactionIDMissing   = 268485195 // 微信支付单号形式下 transaction_id 不能为空
	CodeMchIDMissing           = 268485196 // 商户侧单号形式下 mchid 不能为空
	CodeOutTradeNoMissing      = 268485197 // 商户侧单号形式下 out_trade_no 不能为空
	CodeInvalidUploadTime      = 268485216 // 上传时间非法，请按照 RFC 3339 格式填写
	CodeInvalidDeliveryMode    = 268485224 // 发货模式非法
	CodeTrackingNoMissing      = 268485226 // 物流快递发货时物流单号必须填写
	CodeExpressCompanyMissing  = 268485227 // 物流快递发货时物流公司编码必须填写
	CodeUnifiedNeedsOnePackage = 268485228 // 统一发货模式下，物流信息列表长度必须为 1
	CodeInvalidSpecialType     = 268546000 // opspecialorder: type非法
	CodeInvalidDelayTo         = 268546001 // opspecialorder: delay_to非法
	CodeSpecialOrderNotFound   = 268546002 // opspecialorder: 账户不存在这个待发货单号
)

var (
	// ErrInvalidArgument: a Client method was called with an argument WeChat would refuse
	// (see the method and its type); nothing was sent. Final: the same call fails again.
	ErrInvalidArgument = errors.New("wxapi: invalid argument")

	// ErrUnavailable: WeChat could not be reached, timed out, answered other than HTTP 200
	// or with a body that is not the documented JSON, or answered an errcode for which
	// Error.Retryable holds. The call may or may not have taken effect; the same request
	// may be sent again later.
	ErrUnavailable = errors.New("wxapi: WeChat unavailable, retry later")

	// ErrAlreadyApplied: WeChat already holds exactly what was sent (uploadShippingInfo
	// errcode 10060023 "发货信息未更新：支付单信息不变"), e.g. a resend after a lost answer. The
	// caller may treat it as success.
	ErrAlreadyApplied = errors.New("wxapi: WeChat already holds this information")

	// ErrNotSubscribed: subscribeMessage.send refused with errcode 43101: the buyer did not
	// accept the template in wx.requestSubscribeMessage, or used up the sends they accepted
	// (one-time subscriptions allow one send per acceptance), or cancelled. Final for this
	// message.
	ErrNotSubscribed = errors.New("wxapi: the user has no subscription to this template")
)

// Error is an answer with a non-zero errcode, kept as data. Msg is WeChat's errmsg (it ends
// with a "rid" for WeChat's support), for logs only: never show it to a buyer.
type Error struct {
	Op   string // e.g. OpUploadShippingInfo
	Code int    // errcode
	Msg  string // errmsg, at most 256 bytes kept
}

func (e *Error) Error() string {
	return fmt.Sprintf("wxapi: %s errcode %d: %q", e.Op, e.Code, e.Msg)
}

// Retryable reports whether the same request may succeed later, so a caller should resend
// it with backoff rather than give up:
//   - -1, 10060012, 10060019: documented as 系统繁忙，此时请开发者稍候再试;
//   - 44990, 45009, 45011: rate limits (per second, per day, per minute);
//   - 40001, 40014, 42001: the token was refused even after the Client fetched the current
//     one and resent once;
//   - 10060001 支付单不存在: WeChat answers it until it has stored a new payment; WeChat's
//     staff advise waiting a minute and retrying (developer community, "upload_shipping_info
//     返回 10060001 支付单不存在": "支付后订单需要入库，如果查不到可以等待1分钟后再试");
//   - 268546002 (opspecialorder: no such order awaiting shipment): for the same reason a
//     declaration right after a payment can miss it; a wrong order id exhausts the
//     caller's retries instead, which the caller alarms on.
//
// Every other errcode is final for that request: configuration faults (40002, 40013,
// 40125, 40164, 41001-41004, 48001), refused arguments (47001, 47003, 40003, 40037, 41030,
// the 10060005-10060031 and 2684852xx shape codes), WeChat's verdict on the order
// (10060002 already shipped, 10060003 re-shipment used, 10060004 not shippable),
// ErrNotSubscribed (43101), ErrAlreadyApplied (10060023), and codes this package does not
// know.
func (e *Error) Retryable() bool {
	switch e.Code {
	case CodeSystemBusy, CodeShippingBusy, CodeShippingBusyToo,
		CodeFrequencyLimited, CodeDailyQuota, CodeMinuteQuota,
		CodeInvalidCredential, CodeInvalidAccessToken, CodeAccessTokenExpired,
		CodePaymentNotFound, CodeSpecialOrderNotFound:
		return true
	}
	return false
}

// Unwrap returns ErrUnavailable when Retryable, ErrAlreadyApplied for 10060023,
// ErrNotSubscribed for 43101, and nil otherwise.
func (e *Error) Unwrap() error {
	switch {
	case e.Retryable():
		return ErrUnavailable
	case e.Code == CodeShippingNotUpdated:
		return ErrAlreadyApplied
	case e.Code == CodeUserRefused:
		return ErrNotSubscribed
	}
	return nil
}

// tokenRefused reports whether errcode says the access token itself was refused, which a
// fresh token may cure.
func (e *Error) tokenRefused() bool {
	return e.Code == CodeInvalidCredential || e.Code == CodeInvalidAccessToken || e.Code == CodeAccessTokenExpired
}

// Retryable reports whether err (from a Client method) says the same request may succeed
// later: errors.Is(err, ErrUnavailable). Errors of the caller's context are not retryable.
func Retryable(err error) bool { return errors.Is(err, ErrUnavailable) }

// Config is what a Client needs.
type Config struct {
	AppID     string // the mini-program's AppID (wx…); required
	AppSecret string // its AppSecret; required, never logged or quoted
	// BaseURL is the scheme and host of the API; empty means DefaultBaseURL. The stand-in
	// (wxapitest.Server) serves http://127.0.0.1:port.
	BaseURL string
	// HTTPClient sends the requests; nil means a client with DefaultTimeout.
	HTTPClient *http.Client
	// Now is the clock the token's expiry is kept on; nil means time.Now.
	Now func() time.Time
	// RefreshMargin is how long before its expiry a token is replaced; zero means
	// DefaultRefreshMargin. At most MinTokenTTL: a token fetched with expires_in at or
	// below the margin is kept for half its life instead, so a fresh token is never due
	// for replacement the moment it arrives.
	RefreshMargin time.Duration
}

// Client calls WeChat's server API for one mini-program. Build one per process and share
// it: it holds the access token for every call. It is safe for concurrent use.
type Client struct {
	appID, secret string
	base          string
	http          *http.Client
	now           func() time.Time
	margin        time.Duration

	mu        sync.Mutex
	tok       string      // cached token; "" when none
	gen       uint64      // generation of tok: bumped by every successful fetch
	renewAt   time.Time   // when tok is due for replacement
	expiresAt time.Time   // when tok expires
	pending   *tokenFetch // the fetch in flight, if any
	failed    error       // the last fetch's error, when there is no token
	retryAt   time.Time   // when a fetch may follow a failed one
}

// New validates cfg: AppID and AppSecret non-empty printable ASCII, BaseURL (if set) an
// http(s) scheme and host only, RefreshMargin within 0..MinTokenTTL. Errors never quote
// the secret. New sends nothing: the first call fetches the token.
func New(cfg Config) (*Client, error) {
	if cfg.AppID == "" || cfg.AppSecret == "" || !printable(cfg.AppID) || !printable(cfg.AppSecret) {
		return nil, errors.New("wxapi: config: AppID and AppSecret are required, printable ASCII")
	}
	base, err := origin.Parse(cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, fmt.Errorf("wxapi: config: BaseURL %w", err)
	}
	if cfg.RefreshMargin < 0 || cfg.RefreshMargin > MinTokenTTL {
		return nil, fmt.Errorf("wxapi: config: RefreshMargin %v must be within 0..%v", cfg.RefreshMargin, MinTokenTTL)
	}
	c := &Client{
		appID:  cfg.AppID,
		secret: cfg.AppSecret,
		base:   base,
		http:   cmp.Or(cfg.HTTPClient, &http.Client{Timeout: DefaultTimeout}),
		now:    cfg.Now,
		margin: cmp.Or(cfg.RefreshMargin, DefaultRefreshMargin),
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// call sends req as the JSON body of a POST to path with the access token, and checks the
// answer's errcode. A token refusal (40001, 40014, 42001) drops the token, fetches the
// current one and resends once.
func (c *Client) call(ctx context.Context, op, path string, req any) error {
	return c.callInto(ctx, op, path, req, nil)
}

// callInto is call, decoding an errcode-0 answer into out as well (nil: not decoded).
func (c *Client) callInto(ctx context.Context, op, path string, req, out any) error {
	body, err := encode(req)
	if err != nil {
		return fmt.Errorf("wxapi: %s: encode request: %w", op, err)
	}
	tok, gen, err := c.token(ctx, 0)
	if err != nil {
		return err
	}
	err = c.send(ctx, op, path, tok, body, out)
	var werr *Error
	if !errors.As(err, &werr) || !werr.tokenRefused() {
		return err
	}
	fresh, _, ferr := c.token(ctx, gen)
	if ferr != nil {
		return ferr
	}
	if fresh == tok { // WeChat's token service still hands out the refused token
		return err
	}
	return c.send(ctx, op, path, fresh, body, out)
}

// send POSTs body to path?access_token=tok and decodes the errcode answer, and an
// errcode-0 answer into out when out is not nil.
func (c *Client) send(ctx context.Context, op, path, tok string, body []byte, out any) error {
	answer, status, err := c.post(ctx, op, c.base+path+"?access_token="+url.QueryEscape(tok), body)
	if err != nil {
		return err
	}
	if err := decodeResult(op, status, answer); err != nil || out == nil {
		return err
	}
	if json.Unmarshal(answer, out) != nil {
		return fmt.Errorf("%w: %s: the answer is not the documented JSON", ErrUnavailable, op)
	}
	return nil
}

// post sends one JSON POST and returns the answer's status and body (at most
// maxAnswerBytes+1 bytes). Transport errors wrap ErrUnavailable without quoting the URL.
func (c *Client) post(ctx context.Context, op, target string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("wxapi: %s: build request", op)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		// *url.Error quotes the URL, which holds the access token: keep only its cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("wxapi: %s: %w", op, ctx.Err())
		}
		return nil, 0, fmt.Errorf("%w: %s: %v", ErrUnavailable, op, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: read answer", ErrUnavailable, op)
	}
	return answer, resp.StatusCode, nil
}

// decodeResult reads an answer of an API whose success is {"errcode":0,"errmsg":"ok"}.
func decodeResult(op string, status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("%w: %s: HTTP %d", ErrUnavailable, op, status)
	}
	var w struct {
		ErrCode *int   `json:"errcode"`
		ErrMsg  string `json:"errmsg"`
	}
	if len(body) > maxAnswerBytes || json.Unmarshal(body, &w) != nil || w.ErrCode == nil {
		return fmt.Errorf("%w: %s: the answer is not the documented JSON", ErrUnavailable, op)
	}
	if *w.ErrCode != 0 {
		return newError(op, *w.ErrCode, w.ErrMsg)
	}
	return nil
}

// maxErrMsgBytes bounds the errmsg an *Error keeps.
const maxErrMsgBytes = 256

func newError(op string, code int, msg string) *Error {
	if len(msg) > maxErrMsgBytes {
		cut := maxErrMsgBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	return &Error{Op: op, Code: code, Msg: strings.ToValidUTF8(msg, "\uFFFD")}
}

// encode marshals v without escaping <, > and & (WeChat shows item_desc and template values
// as sent).
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// printable reports whether s is visible ASCII (0x21..0x7e).
func printable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) < 0
}

// text reports whether s is valid UTF-8 without control characters (订阅消息: "不能带有换行等
// 控制字符"; the same holds for every free-text field WeChat shows).
func text(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// invalid returns an error wrapping ErrInvalidArgument for op.
func invalid(op, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, op, fmt.Sprintf(format, args...))
}
