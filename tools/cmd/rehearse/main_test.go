package main

import (
	"bytes"
	"flag"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/rehearse"
)

// A bad flag is one line naming it, exit status 2, and no sale.
func TestRun_RefusesBadFlagsNamingThem(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-skus", "0"}, "-skus: must be 1 to 1,000"},
		{[]string{"-skus", "ten"}, `invalid value "ten" for flag -skus`},
		{[]string{"-stock", "-1"}, "-stock: must be at least 1"},
		{[]string{"-shards", "65"}, "-shards: must be 0 (planned) to 64"},
		{[]string{"-buyers", "0"}, "-buyers: must be 1 to 10,000,000"},
		{[]string{"-over", "0s"}, "-over: must be positive"},
		{[]string{"-over", "soon"}, `invalid value "soon" for flag -over`},
		{[]string{"-page-views", "-2"}, "-page-views: must be 0 to 100"},
		{[]string{"-pay-ratio", "1.5"}, "-pay-ratio: must be 0 to 1"},
		{[]string{"-pay-ratio", "0.8", "-cancel-ratio", "0.3"}, "-pay-ratio: -pay-ratio + -cancel-ratio + -late-ratio must be at most 1"},
		{[]string{"-payment-timeout", "10s", "-pay-after", "8s"}, "-pay-after: must be positive and 1.5× it below -payment-timeout"},
		{[]string{"-seed", "-1"}, `invalid value "-1" for flag -seed`},
		{[]string{"-slowdown", "0.5"}, "-slowdown: must be 0 (chosen) or at least 1"},
		{[]string{"-reserved", "CloseOrderFunction"}, `invalid value "CloseOrderFunction" for flag -reserved`},
		{[]string{"-reserved", "CloseOrderFunction=30,CloseOrderFunction=40"}, `CloseOrderFunction is given twice`},
		{[]string{"-usd-wru", "-1"}, "-usd-wru: must not be negative"},
		// "Amazon API Gateway quotas": the account burst is not requestable.
		{[]string{"-api-burst", "100000"}, `-api-burst: an API Gateway account burst of 100000 is not a setting AWS grants: the burst is 5000 and cannot be requested ("Amazon API Gateway quotas"`},
		{[]string{"-warm-rcu", "-1"}, "-warm-wcu: -warm-wcu and -warm-rcu must not be negative"},
		{[]string{"-index-warm-wcu", "-1"}, "-index-warm-wcu: must not be negative"},
		{[]string{"-warm-close", "-1"}, "-warm-close: must not be negative"},
		{[]string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != 2 || out.Len() != 0 || strings.Count(errOut.String(), "\n") != 1 || !strings.HasPrefix(errOut.String(), "rehearse: ") || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("rehearse %s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, out.String(), errOut.String(), tc.want)
		}
	}
}

// Every flag rehearse defines is in -h's list and named in the package doc (what go
// doc ./tools/cmd/rehearse shows), so neither can miss one added later.
func TestUsage_NamesEveryFlag(t *testing.T) {
	var help, errOut bytes.Buffer
	if code := run([]string{"-h"}, &help, &errOut); code != 0 {
		t.Fatalf("rehearse -h: exit %d, stderr %q", code, errOut.String())
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		t.Fatalf("main.go's package doc: %v", err)
	}
	doc := f.Doc.Text()
	c := rehearse.Defaults
	var o outputs
	n := 0
	newFlagSet(&c, &o).VisitAll(func(fl *flag.Flag) {
		n++
		named := regexp.MustCompile(`(^|[^\w-])-` + regexp.QuoteMeta(fl.Name) + `($|[^\w-])`)
		if !named.MatchString(doc) {
			t.Errorf("the package doc does not name -%s", fl.Name)
		}
		if !named.MatchString(help.String()) {
			t.Errorf("rehearse -h does not list -%s", fl.Name)
		}
	})
	if n < 40 {
		t.Errorf("%d flags visited; want every flag of rehearse", n)
	}
}

// Every flag of rehearse -queue is in -queue -h's list and named in the package doc.
func TestQueueUsage_NamesEveryFlag(t *testing.T) {
	var help, errOut bytes.Buffer
	if code := run([]string{"-queue", "-h"}, &help, &errOut); code != 0 {
		t.Fatalf("rehearse -queue -h: exit %d, stderr %q", code, errOut.String())
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		t.Fatalf("main.go's package doc: %v", err)
	}
	c, o, compare := rehearse.DefaultQueue, outputs{}, true
	n := 0
	queueFlags(&c, &o, &compare).VisitAll(func(fl *flag.Flag) {
		n++
		named := regexp.MustCompile(`(^|[^\w-])-` + regexp.QuoteMeta(fl.Name) + `($|[^\w-])`)
		if !named.MatchString(f.Doc.Text()) {
			t.Errorf("the package doc does not name -%s", fl.Name)
		}
		if !named.MatchString(help.String()) {
			t.Errorf("rehearse -queue -h does not list -%s", fl.Name)
		}
	})
	if n < 18 {
		t.Errorf("%d flags visited; want every flag of rehearse -queue", n)
	}
}
