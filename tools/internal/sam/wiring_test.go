package sam_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/lambdaevent"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wiring/function"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// These tests check the real template.yaml against the code and the Makefile at the
// repository root (the service module's root, testkit.ModuleRoot).

// loadRealTemplate is the real template, read once for the package: the tests only
// read it, and parsing it is most of each test's time.
func loadRealTemplate(t *testing.T) *sam.Template {
	t.Helper()
	root := testkit.ModuleRoot(t)
	realTpl.once.Do(func() { realTpl.tpl, realTpl.err = sam.Load(filepath.Join(root, "template.yaml")) })
	if realTpl.err != nil {
		t.Fatal(realTpl.err)
	}
	return realTpl.tpl
}

var realTpl struct {
	once sync.Once
	tpl  *sam.Template
	err  error
}

// realByName reads one kind of resource of the real template with read and indexes
// what it read by name.
func realByName[T any](t *testing.T, read func(*sam.Template) ([]T, error), name func(T) string) map[string]T {
	t.Helper()
	items, err := read(loadRealTemplate(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]T, len(items))
	for _, item := range items {
		byName[name(item)] = item
	}
	return byName
}

func realFunctions(t *testing.T) []sam.Function {
	t.Helper()
	functions, err := loadRealTemplate(t).Functions()
	if err != nil {
		t.Fatal(err)
	}
	if len(functions) == 0 {
		t.Fatal("template.yaml declares no AWS::Serverless::Function")
	}
	return functions
}

// run runs a command in the service module's root with env added to the environment
// and returns its standard output.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = testkit.ModuleRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = string(exit.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// buildCommand returns the command `make build-<LogicalId>` would run for SAM, with
// ARTIFACTS_DIR set to artifacts.
func buildCommand(t *testing.T, function, artifacts string) string {
	t.Helper()
	out := run(t, nil, "make", "--no-print-directory", "-s", "-n", "build-"+function, "ARTIFACTS_DIR="+artifacts)
	for line := range strings.Lines(out) {
		if strings.Contains(line, " build ") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("make build-%s runs no go build:\n%s", function, out)
	return ""
}

// packageDir returns <dir> of the ./functions/<dir> package a build command compiles.
func packageDir(t *testing.T, command string) string {
	t.Helper()
	for _, field := range strings.Fields(command) {
		if dir, ok := strings.CutPrefix(field, "./functions/"); ok && dir != "" && !strings.Contains(dir, "/") {
			return dir
		}
	}
	t.Fatalf("build command compiles no ./functions/<dir> package: %s", command)
	return ""
}

// functionDirs maps each function's logical id to its directory under functions/.
func functionDirs(t *testing.T, functions []sam.Function) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, f := range functions {
		dirs[f.Name] = packageDir(t, buildCommand(t, f.Name, t.TempDir()))
	}
	return dirs
}

func TestWiring_FunctionsAreBuiltByTheMakefileForProvidedAL2023OnArm64(t *testing.T) {
	for _, f := range realFunctions(t) {
		t.Run(f.Name, func(t *testing.T) {
			checks := []struct {
				property  string
				got, want any
			}{
				{"Metadata.BuildMethod", f.BuildMethod, "makefile"},
				{"CodeUri", f.CodeURI, "."},
				{"Runtime", f.Runtime, "provided.al2023"},
				{"Architectures", f.Architectures, []string{"arm64"}},
				{"Handler", f.Handler, "bootstrap"},
			}
			for _, c := range checks {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %v, want %v (Globals applied)", c.property, c.got, c.want)
				}
			}
		})
	}
}

func TestWiring_MakefileBuildsEachFunctionFromAMainPackageWithoutLocalOnlyCode(t *testing.T) {
	module := serviceModule(t)
	forbidden := []string{"github.com/truora/minidyn", "github.com/Admiral-Piett/goaws", module + "/cmd",
		// the tools module (the local stack, the template reader, load tools) and test helpers
		module + "/tools", module + "/internal/testing",
		// stand-ins for outside services
		module + "/internal/wechatpay/paytest", module + "/internal/wxlogin/wxlogintest", module + "/internal/wxapi/wxapitest",
		module + "/internal/teamchat/chattest"}
	listed := map[string]map[string]functionPackage{} // by GOARCH: one go list for every function
	for _, f := range realFunctions(t) {
		t.Run(f.Name, func(t *testing.T) {
			// The Makefile must build for the template's architecture; go list must
			// select the files the build does.
			goarch := lambdaGOARCH(t, f.Architectures)
			artifacts := t.TempDir()
			command := buildCommand(t, f.Name, artifacts)
			for _, part := range []string{"GOWORK=off", "GOOS=linux", "GOARCH=" + goarch, "CGO_ENABLED=0", "-tags lambda.norpc", "-trimpath", "-o " + filepath.Join(artifacts, "bootstrap")} {
				if !strings.Contains(command, part) {
					t.Errorf("build command lacks %q: %s", part, command)
				}
			}
			pkg := "./functions/" + packageDir(t, command)
			if listed[goarch] == nil {
				listed[goarch] = listFunctionPackages(t, goarch)
			}
			p, ok := listed[goarch][module+strings.TrimPrefix(pkg, ".")]
			if !ok {
				t.Fatalf("go list ./functions/... lists no package %s", pkg)
			}
			if p.name != "main" {
				t.Errorf("%s is package %s, want main", pkg, p.name)
			}
			for _, dep := range p.deps {
				for _, f := range forbidden {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						t.Errorf("%s links %s, which must never reach a function binary", pkg, dep)
					}
				}
			}
		})
	}
}

// functionPackage is a package under functions/ as go list reads it for a Lambda
// build: its name and every package it links.
type functionPackage struct {
	name string
	deps []string
}

// listFunctionPackages lists every package under functions/ by import path as the
// Makefile builds it for goarch (GOWORK=off, linux, no cgo, tag lambda.norpc): one go
// list for all of them, each with its name and what it links (Deps).
func listFunctionPackages(t *testing.T, goarch string) map[string]functionPackage {
	t.Helper()
	env := []string{"GOWORK=off", "GOOS=linux", "GOARCH=" + goarch, "CGO_ENABLED=0"}
	out := run(t, env, "go", "list", "-tags", "lambda.norpc", "-f", `{{.ImportPath}} {{.Name}}{{range .Deps}} {{.}}{{end}}`, "./functions/...")
	pkgs := map[string]functionPackage{}
	for line := range strings.Lines(out) {
		if fields := strings.Fields(line); len(fields) >= 2 {
			pkgs[fields[0]] = functionPackage{name: fields[1], deps: fields[2:]}
		}
	}
	return pkgs
}

// lambdaGOARCH is the GOARCH for a function's Architectures (Lambda developer guide,
// "Selecting and configuring an instruction set architecture": arm64 or x86_64, one).
func lambdaGOARCH(t *testing.T, architectures []string) string {
	t.Helper()
	if len(architectures) != 1 {
		t.Fatalf("Architectures %v: Lambda takes exactly one", architectures)
	}
	switch architectures[0] {
	case "arm64":
		return "arm64"
	case "x86_64":
		return "amd64"
	}
	t.Fatalf("unknown Lambda architecture %q", architectures[0])
	return ""
}

// serviceModule is the service's module path, as the go.mod at the repository root
// declares it.
func serviceModule(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(run(t, []string{"GOWORK=off"}, "go", "list", "-m"))
}

// Serving code (every package under internal/ outside internal/testing, and other than
// the stand-ins for outside services, named like net/http/httptest: paytest,
// wxlogintest, wxapitest, chattest) never imports a tool or a test helper: those may
// import it, not the other way round. No package of the service module, its tests
// included, imports the tools module's. go.work would let it; the service module
// alone could not build it.
func TestWiring_ServingCodeImportsNoToolOrTestHelper(t *testing.T) {
	module := serviceModule(t)
	out := run(t, nil, "go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	checked := 0
	for line := range strings.Lines(out) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), "|")
		imports, testImports, _ := strings.Cut(imports, "|")
		for _, imp := range strings.Fields(imports + " " + testImports) {
			if strings.HasPrefix(imp, module+"/tools/") {
				t.Errorf("%s imports %s of the tools module", pkg, imp)
			}
		}
		if !strings.HasPrefix(pkg, module+"/internal/") || strings.HasPrefix(pkg, module+"/internal/testing/") || strings.HasSuffix(pkg, "test") {
			continue
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, module+"/internal/testing/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d serving packages checked", checked)
	}
}

func TestWiring_EveryFunctionDirectoryHasATemplateFunction(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(testkit.ModuleRoot(t), "functions"))
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]bool{}
	for _, dir := range functionDirs(t, realFunctions(t)) {
		built[dir] = true
	}
	for _, e := range entries {
		if e.IsDir() && !built[e.Name()] {
			t.Errorf("functions/%s is built by no AWS::Serverless::Function of template.yaml", e.Name())
		}
	}
}

// Configuration is read from the environment in the function mains only, which pass
// os.Getenv to their package's configuration parser; nothing under internal/ reads it,
// in the service module or in the tools module (tools/internal/).
// (tools/internal/local's TestFunctions_RefuseToStartOnAMissingOrInvalidSetting checks
// that those parsers read exactly the variables template.yaml sets.)
func TestWiring_NothingBelowTheMainsReadsTheEnvironment(t *testing.T) {
	root := testkit.ModuleRoot(t)
	for _, dir := range []string{filepath.Join(root, "internal"), filepath.Join(root, "tools", "internal")} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			for name := range envReads(t, path) {
				t.Errorf("%s reads %s from the environment", path, name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// envReads returns the names a package's non-test files pass to os.Getenv and
// os.LookupEnv, as string literals or as package constants holding one ("*" for
// os.Environ).
func envReads(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files := parsePackage(t, dir)
	constants := stringConstants(files)
	read := map[string]bool{}
	for path, file := range files {
		osName := importName(file, "os")
		if osName == "" {
			continue
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if ok && isCallTo(call, osName, "Environ") {
				read["*"] = true
			}
			if !ok || !isCallTo(call, osName, "Getenv", "LookupEnv") || len(call.Args) != 1 {
				return true
			}
			name, ok := stringValue(call.Args[0], constants)
			if !ok {
				t.Errorf("%s: os.%s with a name that is not a string literal or constant", path, call.Fun.(*ast.SelectorExpr).Sel.Name)
			}
			read[name] = true
			return true
		})
	}
	return read
}

func parsePackage(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = file
	}
	return files
}

// importName is the name file uses for the package at path, "" when it does not
// import it by name.
func importName(file *ast.File, path string) string {
	for _, spec := range file.Imports {
		if p, _ := strconv.Unquote(spec.Path.Value); p != path {
			continue
		}
		if spec.Name == nil {
			return filepath.Base(path)
		}
		if spec.Name.Name != "_" && spec.Name.Name != "." {
			return spec.Name.Name
		}
	}
	return ""
}

func isCallTo(call *ast.CallExpr, pkg string, funcs ...string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && slices.Contains(funcs, sel.Sel.Name)
}

// stringConstants maps the package-level string constants of files to their values.
func stringConstants(files map[string]*ast.File) map[string]string {
	constants := map[string]string{}
	for _, file := range files {
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if value, ok := stringValue(vs.Values[i], nil); ok {
							constants[name.Name] = value
						}
					}
				}
			}
		}
	}
	return constants
}

func stringValue(expr ast.Expr, constants map[string]string) (string, bool) {
	switch e := expr.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.Ident:
		s, ok := constants[e.Name]
		return s, ok
	}
	return "", false
}

// publicRoutes are the routes the contract serves without a login token (docs/contract.md):
// the issuer's documents, login, WeChat Pay's notifications, WeChat's message push and
// the public SKU reads and a waiting room's line document.
var publicRoutes = []string{
	"GET /.well-known/jwks.json", "GET /.well-known/openid-configuration", "POST /auth/wechat",
	"POST /payments/wechatpay/notify", "POST /payments/wechatpay/refund-notify", "GET /skus/{skuId}",
	"GET /skus", "GET /skus/{skuId}/line", "GET /wechat/messages", "POST /wechat/messages",
}

// Which function serves which route is package wiring's table; the template must
// route exactly those, each to its function, public exactly where the contract says
// and AWS_IAM exactly on /admin/.
func TestWiring_RoutesAreTheWiringTablesRoutes(t *testing.T) {
	routes, err := loadRealTemplate(t).Routes()
	if err != nil {
		t.Fatal(err)
	}
	var want []sam.Route
	for _, fn := range function.All() {
		for _, tr := range fn.Triggers() {
			if tr.Kind != lambdaevent.HTTP {
				continue
			}
			method, path, _ := strings.Cut(tr.Route, " ")
			want = append(want, sam.Route{Method: method, Path: path, Function: fn.Name,
				Public: slices.Contains(publicRoutes, tr.Route), IAM: strings.HasPrefix(path, "/admin/")})
		}
	}
	slices.SortFunc(want, func(a, b sam.Route) int { return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method) })
	got := make([]sam.Route, 0, len(routes))
	for _, r := range routes {
		if r.API == consoleAPI {
			continue // the same merchant routes again: TestConsole_ApiServesEveryMerchantRouteForTheUserPool
		}
		r.Event, r.API, r.Throttle = "", "", nil // throttles: TestWiring_QuotasInFrontOfTheFunctions
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("routes:\ngot  %+v\nwant %+v", got, want)
	}
}

// The template's queue, schedule and topic events are package wiring's table too:
// each function polls the queues, runs on a schedule and subscribes to the topics its
// table rows name, and no others.
func TestWiring_EventSourcesAreTheWiringTablesTriggers(t *testing.T) {
	type source struct{ kind, name string }
	want := map[string][]source{}
	for _, fn := range function.All() {
		for _, tr := range fn.Triggers() {
			switch tr.Kind {
			case lambdaevent.SQS:
				want[fn.Name] = append(want[fn.Name], source{"SQS", tr.Queue})
			case lambdaevent.SNS:
				want[fn.Name] = append(want[fn.Name], source{"SNS", tr.Topic})
			case lambdaevent.Scheduled:
				want[fn.Name] = append(want[fn.Name], source{"schedule", ""})
			}
		}
	}
	for _, f := range realFunctions(t) {
		var got []source
		for _, ev := range f.Events.SQS {
			got = append(got, source{"SQS", ev.Queue})
		}
		for _, ev := range f.Events.SNS {
			got = append(got, source{"SNS", ev.Topic})
		}
		if len(f.Events.Schedule) > 0 {
			got = append(got, source{"schedule", ""})
		}
		less := func(a, b source) int { return strings.Compare(a.kind+a.name, b.kind+b.name) }
		slices.SortFunc(got, less)
		slices.SortFunc(want[f.Name], less)
		if !slices.Equal(got, want[f.Name]) {
			t.Errorf("%s: template event sources %v, wiring table %v", f.Name, got, want[f.Name])
		}
		if len(f.Events.Other) > 0 {
			t.Errorf("%s: events of types the wiring table has no trigger for: %v", f.Name, f.Events.Other)
		}
	}
}

// The /admin/ routes choose AWS_IAM, which SAM only accepts on an API with
// Auth.EnableIamAuthorizer; API Gateway then refuses unsigned or unauthorised callers
// (403) before the function runs.
func TestWiring_AdminRoutesUseIAMAuthorization(t *testing.T) {
	apis := realByName(t, (*sam.Template).HTTPAPIs, func(a sam.HTTPAPI) string { return a.Name })
	if !apis["HttpApi"].IAMAuthorizer {
		t.Error("HttpApi: Auth.EnableIamAuthorizer is not true")
	}
	routes, err := loadRealTemplate(t).Routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.API == consoleAPI {
			continue // signed in with the user pool: TestConsole_ApiServesEveryMerchantRouteForTheUserPool
		}
		if admin := strings.HasPrefix(r.Path, "/admin/"); admin != r.IAM || admin && r.Public {
			t.Errorf("%s %s: IAM %v, public %v; want IAM exactly on /admin/ routes", r.Method, r.Path, r.IAM, r.Public)
		}
	}
}

func TestWiring_HttpApiRequiresJWTFromIssuerAndAudienceParameters(t *testing.T) {
	const issuer, audience = "https://issuer.wiring.invalid", "wiring-audience"
	tpl, err := sam.LoadWithParameters(filepath.Join(testkit.ModuleRoot(t), "template.yaml"),
		map[string]string{"JwtIssuer": issuer, "JwtAudience": audience})
	if err != nil {
		t.Fatal(err)
	}
	apis, err := tpl.HTTPAPIs()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(apis, func(a sam.HTTPAPI) bool { return a.Name == "HttpApi" })
	if i < 0 {
		t.Fatalf("no AWS::Serverless::HttpApi HttpApi in %+v", apis)
	}
	api := apis[i]
	want := sam.Authorizer{JWT: true, IdentitySource: "$request.header.Authorization", Issuer: issuer, Audience: []string{audience}}
	if got := api.Authorizers[api.DefaultAuthorizer]; api.DefaultAuthorizer == "" || !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultAuthorizer %q = %+v, want %+v", api.DefaultAuthorizer, got, want)
	}
	functions, err := tpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range functions {
		for _, ev := range f.Events.HTTPAPI {
			if f.Name == "JwksFunction" && ev.API == "IssuerApi" || f.Name == "AdminFunction" && ev.API == consoleAPI {
				continue // the token issuer's public documents, and the console's merchant routes, on APIs of their own
			}
			if ev.API != api.Name {
				t.Errorf("%s event %s is on API %q, want %s (the implicit API has no JWT authorizer)", f.Name, ev.Name, ev.API, api.Name)
			}
		}
	}
}

// With JwtIssuer left empty the authorizer trusts stockguard's own issuer: the URL of
// IssuerApi, which is the iss the login function stamps. The JWK set function is not
// told it (IssuerApi integrates the function, so the function naming the API would be
// a dependency cycle): it serves only on IssuerApi and names the URL each discovery
// request reached, which is the authorizer's issuer (login.NewIssuerRoutes). The
// issuer API has no authorizer.
func TestWiring_OwnIssuerIsTheIssuerApiTheLoginTokensName(t *testing.T) {
	apis := realByName(t, (*sam.Template).HTTPAPIs, func(a sam.HTTPAPI) string { return a.Name })
	main, issuerAPI := apis["HttpApi"], apis["IssuerApi"]
	if issuerAPI.Name == "" || issuerAPI.DefaultAuthorizer != "" {
		t.Fatalf("IssuerApi %+v: want an API without authorizer", issuerAPI)
	}
	functions := realFunctions(t)
	issuer := main.Authorizers[main.DefaultAuthorizer].Issuer
	if !strings.Contains(issuer, "IssuerApi") {
		t.Errorf("authorizer issuer %q does not name IssuerApi", issuer)
	}
	for _, f := range functions {
		if got, set := f.Environment["TOKEN_ISSUER"]; f.Name == "LoginFunction" && got != issuer {
			t.Errorf("%s TOKEN_ISSUER = %q, want the authorizer's issuer %q", f.Name, got, issuer)
		} else if f.Name == "JwksFunction" && set {
			t.Errorf("%s TOKEN_ISSUER = %q, want it unset (the issuer is the URL each request reached)", f.Name, got)
		}
		for _, ev := range f.Events.HTTPAPI {
			if f.Name == "JwksFunction" && ev.API != "IssuerApi" {
				t.Errorf("%s event %s is on %s, want IssuerApi: the discovery document names the API it is served on", f.Name, ev.Name, ev.API)
			}
		}
		if f.Name == "LoginFunction" && f.Environment["TOKEN_AUDIENCE"] != main.Authorizers[main.DefaultAuthorizer].Audience[0] {
			t.Errorf("LoginFunction TOKEN_AUDIENCE = %q, want the authorizer's audience", f.Environment["TOKEN_AUDIENCE"])
		}
	}
}

func TestWiring_TablesAreOnDemandWithPointInTimeRecovery(t *testing.T) {
	tpl := loadRealTemplate(t)
	tables, err := tpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if table.BillingMode != "PAY_PER_REQUEST" {
			t.Errorf("%s billing mode %s, want PAY_PER_REQUEST", *table.TableName, table.BillingMode)
		}
	}
	settings, err := tpl.TableSettings()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if !s.PointInTimeRecovery {
			t.Errorf("%s has no point-in-time recovery", s.Name)
		}
	}
}

// Lambda's SQS event source guidance: a visibility timeout of at least six times the
// function timeout, partial batch responses, and a dead-letter queue behind every
// consumed queue.
func TestWiring_ConsumedQueuesOutlastTheirFunctionAndRedrive(t *testing.T) {
	byName := realByName(t, (*sam.Template).Queues, func(q sam.Queue) string { return q.Name })
	consumed := 0
	for _, f := range realFunctions(t) {
		for _, ev := range f.Events.SQS {
			consumed++
			q, ok := byName[ev.Queue]
			if !ok {
				t.Errorf("%s event %s reads unknown queue %q", f.Name, ev.Name, ev.Queue)
				continue
			}
			vis, _ := strconv.Atoi(q.Attributes["VisibilityTimeout"])
			if vis < 6*f.Timeout {
				t.Errorf("%s VisibilityTimeout %d s, want at least 6 × %s's %d s", q.Name, vis, f.Name, f.Timeout)
			}
			if !slices.Contains(ev.FunctionResponseTypes, "ReportBatchItemFailures") {
				t.Errorf("%s event %s lacks ReportBatchItemFailures", f.Name, ev.Name)
			}
			if !strings.Contains(q.Attributes["RedrivePolicy"], "maxReceiveCount") {
				t.Errorf("%s has no redrive policy to a dead-letter queue: %v", q.Name, q.Attributes)
			}
		}
	}
	if consumed == 0 {
		t.Error("no function consumes a queue")
	}
}

func TestWiring_QueuesCanBeCreatedInDependencyOrder(t *testing.T) {
	if _, err := loadRealTemplate(t).Queues(); err != nil {
		t.Error(err)
	}
}

func TestWiring_OrdersTableHasPendingRefundingUserAndArrivalIndexesAndTTL(t *testing.T) {
	tpl := loadRealTemplate(t)
	tables, err := tpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tables, func(table *dynamodb.CreateTableInput) bool { return *table.TableName == "OrdersTable" })
	if i < 0 {
		t.Fatal("no OrdersTable")
	}
	orders := tables[i]
	attributeTypes := map[string]string{}
	for _, a := range orders.AttributeDefinitions {
		attributeTypes[*a.AttributeName] = string(a.AttributeType)
	}
	got := map[string][]string{}
	for _, gsi := range orders.GlobalSecondaryIndexes {
		for _, k := range gsi.KeySchema {
			got[*gsi.IndexName] = append(got[*gsi.IndexName], string(k.KeyType)+" "+*k.AttributeName+" "+attributeTypes[*k.AttributeName])
		}
	}
	want := map[string][]string{
		dynamo.PendingIndex:   {"HASH pendingBucket S", "RANGE pendingExpiresAt N"},
		dynamo.RefundingIndex: {"HASH refundBucket S", "RANGE refundingSince N"},
		dynamo.UserIndex:      {"HASH userId S", "RANGE createdMs N"},
		dynamo.ArrivalIndex:   {"HASH arrivalBucket S", "RANGE arrivedMs N"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OrdersTable index keys = %v, want %v", got, want)
	}
	settings, err := tpl.TableSettings()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if s.Name == "OrdersTable" && s.TimeToLiveAttribute != "ttl" {
			t.Errorf("OrdersTable TTL attribute %q, want ttl", s.TimeToLiveAttribute)
		}
	}
}

func TestWiring_InlinePoliciesGrantNoWildcard(t *testing.T) {
	for _, f := range realFunctions(t) {
		for i, s := range f.Policies.Statements {
			where := f.Name + " statement " + strconv.Itoa(i) + " " + s.Sid
			for _, action := range s.Action {
				if action == "*" || strings.HasSuffix(action, ":*") {
					t.Errorf("%s: action %s", where, action)
				}
			}
			for _, resource := range s.Resource {
				if resource == "*" {
					t.Errorf("%s: resource *", where)
				}
			}
			if len(s.NotAction) > 0 || len(s.NotResource) > 0 {
				t.Errorf("%s: NotAction/NotResource grant everything else", where)
			}
		}
	}
}

// Every template parameter is constrained (AllowedPattern, AllowedValues, MinLength or
// MinValue), so CloudFormation refuses a bad value before a function refuses to start
// on it; and every default satisfies its own constraints.
func TestWiring_ParametersAreConstrainedAndTheirDefaultsPass(t *testing.T) {
	parameters := loadRealTemplate(t).Parameters()
	if len(parameters) == 0 {
		t.Fatal("no parameters")
	}
	for _, name := range slices.Sorted(maps.Keys(parameters)) {
		p := parameters[name]
		if p.AllowedPattern == nil && len(p.AllowedValues) == 0 && p.MinLength == nil && p.MinValue == nil {
			t.Errorf("parameter %s has no AllowedPattern, AllowedValues, MinLength or MinValue", name)
		}
		if p.Default == nil {
			continue
		}
		def := fmt.Sprint(p.Default)
		if p.AllowedPattern != nil && !regexp.MustCompile(*p.AllowedPattern).MatchString(def) {
			t.Errorf("parameter %s default %q does not match %s", name, def, *p.AllowedPattern)
		}
		if len(p.AllowedValues) > 0 && !slices.ContainsFunc(p.AllowedValues, func(v any) bool { return fmt.Sprint(v) == def }) {
			t.Errorf("parameter %s default %q is not among %v", name, def, p.AllowedValues)
		}
		if n, err := strconv.ParseFloat(def, 64); p.MinValue != nil && (err != nil || n < *p.MinValue) {
			t.Errorf("parameter %s default %q is below MinValue %v", name, def, *p.MinValue)
		}
	}
}

// iamMatch reports whether an IAM resource pattern (* any run of characters, ? one
// character; IAM User Guide, "IAM JSON policy elements: Resource") matches arn.
func iamMatch(pattern, arn string) bool {
	expr := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(expr).MatchString(arn)
}

// WechatPaySecretArn and WechatAppSecretArn may each be a complete ARN or a partial
// one (without the six random characters Secrets Manager appends to the name).
// Whichever a parameter holds, and whatever its pattern accepts, every function that
// reads the secret is allowed secretsmanager:GetSecretValue on the secret's complete
// ARN — and on no other secret: not one of another name, and not the other of the
// two (login, wechat and createOrder never read the merchant's keys; closeOrder,
// payCallback and refund never the app secret).
func TestWiring_SecretPoliciesAcceptTheARNFormsTheParameterAllows(t *testing.T) {
	const pay = "arn:aws:secretsmanager:us-east-1:123456789012:secret:stockguard/wechatpay-AbC123"
	const app = "arn:aws:secretsmanager:us-east-1:123456789012:secret:stockguard/wechatapp-XyZ789"
	for _, c := range []struct {
		param, env, full, other string
		readers                 []string
	}{
		{"WechatPaySecretArn", "WECHATPAY_SECRET_ARN", pay, app, []string{"CloseOrderFunction", "PayCallbackFunction", "RefundFunction"}},
		{"WechatAppSecretArn", "WECHAT_APP_SECRET_ARN", app, pay, []string{"CreateOrderFunction", "LoginFunction", "WeChatFunction"}},
	} {
		pattern := regexp.MustCompile(*loadRealTemplate(t).Parameters()[c.param].AllowedPattern)
		for _, given := range []string{c.full, c.full[:len(c.full)-7]} {
			if !pattern.MatchString(given) {
				t.Fatalf("%s refuses %s", c.param, given)
			}
			params := map[string]string{"WechatPaySecretArn": pay, "WechatAppSecretArn": app, "JwtAudience": "wx-app"}
			params[c.param] = given
			tpl, err := sam.LoadWithParameters(filepath.Join(testkit.ModuleRoot(t), "template.yaml"), params)
			if err != nil {
				t.Fatal(err)
			}
			functions, err := tpl.Functions()
			if err != nil {
				t.Fatal(err)
			}
			var readers []string
			for _, f := range functions {
				allowed := func(arn string) bool {
					for _, s := range f.Policies.Statements {
						if s.Effect == "Allow" && slices.Contains(s.Action, "secretsmanager:GetSecretValue") &&
							slices.ContainsFunc(s.Resource, func(r string) bool { return iamMatch(r, arn) }) {
							return true
						}
					}
					return false
				}
				if f.Environment[c.env] == "" {
					if allowed(c.full) {
						t.Errorf("%s may read %s's secret without being configured with it", f.Name, c.param)
					}
					continue
				}
				readers = append(readers, f.Name)
				if !allowed(c.full) {
					t.Errorf("%s with %s=%s: GetSecretValue on %s not allowed", f.Name, c.param, given, c.full)
				}
				for _, other := range []string{strings.Replace(c.full, "stockguard/", "other/", 1), c.other} {
					if allowed(other) {
						t.Errorf("%s with %s=%s: GetSecretValue allowed on %s", f.Name, c.param, given, other)
					}
				}
			}
			slices.Sort(readers)
			if !slices.Equal(readers, c.readers) {
				t.Errorf("%s is read by %v, want %v", c.param, readers, c.readers)
			}
		}
	}
}

// The SigningKeys parameter walks a key rotation through the two key slots: login signs
// with the first letter's key; jwks publishes it and, while both slots exist, the
// other (OTHER_SIGNING_KEY_ID), and may read the public key of each key that exists;
// login's own policies grant no KMS action (the key policy names its role).
func TestWiring_SigningKeysRotateThroughTheirSlots(t *testing.T) {
	arn := func(id string) string { return "arn:aws:kms:" + sam.Region + ":" + sam.AccountID + ":key/" + id }
	for _, tc := range []struct {
		value, signs, other string
		readable            []string
	}{
		{"A", "SigningKeyA", "", []string{arn("SigningKeyA")}},
		{"A+B", "SigningKeyA", "SigningKeyB", []string{arn("SigningKeyA"), arn("SigningKeyB")}},
		{"B+A", "SigningKeyB", "SigningKeyA", []string{arn("SigningKeyA"), arn("SigningKeyB")}},
		{"B", "SigningKeyB", "", []string{arn("SigningKeyB")}},
	} {
		t.Run(tc.value, func(t *testing.T) {
			tpl, err := sam.LoadWithParameters(filepath.Join(testkit.ModuleRoot(t), "template.yaml"), map[string]string{"SigningKeys": tc.value})
			if err != nil {
				t.Fatal(err)
			}
			functions, err := tpl.Functions()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range functions {
				switch f.Name {
				case "LoginFunction":
					if f.Environment["SIGNING_KEY_ID"] != tc.signs {
						t.Errorf("login signs with %q, want %s", f.Environment["SIGNING_KEY_ID"], tc.signs)
					}
					for _, st := range f.Policies.Statements {
						if slices.ContainsFunc(st.Action, func(a string) bool { return strings.HasPrefix(a, "kms:") }) {
							t.Errorf("login's policy %s grants %v: the key policy alone should", st.Sid, st.Action)
						}
					}
				case "JwksFunction":
					other, set := f.Environment["OTHER_SIGNING_KEY_ID"]
					if f.Environment["SIGNING_KEY_ID"] != tc.signs || other != tc.other || set != (tc.other != "") {
						t.Errorf("jwks publishes %q and %q (set %v), want %s and %q", f.Environment["SIGNING_KEY_ID"], other, set, tc.signs, tc.other)
					}
					var readable []string
					for _, st := range f.Policies.Statements {
						if slices.Contains(st.Action, "kms:GetPublicKey") {
							readable = append(readable, st.Resource...)
						}
					}
					if !slices.Equal(readable, tc.readable) {
						t.Errorf("jwks may read the public keys of %v, want %v", readable, tc.readable)
					}
				}
			}
		})
	}
}

// Queues are least privilege both ways: a function is allowed sqs:SendMessage on
// exactly the queues whose URL its environment names (*_QUEUE_URL), so a function
// given a queue to send to (closeOrder the WeChat queue, for the waitlist's messages)
// can send to it, and none can send to a queue it was not given.
func TestWiring_FunctionsSendToExactlyTheQueuesTheirEnvironmentNames(t *testing.T) {
	for _, f := range realFunctions(t) {
		var named, allowed []string
		for name, v := range f.Environment {
			if strings.HasSuffix(name, "_QUEUE_URL") {
				named = append(named, v[strings.LastIndexAny(v, "/:")+1:])
			}
		}
		for _, s := range f.Policies.Statements {
			if s.Effect != "Allow" || !slices.Contains(s.Action, "sqs:SendMessage") {
				continue
			}
			for _, r := range s.Resource {
				allowed = append(allowed, r[strings.LastIndex(r, ":")+1:])
			}
		}
		slices.Sort(named)
		slices.Sort(allowed)
		if !slices.Equal(slices.Compact(named), slices.Compact(allowed)) {
			t.Errorf("%s: environment names queues %v, sqs:SendMessage allowed on %v", f.Name, named, allowed)
		}
	}
}

// A function's reservation names the parameter it is set from (rehearse checks a
// -reserved value against that parameter's MinValue); a number written in place, no
// reservation or no such function names none.
func TestWiring_ReservedParameter(t *testing.T) {
	tpl := loadRealTemplate(t)
	got := map[string]string{}
	for _, fn := range []string{"CloseOrderFunction", "PayCallbackFunction", "AdmitterFunction", "CreateOrderFunction", "NoSuchFunction"} {
		got[fn] = tpl.ReservedParameter(fn)
	}
	want := map[string]string{"CloseOrderFunction": "CloseOrderReserved", "PayCallbackFunction": "PayCallbackReserved",
		"AdmitterFunction": "", "CreateOrderFunction": "", "NoSuchFunction": ""}
	if !maps.Equal(got, want) {
		t.Errorf("ReservedParameter: %v, want %v", got, want)
	}
}
