// Package deploytest runs the deploy artifacts as Lambda runs them: each function's
// bootstrap, built by the Makefile's `sam build` target, under the Lambda Runtime
// Interface Emulator (aws-lambda-rie), with the environment template.yaml gives it,
// pointed at the local stack's DynamoDB and SQS servers, an in-process AWS KMS emulator
// (local-kms), moto_server's Secrets Manager holding the merchant, app and chat secrets, and the
// WeChat Pay, jscode2session and WeCom group robot stand-ins reached at the services'
// real host names through an HTTPS proxy. It drives one real event per route and
// event source through the emulator's invoke endpoint and checks the answers against
// docs/contract.md and the tables.
//
// Without the emulator the test skips, naming the install command (EmulatorInstall);
// with AWS_LAMBDA_RIE set (as CI sets it) a missing emulator fails it.
package deploytest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/stockguard/stockguard/internal/admitter"
	"github.com/stockguard/stockguard/internal/closeq"
	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/internal/orders"
	"github.com/stockguard/stockguard/internal/payments"
	"github.com/stockguard/stockguard/internal/teamchat"
	"github.com/stockguard/stockguard/internal/teamchat/chattest"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
	"github.com/stockguard/stockguard/internal/wechatpay/paytest"
	"github.com/stockguard/stockguard/internal/wxapi"
	"github.com/stockguard/stockguard/internal/wxapi/wxapitest"
	"github.com/stockguard/stockguard/internal/wxlogin"
	"github.com/stockguard/stockguard/internal/wxqueue"
	"github.com/stockguard/stockguard/tools/internal/apigw"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/sam"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// maxBootstrapBytes is the largest bootstrap (arm64, stripped, as the Makefile builds
// it) the functions may ship: 10.5 MiB, our own budget on what a cold start loads
// (Lambda's own limit is 250 MB unzipped). It was 10 MiB until the after-sales and the
// receipts took the admin bootstrap 160 bytes past it; the buyer's path (createOrder,
// closeOrder, payCallback) stays under 10 MiB.
const maxBootstrapBytes = 10<<20 + 512<<10

// world is everything the bootstraps run against, and the bootstraps themselves.
type world struct {
	stack     *stacktest.Stack
	functions []sam.Function
	routes    []local.Route
	handlers  map[string]lambda.Handler // logical id → bootstrap under the emulator
	payServer *paytest.Server
	secrets   *secretReads
	secretARN map[string]string  // the local secret ARN the template names → the secret's ARN
	chatBot   *chattest.Receiver // the team's WeCom group robot, at WeCom's host name
	stray     *strayCalls
	proxy     *wechatProxy
	token     string // the logged-in buyer's Authorization header
}

func TestBootstraps_AnswerEveryRouteAndSourceUnderTheLambdaRuntime(t *testing.T) {
	rie := emulatorPath(t)
	w := newWorld(t, rie)
	w.checkIssuerAndLogin(t)
	mug := w.checkAdmin(t)
	paid := w.checkOrderAndPayment(t, mug)
	w.checkShipping(t, paid)
	w.checkReceipt(t, paid)
	w.checkCancel(t, mug)
	w.checkQueueAndSweep(t, mug)
	w.checkReconcile(t)
	w.checkAdmitter(t)
	w.checkAlertChat(t)
	// GET /skus/{skuId} answers from a read at most 1 s old (docs/design.md, "Sell-out"):
	// let the last change reach it.
	time.Sleep(1100 * time.Millisecond)
	if got := w.stack.Available(t, mug); got != 10-2 {
		t.Errorf("%s available %d after one paid order of 2, want 8", mug, got)
	}
	if got := w.stack.OnHand(t, mug); got != 10-2 {
		t.Errorf("%s on-hand %d after order %s of 2 was paid, want 8", mug, got, paid)
	}
	w.stack.Check(t)
	if calls := w.stray.list(); len(calls) > 0 {
		t.Errorf("the functions called AWS services no embedded server plays: %q", calls)
	}
	if hosts := w.proxy.refusedHosts(); len(hosts) > 0 {
		t.Errorf("the functions tried to reach other hosts: %q", hosts)
	}
	w.secrets.mu.Lock()
	if len(w.secrets.unknown) > 0 {
		t.Errorf("Secrets Manager requests other than GetSecretValue signed by the role: %q", w.secrets.unknown)
	}
	if reads := w.secrets.reads[w.secretARN[local.LocalSecretARN]]; reads != 2 {
		t.Errorf("the merchant secret was read %d times, want 2 (once per cold start of closeOrder, payCallback)", reads)
	}
	if reads := w.secrets.reads[w.secretARN[local.LocalAppSecretARN]]; reads != 2 {
		t.Errorf("the app secret was read %d times, want 2 (once per cold start of login, wechat; createOrder asks no scalper check here)", reads)
	}
	// Once by the local stack's start, once by the wechat bootstrap's cold start.
	if calls := w.stack.WxAPIServer.Calls(wxapi.PathUpdateOrderDetailPath); calls != 2 || !strings.Contains(w.stack.WxAPIServer.OrderDetailPath(), wxapi.DetailPathPlaceholder) {
		t.Errorf("update_order_detail_path called %d times (path %q), want 2", calls, w.stack.WxAPIServer.OrderDetailPath())
	}
	if reads := w.secrets.reads[w.secretARN[local.LocalChatSecretARN]]; reads != 3 {
		t.Errorf("the chat webhooks secret was read %d times, want 3 (alertChat's cold start and its two invocations)", reads)
	}
	w.secrets.mu.Unlock()
}

// newWorld starts the stack, the stand-ins and every bootstrap under the emulator.
func newWorld(t *testing.T, rie string) *world {
	t.Helper()
	root := testkit.ModuleRoot(t)
	tpl, err := sam.LoadWithParameters(filepath.Join(root, "template.yaml"), map[string]string{
		"WechatPaySecretArn": local.LocalSecretARN, "WechatAppSecretArn": local.LocalAppSecretARN, "JwtAudience": local.LocalAppID,
		"ChatWebhooksSecretArn": local.LocalChatSecretARN})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{stack: stacktest.New(t, stacktest.Options{SQS: true, RealTime: true}), handlers: map[string]lambda.Handler{}}
	if w.functions, err = tpl.Functions(); err != nil {
		t.Fatal(err)
	}
	routes, err := tpl.Routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.API == local.ConsoleAPI {
			continue // the same admin function behind the staff's API: HttpApi's routes reach it
		}
		w.routes = append(w.routes, local.Route{Method: r.Method, Path: r.Path, Function: r.Function, Public: r.Public, IAM: r.IAM})
	}
	env := w.environment(t, tpl)
	names := make([]string, len(w.functions))
	for i, f := range w.functions {
		names[i] = f.Name
	}
	bootstraps := buildAll(t, root, names, "arm64", hostGOARCH)
	for _, f := range w.functions {
		size := bootstrapSize(t, bootstraps["arm64"][f.Name])
		if size > maxBootstrapBytes {
			t.Errorf("%s bootstrap (arm64, stripped) is %d bytes, over %d (10.5 MiB)", f.Name, size, maxBootstrapBytes)
		}
		t.Cleanup(func() { report(t, w, f.Name, size) })
		w.handlers[f.Name] = startEmulated(t, rie, f.Name, bootstraps[hostGOARCH][f.Name], env(f))
	}
	w.serveAPI(local.GatewayOptions{})
	return w
}

// serveAPI puts the bootstraps in the stack's place of its in-process functions: as
// its Handlers (stacktest's Invoke) and, behind the template's routes, as its HTTP API
// (Call, Available).
func (w *world) serveAPI(opts local.GatewayOptions) {
	w.stack.Handlers = w.handlers
	w.stack.API = local.NewGateway(w.routes, w.handlers, opts)
}

// report logs a function's bootstrap size and cold start, once the test has run.
func report(t *testing.T, w *world, name string, size int64) {
	e := w.handlers[name].(*emulated)
	t.Logf("%-20s bootstrap %8d bytes (%.2f MiB, arm64)  init %6.1f ms  first invocation %v",
		name, size, float64(size)/(1<<20), e.initDuration(), e.coldStart.Round(100*time.Microsecond))
}

// environment starts the AWS and WeChat stand-ins and returns, per function, the
// environment Lambda would give its bootstrap: the template's variables (references
// resolved to the local resources), the execution role's credentials, the runtime's
// variables, and the endpoint overrides that send the SDK to the local servers.
func (w *world) environment(t *testing.T, tpl *sam.Template) func(sam.Function) []string {
	t.Helper()
	merchant, err := paytest.NewMerchant()
	if err != nil {
		t.Fatal(err)
	}
	kmsURL, secretsURL, refs := w.awsEndpoints(t, tpl, merchant)
	w.stray = &strayCalls{}
	w.payServer = paytest.NewServer(w.stack.Payments, merchant, paytest.ServerOptions{HTTPClient: &http.Client{Transport: inProcess{w}}})
	if err := w.payServer.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.payServer.Close() })
	var caFile string
	// WeChat serves jscode2session and the mini-program server API on one host
	// (wxlogin.DefaultBaseURL, wxapi.DefaultBaseURL): the stand-ins share it by path.
	if host(t, wxlogin.DefaultBaseURL) != host(t, wxapi.DefaultBaseURL) {
		t.Fatal("jscode2session and the server API are on different hosts: proxy each to its stand-in")
	}
	weChatAPI := http.NewServeMux()
	weChatAPI.Handle(wxlogin.Path, w.stack.LoginServer)
	weChatAPI.Handle("/", w.stack.WxAPIServer)
	w.proxy, caFile = newWeChatProxy(t, map[string]string{host(t, wechatpay.DefaultBaseURL): w.payServer.URL(),
		host(t, wxlogin.DefaultBaseURL): serve(t, weChatAPI), weComHost: w.chatBot.URL()})
	common := []string{
		"PATH=" + os.Getenv("PATH"), "TZ=:UTC", "AWS_REGION=" + sam.Region, "AWS_DEFAULT_REGION=" + sam.Region,
		"AWS_ACCESS_KEY_ID=" + accessKeyID, "AWS_SECRET_ACCESS_KEY=" + secretAccessKey, "AWS_SESSION_TOKEN=" + sessionToken,
		"AWS_ENDPOINT_URL=" + serve(t, w.stray), "AWS_ENDPOINT_URL_DYNAMODB=" + w.stack.DynamoDB.URL(), "AWS_ENDPOINT_URL_SQS=" + w.stack.SQS.URL(),
		"AWS_ENDPOINT_URL_KMS=" + kmsURL, "AWS_ENDPOINT_URL_SECRETS_MANAGER=" + secretsURL,
		"HTTPS_PROXY=" + serve(t, w.proxy), "SSL_CERT_FILE=" + caFile,
	}
	return func(f sam.Function) []string {
		timeout := f.Timeout
		if f.Name == "AdmitterFunction" {
			// It ticks while 1.5 s and its longest tick remain (admitter.Run): here for
			// a few seconds, with room for a slow first start and a slow store.
			timeout = 8
		}
		env := append(slices.Clone(common), "AWS_LAMBDA_FUNCTION_NAME="+f.Name,
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(f.MemorySize), "AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(timeout))
		for _, k := range slices.Sorted(maps.Keys(f.Environment)) {
			v := f.Environment[k]
			if r, ok := refs[v]; ok {
				v = r
			}
			env = append(env, k+"="+v)
		}
		return env
	}
}

// awsEndpoints starts what plays KMS and Secrets Manager, creates the signing key and
// the merchant's, the app's and the chat bots' secrets there, and returns the two endpoints and
// what the template's references and local ARNs stand for there. KMS is local-kms on
// the embedded servers and the stack's moto_server on moto, unless moto's GetPublicKey
// deviates (answersKeySpec): then local-kms, and the test says so. Secrets Manager is a
// moto_server's either way (the stack's, else one of this test's), behind secretReads.
func (w *world) awsEndpoints(t *testing.T, tpl *sam.Template, merchant *paytest.Merchant) (kmsURL, secretsURL string, refs map[string]string) {
	t.Helper()
	moto, spec := w.stack.Moto, signingKeySpec(t, tpl)
	switch {
	case moto == "":
		if !stacktest.MotoInstalled() && os.Getenv(emulatorEnv) == "" {
			t.Skipf("%v: the bootstraps read their secrets from moto_server's Secrets Manager", local.ErrNoMoto)
		}
		moto, kmsURL = stacktest.MotoURL(t), startKMS(t)
	case answersKeySpec(t, moto, spec):
		kmsURL = moto
	default:
		t.Logf(`moto_server deviates from AWS: GetPublicKey leaves out KeySpec (AWS KMS API Reference, "GetPublicKey"), which the functions check: KMS is local-kms`)
		kmsURL = startKMS(t)
	}
	// The merchant's secret without the AppSecret, which only the app secret holds.
	secret, err := w.stack.Payments.MerchantSecret(merchant, "")
	if err != nil {
		t.Fatal(err)
	}
	app, _ := json.Marshal(map[string]string{"appid": local.LocalAppID, "appSecret": local.LocalAppSecret})
	var withToken wechatpay.Secret // and the message push's Token, as deployed
	if err := json.Unmarshal(secret, &withToken); err != nil {
		t.Fatal(err)
	}
	withToken.MessageToken = local.LocalMessageToken
	if secret, err = json.Marshal(withToken); err != nil {
		t.Fatal(err)
	}
	w.chatBot = chattest.NewReceiver(teamchat.WeCom, "")
	if err := w.chatBot.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.chatBot.Close() })
	chatSecret, _ := json.Marshal(map[string]any{"webhooks": []teamchat.Webhook{{Kind: teamchat.WeCom,
		URL: "https://" + weComHost + strings.TrimPrefix(w.chatBot.Webhook().URL, w.chatBot.URL())}}})
	var arns map[string]string
	// The waiting room's admission key, as the template's GenerateSecretString makes it
	// (64 letters and digits).
	admissionKey := []byte(strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 2)[:64])
	w.secrets, arns = newSecretReads(t, moto, map[string][]byte{secretName(local.LocalSecretARN): secret,
		secretName(local.LocalAppSecretARN): app, secretName(local.LocalChatSecretARN): chatSecret, admissionSecret: admissionKey})
	// Deployed, Ref gives a queue's URL, a topic's ARN and a key's id; sam resolves them
	// to logical ids.
	// A secret's ARN ends in six characters Secrets Manager chose.
	refs = maps.Clone(w.stack.Queues)
	maps.Copy(refs, w.stack.Topics)
	refs["SigningKeyA"] = createSigningKey(t, kmsURL, spec)
	w.secretARN = map[string]string{}
	for _, local := range []string{local.LocalSecretARN, local.LocalAppSecretARN, local.LocalChatSecretARN} {
		refs[local], w.secretARN[local] = arns[secretName(local)], arns[secretName(local)]
	}
	refs[admissionSecret] = arns[admissionSecret]
	return kmsURL, serve(t, w.secrets), refs
}

// admissionSecret is the template's logical id of the admission key's secret, and the
// name the test gives it.
const admissionSecret = "AdmissionKeySecret"

// secretName is the name of the secret a local ARN names (its last part).
func secretName(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }

// get sends GET url to the gateway, with url's host as the Host the request reached
// (the event's requestContext.domainName), and returns the answer.
func (w *world) get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, url, nil)
	rec := httptest.NewRecorder()
	w.stack.API.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// templateEnv is the template environment of the function named id.
func (w *world) templateEnv(t *testing.T, id string) map[string]string {
	t.Helper()
	i := slices.IndexFunc(w.functions, func(f sam.Function) bool { return f.Name == id })
	if i < 0 {
		t.Fatalf("no function %s in the template", id)
	}
	return w.functions[i].Environment
}

// serve serves h on a free loopback port until the test ends and returns its URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func host(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname()
}

// inProcess delivers the WeChat Pay stand-in's notifications to the world's gateway,
// whatever host notify_url names (deployed, the HTTP API's), and the JWT authorizer's
// fetches of the issuer's documents (deployed, IssuerApi's).
type inProcess struct{ w *world }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil { // a client's GET; a server always hands its handler a body
		r = r.Clone(r.Context())
		r.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	p.w.stack.API.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func bootstrapSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// want fails t unless status is code, showing the answer.
func want(t *testing.T, what string, status, code int, out map[string]any) {
	t.Helper()
	if status != code {
		t.Fatalf("%s: %d %v, want %d", what, status, out, code)
	}
}

// checkIssuerAndLogin: jwks serves the discovery document and the KMS key's JWK set
// (kty RSA, alg RS256, the key's id as kid) at the issuer URL the login function stamps
// (TOKEN_ISSUER, IssuerApi's URL), and the document names that same issuer though
// jwks is not told it; login exchanges a wx.login code at the jscode2session stand-in
// for an RS256 token signed through KMS, which the JWT authorizer (apigw, fetching
// those documents as API Gateway does) accepts. From then on the gateway checks tokens
// with that authorizer.
func (w *world) checkIssuerAndLogin(t *testing.T) {
	var disc idtoken.Discovery
	issuer := w.templateEnv(t, "LoginFunction")["TOKEN_ISSUER"]
	if code, body := w.get(t, issuer+idtoken.DiscoveryPath); code != http.StatusOK || json.Unmarshal(body, &disc) != nil || disc.Issuer != issuer {
		t.Fatalf("GET %s%s: %d %s, want the discovery document of issuer %s", issuer, idtoken.DiscoveryPath, code, body, issuer)
	}
	var keys idtoken.JWKSet
	if code, body := w.get(t, disc.JWKSURI); code != http.StatusOK || json.Unmarshal(body, &keys) != nil || len(keys.Keys) != 1 ||
		keys.Keys[0].Kty != "RSA" || keys.Keys[0].Alg != "RS256" {
		t.Fatalf("GET %s: %d %s, want one RSA key for RS256", disc.JWKSURI, code, body)
	}
	authorizer, err := apigw.NewJWTAuthorizer(apigw.JWTConfig{Issuer: issuer, Audience: []string{local.LocalAppID}, Client: &http.Client{Transport: inProcess{w}}})
	if err != nil {
		t.Fatal(err)
	}
	status, out := w.stack.Call(t, http.MethodPost, "/auth/wechat", "", map[string]string{"Content-Type": "application/json"}, `{"code":"test-alice"}`)
	want(t, "POST /auth/wechat", status, http.StatusOK, out)
	token, _ := out["token"].(string)
	claims, err := authorizer.Authorize(context.Background(), "Bearer "+token)
	if err != nil || claims["sub"] != "o-alice" || out["expiresIn"] != 7200.0 {
		t.Fatalf("login token %v (expiresIn %v): %v; want sub o-alice, 7200 s, accepted by the JWT authorizer", claims, out["expiresIn"], err)
	}
	status, out = w.stack.Call(t, http.MethodPost, "/auth/wechat", "", map[string]string{"Content-Type": "application/json"}, `{"code":"test-alice"}`)
	if status != http.StatusUnauthorized || out["code"] != "UNAUTHORIZED" {
		t.Errorf("a used wx.login code: %d %v, want 401 UNAUTHORIZED", status, out)
	}
	w.serveAPI(local.GatewayOptions{Authorizer: authorizer})
	w.token = "Bearer " + token
}

// checkAdmin: an operator (IAM context) creates a SKU; the answer, the ledger's
// initial ADJUST entry and the principal recorded on the SKU are checked, and
// createOrder's public read sees it. It returns the SKU id.
func (w *world) checkAdmin(t *testing.T) string {
	const sku = "rie-mug"
	body := `{"skuId":"` + sku + `","delivery":"none","name":"mug","price":2500,"stock":10}`
	status, out := w.stack.Call(t, http.MethodPost, "/admin/skus", "", map[string]string{"Content-Type": "application/json"}, body)
	want(t, "POST /admin/skus", status, http.StatusCreated, out)
	status, out = w.stack.Call(t, http.MethodPost, "/admin/skus", "", map[string]string{"Content-Type": "application/json"}, body)
	want(t, "POST /admin/skus again", status, http.StatusOK, out)
	var adjusts int
	for _, e := range w.stack.Scan(t, w.stack.Tables.StockLog) {
		if e["skuId"] == sku && e["op"] == "ADJUST" {
			adjusts++
		}
	}
	if adjusts != 1 {
		t.Errorf("%d ADJUST ledger entries for %s, want 1 (the initial stock, once)", adjusts, sku)
	}
	if !w.recordsPrincipal(t, sku) {
		t.Errorf("no item of %s records the operator %s", sku, local.LocalOperatorARN)
	}
	status, out = w.stack.Call(t, http.MethodGet, "/skus/"+sku, "", nil, "")
	want(t, "GET /skus/"+sku, status, http.StatusOK, out)
	if out["available"] != 10.0 || out["price"] != 2500.0 || out["status"] != "ON_SALE" {
		t.Errorf("GET /skus/%s = %v, want 10 available at 2500 fen, ON_SALE", sku, out)
	}
	return sku
}

// recordsPrincipal reports whether an item of sku in the SKUs table names the local
// operator (the IAM principal the admin route's event carries).
func (w *world) recordsPrincipal(t *testing.T, sku string) bool {
	for _, it := range w.stack.Scan(t, w.stack.Tables.SKUs) {
		if it["skuId"] == sku && it["updatedBy"] == local.LocalOperatorARN {
			return true
		}
	}
	return false
}

// order places an order of qty units of sku as the logged-in buyer, the body sent
// without a Content-Type so that the event carries it base64-encoded, and returns it.
func (w *world) order(t *testing.T, sku string, qty int) map[string]any {
	t.Helper()
	status, out := w.stack.Call(t, http.MethodPost, "/orders", "", map[string]string{"Authorization": w.token},
		fmt.Sprintf(`{"items":[{"skuId":%q,"qty":%d}]}`, sku, qty))
	want(t, "POST /orders (base64 body)", status, http.StatusCreated, out)
	if out["status"] != "PENDING" || out["amount"] != float64(2500*qty) || out["currency"] != "CNY" {
		t.Fatalf("POST /orders = %v, want PENDING, %d fen CNY", out, 2500*qty)
	}
	return out
}

// checkOrderAndPayment: createOrder reserves (answer, order, RESERVE entry), the owner
// reads the order and nobody else can; closeOrder starts the payment at the WeChat Pay
// stand-in; the buyer pays there and the stand-in's signed notification reaches
// payCallback, which commits the stock.
func (w *world) checkOrderAndPayment(t *testing.T, sku string) string {
	id := w.order(t, sku, 2)["orderId"].(string)
	if ops := w.stack.Ops(t, id); ops["RESERVE"] != 1 || w.stack.Lookup(t, id).Status != inventory.StatusPending {
		t.Errorf("order %s: ledger %v, status %s; want one RESERVE, PENDING", id, ops, w.stack.Lookup(t, id).Status)
	}
	status, out := w.stack.Call(t, http.MethodGet, "/orders/"+id, "", map[string]string{"Authorization": w.token}, "")
	if status != http.StatusOK || out["orderId"] != id || out["status"] != "PENDING" {
		t.Errorf("GET /orders/%s by its owner: %d %v", id, status, out)
	}
	status, out = w.stack.Call(t, http.MethodGet, "/orders/"+id, "o-bob", nil, "")
	if status != http.StatusNotFound || out["code"] != "ORDER_NOT_FOUND" {
		t.Errorf("GET /orders/%s by another buyer: %d %v, want 404 ORDER_NOT_FOUND", id, status, out)
	}
	status, out = w.stack.Call(t, http.MethodPost, "/orders/"+id+"/pay", "", map[string]string{"Authorization": w.token}, "")
	want(t, "POST /orders/{orderId}/pay", status, http.StatusOK, out)
	if pkg, _ := out["package"].(string); !strings.HasPrefix(pkg, "prepay_id=") || out["signType"] != "RSA" || out["paySign"] == "" {
		t.Errorf("pay answer %v: not wx.requestPayment parameters", out)
	}
	// Without NotifyBaseUrl, notify_url is the host the pay request reached (here
	// httptest's example.com) plus the notify route.
	if o, ok := w.payServer.Order(id); !ok || o.NotifyURL != "https://example.com"+payments.NotifyPath {
		t.Errorf("JSAPI order %+v, want notify_url https://example.com%s", o, payments.NotifyPath)
	}
	d, err := w.payServer.Pay(context.Background(), id, paytest.PayOptions{})
	if err != nil || d.StatusCode != http.StatusNoContent {
		t.Fatalf("the buyer paid %s: notification answered %d %s (%v), want 204", id, d.StatusCode, d.Body, err)
	}
	if order := w.stack.Lookup(t, id); order.Status != inventory.StatusPaid || w.stack.Ops(t, id)["COMMIT"] != 1 {
		t.Errorf("order %s after the notification: %s, ledger %v; want PAID, one COMMIT", id, order.Status, w.stack.Ops(t, id))
	}
	return id
}

// checkCancel: the owner cancels a PENDING order; its stock is released once.
func (w *world) checkCancel(t *testing.T, sku string) {
	id := w.order(t, sku, 1)["orderId"].(string)
	for range 2 {
		status, out := w.stack.Call(t, http.MethodPost, "/orders/"+id+"/cancel", "", map[string]string{"Authorization": w.token}, "")
		want(t, "POST /orders/{orderId}/cancel", status, http.StatusOK, out)
		if out["status"] != "CANCELLED" || out["cancelReason"] != "USER" {
			t.Errorf("cancel answer %v, want CANCELLED by USER", out)
		}
	}
	if ops := w.stack.Ops(t, id); ops["RELEASE"] != 1 {
		t.Errorf("order %s cancelled twice: ledger %v, want one RELEASE", id, ops)
	}
}

// expire moves an order's expiry into the past behind the store's back, as if its
// payment window had run out.
func (w *world) expire(t *testing.T, id string) time.Time {
	past := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	w.stack.Set(t, w.stack.Tables.Orders, id, "expiresAt", past.Format(time.RFC3339))
	w.stack.Set(t, w.stack.Tables.Orders, id, "pendingExpiresAt", past.UnixMilli())
	return past
}

// checkQueueAndSweep: closeOrder releases two overdue orders from one SQS batch (no
// batch item failures) and a third from the scheduled sweep.
func (w *world) checkQueueAndSweep(t *testing.T, sku string) {
	var batch events.SQSEvent
	var ids []string
	for i := range 2 {
		id := w.order(t, sku, 1)["orderId"].(string)
		body, _ := json.Marshal(closeq.Message{OrderID: id, ExpiresAt: w.expire(t, id)})
		batch.Records = append(batch.Records, events.SQSMessage{
			MessageId: fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), ReceiptHandle: "rh-" + id, Body: string(body),
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:" + sam.Region + ":" + sam.AccountID + ":CloseOrderQueue", AWSRegion: sam.Region,
			Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)},
		})
		ids = append(ids, id)
	}
	var resp events.SQSEventResponse
	w.stack.Invoke(t, "CloseOrderFunction", batch, &resp)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("SQS batch: item failures %v, want none", resp.BatchItemFailures)
	}
	id := w.order(t, sku, 1)["orderId"].(string)
	w.expire(t, id)
	var sweep orders.SweepResult
	w.stack.Invoke(t, "CloseOrderFunction", local.ScheduledEvent(time.Now(), "arn:aws:events:"+sam.Region+":"+sam.AccountID+":rule/CloseOrderSweep"), &sweep)
	if sweep.Released != 1 || sweep.Failed != 0 {
		t.Errorf("sweep %+v, want 1 released, none failed", sweep)
	}
	for _, id := range append(ids, id) {
		if o := w.stack.Lookup(t, id); o.Status != inventory.StatusCancelled || o.CancelReason != inventory.CancelTimeout || w.stack.Ops(t, id)["RELEASE"] != 1 {
			t.Errorf("overdue order %s: %s (%s), ledger %v; want CANCELLED by TIMEOUT, one RELEASE", id, o.Status, o.CancelReason, w.stack.Ops(t, id))
		}
	}
}

// checkShipping: the admin function records a shipment of the paid order and queues
// its upload; the wechat function, given that message as an SQS batch, uploads it to
// WeChat (the stand-in, at WeChat's host name) and the order reads UPLOADED.
func (w *world) checkShipping(t *testing.T, paid string) {
	o := w.stack.Lookup(t, paid)
	w.stack.WxAPIServer.AddPayment(wxapitest.Payment{TransactionID: o.TransactionID, MchID: local.LocalMchID, OutTradeNo: o.ID, OpenID: o.UserID, PaidAt: *o.PaidAt})
	status, out := w.stack.Call(t, http.MethodPost, "/admin/orders/"+paid+"/shipments", "", nil, `{"shipmentId":"p1","type":"express","carrier":"YTO","tracking":"YT1"}`)
	want(t, "POST /admin/orders/{orderId}/shipments", status, http.StatusAccepted, out)
	body, _ := json.Marshal(wxqueue.Message{Kind: wxqueue.KindUpload, OrderID: paid})
	batch := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: "00000000-0000-4000-8000-0000000000a1", ReceiptHandle: "rh-upload", Body: string(body),
		EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:" + sam.Region + ":" + sam.AccountID + ":WeChatQueue", AWSRegion: sam.Region,
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)},
	}}}
	var resp events.SQSEventResponse
	w.stack.Invoke(t, "WeChatFunction", batch, &resp)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("WeChat queue batch: item failures %v, want none", resp.BatchItemFailures)
	}
	if o := w.stack.Lookup(t, paid); o.Shipping == nil || o.Shipping.Status != inventory.ShippingUploaded || len(w.stack.WxAPIServer.Shipments(paid)) != 1 {
		t.Errorf("order %s after the upload: shipping %+v, %d uploads at WeChat; want UPLOADED, 1", paid, o.Shipping, len(w.stack.WxAPIServer.Shipments(paid)))
	}
}

// checkReceipt: payCallback answers WeChat's URL check of the message push and takes
// the settlement push of the shipped order, both signed with the secret's
// messageToken: the order's receipt is CONFIRMED; a push signed otherwise is 401.
func (w *world) checkReceipt(t *testing.T, paid string) {
	push, err := w.stack.WxAPIServer.ConfirmReceipt(paid, wxapi.ConfirmManual)
	if err != nil {
		t.Fatal(err)
	}
	q, body := wxapitest.SignPush(local.LocalMessageToken, push, time.Now())
	check := url.Values{"signature": q["signature"], "timestamp": q["timestamp"], "nonce": q["nonce"], "echostr": {"5678"}}
	status, _ := w.stack.Call(t, http.MethodGet, "/wechat/messages?"+check.Encode(), "", nil, "")
	want(t, "GET /wechat/messages", status, http.StatusOK, nil)
	forged, _ := wxapitest.SignPush("not-the-token", push, time.Now())
	status, out := w.stack.Call(t, http.MethodPost, "/wechat/messages?"+forged.Encode(), "", map[string]string{"Content-Type": "application/json"}, string(body))
	want(t, "POST /wechat/messages (forged)", status, http.StatusUnauthorized, out)
	status, out = w.stack.Call(t, http.MethodPost, "/wechat/messages?"+q.Encode(), "", map[string]string{"Content-Type": "application/json"}, string(body))
	want(t, "POST /wechat/messages", status, http.StatusOK, out)
	if r := w.stack.Lookup(t, paid).Receipt; r == nil || r.Method != inventory.ReceiptByBuyer {
		t.Errorf("order %s after the settlement push: receipt %+v, want confirmed by the buyer", paid, r)
	}
}

// weComHost is where WeCom's group robots are (群机器人配置说明): the proxy sends it to
// the stand-in robot.
const weComHost = "qyapi.weixin.qq.com"

// checkAlertChat: alertChat, given a CloudWatch alarm as the alerts topic delivers it,
// posts it over HTTPS to the team's WeCom robot named in its secret; the same alarm
// again is held back by the quiet period kept in DynamoDB.
func (w *world) checkAlertChat(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "internal", "alertchat", "testdata", "alarm-sns-event.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SNSEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var out any
		w.stack.Invoke(t, "AlertChatFunction", ev, &out)
	}
	got := w.chatBot.Received()
	if len(got) != 1 || !strings.Contains(got[0].Title, "ALARM: ReconcileDifferencesAlarm") || len(w.chatBot.Refusals()) != 0 {
		t.Errorf("the WeCom robot received %q (refused %q), want the alarm once", got, w.chatBot.Refusals())
	}
}

// checkAdmitter: a buyer takes a ticket for a queued SKU; the scheduled admitter
// places it first in line and admits it, and the buyer's poll answers ADMITTED.
func (w *world) checkAdmitter(t *testing.T) {
	const sku = "rie-drop"
	status, out := w.stack.Call(t, http.MethodPost, "/admin/skus", "", map[string]string{"Content-Type": "application/json"},
		`{"skuId":"`+sku+`","delivery":"none","name":"drop","price":2500,"stock":3,"queue":true}`)
	want(t, "POST /admin/skus (queued)", status, http.StatusCreated, out)
	status, out = w.stack.Call(t, http.MethodPost, "/skus/"+sku+"/queue", "", map[string]string{"Authorization": w.token}, "")
	want(t, "POST /skus/{skuId}/queue", status, http.StatusAccepted, out)
	ticket := out["ticket"].(string)
	time.Sleep(admitter.Settle) // the admitter reads arrivals Settle old
	var report admitter.Report
	w.stack.Invoke(t, "AdmitterFunction", local.ScheduledEvent(time.Now(), "arn:aws:events:"+sam.Region+":"+sam.AccountID+":rule/AdmitterSchedule"), &report)
	if report.Ticks < 1 || report.SKUs != 1 || report.Errors != 0 {
		t.Errorf("admitter %+v, want ticks, 1 queued SKU, no error", report)
	}
	time.Sleep(dynamo.FrontierCacheTTL)
	status, out = w.stack.Call(t, http.MethodGet, "/queue/"+ticket, "", map[string]string{"Authorization": w.token}, "")
	want(t, "GET /queue/{ticket}", status, http.StatusOK, out)
	if out["status"] != "ADMITTED" || out["position"] != 1.0 || out["admission"] == nil {
		t.Errorf("GET /queue/%s = %v, want ADMITTED at position 1 with an admission", ticket, out)
	}
}

// checkReconcile: the scheduled reconcile finds the books balanced.
func (w *world) checkReconcile(t *testing.T) {
	var report struct {
		SKUsChecked int              `json:"skusChecked"`
		Differences []map[string]any `json:"differences"`
	}
	w.stack.Invoke(t, "ReconcileFunction", local.ScheduledEvent(time.Now(), "arn:aws:events:"+sam.Region+":"+sam.AccountID+":rule/ReconcileSchedule"), &report)
	if report.SKUsChecked != 3 || len(report.Differences) != 0 {
		t.Errorf("reconcile %+v, want 3 SKUs checked, no differences", report)
	}
}
