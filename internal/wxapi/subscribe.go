package wxapi

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Values of subscribeMessage.send's optional fields ("发送订阅消息": miniprogram_state, lang).
const (
	StateDeveloper = "developer" // 开发版
	StateTrial     = "trial"     // 体验版
	StateFormal    = "formal"    // 正式版, WeChat's default
	LangZhCN       = "zh_CN"     // WeChat's default
	LangEnUS       = "en_US"
	LangZhHK       = "zh_HK"
	LangZhTW       = "zh_TW"
)

// SubscribeMessage is one subscribeMessage.send request ("发送订阅消息"). WeChat delivers it
// only if the buyer accepted the template in wx.requestSubscribeMessage: a one-time
// subscription allows one send per acceptance. The app may send up to 30 million messages
// a day when it has WeChat Pay ("接口限制": 开通支付能力的是3kw/日).
type SubscribeMessage struct {
	ToUser     string // touser: the buyer's openid, 1..MaxOpenIDBytes printable ASCII
	TemplateID string // template_id: a template of the app, printable ASCII
	// Page is page: the mini-program page the message opens, with an optional query
	// ("index?foo=bar"); empty means the message opens nothing. It must be a page of the
	// released mini-program (else errcode 41030).
	Page string
	// Data is data: keyword → value, sent as {"keyword": {"value": value}}. Keywords are
	// the template's, a kind and a number ("thing1", "amount2"); each value must follow its
	// kind's rule (see CheckKeyword). At least one.
	Data map[string]string
	// MiniprogramState is miniprogram_state: StateDeveloper, StateTrial, StateFormal or
	// empty (WeChat's default, formal).
	MiniprogramState string
	// Lang is lang: LangZhCN, LangEnUS, LangZhHK, LangZhTW or empty (zh_CN).
	Lang string
}

type keywordValue struct {
	Value string `json:"value"`
}

type subscribeWire struct {
	ToUser           string                  `json:"touser"`
	TemplateID       string                  `json:"template_id"`
	Page             string                  `json:"page,omitempty"`
	Data             map[string]keywordValue `json:"data"`
	MiniprogramState string                  `json:"miniprogram_state,omitempty"`
	Lang             string                  `json:"lang,omitempty"`
}

// SendSubscribeMessage sends a one-time subscribe message ("发送订阅消息": POST
// /cgi-bin/message/subscribe/send). Errors: ErrInvalidArgument (nothing sent: see
// SubscribeMessage and CheckKeyword); ErrUnavailable (retry later); ErrNotSubscribed
// (*Error 43101: no subscription left; final); final *Error values for the template's
// faults: CodeInvalidTemplateID, CodeTemplateData (errmsg names the keyword),
// CodeInvalidPage, CodeInvalidOpenID.
func (c *Client) SendSubscribeMessage(ctx context.Context, m SubscribeMessage) error {
	w, err := m.wire()
	if err != nil {
		return err
	}
	return c.call(ctx, OpSubscribeSend, PathSubscribeSend, w)
}

func (m SubscribeMessage) wire() (*subscribeWire, error) {
	const op = OpSubscribeSend
	switch {
	case m.ToUser == "" || len(m.ToUser) > MaxOpenIDBytes || !printable(m.ToUser):
		return nil, invalid(op, "touser must be 1..%d printable ASCII characters", MaxOpenIDBytes)
	case m.TemplateID == "" || !printable(m.TemplateID):
		return nil, invalid(op, "template_id must be printable ASCII")
	case !text(m.Page) || strings.ContainsRune(m.Page, ' '):
		return nil, invalid(op, "page must be a page path without spaces or control characters")
	case m.MiniprogramState != "" && m.MiniprogramState != StateDeveloper && m.MiniprogramState != StateTrial && m.MiniprogramState != StateFormal:
		return nil, invalid(op, "miniprogram_state %q is not developer, trial or formal", m.MiniprogramState)
	case m.Lang != "" && m.Lang != LangZhCN && m.Lang != LangEnUS && m.Lang != LangZhHK && m.Lang != LangZhTW:
		return nil, invalid(op, "lang %q is not zh_CN, en_US, zh_HK or zh_TW", m.Lang)
	case len(m.Data) == 0:
		return nil, invalid(op, "data needs at least one keyword")
	}
	w := &subscribeWire{ToUser: m.ToUser, TemplateID: m.TemplateID, Page: m.Page,
		Data: make(map[string]keywordValue, len(m.Data)), MiniprogramState: m.MiniprogramState, Lang: m.Lang}
	keys := make([]string, 0, len(m.Data))
	for k := range m.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad keyword is the same every time
	for _, k := range keys {
		if err := CheckKeyword(k, m.Data[k]); err != nil {
			return nil, invalid(op, "%v", err)
		}
		w.Data[k] = keywordValue{m.Data[k]}
	}
	return w, nil
}

// keywordName is a template keyword: its kind and its number in the template.
var keywordName = regexp.MustCompile(`^([a-z_]+?)([0-9]+)$`)

// keywordKind returns the kind of a template keyword ("thing" for "thing12"), or "" when
// key is not a kind followed by a number.
func keywordKind(key string) string {
	m := keywordName.FindStringSubmatch(key)
	if m == nil {
		return ""
	}
	return m[1]
}

// Value rules per keyword kind ("订阅消息": 订阅消息参数值内容限制说明). A symbol is any
// character other than a Chinese character, an ASCII letter, a digit or a control
// character ("符号表示除中文、英文、数字外的常见符号，不能带有换行等控制字符").
var keywordRules = map[string]func(v string) bool{
	"thing":            func(v string) bool { return runes(v) <= 20 },                          // 20个以内字符
	"number":           func(v string) bool { return len(v) <= 32 && number.MatchString(v) },   // 32位以内数字，可带小数
	"letter":           func(v string) bool { return runes(v) <= 32 && all(v, isLetter) },      // 32位以内字母
	"symbol":           func(v string) bool { return runes(v) <= 5 && all(v, isSymbol) },       // 5位以内符号
	"character_string": func(v string) bool { return runes(v) <= 32 && all(v, notHan) },        // 32位以内数字、字母或符号
	"time":             func(v string) bool { return span(v, timePoint) },                      // 24小时制时间（支持+年月日），支持时间段
	"date":             func(v string) bool { return span(v, datePoint) },                      // 年月日（支持+24小时制时间），支持时间段
	"amount":           amountRule,                                                             // 1个币种符号+10位以内纯数字，可带小数，结尾可带“元”
	"phone_number":     func(v string) bool { return runes(v) <= 17 && all(v, digitOrSymbol) }, // 17位以内，数字、符号
	"car_number":       carNumberRule,                                                          // 8位以内，第一位与最后一位可为汉字，其余为字母或数字
	"name":             nameRule,                                                               // 10个以内纯汉字或20个以内纯字母或符号
	"phrase":           func(v string) bool { return runes(v) <= 5 && all(v, isHan) },          // 5个以内汉字
	"enum":             func(string) bool { return true },                                      // 枚举值: only the template's values; WeChat checks
}

// CheckKeyword returns an error (not wrapping ErrInvalidArgument; SendSubscribeMessage
// wraps it) unless value is a valid value for template keyword key: key is a known kind
// and a number, and value is non-empty, valid UTF-8 without control characters, and
// follows its kind's rule ("订阅消息参数值内容限制说明"):
//   - thing: at most 20 characters; number: at most 32 digits, optionally with a decimal
//     part; letter: at most 32 ASCII letters; symbol: at most 5 symbols;
//     character_string: at most 32 digits, letters or symbols;
//   - time: a 24-hour time HH:MM[:SS], optionally after a date and a space; date: a date,
//     optionally followed by a space and such a time; both may be a range "a~b". Dates are
//     y年m月d日, y年m月, m月d日 or y-m-d, y-m, m-d with '-', '/' or '.';
//   - amount: at most one currency symbol, then at most 10 digits with an optional
//     decimal part, optionally ending in 元 (e.g. "¥12.50", "12.50元");
//   - phone_number: at most 17 digits or symbols; car_number: at most 8 characters,
//     letters or digits except the first and last, which may be Chinese characters;
//   - name: at most 10 characters if any is Chinese, else at most 20 letters or symbols;
//   - phrase: at most 5 Chinese characters; enum: any text (WeChat checks the template's
//     values).
//
// The stand-in (wxapitest) answers errcode 47003 for a value this refuses.
func CheckKeyword(key, value string) error {
	kind := keywordKind(key)
	rule, ok := keywordRules[kind]
	switch {
	case !ok:
		return fmt.Errorf("data keyword %.32q is not a known kind and a number", key)
	case value == "" || !text(value) || !rule(value):
		return fmt.Errorf("data keyword %q: value breaks the %s rule", key, kind)
	}
	return nil
}

var (
	number  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	amount  = regexp.MustCompile(`^(\p{Sc})?([0-9]+(\.[0-9]+)?)元?$`)
	clock   = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$`)
	dateHan = regexp.MustCompile(`^(?:([0-9]{4})年([0-9]{1,2})月(?:([0-9]{1,2})日)?|([0-9]{1,2})月([0-9]{1,2})日)$`)
	dateSep = regexp.MustCompile(`^(?:([0-9]{4})([-/.])([0-9]{1,2})(?:([-/.])([0-9]{1,2}))?|([0-9]{1,2})[-/.]([0-9]{1,2}))$`)
)

func runes(s string) int { return utf8.RuneCountInString(s) }

func all(s string, ok func(rune) bool) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !ok(r) }) < 0
}

func isHan(r rune) bool         { return unicode.Is(unicode.Han, r) }
func notHan(r rune) bool        { return !isHan(r) }
func isDigit(r rune) bool       { return '0' <= r && r <= '9' }
func isLetter(r rune) bool      { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }
func isSymbol(r rune) bool      { return !isHan(r) && !isLetter(r) && !isDigit(r) && !unicode.IsControl(r) }
func digitOrSymbol(r rune) bool { return isDigit(r) || isSymbol(r) }

// span reports whether v is one point or a range "a~b" of points.
func span(v string, point func(string) bool) bool {
	a, b, isRange := strings.Cut(v, "~")
	if !isRange {
		return point(v)
	}
	return point(strings.TrimSpace(a)) && point(strings.TrimSpace(b))
}

// timePoint is an optional date and a space, then a 24-hour time.
func timePoint(v string) bool {
	if d, t, ok := strings.Cut(v, " "); ok {
		return validDate(d) && clock.MatchString(t)
	}
	return clock.MatchString(v)
}

// datePoint is a date, then optionally a space and a 24-hour time.
func datePoint(v string) bool {
	if d, t, ok := strings.Cut(v, " "); ok {
		return validDate(d) && clock.MatchString(t)
	}
	return validDate(v)
}

// validDate matches the documented date forms with a month of 1..12 and a day of 1..31;
// the separators of y-m-d must be the same.
func validDate(v string) bool {
	var month, day string
	if m := dateHan.FindStringSubmatch(v); m != nil {
		month, day = m[2]+m[4], m[3]+m[5]
	} else if m := dateSep.FindStringSubmatch(v); m != nil {
		if m[4] != "" && m[4] != m[2] {
			return false
		}
		month, day = m[3]+m[6], m[5]+m[7]
	} else {
		return false
	}
	return within(month, 1, 12) && (day == "" || within(day, 1, 31))
}

// within reports whether the decimal s is within lo..hi.
func within(s string, lo, hi int) bool {
	n, err := strconv.Atoi(s)
	return err == nil && lo <= n && n <= hi
}

func amountRule(v string) bool {
	m := amount.FindStringSubmatch(v)
	return m != nil && len(strings.ReplaceAll(m[2], ".", "")) <= 10
}

func carNumberRule(v string) bool {
	r := []rune(v)
	if len(r) > 8 {
		return false
	}
	for i, c := range r {
		if !(isLetter(c) || isDigit(c) || (i == 0 || i == len(r)-1) && isHan(c)) {
			return false
		}
	}
	return true
}

func nameRule(v string) bool {
	if strings.IndexFunc(v, isHan) >= 0 {
		return runes(v) <= 10 && all(v, func(r rune) bool { return !isDigit(r) })
	}
	return runes(v) <= 20 && all(v, func(r rune) bool { return isLetter(r) || isSymbol(r) })
}
