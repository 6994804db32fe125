// Package function lists every Lambda function's wiring (the packages under it, one
// per function of template.yaml), for the local stack and for the tests that check
// the functions against template.yaml. A function's main imports only its own
// package, never this one, so its binary links only what that function serves with.
package function

import (
	"errors"

	"github.com/stockguard/stockguard/internal/alertchat"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/envvar"
	"github.com/stockguard/stockguard/internal/login"
	"github.com/stockguard/stockguard/internal/notices"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/reconcile"
	"github.com/stockguard/stockguard/internal/refunds"
	"github.com/stockguard/stockguard/internal/shipping"
	"github.com/stockguard/stockguard/internal/stock"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wiring"
	"github.com/stockguard/stockguard/internal/wiring/function/admin"
	admitterfn "github.com/stockguard/stockguard/internal/wiring/function/admitter"
	alertchatfn "github.com/stockguard/stockguard/internal/wiring/function/alertchat"
	"github.com/stockguard/stockguard/internal/wiring/function/closeorder"
	"github.com/stockguard/stockguard/internal/wiring/function/createorder"
	"github.com/stockguard/stockguard/internal/wiring/function/jwks"
	loginfn "github.com/stockguard/stockguard/internal/wiring/function/login"
	"github.com/stockguard/stockguard/internal/wiring/function/parts"
	"github.com/stockguard/stockguard/internal/wiring/function/paycallback"
	reconcilefn "github.com/stockguard/stockguard/internal/wiring/function/reconcile"
	"github.com/stockguard/stockguard/internal/wiring/function/refund"
	"github.com/stockguard/stockguard/internal/wiring/function/wechat"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxqueue"
)

// All lists every function.
func All() []wiring.Function {
	return []wiring.Function{createorder.Function, closeorder.Function, paycallback.Function, refund.Function, reconcilefn.Function,
		admin.Function, loginfn.Function, jwks.Function, alertchatfn.Function, wechat.Function,
		admitterfn.Function}
}

// ByName is the function whose logical id is name; false for one nothing wires.
func ByName(name string) (wiring.Function, bool) {
	for _, f := range All() {
		if f.Name == name {
			return f, true
		}
	}
	return wiring.Function{}, false
}

// Check reads the configuration of the function whose logical id is name from get
// with its package's Load, as its main does, and returns Load's error: nil when the
// function would start. An unknown name is an error.
func Check(name string, get envvar.Lookup) error {
	load, ok := map[string]func(envvar.Lookup) error{
		createorder.Function.Name: loads(createorder.Load), closeorder.Function.Name: loads(closeorder.Load),
		paycallback.Function.Name: loads(paycallback.Load), refund.Function.Name: loads(refund.Load),
		reconcilefn.Function.Name: loads(reconcilefn.Load), admin.Function.Name: loads(admin.Load),
		loginfn.Function.Name: loads(loginfn.Load), jwks.Function.Name: loads(jwks.Load),
		alertchatfn.Function.Name: loads(alertchatfn.Load), wechat.Function.Name: loads(wechat.Load),
		admitterfn.Function.Name: loads(admitterfn.Load),
	}[name]
	if !ok {
		return errors.New("no function " + name)
	}
	return load(get)
}

// loads is load with its configuration dropped: only whether it reads.
func loads[C any](load func(envvar.Lookup) (C, error)) func(envvar.Lookup) error {
	return func(get envvar.Lookup) error {
		_, err := load(get)
		return err
	}
}

// Compile-time checks: the store implements what each capability declares it needs.
var (
	_ orders.Placing      = (*dynamo.Store)(nil)
	_ orders.Releasing    = (*dynamo.Store)(nil)
	_ orders.Listing      = (*dynamo.Store)(nil)
	_ payments.Orders     = (*dynamo.Store)(nil)
	_ payments.Payments   = (*dynamo.Store)(nil)
	_ refunds.Starting    = (*dynamo.Store)(nil)
	_ refunds.Settling    = (*dynamo.Store)(nil)
	_ refunds.Orders      = (*dynamo.Store)(nil)
	_ stock.Catalog       = (*dynamo.Store)(nil)
	_ reconcile.Books     = (*dynamo.Store)(nil)
	_ reconcile.Reports   = (*dynamo.Store)(nil)
	_ login.Attempts      = (*dynamo.Store)(nil)
	_ alertchat.Quiet     = (*dynamo.Store)(nil)
	_ payments.Merchant   = (*wechatpay.RotatingClient)(nil)
	_ refunds.Payments    = (*wechatpay.RotatingClient)(nil)
	_ payments.Verifier   = (*wechatpay.RotatingVerifier)(nil)
	_ refunds.Verifier    = (*wechatpay.RotatingVerifier)(nil)
	_ orders.PaymentCheck = (*payments.Checker)(nil)
	_ payments.Refunds    = (*refunds.Starter)(nil)
	_ shipping.Orders     = (*dynamo.Store)(nil)
	_ notices.Store       = (*dynamo.Store)(nil)
	_ shipping.WeChat     = (*wxapi.Client)(nil)
	_ notices.WeChat      = (*wxapi.Client)(nil)
	_ shipping.Sender     = (*wxqueue.Queue)(nil)
	_ refunds.Settling    = parts.SettlingStore{}
)
