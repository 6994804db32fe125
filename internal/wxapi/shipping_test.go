package wxapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
)

const (
	mchID   = "1230000109"
	buyer   = "o-alice"
	txID    = "4200001858202306300646157659"
	orderID = "SG20261111000000ab12"

	clockStart = 1794355200 // testkit.NewClock's 2026-11-11T00:00:00Z, Unix seconds
)

// paid stores the test payment in the stand-in, paid at the harness clock.
func (h *harness) paid() wxapitest.Payment {
	p := wxapitest.Payment{TransactionID: txID, MchID: mchID, OutTradeNo: orderID, OpenID: buyer, PaidAt: h.clock.Now()}
	h.srv.AddPayment(p)
	return p
}

// express is a valid unified express shipment of the test payment, by transaction_id.
func express(at time.Time) wxapi.Shipment {
	return wxapi.Shipment{
		Order:       wxapi.OrderKey{Type: wxapi.OrderByTransactionID, TransactionID: txID},
		Logistics:   wxapi.LogisticsExpress,
		Mode:        wxapi.DeliveryUnified,
		Packages:    []wxapi.Package{{TrackingNo: "YT3750696145732", ExpressCompany: "YTO", ItemDesc: "限量球鞋*1双"}},
		UploadTime:  at,
		PayerOpenID: buyer,
	}
}

func ptr[T any](v T) *T { return &v }

func TestUploadShippingInfo_DocumentedShapesAreAcceptedAndRecordedAsSent(t *testing.T) {
	byOutTradeNo := wxapi.OrderKey{Type: wxapi.OrderByOutTradeNo, MchID: mchID, OutTradeNo: orderID}
	tests := []struct {
		name string
		edit func(*wxapi.Shipment)
		want wxapitest.ShippingInfo
	}{
		{"ExpressByTransactionID", nil, wxapitest.ShippingInfo{
			OrderKey: wxapitest.OrderKey{OrderNumberType: 2, TransactionID: txID}, LogisticsType: 1, DeliveryMode: 1,
			ShippingList: []wxapitest.Package{{TrackingNo: "YT3750696145732", ExpressCompany: "YTO", ItemDesc: "限量球鞋*1双"}},
		}},
		{"SameCityByOutTradeNo", func(s *wxapi.Shipment) {
			s.Order, s.Logistics = byOutTradeNo, wxapi.LogisticsSameCity
			s.Packages = []wxapi.Package{{ItemDesc: "A&B <礼盒>*2"}}
		}, wxapitest.ShippingInfo{
			OrderKey: wxapitest.OrderKey{OrderNumberType: 1, MchID: mchID, OutTradeNo: orderID}, LogisticsType: 2, DeliveryMode: 1,
			ShippingList: []wxapitest.Package{{ItemDesc: "A&B <礼盒>*2"}},
		}},
		{"Virtual", func(s *wxapi.Shipment) {
			s.Logistics, s.Packages = wxapi.LogisticsVirtual, []wxapi.Package{{ItemDesc: "兑换码*1"}}
		}, wxapitest.ShippingInfo{
			OrderKey: wxapitest.OrderKey{OrderNumberType: 2, TransactionID: txID}, LogisticsType: 3, DeliveryMode: 1,
			ShippingList: []wxapitest.Package{{ItemDesc: "兑换码*1"}},
		}},
		{"SelfPickup", func(s *wxapi.Shipment) {
			s.Logistics, s.Packages = wxapi.LogisticsSelfPickup, []wxapi.Package{{ItemDesc: strings.Repeat("鞋", 120)}}
		}, wxapitest.ShippingInfo{
			OrderKey: wxapitest.OrderKey{OrderNumberType: 2, TransactionID: txID}, LogisticsType: 4, DeliveryMode: 1,
			ShippingList: []wxapitest.Package{{ItemDesc: strings.Repeat("鞋", 120)}},
		}},
		{"SFWithMaskedContact", func(s *wxapi.Shipment) {
			s.Packages = []wxapi.Package{{TrackingNo: "SF1234567890", ExpressCompany: "SF", ItemDesc: "球鞋*1", ReceiverContact: "0**2-******23-10"}}
		}, wxapitest.ShippingInfo{
			OrderKey: wxapitest.OrderKey{OrderNumberType: 2, TransactionID: txID}, LogisticsType: 1, DeliveryMode: 1,
			ShippingList: []wxapitest.Package{{TrackingNo: "SF1234567890", ExpressCompany: "SF", ItemDesc: "球鞋*1",
				Contact: &wxapitest.Contact{ReceiverContact: "0**2-******23-10"}}},
		}},
		{"SplitFifteenParcelsNotAllDelivered", func(s *wxapi.Shipment) {
			s.Mode, s.Packages = wxapi.DeliverySplit, nil
			for range wxapi.MaxPackages {
				s.Packages = append(s.Packages, wxapi.Package{TrackingNo: "YT1", ExpressCompany: "YTO", ItemDesc: "球鞋*1"})
			}
		}, wxapitest.ShippingInfo{
			OrderKey: wxapitest.OrderKey{OrderNumberType: 2, TransactionID: txID}, LogisticsType: 1, DeliveryMode: 2,
			IsAllDelivered: ptr(false), ShippingList: func() (l []wxapitest.Package) {
				for range wxapi.MaxPackages {
					l = append(l, wxapitest.Package{TrackingNo: "YT1", ExpressCompany: "YTO", ItemDesc: "球鞋*1"})
				}
				return l
			}(),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, wxapitest.Options{})
			h.paid()
			s := express(h.clock.Now())
			if tt.edit != nil {
				tt.edit(&s)
			}
			if err := h.c.UploadShippingInfo(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			got := h.srv.Shipments(orderID)
			tt.want.UploadTime = "2026-11-11T08:00:00.000+08:00"
			tt.want.Payer.OpenID = buyer
			if len(got) != 1 || !equalShipping(got[0], tt.want) {
				t.Errorf("recorded %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func equalShipping(a, b wxapitest.ShippingInfo) bool {
	if (a.IsAllDelivered == nil) != (b.IsAllDelivered == nil) || a.IsAllDelivered != nil && *a.IsAllDelivered != *b.IsAllDelivered ||
		len(a.ShippingList) != len(b.ShippingList) {
		return false
	}
	for i := range a.ShippingList {
		p, q := a.ShippingList[i], b.ShippingList[i]
		if (p.Contact == nil) != (q.Contact == nil) || p.Contact != nil && *p.Contact != *q.Contact {
			return false
		}
		p.Contact, q.Contact = nil, nil
		if p != q {
			return false
		}
	}
	return a.OrderKey == b.OrderKey && a.LogisticsType == b.LogisticsType && a.DeliveryMode == b.DeliveryMode &&
		a.UploadTime == b.UploadTime && a.Payer == b.Payer
}

func TestUploadShippingInfo_PaymentNotStoredYetIsRetryableThenAccepted(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	h.paid()
	h.srv.FailPaymentNotFound(orderID, 2) // by out_trade_no; the upload names the transaction_id
	for i := range 2 {
		err := h.c.UploadShippingInfo(context.Background(), express(h.clock.Now()))
		var werr *wxapi.Error
		if !wxapi.Retryable(err) || !errors.As(err, &werr) || werr.Code != wxapi.CodePaymentNotFound {
			t.Fatalf("attempt %d: %v, want a retryable 10060001", i, err)
		}
		h.clock.Advance(time.Minute)
	}
	if err := h.c.UploadShippingInfo(context.Background(), express(h.clock.Now())); err != nil {
		t.Fatalf("third attempt: %v", err)
	}
	if got := h.counts(wxapi.PathUploadShippingInfo); got != (counts{1, 3}) || len(h.srv.Shipments(txID)) != 1 {
		t.Errorf("%+v, %d shipments; want 1 fetch, 3 calls, 1 shipment", got, len(h.srv.Shipments(txID)))
	}
}

func TestUploadShippingInfo_WeChatsAnswersAreTyped(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(h *harness) // before the upload under test
		edit      func(*wxapi.Shipment)
		errcode   int
		is        error // wanted sentinel, nil for none
		retryable bool
	}{
		{"NeverStored", func(h *harness) {}, nil, wxapi.CodePaymentNotFound, wxapi.ErrUnavailable, true},
		{"SameShipmentAgain", func(h *harness) { h.paid(); h.upload(express(h.clock.Now())) },
			nil, wxapi.CodeShippingNotUpdated, wxapi.ErrAlreadyApplied, false},
		{"Refunded", func(h *harness) {
			p := h.paid()
			p.Refunded = true
			h.srv.AddPayment(p)
		}, nil, wxapi.CodeNotShippable, nil, false},
		{"OtherBuyer", func(h *harness) { h.paid() }, func(s *wxapi.Shipment) { s.PayerOpenID = "o-mallory" },
			wxapi.CodePayerMismatch, nil, false},
		{"SecondReshipment", func(h *harness) {
			h.paid()
			h.upload(express(h.clock.Now()))
			s := express(h.clock.Now().Add(time.Second))
			s.Packages[0].TrackingNo = "YT0000000000001"
			h.upload(s) // the one re-shipment
		}, func(s *wxapi.Shipment) { s.Packages[0].TrackingNo = "YT0000000000002" }, wxapi.CodeReshipUsed, nil, false},
		{"ContinueSplitAfterCompletion", func(h *harness) { h.paid(); h.upload(express(h.clock.Now())) }, func(s *wxapi.Shipment) {
			s.Mode, s.AllDelivered = wxapi.DeliverySplit, false
		}, wxapi.CodeShippingFinished, nil, false},
		{"Busy", func(h *harness) { h.paid(); h.srv.FailNext(wxapi.PathUploadShippingInfo, wxapitest.FailBusy, 1) },
			nil, wxapi.CodeSystemBusy, wxapi.ErrUnavailable, true},
		{"MinuteQuota", func(h *harness) { h.paid(); h.srv.FailNext(wxapi.PathUploadShippingInfo, wxapitest.FailMinuteQuota, 1) },
			nil, wxapi.CodeMinuteQuota, wxapi.ErrUnavailable, true},
		{"ServerError", func(h *harness) { h.paid(); h.srv.FailNext(wxapi.PathUploadShippingInfo, wxapitest.FailServerError, 1) },
			nil, 0, wxapi.ErrUnavailable, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, wxapitest.Options{})
			tt.setup(h)
			h.clock.Advance(time.Minute)
			s := express(h.clock.Now())
			if tt.edit != nil {
				tt.edit(&s)
			}
			before := len(h.srv.Shipments(txID))
			err := h.c.UploadShippingInfo(context.Background(), s)
			var werr *wxapi.Error
			switch {
			case err == nil:
				t.Fatal("accepted")
			case tt.errcode != 0 && (!errors.As(err, &werr) || werr.Code != tt.errcode || werr.Op != wxapi.OpUploadShippingInfo):
				t.Errorf("err %v, want errcode %d", err, tt.errcode)
			case tt.errcode == 0 && errors.As(err, &werr):
				t.Errorf("err %v carries an errcode", err)
			case tt.is != nil && !errors.Is(err, tt.is), tt.is == nil && errors.Unwrap(werr) != nil:
				t.Errorf("err %v, want it to be %v", err, tt.is)
			case wxapi.Retryable(err) != tt.retryable:
				t.Errorf("Retryable(%v) = %v", err, !tt.retryable)
			}
			if after := len(h.srv.Shipments(txID)); after != before {
				t.Errorf("%d shipments recorded before, %d after a refused upload", before, after)
			}
		})
	}
}

// upload uploads s and fails the test on error.
func (h *harness) upload(s wxapi.Shipment) {
	h.t.Helper()
	if err := h.c.UploadShippingInfo(context.Background(), s); err != nil {
		h.t.Fatal(err)
	}
}

func TestUploadShippingInfo_SplitParcelsThenCompletion(t *testing.T) {
	h := newHarness(t, wxapitest.Options{})
	h.paid()
	s := express(h.clock.Now())
	s.Mode = wxapi.DeliverySplit
	h.upload(s)
	h.clock.Advance(time.Hour)
	s.UploadTime, s.AllDelivered = h.clock.Now(), true
	s.Packages = append(s.Packages, wxapi.Package{TrackingNo: "YT3750696145733", ExpressCompany: "YTO", ItemDesc: "鞋带*1"})
	h.upload(s)
	got := h.srv.Shipments(orderID)
	if len(got) != 2 || *got[0].IsAllDelivered || !*got[1].IsAllDelivered || len(got[1].ShippingList) != 2 {
		t.Errorf("recorded %+v", got)
	}
}

func TestUploadShippingInfo_RefusesWhatWeChatWouldBeforeSending(t *testing.T) {
	tests := map[string]func(*wxapi.Shipment){
		"NoOrderNumberType":    func(s *wxapi.Shipment) { s.Order.Type = 0 },
		"NoTransactionID":      func(s *wxapi.Shipment) { s.Order.TransactionID = "" },
		"TransactionIDSymbols": func(s *wxapi.Shipment) { s.Order.TransactionID = "4200&x=1" },
		"NoMchID":              func(s *wxapi.Shipment) { s.Order = wxapi.OrderKey{Type: wxapi.OrderByOutTradeNo, OutTradeNo: orderID} },
		"BadOutTradeNo": func(s *wxapi.Shipment) {
			s.Order = wxapi.OrderKey{Type: wxapi.OrderByOutTradeNo, MchID: mchID, OutTradeNo: "a b"}
		},
		"LogisticsFive":          func(s *wxapi.Shipment) { s.Logistics = 5 },
		"ModeThree":              func(s *wxapi.Shipment) { s.Mode = 3 },
		"UnifiedTwoParcels":      func(s *wxapi.Shipment) { s.Packages = append(s.Packages, s.Packages[0]) },
		"UnifiedNoParcel":        func(s *wxapi.Shipment) { s.Packages = nil },
		"SplitSixteenParcels":    func(s *wxapi.Shipment) { s.Mode, s.Packages = wxapi.DeliverySplit, make([]wxapi.Package, 16) },
		"SplitSameCity":          func(s *wxapi.Shipment) { s.Mode, s.Logistics = wxapi.DeliverySplit, wxapi.LogisticsSameCity },
		"ExpressNoTrackingNo":    func(s *wxapi.Shipment) { s.Packages[0].TrackingNo = "" },
		"ExpressNoCompany":       func(s *wxapi.Shipment) { s.Packages[0].ExpressCompany = "" },
		"TrackingNoTooLong":      func(s *wxapi.Shipment) { s.Packages[0].TrackingNo = strings.Repeat("1", 129) },
		"CompanyTooLong":         func(s *wxapi.Shipment) { s.Packages[0].ExpressCompany = strings.Repeat("Y", 129) },
		"NoItemDesc":             func(s *wxapi.Shipment) { s.Packages[0].ItemDesc = "" },
		"ItemDesc121Characters":  func(s *wxapi.Shipment) { s.Packages[0].ItemDesc = strings.Repeat("鞋", 121) },
		"ItemDescNewline":        func(s *wxapi.Shipment) { s.Packages[0].ItemDesc = "鞋\n*1" },
		"SFWithoutContact":       func(s *wxapi.Shipment) { s.Packages[0].ExpressCompany = "SF" },
		"UnmaskedContact":        func(s *wxapi.Shipment) { s.Packages[0].ReceiverContact = "13912345678" },
		"ContactMaskedLastDigit": func(s *wxapi.Shipment) { s.Packages[0].ConsignorContact = "139****567*" },
		"NoUploadTime":           func(s *wxapi.Shipment) { s.UploadTime = time.Time{} },
		"NoPayer":                func(s *wxapi.Shipment) { s.PayerOpenID = "" },
		"PayerWithSpace":         func(s *wxapi.Shipment) { s.PayerOpenID = "o alice" },
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, wxapitest.Options{})
			h.paid()
			s := express(h.clock.Now())
			edit(&s)
			err := h.c.UploadShippingInfo(context.Background(), s)
			if !errors.Is(err, wxapi.ErrInvalidArgument) || wxapi.Retryable(err) {
				t.Errorf("err %v, want ErrInvalidArgument", err)
			}
			if got := h.counts(wxapi.PathUploadShippingInfo); got != (counts{}) {
				t.Errorf("%+v reached WeChat", got)
			}
		})
	}
}

func TestDeclareSpecialOrder(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name      string
		order     func(h *harness) wxapi.SpecialOrder
		want      *wxapitest.SpecialOrder // recorded, nil when refused
		errcode   int                     // 0: ErrInvalidArgument, nothing sent (when want is nil)
		retryable bool
	}{
		{"PresaleShipsIn20Days", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: txID, Type: wxapi.SpecialOrderPresale, DelayTo: h.clock.Now().Add(20 * day), PaidAt: h.clock.Now()}
		}, &wxapitest.SpecialOrder{OrderID: txID, Type: 1, DelayTo: clockStart + 20*86400}, 0, false},
		{"PresaleByOutTradeNoAt330Days", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: orderID, Type: wxapi.SpecialOrderPresale, DelayTo: h.clock.Now().Add(330 * day)}
		}, &wxapitest.SpecialOrder{OrderID: orderID, Type: 1, DelayTo: clockStart + 330*86400}, 0, false},
		{"TestOrder", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: orderID, Type: wxapi.SpecialOrderTest}
		}, &wxapitest.SpecialOrder{OrderID: orderID, Type: 2}, 0, false},
		{"PresaleIn14DaysRefusedByWeChat", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: txID, Type: wxapi.SpecialOrderPresale, DelayTo: h.clock.Now().Add(14 * day)}
		}, nil, wxapi.CodeInvalidDelayTo, false},
		{"UnknownOrder", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: "SG00000000000000zz", Type: wxapi.SpecialOrderTest}
		}, nil, wxapi.CodeSpecialOrderNotFound, true},
		{"PresaleIn14DaysRefusedHere", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: txID, Type: wxapi.SpecialOrderPresale, DelayTo: h.clock.Now().Add(14 * day), PaidAt: h.clock.Now()}
		}, nil, 0, false},
		{"PresaleIn331DaysRefusedHere", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: txID, Type: wxapi.SpecialOrderPresale, DelayTo: h.clock.Now().Add(331 * day), PaidAt: h.clock.Now()}
		}, nil, 0, false},
		{"PresaleWithoutDelay", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: txID, Type: wxapi.SpecialOrderPresale}
		}, nil, 0, false},
		{"TypeThree", func(h *harness) wxapi.SpecialOrder { return wxapi.SpecialOrder{OrderID: txID, Type: 3} }, nil, 0, false},
		{"OrderIDTooShort", func(h *harness) wxapi.SpecialOrder {
			return wxapi.SpecialOrder{OrderID: "SG1", Type: wxapi.SpecialOrderTest}
		}, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, wxapitest.Options{})
			h.paid()
			o := tt.order(h)
			err := h.c.DeclareSpecialOrder(context.Background(), o)
			var werr *wxapi.Error
			switch {
			case tt.want != nil && err != nil:
				t.Fatal(err)
			case tt.want == nil && tt.errcode == 0 && !errors.Is(err, wxapi.ErrInvalidArgument):
				t.Errorf("err %v, want ErrInvalidArgument", err)
			case tt.errcode != 0 && (!errors.As(err, &werr) || werr.Code != tt.errcode || wxapi.Retryable(err) != tt.retryable):
				t.Errorf("err %v, want errcode %d, retryable %v", err, tt.errcode, tt.retryable)
			}
			got := h.srv.SpecialOrders(txID)
			switch {
			case tt.want != nil && (len(got) != 1 || got[0] != *tt.want):
				t.Errorf("recorded %+v, want %+v", got, *tt.want)
			case tt.want == nil && len(got) != 0:
				t.Errorf("recorded %+v", got)
			}
			if tt.want == nil && tt.errcode == 0 && h.srv.Calls(wxapi.PathOpSpecialOrder) != 0 {
				t.Error("a refused declaration reached WeChat")
			}
		})
	}
}

func TestUpdateOrderDetailPath(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		errcode int // 0 and invalid: ErrInvalidArgument
		invalid bool
	}{
		{"PageWithPlaceholder", detailPath, 0, false},
		{"PageWithLeadingSlash", "/pages/order/detail?id=${商品订单号}&from=wx", 0, false},
		{"UnknownPage", "pages/other?id=${商品订单号}", wxapi.CodeInvalidDetailPath, false},
		{"NoPlaceholder", "pages/order/detail?id=1", 0, true},
		{"Empty", "", 0, true},
		{"Space", "pages/order/detail?id= ${商品订单号}", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, wxapitest.Options{Pages: []string{"pages/order/detail"}})
			err := h.c.UpdateOrderDetailPath(context.Background(), tt.path)
			var werr *wxapi.Error
			switch {
			case tt.invalid:
				if !errors.Is(err, wxapi.ErrInvalidArgument) || h.srv.Calls(wxapi.PathUpdateOrderDetailPath) != 0 {
					t.Errorf("err %v after %d calls, want ErrInvalidArgument and none", err, h.srv.Calls(wxapi.PathUpdateOrderDetailPath))
				}
			case tt.errcode != 0:
				if !errors.As(err, &werr) || werr.Code != tt.errcode || wxapi.Retryable(err) {
					t.Errorf("err %v, want final errcode %d", err, tt.errcode)
				}
			case err != nil || h.srv.OrderDetailPath() != tt.path:
				t.Errorf("err %v, path %q", err, h.srv.OrderDetailPath())
			}
			if tt.errcode != 0 || tt.invalid {
				if p := h.srv.OrderDetailPath(); p != "" {
					t.Errorf("path set to %q", p)
				}
			}
		})
	}
}
