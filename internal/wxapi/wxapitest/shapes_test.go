package wxapitest_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

const (
	txID    = "4200001858202306300646157659"
	mchID   = "1230000109"
	orderID = "SG20261111000000ab12"
	buyer   = "o-alice"
)

type object = map[string]any

// shipment is a valid unified express upload_shipping_info body of the test payment.
func shipment() object {
	return object{
		"order_key":      object{"order_number_type": 2, "transaction_id": txID},
		"logistics_type": 1,
		"delivery_mode":  1,
		"shipping_list":  []any{parcel()},
		"upload_time":    "2026-11-11T08:00:00.000+08:00",
		"payer":          object{"openid": buyer},
	}
}

func parcel() object {
	return object{"tracking_no": "YT3750696145732", "express_company": "YTO", "item_desc": "限量球鞋*1双"}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// paid stores the test payment, paid at the stand-in's clock, and returns a token.
func (s *standIn) paid(edit func(*wxapitest.Payment)) string {
	p := wxapitest.Payment{TransactionID: txID, MchID: mchID, OutTradeNo: orderID, OpenID: buyer, PaidAt: s.clock.Now()}
	if edit != nil {
		edit(&p)
	}
	s.srv.AddPayment(p)
	return s.token(false).AccessToken
}

func TestUploadShippingInfo_RefusesEachInvalidShapeWithItsDocumentedErrcode(t *testing.T) {
	firstParcel := func(b object) object { return b["shipping_list"].([]any)[0].(object) }
	split := func(b object) { b["delivery_mode"], b["is_all_delivered"] = 2, false }
	tests := []struct {
		name    string
		edit    func(b object)
		payment func(*wxapitest.Payment)
		errcode int
	}{
		{"Valid", func(object) {}, nil, 0},
		{"ValidByOutTradeNo", func(b object) {
			b["order_key"] = object{"order_number_type": 1, "mchid": mchID, "out_trade_no": orderID}
		}, nil, 0},
		{"UnknownField", func(b object) { b["shop_id"] = 1 }, nil, wxapi.CodeDataFormat},
		{"UnknownParcelField", func(b object) { firstParcel(b)["goods_id"] = "1" }, nil, wxapi.CodeDataFormat},
		{"DeliveryModeAsName", func(b object) { b["delivery_mode"] = "UNIFIED_DELIVERY" }, nil, wxapi.CodeDataFormat},
		{"NoOrderKey", func(b object) { delete(b, "order_key") }, nil, wxapi.CodeInvalidOrderNumberType},
		{"OrderNumberTypeThree", func(b object) { b["order_key"].(object)["order_number_type"] = 3 }, nil, wxapi.CodeInvalidOrderNumberType},
		{"NoTransactionID", func(b object) { b["order_key"] = object{"order_number_type": 2} }, nil, wxapi.CodeTransactionIDMissing},
		{"NoMchID", func(b object) { b["order_key"] = object{"order_number_type": 1, "out_trade_no": orderID} }, nil, wxapi.CodeMchIDMissing},
		{"NoOutTradeNo", func(b object) { b["order_key"] = object{"order_number_type": 1, "mchid": mchID} }, nil, wxapi.CodeOutTradeNoMissing},
		{"LogisticsFive", func(b object) { b["logistics_type"] = 5 }, nil, wxapi.CodeInvalidLogisticsType},
		{"NoLogistics", func(b object) { delete(b, "logistics_type") }, nil, wxapi.CodeInvalidLogisticsType},
		{"ModeThree", func(b object) { b["delivery_mode"] = 3 }, nil, wxapi.CodeInvalidDeliveryMode},
		{"UploadTimeWithoutZone", func(b object) { b["upload_time"] = "2026-11-11 08:00:00" }, nil, wxapi.CodeInvalidUploadTime},
		{"UploadTimeLostPlus", func(b object) { b["upload_time"] = "2026-11-11T08:00:00.120 08:00" }, nil, wxapi.CodeInvalidUploadTime},
		{"UnifiedNoList", func(b object) { delete(b, "shipping_list") }, nil, wxapi.CodeUnifiedNeedsOnePackage},
		{"UnifiedTwoParcels", func(b object) { b["shipping_list"] = []any{parcel(), parcel()} }, nil, wxapi.CodeUnifiedNeedsOnePackage},
		{"SplitSixteenParcels", func(b object) {
			split(b)
			var l []any
			for range 16 {
				l = append(l, parcel())
			}
			b["shipping_list"] = l
		}, nil, wxapi.CodeShippingListTooLong},
		{"SplitSameCity", func(b object) { split(b); b["logistics_type"] = 2 }, nil, wxapi.CodeSplitNeedsExpress},
		{"SplitWithoutAllDelivered", func(b object) { b["delivery_mode"] = 2 }, nil, wxapi.CodeAllDeliveredMissing},
		{"SplitEmptyList", func(b object) { split(b); b["shipping_list"] = []any{} }, nil, wxapi.CodeInvalidParam},
		{"NoPayer", func(b object) { delete(b, "payer") }, nil, wxapi.CodeInvalidParam},
		{"NoItemDesc", func(b object) { delete(firstParcel(b), "item_desc") }, nil, wxapi.CodeItemDescEmpty},
		{"ItemDesc121", func(b object) { firstParcel(b)["item_desc"] = strings.Repeat("鞋", 121) }, nil, wxapi.CodeItemDescTooLong},
		{"ExpressNoTrackingNo", func(b object) { delete(firstParcel(b), "tracking_no") }, nil, wxapi.CodeTrackingNoMissing},
		{"ExpressNoCompany", func(b object) { delete(firstParcel(b), "express_company") }, nil, wxapi.CodeExpressCompanyMissing},
		{"TrackingNo129", func(b object) { firstParcel(b)["tracking_no"] = strings.Repeat("1", 129) }, nil, wxapi.CodeTrackingNoTooLong},
		{"Company129", func(b object) { firstParcel(b)["express_company"] = strings.Repeat("Y", 129) }, nil, wxapi.CodeExpressCompanyTooLong},
		{"SFWithoutContact", func(b object) { firstParcel(b)["express_company"] = "SF" }, nil, wxapi.CodeInvalidParam},
		{"SFWithContact", func(b object) {
			firstParcel(b)["express_company"] = "SF"
			firstParcel(b)["contact"] = object{"consignor_contact": "021-****1234"}
		}, nil, 0},
		{"UnmaskedContact", func(b object) { firstParcel(b)["contact"] = object{"receiver_contact": "13912345678"} }, nil, wxapi.CodeInvalidParam},
		{"SelfPickupNeedsNoTracking", func(b object) {
			b["logistics_type"] = 4
			b["shipping_list"] = []any{object{"item_desc": "自提*1"}}
		}, nil, 0},
		{"PaymentNotStored", func(b object) { b["order_key"].(object)["transaction_id"] = "4200000000000000000000000000" }, nil, wxapi.CodePaymentNotFound},
		{"OtherMerchant", func(b object) {
			b["order_key"] = object{"order_number_type": 1, "mchid": "1900000109", "out_trade_no": orderID}
		}, nil, wxapi.CodePaymentNotFound},
		{"Refunded", func(object) {}, func(p *wxapitest.Payment) { p.Refunded = true }, wxapi.CodeNotShippable},
		{"OtherPayer", func(b object) { b["payer"] = object{"openid": "o-mallory"} }, nil, wxapi.CodePayerMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, wxapitest.Options{})
			tok := s.paid(tt.payment)
			b := shipment()
			tt.edit(b)
			if code := s.post(wxapi.PathUploadShippingInfo, tok, marshal(t, b)); code != tt.errcode {
				t.Errorf("errcode %d, want %d", code, tt.errcode)
			}
			if n := len(s.srv.Shipments(txID)); n != recorded(tt.errcode) {
				t.Errorf("%d shipments recorded", n)
			}
		})
	}
}

func TestUploadShippingInfo_ReshipmentRules(t *testing.T) {
	s := start(t, wxapitest.Options{})
	tok := s.paid(nil)
	at := func(d time.Duration) string { return s.clock.Now().Add(d).Format(wxapi.UploadTimeLayout) }
	upload := func(edit func(object)) int {
		b := shipment()
		edit(b)
		return s.post(wxapi.PathUploadShippingInfo, tok, marshal(t, b))
	}
	steps := []struct {
		name    string
		edit    func(object)
		errcode int
	}{
		{"PartOfASplit", func(b object) { b["delivery_mode"], b["is_all_delivered"] = 2, false }, 0},
		{"SameAgain", func(b object) {
			b["delivery_mode"], b["is_all_delivered"], b["upload_time"] = 2, false, at(time.Minute)
		}, wxapi.CodeShippingNotUpdated},
		{"NotLaterThanThePrevious", func(b object) { b["delivery_mode"], b["is_all_delivered"] = 2, true }, wxapi.CodeInvalidParam},
		{"Completed", func(b object) { b["delivery_mode"], b["is_all_delivered"], b["upload_time"] = 2, true, at(time.Hour) }, 0},
		{"ContinueAfterCompletion", func(b object) {
			b["delivery_mode"], b["is_all_delivered"], b["upload_time"] = 2, false, at(2*time.Hour)
		}, wxapi.CodeShippingFinished},
		{"Reshipment", func(b object) { b["upload_time"] = at(3 * time.Hour) }, 0},
		{"SecondReshipment", func(b object) {
			b["upload_time"] = at(4 * time.Hour)
			b["shipping_list"].([]any)[0].(object)["tracking_no"] = "YT0000000000002"
		}, wxapi.CodeReshipUsed},
	}
	for _, st := range steps {
		if code := upload(st.edit); code != st.errcode {
			t.Errorf("%s: errcode %d, want %d", st.name, code, st.errcode)
		}
	}
	if n := len(s.srv.Shipments(orderID)); n != 3 {
		t.Errorf("%d shipments recorded, want 3", n)
	}
}

func TestFailPaymentNotFound_CountsDownPerOrderOnBothShippingAPIs(t *testing.T) {
	s := start(t, wxapitest.Options{})
	tok := s.paid(nil)
	s.srv.FailPaymentNotFound(txID, 3)
	body := marshal(t, shipment())
	special := `{"order_id":"` + orderID + `","type":2}`
	for i, want := range []int{wxapi.CodePaymentNotFound, wxapi.CodePaymentNotFound, wxapi.CodeSpecialOrderNotFound} {
		path, b := wxapi.PathUploadShippingInfo, body
		if i == 2 {
			path, b = wxapi.PathOpSpecialOrder, special
		}
		if code := s.post(path, tok, b); code != want {
			t.Errorf("call %d: errcode %d, want %d", i, code, want)
		}
	}
	if code := s.post(wxapi.PathOpSpecialOrder, tok, special); code != 0 {
		t.Errorf("declaration after the injected answers: errcode %d", code)
	}
	if code := s.post(wxapi.PathUploadShippingInfo, tok, body); code != 0 {
		t.Errorf("upload after the injected answers: errcode %d", code)
	}
}

func TestOpSpecialOrder_RefusesEachInvalidShapeWithItsDocumentedErrcode(t *testing.T) {
	day := int64(86400)
	paidAt := int64(1794355200) // testkit.NewClock's start
	tests := []struct {
		name    string
		body    string
		payment func(*wxapitest.Payment)
		errcode int
	}{
		{"PresaleIn15Days", `{"order_id":"` + txID + `","type":1,"delay_to":` + itoa(paidAt+15*day) + `}`, nil, 0},
		{"PresaleIn330DaysByOutTradeNo", `{"order_id":"` + orderID + `","type":1,"delay_to":` + itoa(paidAt+330*day) + `}`, nil, 0},
		{"TestOrder", `{"order_id":"` + orderID + `","type":2}`, nil, 0},
		{"UnknownField", `{"order_id":"` + orderID + `","type":2,"reason":"x"}`, nil, wxapi.CodeDataFormat},
		{"NoOrderID", `{"type":2}`, nil, wxapi.CodeDataFormat},
		{"TypeAsString", `{"order_id":"` + orderID + `","type":"1"}`, nil, wxapi.CodeDataFormat},
		{"TypeThree", `{"order_id":"` + orderID + `","type":3}`, nil, wxapi.CodeInvalidSpecialType},
		{"PresaleWithoutDelay", `{"order_id":"` + orderID + `","type":1}`, nil, wxapi.CodeInvalidDelayTo},
		{"PresaleIn14Days", `{"order_id":"` + orderID + `","type":1,"delay_to":` + itoa(paidAt+14*day) + `}`, nil, wxapi.CodeInvalidDelayTo},
		{"PresaleIn331Days", `{"order_id":"` + orderID + `","type":1,"delay_to":` + itoa(paidAt+331*day) + `}`, nil, wxapi.CodeInvalidDelayTo},
		{"UnknownOrder", `{"order_id":"SG0000","type":2}`, nil, wxapi.CodeSpecialOrderNotFound},
		{"Refunded", `{"order_id":"` + orderID + `","type":2}`, func(p *wxapitest.Payment) { p.Refunded = true }, wxapi.CodeSpecialOrderNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, wxapitest.Options{})
			tok := s.paid(tt.payment)
			if code := s.post(wxapi.PathOpSpecialOrder, tok, tt.body); code != tt.errcode {
				t.Errorf("errcode %d, want %d", code, tt.errcode)
			}
			if n := len(s.srv.SpecialOrders(txID)); n != recorded(tt.errcode) {
				t.Errorf("%d declarations recorded", n)
			}
		})
	}

	t.Run("AlreadyShipped", func(t *testing.T) {
		s := start(t, wxapitest.Options{})
		tok := s.paid(nil)
		if code := s.post(wxapi.PathUploadShippingInfo, tok, marshal(t, shipment())); code != 0 {
			t.Fatalf("upload: errcode %d", code)
		}
		if code := s.post(wxapi.PathOpSpecialOrder, tok, `{"order_id":"`+orderID+`","type":2}`); code != wxapi.CodeSpecialOrderNotFound {
			t.Errorf("errcode %d, want 268546002: a shipped order is not awaiting shipment", code)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// recorded is how many records an answer with errcode should leave: 1 when accepted.
func recorded(errcode int) int {
	if errcode == 0 {
		return 1
	}
	return 0
}

func TestUpdateOrderDetailPath_RefusesEachInvalidShape(t *testing.T) {
	tests := []struct {
		name, body string
		errcode    int
	}{
		{"Valid", detailBody, 0},
		{"UnknownField", `{"path":"pages/order/detail?id=${商品订单号}","type":1}`, wxapi.CodeDataFormat},
		{"NoPath", `{}`, wxapi.CodeInvalidDetailPath},
		{"NoPlaceholder", `{"path":"pages/order/detail?id=1"}`, wxapi.CodeInvalidDetailPath},
		{"NotAPage", `{"path":"pages/elsewhere?id=${商品订单号}"}`, wxapi.CodeInvalidDetailPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, wxapitest.Options{Pages: []string{"/pages/order/detail"}})
			tok := s.token(false).AccessToken
			if code := s.post(wxapi.PathUpdateOrderDetailPath, tok, tt.body); code != tt.errcode {
				t.Errorf("errcode %d, want %d", code, tt.errcode)
			}
			if got := s.srv.OrderDetailPath(); (got == "") != (tt.errcode != 0) {
				t.Errorf("path %q after errcode %d", got, tt.errcode)
			}
		})
	}
}

const template = "TEMPLATE_ID"

func message() object {
	return object{
		"touser": buyer, "template_id": template, "page": "pages/order/detail?id=1",
		"data":              object{"thing1": object{"value": "限量球鞋"}, "amount2": object{"value": "¥1299.00"}},
		"miniprogram_state": "trial", "lang": "en_US",
	}
}

func TestSubscribeSend_RefusesEachInvalidShapeWithItsDocumentedErrcode(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(object)
		errcode int
	}{
		{"Valid", func(object) {}, 0},
		{"Minimal", func(m object) { delete(m, "page"); delete(m, "miniprogram_state"); delete(m, "lang") }, 0},
		{"UnknownField", func(m object) { m["emphasis_keyword"] = "thing1.DATA" }, wxapi.CodeDataFormat},
		{"ValueAsNumber", func(m object) { m["data"].(object)["amount2"] = object{"value": 1299} }, wxapi.CodeDataFormat},
		{"StateProduction", func(m object) { m["miniprogram_state"] = "production" }, wxapi.CodeDataFormat},
		{"LangFrench", func(m object) { m["lang"] = "fr_FR" }, wxapi.CodeDataFormat},
		{"NoToUser", func(m object) { delete(m, "touser") }, wxapi.CodeInvalidOpenID},
		{"UnknownTemplate", func(m object) { m["template_id"] = "other" }, wxapi.CodeInvalidTemplateID},
		{"UnknownPage", func(m object) { m["page"] = "pages/gone" }, wxapi.CodeInvalidPage},
		{"MissingKeyword", func(m object) { delete(m["data"].(object), "amount2") }, wxapi.CodeTemplateData},
		{"ExtraKeyword", func(m object) { m["data"].(object)["thing3"] = object{"value": "x"} }, wxapi.CodeTemplateData},
		{"ThingTooLong", func(m object) { m["data"].(object)["thing1"] = object{"value": strings.Repeat("鞋", 21)} }, wxapi.CodeTemplateData},
		{"AmountWords", func(m object) { m["data"].(object)["amount2"] = object{"value": "一千元"} }, wxapi.CodeTemplateData},
		{"NotSubscribed", func(m object) { m["touser"] = "o-bob" }, wxapi.CodeUserRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, wxapitest.Options{Pages: []string{"pages/order/detail"}})
			s.srv.AddTemplate(template, "thing1", "amount2")
			s.srv.Subscribe(buyer, template, 1)
			tok := s.token(false).AccessToken
			m := message()
			tt.edit(m)
			if code := s.post(wxapi.PathSubscribeSend, tok, marshal(t, m)); code != tt.errcode {
				t.Errorf("errcode %d, want %d", code, tt.errcode)
			}
			delivered, left := len(s.srv.Messages(buyer)), s.srv.Subscriptions(buyer, template)
			if tt.errcode == 0 && (delivered != 1 || left != 0) || tt.errcode != 0 && (delivered != 0 || left != 1) {
				t.Errorf("%d delivered, %d subscriptions left", delivered, left)
			}
		})
	}
}
