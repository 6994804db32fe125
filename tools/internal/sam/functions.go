package sam

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/goformation/v7/cloudformation/global"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
)

// Lambda's defaults for properties neither the function nor Globals sets
// (Lambda API reference, CreateFunction).
const (
	defaultTimeoutSeconds = 3
	defaultMemoryMB       = 128
	defaultArchitecture   = "x86_64"
)

// Function is the effective configuration of one AWS::Serverless::Function: its own
// properties merged with the template's Globals.Function the way SAM merges them
// (AWS SAM developer guide, "Globals section of the AWS SAM template"): a scalar set
// on the function wins, maps (Environment.Variables) are merged with the function's
// keys winning, and lists (Architectures) are the Globals entries followed by the
// function's. goformation parses Globals but does not apply them; this package does.
type Function struct {
	// Name is the logical id.
	Name string
	// Runtime is the Lambda runtime identifier, e.g. provided.al2023.
	Runtime string
	// Architectures are the instruction set architectures, e.g. [arm64]; [x86_64]
	// (Lambda's default) when neither the function nor Globals sets them.
	Architectures []string
	// Handler is the handler name; for OS-only runtimes the executable, bootstrap.
	Handler string
	// CodeURI is the CodeUri property when it is a path ("" when it is an S3 location).
	CodeURI string
	// BuildMethod is the resource's Metadata.BuildMethod, e.g. makefile (AWS SAM
	// developer guide, "Building custom runtimes").
	BuildMethod string
	// Timeout is the maximum run time of one invocation, in seconds (default 3).
	Timeout int
	// MemorySize is the memory of one instance, in MB (default 128).
	MemorySize int
	// Environment holds the environment variables the function is deployed with,
	// resolved to local values (table and queue names are logical ids).
	Environment map[string]string
	// Events are the function's event sources by type.
	Events Events
	// Policies are the function's Policies property.
	Policies Policies
	// ReservedConcurrency is ReservedConcurrentExecutions: the concurrency set aside
	// for the function, which is also its ceiling (Lambda Developer Guide,
	// "Configuring reserved concurrency for a function"); nil when unset (the function
	// draws on the account's unreserved concurrency).
	ReservedConcurrency *int
	// Tracing is the X-Ray tracing mode, Active or PassThrough; "" when neither the
	// function nor Globals sets it (Lambda's default, PassThrough).
	Tracing string
	// LogFormat and LogGroup are LoggingConfig's (Lambda's advanced logging controls),
	// merged with Globals' as SAM merges maps: LogFormat Text or JSON ("" for Lambda's
	// default, Text), LogGroup the log group's name (a Ref to a log group of the
	// template resolves to its logical id; "" for Lambda's default,
	// /aws/lambda/<function name>).
	LogFormat, LogGroup string
	// AutoPublishAlias names the alias SAM publishes each new version under; "" for
	// none.
	AutoPublishAlias string
	// DeploymentPreference is how a new version replaces the old one (SAM
	// DeploymentPreference); nil for all at once.
	DeploymentPreference *DeploymentPreference
	// EventInvoke is how Lambda retries the function's asynchronous invocations and
	// where it sends the ones that fail (SAM EventInvokeConfig); nil when unset
	// (Lambda's defaults: 2 retries, 6 hours, no destination).
	EventInvoke *EventInvoke
}

// EventInvoke is a function's asynchronous invocation configuration (AWS Lambda
// Developer Guide, "Error handling and automatic retries in Lambda" and "Capturing
// records of Lambda asynchronous invocations").
type EventInvoke struct {
	// MaximumRetryAttempts (0 to 2) and MaximumEventAgeInSeconds (60 to 21,600); -1
	// when unset (Lambda's defaults, 2 and 21,600).
	MaximumRetryAttempts, MaximumEventAgeInSeconds int
	// OnFailure is the local name of the queue the on-failure destination names (Type
	// SQS, a queue of the template); "" for none.
	OnFailure string
}

// DeploymentPreference is a function's gradual deployment through CodeDeploy (AWS SAM
// developer guide, "Deploying serverless applications gradually with AWS SAM").
type DeploymentPreference struct {
	// Type is the traffic-shifting configuration, e.g. Canary10Percent5Minutes,
	// Linear10PercentEvery1Minute or AllAtOnce.
	Type string
	// Alarms are the alarms (logical ids) that roll the deployment back when they fire.
	Alarms []string
}

// Functions returns every AWS::Serverless::Function of the template with Globals
// applied, sorted by Name. It returns an error naming the function and event when an
// event or policy cannot be decoded, or an SQS event's Queue is not the ARN of a queue
// in the template.
func (t *Template) Functions() ([]Function, error) {
	globals, err := t.globalFunction()
	if err != nil {
		return nil, err
	}
	return inIDOrder("function", t.cf.GetAllServerlessFunctionResources(), func(id string, f *serverless.Function) (Function, error) {
		return t.function(id, f, globals)
	})
}

// globalFunction returns Globals.Function, empty when the template has none.
func (t *Template) globalFunction() (*global.Function, error) {
	if _, ok := t.cf.Globals["Function"]; !ok {
		return &global.Function{}, nil
	}
	g, err := t.cf.GetServerlessGlobalFunction()
	if err != nil {
		return nil, fmt.Errorf("Globals.Function: %w", err)
	}
	return g, nil
}

func (t *Template) function(id string, f *serverless.Function, g *global.Function) (Function, error) {
	var err error
	fn := Function{
		Name:                id,
		Runtime:             first(f.Runtime, g.Runtime),
		Handler:             first(f.Handler, g.Handler),
		CodeURI:             codeURI(f.CodeUri, g.CodeUri),
		Timeout:             firstInt(defaultTimeoutSeconds, f.Timeout, g.Timeout),
		MemorySize:          firstInt(defaultMemoryMB, f.MemorySize, g.MemorySize),
		Architectures:       architectures(f.Architectures, g.Architectures),
		Environment:         environment(f.Environment, g.Environment),
		Tracing:             first(f.Tracing, g.Tracing),
		AutoPublishAlias:    first(f.AutoPublishAlias, g.AutoPublishAlias),
		ReservedConcurrency: f.ReservedConcurrentExecutions,
	}
	fn.BuildMethod, _ = f.AWSCloudFormationMetadata["BuildMethod"].(string)
	if d := cmp.Or(f.DeploymentPreference, g.DeploymentPreference); d != nil {
		fn.DeploymentPreference = &DeploymentPreference{Type: aws.ToString(d.Type), Alarms: d.Alarms}
	}
	var raw struct {
		Events            map[string]rawEvent
		Policies          any
		LoggingConfig     struct{ LogFormat, LogGroup string }
		EventInvokeConfig *rawEventInvoke
	}
	if err := json.Unmarshal(t.resources[id].Properties, &raw); err != nil {
		return Function{}, fmt.Errorf("decode properties: %w", err)
	}
	if fn.EventInvoke, err = raw.EventInvokeConfig.decode(); err != nil {
		return Function{}, fmt.Errorf("EventInvokeConfig: %w", err)
	}
	var global struct {
		LoggingConfig struct{ LogFormat, LogGroup string }
	}
	if err := json.Unmarshal(t.globalFunctionJSON, &global); err != nil {
		return Function{}, fmt.Errorf("decode Globals.Function: %w", err)
	}
	fn.LogFormat = cmp.Or(raw.LoggingConfig.LogFormat, global.LoggingConfig.LogFormat)
	fn.LogGroup = cmp.Or(raw.LoggingConfig.LogGroup, global.LoggingConfig.LogGroup)
	if fn.Events, err = newEvents(raw.Events); err != nil {
		return Function{}, err
	}
	if fn.Policies, err = newPolicies(raw.Policies); err != nil {
		return Function{}, fmt.Errorf("Policies: %w", err)
	}
	return fn, nil
}

// first returns the first value that is set.
func first(values ...*string) string {
	for _, v := range values {
		if v != nil {
			return *v
		}
	}
	return ""
}

// firstInt returns the first value that is set, or def.
func firstInt(def int, values ...*int) int {
	for _, v := range values {
		if v != nil {
			return *v
		}
	}
	return def
}

func codeURI(values ...*serverless.Function_CodeUri) string {
	for _, v := range values {
		if v != nil {
			return aws.ToString(v.String)
		}
	}
	return ""
}

func architectures(local []string, global *[]string) []string {
	var merged []string
	if global != nil {
		merged = append(merged, *global...)
	}
	merged = append(merged, local...)
	if len(merged) == 0 {
		return []string{defaultArchitecture}
	}
	return merged
}

func environment(local, global *serverless.Function_FunctionEnvironment) map[string]string {
	merged := map[string]string{}
	for _, env := range []*serverless.Function_FunctionEnvironment{global, local} {
		if env != nil {
			maps.Copy(merged, env.Variables)
		}
	}
	return merged
}

// rawEventInvoke is a function's EventInvokeConfig as the resolved template has it.
type rawEventInvoke struct {
	MaximumRetryAttempts     *int
	MaximumEventAgeInSeconds *int
	DestinationConfig        struct {
		OnFailure struct{ Type, Destination string }
	}
}

// decode reads e, nil for none. An SQS on-failure destination must name a queue of
// the template.
func (e *rawEventInvoke) decode() (*EventInvoke, error) {
	if e == nil {
		return nil, nil
	}
	out := &EventInvoke{MaximumRetryAttempts: firstInt(-1, e.MaximumRetryAttempts), MaximumEventAgeInSeconds: firstInt(-1, e.MaximumEventAgeInSeconds)}
	if f := e.DestinationConfig.OnFailure; f.Type == "SQS" {
		queue, ok := queueFromARN(f.Destination)
		if !ok {
			return nil, fmt.Errorf("OnFailure.Destination %q is not the ARN of a queue in this template", f.Destination)
		}
		out.OnFailure = queue
	}
	return out, nil
}
