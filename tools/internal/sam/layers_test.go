package sam_test

import (
	"strings"
	"testing"
)

// layers places every serving package of the service module (under internal/, by its
// path there) in the house, from the ground up: a package imports only from its own
// layer or below, so no import runs back up.
//
//	0 the domain and what any code may use: no package of the service's own below it
//	1 adapters: the store, the clients of outside services, queues, the HTTP API's shell
//	2 capabilities: what the functions do, each on its own (none imports another)
//	3 wiring: per-function configuration and build, start-up
//
// A package missing from the table fails the test: place it when you add it.
var layers = map[string]int{
	"inventory": 0, "clock": 0, "metric": 0, "envvar": 0, "lambdaevent": 0, "buildinfo": 0,
	"origin": 0, "idtoken": 0, "xray": 0,

	"dynamo": 1, "wechatpay": 1, "wxapi": 1, "wxlogin": 1, "teamchat": 1, "closeq": 1,
	"wxqueue": 1, "httpapi": 1, "notify": 1, "secret": 1, "idtoken/kmssign": 1,
	"admission": 1,

	"orders": 2, "payments": 2, "refunds": 2, "shipping": 2, "notices": 2, "stock": 2,
	"reconcile": 2, "login": 2, "alertchat": 2, "stockctl": 2, "stockctl/plan": 2,
	"waitroom": 2, "admitter": 2, "waitlist": 2,

	"wiring": 3, "coldstart": 3,
}

// layerOf is the layer of the service package at path rel under internal/ (wiring's
// subpackages are wiring); false for test helpers and stand-ins (internal/testing/...,
// packages named like httptest), which the test leaves out.
func layerOf(rel string) (int, bool, bool) {
	if strings.HasPrefix(rel, "testing/") || strings.HasSuffix(rel, "test") {
		return 0, false, true
	}
	if strings.HasPrefix(rel, "wiring/") {
		return 3, true, true
	}
	l, ok := layers[rel]
	return l, ok, false
}

// The layers hold: no serving package imports one of a higher layer, no capability
// imports another (stockctl and its planner aside), the domain imports no package of
// the service's, and only the store itself and the wiring (its per-function packages
// included) import the store: every other package sees it through the capability
// interfaces it declares, in the domain's types (issue 34). Tests may import what
// they like.
func TestWiring_NoImportRunsBackUp(t *testing.T) {
	module := serviceModule(t)
	out := run(t, nil, "go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, "./...")
	internal := module + "/internal/"
	checked := 0
	for line := range strings.Lines(out) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), "|")
		rel, serving := strings.CutPrefix(pkg, internal)
		from, known, skip := layerOf(rel)
		switch {
		case serving && skip:
			continue
		case serving && !known:
			t.Errorf("internal/%s has no layer: place it in layers", rel)
			continue
		case !serving:
			from = 4 // the mains: functions/*, cmd/*
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			to, ok := strings.CutPrefix(imp, internal)
			if !ok {
				continue
			}
			if to == "dynamo" && from != 4 && rel != "wiring" && !strings.HasPrefix(rel, "wiring/") {
				t.Errorf("%s imports internal/dynamo: only the wiring may (capabilities name what they need as interfaces in the domain's types)", pkg)
			}
			if to == "dynamo" && from == 4 {
				t.Errorf("%s imports internal/dynamo: a main opens its store through its function's wiring package", pkg)
			}
			l, known, skip := layerOf(to)
			if skip || !known {
				continue
			}
			switch {
			case l > from:
				t.Errorf("%s (layer %d) imports internal/%s (layer %d): an import runs back up", pkg, from, to, l)
			case l == from && from == 0:
				t.Errorf("%s imports internal/%s: the domain and the basics import nothing of the service's", pkg, to)
			case l == from && from == 2 && !(rel == "stockctl" && to == "stockctl/plan"):
				t.Errorf("%s imports internal/%s: capabilities stand apart", pkg, to)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d packages checked", checked)
	}
}
