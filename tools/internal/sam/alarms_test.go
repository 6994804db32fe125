package sam_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/sam"
)

// awsNamespaces are the AWS metric namespaces an alarm may watch.
var awsNamespaces = []string{"AWS/ApiGateway", "AWS/Lambda", "AWS/SQS", "AWS/SNS"}

const metricPackage = "github.com/stockguard/stockguard/internal/metric"

// emitted reads the code: the metric names declared in internal/metric/names.go (the
// only place a metric.Name can be made), and for each name the functions that emit it
// (metricFunctions of each package outside internal/metric whose non-test code uses
// it).
func emitted(t *testing.T, root string) map[string][]string {
	t.Helper()
	declared := declaredNames(t, filepath.Join(root, "internal", "metric", "names.go"))
	users := map[string]map[string]bool{} // metric name → package dirs
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || path == filepath.Join(root, "internal", "metric")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		for _, name := range metricUses(t, path, declared) {
			if users[name] == nil {
				users[name] = map[string]bool{}
			}
			users[name][filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	served := servedWith(t, root)
	out := map[string][]string{}
	for name, dirs := range users {
		for _, dir := range slices.Sorted(maps.Keys(dirs)) {
			fns := metricFunctions(t, root, dir, served)
			if len(fns) == 0 {
				t.Errorf("%s uses metric %s, but neither declares a MetricFunction constant nor is linked by a function: its Function dimension is unknown", dir, name)
			}
			out[name] = append(out[name], fns...)
		}
	}
	return out
}

// metricFunctions are the Function dimensions a package's metrics go out under: its
// MetricFunction constant when it declares one, else the functions that serve with it
// (served: package import path → function short names).
func metricFunctions(t *testing.T, root, dir string, served map[string][]string) []string {
	t.Helper()
	if fn := constantOf(t, dir, "MetricFunction"); fn != "" {
		return []string{fn}
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return served[modulePath+"/"+filepath.ToSlash(rel)]
}

const modulePath = "github.com/stockguard/stockguard"

// servedWith reads which function serves with which package: every package a
// function's binary links (the package of functions/<name> and its Deps, listed as
// the Makefile builds it, one go list for every function), under the function's short
// name, its directory's name. Each function's wiring (internal/wiring/function/<name>)
// imports only what that function serves with.
func servedWith(t *testing.T, root string) map[string][]string {
	t.Helper()
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"list", "-tags", "lambda.norpc", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}
	for _, path := range mains {
		args = append(args, "./functions/"+filepath.Base(filepath.Dir(path)))
	}
	out := map[string][]string{}
	listed := 0
	for line := range strings.Lines(run(t, []string{"GOWORK=off", "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}, "go", args...)) {
		pkgs := strings.Fields(line) // the function's package, then everything it links
		if len(pkgs) == 0 {
			continue
		}
		listed++
		short := pkgs[0][strings.LastIndex(pkgs[0], "/")+1:]
		for _, dep := range pkgs {
			if strings.HasPrefix(dep, modulePath+"/") {
				out[dep] = append(out[dep], short)
			}
		}
	}
	if listed != len(mains) {
		t.Fatalf("go list listed %d functions, want the %d of functions/*/main.go", listed, len(mains))
	}
	return out
}

// declaredNames maps each metric.Name variable of names.go to its metric name.
func declaredNames(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, v := range spec.Values {
			lit, ok := v.(*ast.CompositeLit)
			if typ, isIdent := lit.Type.(*ast.Ident); !ok || !isIdent || typ.Name != "Name" || len(lit.Elts) == 0 {
				continue
			}
			if s, ok := lit.Elts[0].(*ast.BasicLit); ok {
				out[spec.Names[i].Name], _ = strconv.Unquote(s.Value)
			}
		}
		return true
	})
	if len(out) == 0 {
		t.Fatalf("no metric names declared in %s", path)
	}
	return out
}

// metricUses returns the metric names whose variables file uses (metric.X).
func metricUses(t *testing.T, path string, declared map[string]string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == metricPackage {
			local = "metric"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && declared[sel.Sel.Name] != "" {
				names = append(names, declared[sel.Sel.Name])
			}
		}
		return true
	})
	return names
}

// constantOf returns the value of the package's string constant name, or "".
func constantOf(t *testing.T, dir, name string) string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if obj := f.Scope.Lookup(name); obj != nil && obj.Kind == ast.Con {
			if lit, ok := obj.Decl.(*ast.ValueSpec).Values[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				return s
			}
		}
	}
	return ""
}

// metricSource says where m comes from, or returns an error when nothing emits it: an
// AWS namespace; a stockguard metric a function's code emits, under that function's
// Function dimension; or a log metric filter of the template on an HTTP API's access
// log group.
func metricSource(m sam.MetricRef, code map[string][]string, tpl *sam.Template, accessLogGroups []string) (string, error) {
	switch {
	case slices.Contains(awsNamespaces, m.Namespace):
		return "AWS", nil
	case m.Namespace == metric.Namespace:
		fns, fn := code[m.Name], m.Dimensions["Function"]
		if len(fns) == 0 {
			return "", fmt.Errorf("%s: no code emits %s (internal/metric/names.go declares it and a function's package uses it)", m, m.Name)
		}
		if !slices.Contains(fns, fn) {
			return "", fmt.Errorf("%s: Function=%s does not emit %s (emitted by %v)", m, fn, m.Name, fns)
		}
		return "code of " + fn, nil
	}
	for _, lm := range tpl.LogMetrics() {
		if lm.Metric.Namespace == m.Namespace && lm.Metric.Name == m.Name &&
			slices.Equal(slices.Sorted(maps.Keys(lm.Metric.Dimensions)), slices.Sorted(maps.Keys(m.Dimensions))) &&
			slices.Contains(accessLogGroups, lm.LogGroup) {
			return "metric filter " + lm.Filter, nil
		}
	}
	return "", fmt.Errorf("%s: neither AWS, nor the code, nor a metric filter on the access logs emits it", m)
}

// accessLogGroups are the log groups the HTTP APIs write access logs to.
func accessLogGroups(t *testing.T, tpl *sam.Template) []string {
	t.Helper()
	apis, err := tpl.HTTPAPIs()
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, api := range apis {
		if api.AccessLogs == nil {
			t.Errorf("HTTP API %s writes no access logs", api.Name)
			continue
		}
		// arn:aws:logs:<region>:<account>:log-group:<name>:*
		parts := strings.Split(api.AccessLogs.DestinationArn, ":")
		if len(parts) < 7 || parts[5] != "log-group" {
			t.Errorf("HTTP API %s: access log destination %q is not a log group ARN", api.Name, api.AccessLogs.DestinationArn)
			continue
		}
		groups = append(groups, parts[6])
	}
	return groups
}

// sources reads what the metric checks need: the repository root, the template, the
// metrics the code emits by function, and the access log groups.
func sources(t *testing.T) (string, *sam.Template, map[string][]string, []string) {
	t.Helper()
	root := testkit.ModuleRoot(t)
	tpl := loadRealTemplate(t)
	return root, tpl, emitted(t, root), accessLogGroups(t, tpl)
}

// runbook returns RUNBOOK.md's sections by their "## " heading.
func runbook(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "RUNBOOK.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	parts := regexp.MustCompile(`(?m)^## `).Split(string(data), -1)
	for _, part := range parts[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		sections[strings.TrimSpace(heading)] = body
	}
	return sections
}

// runbookParts are what every alarm's RUNBOOK.md entry must say.
var runbookParts = []string{"**Means:**", "**Look:**", "**Do:**", "**Escalate:**"}

// Every alarm watches a metric something really emits (AWS, the code under the
// Function dimension it names, or a metric filter on the access logs), notifies the
// alerts topic, and has a RUNBOOK.md entry under its logical id that says what it
// means, how to look, what to do and when to escalate; and every alarm entry of
// RUNBOOK.md names an alarm of the template.
func TestAlarms_WatchEmittedMetricsNotifyTheTopicAndHaveARunbookEntry(t *testing.T) {
	root, tpl, code, groups := sources(t)
	entries := runbook(t, root)
	alarms, err := tpl.Alarms()
	if err != nil {
		t.Fatal(err)
	}
	const topic = "AlertsTopic" // Ref AlertsTopic, resolved locally to the logical id
	names := map[string]bool{}
	for _, a := range alarms {
		names[a.Name] = true
		for _, m := range a.Metrics {
			source, err := metricSource(m, code, tpl, groups)
			if err != nil {
				t.Errorf("%s: %v", a.Name, err)
				continue
			}
			t.Logf("%-36s %s (%s)", a.Name, m, source)
		}
		if !slices.Equal(a.Actions, []string{topic}) {
			t.Errorf("%s: AlarmActions %v, want the alerts topic only", a.Name, a.Actions)
		}
		entry, ok := entries[a.Name]
		if !ok {
			t.Errorf("%s: no RUNBOOK.md entry (a \"## %s\" heading)", a.Name, a.Name)
		}
		for _, part := range runbookParts {
			if ok && !strings.Contains(entry, part) {
				t.Errorf("RUNBOOK.md %s: no %s paragraph", a.Name, part)
			}
		}
	}
	for heading := range entries {
		if strings.HasSuffix(heading, "Alarm") && !names[heading] {
			t.Errorf("RUNBOOK.md has an entry for %s, which the template does not declare", heading)
		}
	}
}

// The check refuses what nobody emits: a name the code does not declare, a declared
// name under a function that does not emit it, another AWS namespace, and a metric of
// a namespace no filter writes.
func TestAlarms_MetricSourceRefusesWhatNobodyEmits(t *testing.T) {
	_, tpl, code, groups := sources(t)
	fn := func(name string) map[string]string { return map[string]string{"Function": name} }
	for _, m := range []sam.MetricRef{
		{Namespace: metric.Namespace, Name: "ReleasesStuck", Dimensions: fn("closeOrder")},
		{Namespace: metric.Namespace, Name: "Released", Dimensions: fn("payCallback")},
		{Namespace: "AWS/DynamoDB", Name: "ThrottledRequests"},
		{Namespace: "stockguard/api", Name: "Status418", Dimensions: map[string]string{"ApiId": "HttpApi"}},
	} {
		if source, err := metricSource(m, code, tpl, groups); err == nil {
			t.Errorf("%s accepted as emitted by %s", m, source)
		}
	}
	if source, err := metricSource(sam.MetricRef{Namespace: metric.Namespace, Name: "Released", Dimensions: fn("closeOrder")}, code, tpl, groups); err != nil {
		t.Errorf("Released of closeOrder: %v", err)
	} else if source != "code of closeOrder" {
		t.Errorf("Released of closeOrder from %s", source)
	}
}

// The dashboard is valid JSON and every metric it draws is one something emits.
func TestDashboard_DrawsOnlyEmittedMetrics(t *testing.T) {
	_, tpl, code, groups := sources(t)
	dashboards := tpl.Dashboards()
	if len(dashboards) == 0 {
		t.Fatal("no dashboard")
	}
	for id, body := range dashboards {
		var d struct {
			Widgets []struct {
				Properties struct{ Metrics [][]any }
			}
		}
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("%s: DashboardBody is not JSON: %v", id, err)
		}
		drawn := 0
		for _, w := range d.Widgets {
			for _, line := range w.Properties.Metrics {
				m, ok := dashboardMetric(line)
				if !ok {
					t.Errorf("%s: metric line %v is not [namespace, name, dimension, value, ...]", id, line)
					continue
				}
				if _, err := metricSource(m, code, tpl, groups); err != nil {
					t.Errorf("%s: %v", id, err)
				}
				drawn++
			}
		}
		t.Logf("%s draws %d metric lines", id, drawn)
	}
}

// dashboardMetric reads a dashboard metric line: namespace, name, then dimension
// name/value pairs, then optionally a rendering-options object.
func dashboardMetric(line []any) (sam.MetricRef, bool) {
	var s []string
	for _, v := range line {
		if str, ok := v.(string); ok {
			s = append(s, str)
		}
	}
	if len(s) < 2 || len(s)%2 != 0 {
		return sam.MetricRef{}, false
	}
	m := sam.MetricRef{Namespace: s[0], Name: s[1], Dimensions: map[string]string{}}
	for i := 2; i < len(s); i += 2 {
		m.Dimensions[s[i]] = s[i+1]
	}
	return m, true
}
