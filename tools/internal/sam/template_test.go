package sam

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// load parses a fixture from testdata.
func load(t *testing.T, name string) *Template {
	t.Helper()
	tpl, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	return tpl
}

// functionNamed returns the function with the given logical id.
func functionNamed(t *testing.T, tpl *Template, name string) Function {
	t.Helper()
	functions, err := tpl.Functions()
	if err != nil {
		t.Fatalf("Functions: %v", err)
	}
	for _, f := range functions {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no function %s in %v", name, functions)
	return Function{}
}

// equalJSON fails the test when got and want encode to different JSON, printing both,
// which reads better than %v of structs full of pointers.
func equalJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatalf("encode %s: %v", what, err)
	}
	w, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatalf("encode wanted %s: %v", what, err)
	}
	if string(g) != string(w) {
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

func TestLoad_ResolvesIntrinsicsToLocalValues(t *testing.T) {
	env := functionNamed(t, load(t, "functions.yaml"), "CloseOrderFunction").Environment
	tests := []struct {
		variable, want string
	}{
		{"QUEUE_NAME", "CloseOrderQueue"},                                                 // GetAtt QueueName
		{"QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/000000000000/CloseOrderQueue"}, // GetAtt QueueUrl
		{"QUEUE_REF", "CloseOrderQueue"},                                                  // Ref to a resource
		{"PAYMENT_TIMEOUT_SECONDS", "900"},                                                // Ref to a Number parameter
		{"STAGE", "test"},                                                                 // Ref to a String parameter, in Globals
		{"ALARM_EMAIL", ""},                                                               // Ref to a parameter without Default
		{"MAX_LINES", "20"},                                                               // number literal
		{"DRY_RUN", "false"},                                                              // boolean literal
		{"PENDING_INDEX_ARN", "arn:aws:dynamodb:us-east-1:000000000000:table/OrdersTable/index/PendingByExpiry"}, // Sub with GetAtt Arn
		{"REGION_ACCOUNT", "us-east-1:000000000000"},                                                             // Sub with pseudo parameters
		{"LITERAL", "${NotAVariable}"},                                                                           // Sub escape
		{"NAMED", "close-test"},                                                                                  // Sub with a variable map
	}
	for _, tt := range tests {
		t.Run(tt.variable, func(t *testing.T) {
			got, ok := env[tt.variable]
			if !ok || got != tt.want {
				t.Errorf("%s = %q (set %v), want %q", tt.variable, got, ok, tt.want)
			}
		})
	}
	t.Run("NoValueRemovesTheVariable", func(t *testing.T) {
		if got, ok := env["REMOVED"]; ok {
			t.Errorf("REMOVED = %q, want it absent (Ref AWS::NoValue)", got)
		}
	})
}

func TestLoad_TypesNumberParametersForNumericProperties(t *testing.T) {
	tpl := load(t, "api.yaml")
	api, err := tpl.cf.GetServerlessHttpApiWithName("HttpApi")
	if err != nil {
		t.Fatal(err)
	}
	if s := api.DefaultRouteSettings; s == nil || s.ThrottlingBurstLimit == nil || *s.ThrottlingBurstLimit != 1000 {
		t.Errorf("DefaultRouteSettings = %+v, want ThrottlingBurstLimit 1000 from the Number parameter", s)
	}
}

func TestLoadWithParameters_OverridesDefaults(t *testing.T) {
	tpl, err := LoadWithParameters(filepath.Join("testdata", "functions.yaml"), map[string]string{
		"Stage":                 "prod",
		"PaymentTimeoutSeconds": "60",
		"AlarmEmail":            "ops@example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	env := functionNamed(t, tpl, "CloseOrderFunction").Environment
	for variable, want := range map[string]string{
		"STAGE":                   "prod",
		"NAMED":                   "close-prod",
		"PAYMENT_TIMEOUT_SECONDS": "60",
		"ALARM_EMAIL":             "ops@example.com",
	} {
		if env[variable] != want {
			t.Errorf("%s = %q, want %q", variable, env[variable], want)
		}
	}
}

func TestLoadWithParameters_RejectsUnknownParameter(t *testing.T) {
	_, err := LoadWithParameters(filepath.Join("testdata", "functions.yaml"), map[string]string{"Stgae": "prod"})
	if err == nil || !strings.Contains(err.Error(), "Stgae") {
		t.Errorf("err = %v, want an error naming the unknown parameter", err)
	}
}

// Each fixture under testdata/invalid is refused with an error saying why: by Load
// itself (naming the file), or by the reader that needs the broken part.
func TestTemplate_RejectsInvalidFixtures(t *testing.T) {
	queues := func(tpl *Template) error { _, err := tpl.Queues(); return err }
	routes := func(tpl *Template) error { _, err := tpl.Routes(); return err }
	tests := []struct {
		fixture string
		want    string
		read    func(*Template) error // nil: Load refuses the file
	}{
		{"ref_unknown.yaml", "Ref MissingTable: no parameter or resource", nil},
		{"getatt_unknown_attribute.yaml", "Fn::GetAtt SkusTable.LatestStreamLabel: no local value", nil},
		{"getatt_unknown_resource.yaml", "Fn::GetAtt MissingTable.Arn: no resource MissingTable", nil},
		{"sub_unknown_resource.yaml", "Fn::GetAtt MissingTable.Arn: no resource MissingTable", nil},
		// goformation decodes resources with DisallowUnknownFields.
		{"property_unknown_to_goformation.yaml", "RecursiveLoop", nil},
		{"redrive_cycle.yaml", "cycle: [FirstQueue SecondQueue]", queues},
		{"redrive_external.yaml", "queue WorkQueue: RedrivePolicy: deadLetterTargetArn \"arn:aws:sqs:eu-west-1:123456789012:elsewhere\" is not the ARN of a queue in this template", queues},
		{"redrive_no_count.yaml", "maxReceiveCount", queues},
		{"route_duplicate.yaml", "route GET /orders declared twice: FirstFunction.Get and SecondFunction.Get", routes},
		{"route_unknown_api.yaml", "function OnlyFunction event Get: ApiId OtherFunction is not an AWS::Serverless::HttpApi", routes},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".yaml"), func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", tt.fixture)
			tpl, err := Load(path)
			if tt.read != nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				err, path = tt.read(tpl), ""
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want it to name %q and contain %q", err, path, tt.want)
			}
		})
	}
}

func TestLoad_ReportsMissingFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "no-such-template.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestLoad_IsSafeForConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range cap(errs) {
		wg.Go(func() {
			_, err := Load(filepath.Join("testdata", "api.yaml"))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
