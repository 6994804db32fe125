package sam

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// The real template has no dependency cycle, so CloudFormation can create it. (cfn-lint's
// E3004 checks the same on the transformed template; this test needs no Python.)
func TestCheckDependencies_TemplateHasNoCycle(t *testing.T) {
	tpl, err := Load(filepath.Join(testkit.ModuleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tpl.CheckDependencies(); err != nil {
		t.Error(err)
	}
}

// Each fixture under testdata/invalid/cycle_* has one cycle, which CheckDependencies
// names edge by edge (cfn-lint reports E3004 for each of them too).
func TestCheckDependencies_NamesEachCycle(t *testing.T) {
	tests := []struct{ fixture, want string }{
		{"cycle_notify_url.yaml", "dependency cycle: " +
			"CloseOrderFunction → HttpApi (Properties.Environment.Variables.NOTIFY_URL), " +
			"HttpApi → CloseOrderFunction (HttpApi event PayOrder of CloseOrderFunction: the API's route integrates the function)"},
		{"cycle_token_issuer.yaml", "dependency cycle: " +
			"IssuerApi → JwksFunction (HttpApi event Discovery of JwksFunction: the API's route integrates the function), " +
			"JwksFunction → IssuerApi (Properties.Environment.Variables.TOKEN_ISSUER.Api)"},
		{"cycle_deployment_alarm.yaml", "dependency cycle: " +
			"ApiErrorsAlarm → HttpApi (Properties.Dimensions[0].Value), " +
			"HttpApi → CreateOrderFunction.Alias (HttpApi event CreateOrder of CreateOrderFunction: the API's route integrates the function), " +
			"CreateOrderFunction.Alias → ApiErrorsAlarm (Properties.DeploymentPreference.Alarms[0])"},
		{"cycle_mq_poller.yaml", "dependency cycle: " +
			"BrokerSecret → Worker (Properties.Description), " +
			"Worker → WorkerRole (the function's execution role, which SAM generates), " +
			"WorkerRole → BrokerSecret (Events.Orders.Properties (the role's polling policy).SourceAccessConfigurations[0].URI)"},
		{"cycle_key_policy_role.yaml", "dependency cycle: " +
			"SignerRole → SigningKey (Properties.Policies[0].Statement[0].Resource), " +
			"SigningKey → SignerRole (Properties.KeyPolicy.Statement[0].Principal.AWS)"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".yaml"), func(t *testing.T) {
			tpl := load(t, filepath.Join("invalid", tt.fixture))
			for range 2 { // the same answer every time: the Template is read-only
				err := tpl.CheckDependencies()
				if err == nil || err.Error() != tt.want {
					t.Errorf("CheckDependencies:\n got %v\nwant %s", err, tt.want)
				}
			}
		})
	}
}

// What SAM does not make a dependency is none here either: a function's own events,
// an SQS event's queue (SAM gives the role a managed policy naming no queue), a
// Fn::Sub list form's variables, parameters and pseudo parameters. The function
// depends on the execution role SAM generates for it.
func TestDependencies_FollowSAMNotGuesses(t *testing.T) {
	tpl := load(t, "sqs_queue_names_function.yaml")
	edges, err := tpl.Dependencies()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range edges {
		got = append(got, e.From+"→"+e.To)
	}
	want := []string{"WorkQueue→Worker", "Worker→WorkerRole", "WorkerWork→WorkQueue", "WorkerWork→Worker"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("edges %v, want %v", got, want)
	}
	if err := tpl.CheckDependencies(); err != nil {
		t.Error(err)
	}
}
