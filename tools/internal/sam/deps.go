package sam

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Dependency is one edge of a template's dependency graph: From cannot be created
// before To, because of Why (the property that names To, or the SAM rule that adds the
// edge).
type Dependency struct {
	From, To, Why string
}

// String is "From → To (Why)".
func (d Dependency) String() string { return d.From + " → " + d.To + " (" + d.Why + ")" }

// Nodes of the graph that are not logical ids of the template: the alias SAM makes for
// a function with AutoPublishAlias ("<Function>.Alias", SAM's own name for it in
// Ref), and SAM's implicit APIs.
const (
	aliasSuffix     = ".Alias"
	implicitHTTPAPI = "ServerlessHttpApi"
	implicitRestAPI = "ServerlessRestApi"
)

// pollerEvents are the event types for which SAM adds to the function's own role an
// inline policy naming the event's source (broker, cluster, secret), so the function
// depends on what the event references. That is how aws-sam-translator 1.110
// translates them; for SQS, Kinesis, DynamoDB and MSK events it attaches an AWS managed policy
// (AWSLambdaSQSQueueExecutionRole, …) that names no resource of the template.
var pollerEvents = []string{"MQ", "DocumentDB", "SelfManagedKafka"}

// Dependencies returns the dependency graph of the template as CloudFormation builds it
// after the SAM transform, read from the template as written (intrinsic functions
// unresolved), sorted. An edge comes from:
//
//   - a Ref, a Fn::GetAtt, or a ${Name} or ${Name.Attribute} of a Fn::Sub (the list
//     form's own variables excepted, its variable values read) anywhere in a
//     resource's Properties, both branches of a Fn::If included; and DependsOn;
//   - Globals: Globals.Function's references belong to every AWS::Serverless::Function,
//     Globals.HttpApi's to every AWS::Serverless::HttpApi, Globals.Api's to every
//     AWS::Serverless::Api;
//   - the SAM transform (AWS SAM specification, "Generated AWS CloudFormation
//     resources"): an HttpApi or Api event adds a route integrating the function to
//     the API, so the API depends on the function, or on its alias when it has
//     AutoPublishAlias, and the alias on its DeploymentPreference's Alarms, Hooks and
//     Role (the alias's update policy names the CodeDeploy deployment group, which
//     names them); any other event becomes a resource of its own, logical id
//     <Function><Event>, depending on the function (or alias) and on what the event
//     references; an MQ, DocumentDB or SelfManagedKafka event also adds what it
//     references to the function's role (see pollerEvents). A function's own events
//     never make it depend on its API.
//
// A reference to a parameter, a pseudo parameter or a Fn::Sub variable is no edge.
// Nodes are logical ids, <Function>.Alias for an alias, ServerlessHttpApi and
// ServerlessRestApi for SAM's implicit APIs, <Function>Role for the execution role SAM
// generates for a function that names no Role (its Policies and the other
// roleProperties are its edges; the function depends on it); a reference to another
// resource SAM generates is resolved to the node that makes it (<Function><Event>,
// <Function>Alias<alias>). Errors: a reference to nothing of the template, or an
// intrinsic function of the wrong shape.
func (t *Template) Dependencies() ([]Dependency, error) {
	g := &graph{
		resources:  asMap(t.source["Resources"]),
		parameters: asMap(t.source["Parameters"]),
		seen:       map[[2]string]bool{},
	}
	g.generated = g.generatedNames()
	globals := asMap(t.source["Globals"])
	for _, id := range slices.Sorted(maps.Keys(g.resources)) {
		res := asMap(g.resources[id])
		props := asMap(res["Properties"])
		g.dependsOn(id, res["DependsOn"])
		switch res["Type"] {
		case "AWS::Serverless::Function":
			g.function(id, props, asMap(globals["Function"]))
		case "AWS::Serverless::HttpApi":
			g.walk(id, "Globals.HttpApi", globals["HttpApi"])
			g.walk(id, "Properties", props)
		case "AWS::Serverless::Api":
			g.walk(id, "Globals.Api", globals["Api"])
			g.walk(id, "Properties", props)
		default:
			g.walk(id, "Properties", props)
		}
	}
	if len(g.errs) > 0 {
		return nil, errors.Join(g.errs...)
	}
	slices.SortFunc(g.edges, func(a, b Dependency) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Why, b.Why))
	})
	return g.edges, nil
}

// CheckDependencies returns an error naming every dependency cycle of the template
// (CloudFormation refuses a template with one: "Circular dependency between
// resources"), one cycle per strongly connected part, each as the edges that make it
// with why each exists; nil when there is none. See Dependencies for the graph.
func (t *Template) CheckDependencies() error {
	edges, err := t.Dependencies()
	if err != nil {
		return err
	}
	var msgs []string
	for _, cycle := range cycles(edges) {
		parts := make([]string, len(cycle))
		for i, d := range cycle {
			parts[i] = d.String()
		}
		msgs = append(msgs, "dependency cycle: "+strings.Join(parts, ", "))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

// graph collects the edges of one template.
type graph struct {
	resources, parameters map[string]any
	generated             map[string]string // a SAM-generated logical id → its node
	edges                 []Dependency
	seen                  map[[2]string]bool
	errs                  []error
}

// generatedNames maps the logical ids SAM generates for each function, which other
// resources may name, to the node that stands for them.
func (g *graph) generatedNames() map[string]string {
	out := map[string]string{}
	for id, r := range g.resources {
		res := asMap(r)
		if res["Type"] != "AWS::Serverless::Function" {
			continue
		}
		props := asMap(res["Properties"])
		if props["Role"] == nil {
			out[id+"Role"] = id + "Role"
		}
		if alias, ok := props["AutoPublishAlias"].(string); ok {
			out[id+"Alias"+alias] = id + aliasSuffix
		}
		for name := range asMap(props["Events"]) {
			out[id+name] = id + name
		}
	}
	return out
}

func (g *graph) add(from, to, why string) {
	if g.seen[[2]string{from, to}] {
		return
	}
	g.seen[[2]string{from, to}] = true
	g.edges = append(g.edges, Dependency{From: from, To: to, Why: why})
}

func (g *graph) dependsOn(id string, v any) {
	switch v := v.(type) {
	case string:
		g.reference(id, v, "DependsOn")
	case []any:
		for _, name := range v {
			if s, ok := name.(string); ok {
				g.reference(id, s, "DependsOn")
			}
		}
	}
}

// roleProperties are the properties of an AWS::Serverless::Function that SAM turns into
// its generated execution role, <Function>Role (AWS SAM specification,
// "AWS::Serverless::Function": Policies, PermissionsBoundary, AssumeRolePolicyDocument
// and RolePath, and the policies it adds for a DeadLetterQueue and for
// EventInvokeConfig's destinations): what they name, the role depends on, and the
// function only through its role.
var roleProperties = []string{"Policies", "PermissionsBoundary", "AssumeRolePolicyDocument", "RolePath", "DeadLetterQueue", "EventInvokeConfig"}

// function adds the edges of an AWS::Serverless::Function id: its properties and
// Globals.Function's (events and deployment preference apart; the role's properties
// from its generated role, which the function depends on), its alias, its events.
func (g *graph) function(id string, props, globals map[string]any) {
	target, role := id, id
	if props["Role"] == nil {
		role = id + "Role"
		g.add(id, role, "the function's execution role, which SAM generates")
	}
	_, alias := props["AutoPublishAlias"].(string)
	if _, global := globals["AutoPublishAlias"].(string); alias || global {
		target = id + aliasSuffix
		g.add(target, id, "AutoPublishAlias: the alias points at a version of the function")
	}
	for _, src := range []struct {
		where string
		props map[string]any
	}{{"Globals.Function", globals}, {"Properties", props}} {
		for _, key := range slices.Sorted(maps.Keys(src.props)) {
			switch {
			case key == "Events":
			case key == "DeploymentPreference":
				// The CodeDeploy deployment group names the alarms, hooks and role;
				// the alias's update policy names the deployment group.
				g.walk(target, src.where+".DeploymentPreference", src.props[key])
			case slices.Contains(roleProperties, key):
				g.walk(role, src.where+"."+key, src.props[key])
			default:
				g.walk(id, src.where+"."+key, src.props[key])
			}
		}
	}
	g.events(id, target, role, asMap(props["Events"]))
}

// events adds the edges of function id's events: target is the function or its alias,
// role the node of its execution role.
func (g *graph) events(id, target, role string, events map[string]any) {
	for _, name := range slices.Sorted(maps.Keys(events)) {
		ev := asMap(events[name])
		typ, _ := ev["Type"].(string)
		evProps := asMap(ev["Properties"])
		why := fmt.Sprintf("%s event %s of %s", typ, name, id)
		switch typ {
		case "HttpApi", "Api":
			api := implicitHTTPAPI
			key := "ApiId"
			if typ == "Api" {
				api, key = implicitRestAPI, "RestApiId"
			}
			if ref, ok := evProps[key]; ok {
				names := g.names(ref)
				if len(names) != 1 {
					g.errs = append(g.errs, fmt.Errorf("%s: %s must be a Ref to one API", why, key))
					continue
				}
				api = names[0]
			}
			g.add(api, target, why+": the API's route integrates the function")
			rest := maps.Clone(evProps) // the Template stays as loaded
			delete(rest, key)
			g.walk(api, "Events."+name+".Properties of "+id, rest)
		default:
			node := id + name
			g.add(node, target, why+": SAM's "+node+" invokes the function")
			g.walk(node, "Events."+name+".Properties", evProps)
			if slices.Contains(pollerEvents, typ) {
				g.walk(role, "Events."+name+".Properties (the role's polling policy)", evProps)
			}
		}
	}
}

// names returns the resource names v references directly (a Ref or a Fn::GetAtt).
func (g *graph) names(v any) []string {
	m := asMap(v)
	if ref, ok := m["Ref"].(string); ok && len(m) == 1 {
		return []string{ref}
	}
	if id, _, ok := getAttTarget(m["Fn::GetAtt"]); ok && len(m) == 1 {
		return []string{id}
	}
	return nil
}

// walk adds an edge from id to every resource v references; path says where, for
// Why.
func (g *graph) walk(id, path string, v any) {
	switch v := v.(type) {
	case []any:
		for i, item := range v {
			g.walk(id, fmt.Sprintf("%s[%d]", path, i), item)
		}
	case map[string]any:
		if len(v) == 1 {
			for fn, arg := range v {
				if g.intrinsic(id, path, fn, arg) {
					return
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			g.walk(id, path+"."+k, v[k])
		}
	}
}

// intrinsic adds the edges of {fn: arg} when fn is Ref, Fn::GetAtt or Fn::Sub and
// reports whether it was one of them.
func (g *graph) intrinsic(id, path, fn string, arg any) bool {
	switch fn {
	case "Ref":
		name, ok := arg.(string)
		if !ok {
			g.errs = append(g.errs, fmt.Errorf("%s %s: Ref of %T", id, path, arg))
			return true
		}
		g.reference(id, name, path)
	case "Fn::GetAtt":
		name, _, ok := getAttTarget(arg)
		if !ok {
			g.errs = append(g.errs, fmt.Errorf("%s %s: Fn::GetAtt of %v", id, path, arg))
			return true
		}
		g.reference(id, name, path)
	case "Fn::Sub":
		text, vars, ok := subArguments(arg)
		if !ok {
			g.errs = append(g.errs, fmt.Errorf("%s %s: Fn::Sub of %v", id, path, arg))
			return true
		}
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			g.walk(id, path+"."+name, vars[name])
		}
		for _, m := range subVariable.FindAllStringSubmatch(text, -1) {
			name := m[1]
			if strings.HasPrefix(name, "!") {
				continue
			}
			if _, isVar := vars[name]; isVar {
				continue
			}
			resource, _, _ := strings.Cut(name, ".")
			g.reference(id, resource, path)
		}
	default:
		return false
	}
	return true
}

// reference adds the edge id → the node name stands for; a parameter or pseudo
// parameter is none, anything unknown an error.
func (g *graph) reference(id, name, path string) {
	if _, pseudo := pseudoParameter(name); pseudo {
		return
	}
	if _, ok := g.parameters[name]; ok {
		return
	}
	node := name
	switch {
	case g.resources[name] != nil:
	case strings.HasSuffix(name, aliasSuffix) && g.resources[strings.TrimSuffix(name, aliasSuffix)] != nil:
	case g.generated[name] != "":
		node = g.generated[name]
	case name == implicitHTTPAPI || name == implicitRestAPI:
	default:
		g.errs = append(g.errs, fmt.Errorf("%s %s: %s names no parameter or resource", id, path, name))
		return
	}
	g.add(id, node, path)
}

// cycles returns one cycle of each strongly connected part of edges that has one (a
// part of two or more nodes, or a node depending on itself), as its edges in order,
// starting at the part's smallest node; parts in order of their smallest node.
func cycles(edges []Dependency) [][]Dependency {
	out := map[string][]Dependency{}
	adj := bySource(edges)
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = len(index), len(index)
		stack = append(stack, n)
		onStack[n] = true
		for _, d := range adj[n] {
			if _, seen := index[d.To]; !seen {
				visit(d.To)
				low[n] = min(low[n], low[d.To])
			} else if onStack[d.To] {
				low[n] = min(low[n], index[d.To])
			}
		}
		if low[n] != index[n] {
			return
		}
		part := map[string]bool{}
		for {
			m := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[m] = false
			part[m] = true
			if m == n {
				break
			}
		}
		start := slices.Min(slices.Collect(maps.Keys(part)))
		if c := cycleIn(adj, part, start); c != nil {
			out[start] = c
		}
	}
	for _, n := range slices.Sorted(maps.Keys(adj)) {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	var all [][]Dependency
	for _, start := range slices.Sorted(maps.Keys(out)) {
		all = append(all, out[start])
	}
	return all
}

// bySource is edges by From, each list sorted by To; every node is a key.
func bySource(edges []Dependency) map[string][]Dependency {
	adj := map[string][]Dependency{}
	for _, d := range edges {
		adj[d.From] = append(adj[d.From], d)
		if _, ok := adj[d.To]; !ok {
			adj[d.To] = nil
		}
	}
	for _, list := range adj {
		slices.SortFunc(list, func(a, b Dependency) int { return cmp.Compare(a.To, b.To) })
	}
	return adj
}

// cycleIn returns the shortest cycle through start inside part (a strongly connected
// part of adj), by breadth-first search, or nil when part is one node without an edge
// to itself.
func cycleIn(adj map[string][]Dependency, part map[string]bool, start string) []Dependency {
	via := map[string]Dependency{}
	queue := []string{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, d := range adj[n] {
			if !part[d.To] {
				continue
			}
			if d.To == start {
				path := []Dependency{d}
				for m := n; m != start; m = via[m].From {
					path = append(path, via[m])
				}
				slices.Reverse(path)
				return path
			}
			if _, seen := via[d.To]; !seen {
				via[d.To] = d
				queue = append(queue, d.To)
			}
		}
	}
	return nil
}
