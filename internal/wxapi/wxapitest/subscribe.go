package wxapitest

import (
	"slices"

	"github.com/stockguard/stockguard/internal/wxapi"
)

// Value is one data keyword's value as received.
type Value struct {
	Value string `json:"value"`
}

// Message is a subscribeMessage.send body as received ("发送订阅消息").
type Message struct {
	ToUser           string           `json:"touser"`
	TemplateID       string           `json:"template_id"`
	Page             string           `json:"page"`
	Data             map[string]Value `json:"data"`
	MiniprogramState string           `json:"miniprogram_state"`
	Lang             string           `json:"lang"`
}

type grantKey struct{ openid, templateID string }

// AddTemplate makes id a template of the app whose data are exactly keys ("thing1",
// "amount2", …).
func (s *Server) AddTemplate(id string, keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.templates[id] = slices.Sorted(slices.Values(keys))
}

// Subscribe records that buyer openid accepted template templateID n times in
// wx.requestSubscribeMessage: n more messages may be sent ("一次性订阅": one send per
// acceptance). Without one, a send gets 43101.
func (s *Server) Subscribe(openid, templateID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants[grantKey{openid, templateID}] += n
}

// Subscriptions is how many sends of templateID to openid remain.
func (s *Server) Subscriptions(openid, templateID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[grantKey{openid, templateID}]
}

// Messages returns the messages delivered to openid, oldest first.
func (s *Server) Messages(openid string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.ToUser == openid {
			out = append(out, m)
		}
	}
	return out
}

// subscribeSend serves "发送订阅消息".
func (s *Server) subscribeSend(body []byte) (int, string) {
	var m Message
	if !decode(body, &m) {
		return wxapi.CodeDataFormat, "data format error"
	}
	switch m.MiniprogramState {
	case "", wxapi.StateDeveloper, wxapi.StateTrial, wxapi.StateFormal:
	default:
		return wxapi.CodeDataFormat, "data format error: invalid miniprogram_state"
	}
	switch m.Lang {
	case "", wxapi.LangZhCN, wxapi.LangEnUS, wxapi.LangZhHK, wxapi.LangZhTW:
	default:
		return wxapi.CodeDataFormat, "data format error: invalid lang"
	}
	if m.ToUser == "" || len(m.ToUser) > wxapi.MaxOpenIDBytes {
		return wxapi.CodeInvalidOpenID, "invalid openid"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, ok := s.templates[m.TemplateID]
	if !ok {
		return wxapi.CodeInvalidTemplateID, "invalid template_id"
	}
	if m.Page != "" && !s.pageOK(m.Page) {
		return wxapi.CodeInvalidPage, "invalid page"
	}
	if sent := sortedKeys(m.Data); !slices.Equal(sent, keys) {
		return wxapi.CodeTemplateData, "argument invalid! data keywords differ from the template's"
	}
	for _, k := range keys {
		if err := wxapi.CheckKeyword(k, m.Data[k].Value); err != nil {
			return wxapi.CodeTemplateData, "argument invalid! data." + k + ".value breaks its rule"
		}
	}
	g := grantKey{m.ToUser, m.TemplateID}
	if s.grants[g] == 0 {
		return wxapi.CodeUserRefused, "user refuse to accept the msg"
	}
	s.grants[g]--
	s.messages = append(s.messages, m)
	return 0, ""
}
