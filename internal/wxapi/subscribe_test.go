package wxapi_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

const payReminder = "WCGwPGBfPhx3_lnvRrvoqfjnO7GzAjFm3o-LWH-xpAA"

// reminder is a pay reminder to the test buyer: order number, item, amount, deadline.
func reminder() wxapi.SubscribeMessage {
	return wxapi.SubscribeMessage{
		ToUser: buyer, TemplateID: payReminder, Page: "pages/order/detail?id=" + orderID,
		Data: map[string]string{
			"character_string1": orderID,
			"thing2":            "限量球鞋 x1",
			"amount3":           "¥1299.00",
			"time4":             "2026年11月11日 00:15",
		},
		MiniprogramState: wxapi.StateFormal, Lang: wxapi.LangZhCN,
	}
}

func subscribeHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, wxapitest.Options{Pages: []string{"pages/order/detail"}})
	h.srv.AddTemplate(payReminder, "character_string1", "thing2", "amount3", "time4")
	return h
}

func TestSendSubscribeMessage_OneSendPerAcceptanceThenNotSubscribed(t *testing.T) {
	h := subscribeHarness(t)
	h.srv.Subscribe(buyer, payReminder, 1)
	if err := h.c.SendSubscribeMessage(context.Background(), reminder()); err != nil {
		t.Fatal(err)
	}
	err := h.c.SendSubscribeMessage(context.Background(), reminder())
	var werr *wxapi.Error
	if !errors.Is(err, wxapi.ErrNotSubscribed) || wxapi.Retryable(err) || !errors.As(err, &werr) || werr.Code != wxapi.CodeUserRefused {
		t.Errorf("second send: %v, want final ErrNotSubscribed (43101)", err)
	}
	got := h.srv.Messages(buyer)
	if len(got) != 1 {
		t.Fatalf("%d messages delivered, want 1", len(got))
	}
	m := got[0]
	want := map[string]wxapitest.Value{"character_string1": {Value: orderID}, "thing2": {Value: "限量球鞋 x1"},
		"amount3": {Value: "¥1299.00"}, "time4": {Value: "2026年11月11日 00:15"}}
	if m.TemplateID != payReminder || m.Page != reminder().Page || m.MiniprogramState != "formal" || m.Lang != "zh_CN" || !maps.Equal(m.Data, want) {
		t.Errorf("delivered %+v", m)
	}
	if c := h.counts(wxapi.PathSubscribeSend); c != (counts{1, 2}) {
		t.Errorf("%+v, want 1 fetch and 2 sends", c)
	}
}

func TestSendSubscribeMessage_TemplateFaultsAreFinal(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*wxapi.SubscribeMessage)
		errcode int
	}{
		{"UnknownTemplate", func(m *wxapi.SubscribeMessage) { m.TemplateID = "unknown-template" }, wxapi.CodeInvalidTemplateID},
		{"MissingKeyword", func(m *wxapi.SubscribeMessage) { delete(m.Data, "time4") }, wxapi.CodeTemplateData},
		{"ExtraKeyword", func(m *wxapi.SubscribeMessage) { m.Data["thing5"] = "多余" }, wxapi.CodeTemplateData},
		{"UnknownPage", func(m *wxapi.SubscribeMessage) { m.Page = "pages/gone" }, wxapi.CodeInvalidPage},
		{"NotSubscribed", func(m *wxapi.SubscribeMessage) { m.ToUser = "o-bob" }, wxapi.CodeUserRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := subscribeHarness(t)
			h.srv.Subscribe(buyer, payReminder, 1)
			m := reminder()
			tt.edit(&m)
			err := h.c.SendSubscribeMessage(context.Background(), m)
			var werr *wxapi.Error
			if !errors.As(err, &werr) || werr.Code != tt.errcode || werr.Op != wxapi.OpSubscribeSend || wxapi.Retryable(err) {
				t.Errorf("err %v, want final errcode %d", err, tt.errcode)
			}
			if n := len(h.srv.Messages(m.ToUser)); n != 0 {
				t.Errorf("%d messages delivered", n)
			}
			if n := h.srv.Subscriptions(buyer, payReminder); n != 1 {
				t.Errorf("%d subscriptions left, want the 1 untouched", n)
			}
		})
	}
}

func TestSendSubscribeMessage_RefusesWhatWeChatWouldBeforeSending(t *testing.T) {
	tests := map[string]func(*wxapi.SubscribeMessage){
		"NoToUser":        func(m *wxapi.SubscribeMessage) { m.ToUser = "" },
		"ToUserTooLong":   func(m *wxapi.SubscribeMessage) { m.ToUser = strings.Repeat("o", 129) },
		"NoTemplate":      func(m *wxapi.SubscribeMessage) { m.TemplateID = "" },
		"PageWithSpace":   func(m *wxapi.SubscribeMessage) { m.Page = "pages/order/detail?id= 1" },
		"StateProduction": func(m *wxapi.SubscribeMessage) { m.MiniprogramState = "production" },
		"LangFrench":      func(m *wxapi.SubscribeMessage) { m.Lang = "fr_FR" },
		"NoData":          func(m *wxapi.SubscribeMessage) { m.Data = nil },
		"Thing21Chars":    func(m *wxapi.SubscribeMessage) { m.Data["thing2"] = strings.Repeat("鞋", 21) },
		"AmountWords":     func(m *wxapi.SubscribeMessage) { m.Data["amount3"] = "一千元" },
		"TimeWithoutTime": func(m *wxapi.SubscribeMessage) { m.Data["time4"] = "2026年11月11日" },
		"UnknownKind":     func(m *wxapi.SubscribeMessage) { m.Data["site5"] = "腾讯大厦" },
		"EmptyValue":      func(m *wxapi.SubscribeMessage) { m.Data["thing2"] = "" },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			h := subscribeHarness(t)
			h.srv.Subscribe(buyer, payReminder, 1)
			m := reminder()
			m.Data = maps.Clone(m.Data)
			edit(&m)
			if err := h.c.SendSubscribeMessage(context.Background(), m); !errors.Is(err, wxapi.ErrInvalidArgument) {
				t.Errorf("err %v, want ErrInvalidArgument", err)
			}
			if c := h.counts(wxapi.PathSubscribeSend); c != (counts{}) {
				t.Errorf("%+v reached WeChat", c)
			}
		})
	}
}

func TestCheckKeyword_FollowsTheDocumentedRulePerKind(t *testing.T) {
	tests := []struct {
		key, value string
		ok         bool
	}{
		{"thing1", "限量球鞋 x1 (黑/白)", true},
		{"thing1", strings.Repeat("a", 20), true},
		{"thing1", strings.Repeat("a", 21), false},
		{"thing1", "两行\n文字", false},
		{"thing1", "", false},
		{"number2", "339208499", true},
		{"number2", "12.5", true},
		{"number2", "-3", false},
		{"number2", "1.2.3", false},
		{"number2", strings.Repeat("9", 33), false},
		{"letter3", "ABCxyz", true},
		{"letter3", "abc1", false},
		{"symbol4", "#@!", true},
		{"symbol4", "#@!$%^", false},
		{"symbol4", "a#", false},
		{"character_string5", "SG2026-11_11ab", true},
		{"character_string5", strings.Repeat("x", 33), false},
		{"character_string5", "单号1", false},
		{"time6", "15:01", true},
		{"time6", "15:01:59", true},
		{"time6", "2019年10月1日 15:01", true},
		{"time6", "2019-10-01 15:01~2019-10-01 18:00", true},
		{"time6", "24:00", false},
		{"time6", "3pm", false},
		{"date7", "2019年10月1日", true},
		{"date7", "2019年10月", true},
		{"date7", "10月1日", true},
		{"date7", "2018-01-01", true},
		{"date7", "2018/01/01", true},
		{"date7", "2018.01.01", true},
		{"date7", "2018-01", true},
		{"date7", "01-01", true},
		{"date7", "2019年10月1日 15:01", true},
		{"date7", "2018-01-01~2018-02-01", true},
		{"date7", "2018-13-01", false},
		{"date7", "2018-01/01", false},
		{"date7", "10月", false},
		{"date7", "15:01", false},
		{"amount8", "¥1299.00", true},
		{"amount8", "1299.00元", true},
		{"amount8", "$5", true},
		{"amount8", "¥12345678901", false},
		{"amount8", "¥¥5", false},
		{"amount8", "五元", false},
		{"phone_number9", "+86-0766-66888866", true},
		{"phone_number9", "+86-0766-668888661", false},
		{"phone_number9", "139x", false},
		{"car_number10", "粤A8Z888挂", true},
		{"car_number10", "粤A8Z8888挂", false},
		{"car_number10", "粤A汉888", false},
		{"name11", "张三", true},
		{"name11", "张三Li", true},
		{"name11", "John Smith", true},
		{"name11", strings.Repeat("张", 11), false},
		{"name11", strings.Repeat("J", 21), false},
		{"name11", "R2D2", false},
		{"phrase12", "配送中", true},
		{"phrase12", "配送中请稍候", false},
		{"phrase12", "ok", false},
		{"enum13", "任意", true},
		{"site14", "腾讯大厦", false},
		{"thing", "no number", false},
	}
	for _, tt := range tests {
		if err := wxapi.CheckKeyword(tt.key, tt.value); (err == nil) != tt.ok {
			t.Errorf("CheckKeyword(%q, %q) = %v, want ok %v", tt.key, tt.value, err, tt.ok)
		}
	}
}
