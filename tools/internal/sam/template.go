// Package sam reads the project's AWS SAM template (template.yaml) with
// github.com/awslabs/goformation/v7 and answers what the local stack and the wiring
// tests need from it: the DynamoDB tables and SQS queues to create, the HTTP routes and
// the function behind each, and each function's effective configuration.
//
// # Local names
//
// Locally every resource is named by its logical id: the table declared as SkusTable is
// the DynamoDB table "SkusTable", whatever TableName or QueueName property the template
// sets (a FIFO queue gets the ".fifo" suffix SQS requires, see [Queue]). Intrinsic
// functions are resolved to match, in the fixed local region [Region] and account
// [AccountID]:
//
//   - Ref to a resource → its local name (the logical id). This differs from AWS for
//     queues, where Ref is the queue URL; the local SQS endpoint accepts a queue name
//     wherever it takes a URL's last path segment.
//   - Ref to a parameter → the value given to [LoadWithParameters], else its Default,
//     else "". Number parameters resolve to numbers, List<…> and CommaDelimitedList
//     parameters to lists of strings, all others to strings.
//   - Ref to a pseudo parameter → AWS::Region [Region], AWS::AccountId [AccountID],
//     AWS::Partition "aws", AWS::URLSuffix "amazonaws.com", AWS::StackName [StackName],
//     AWS::NoValue removes the property (or the list item).
//   - Fn::GetAtt → a deterministic local value, see [Template] for the table.
//   - A resource SAM generates for a function's Schedule (ScheduleV2) event, named
//     <Function><Event>, is an AWS::Events::Rule (AWS::Scheduler::Schedule) of that
//     logical id for Ref and Fn::GetAtt.
//   - Fn::Sub → the string with each ${Name} and ${Name.Attribute} replaced as above
//     (${!Literal} stays "${Literal}").
//
// Other intrinsic functions are left to goformation's own handlers.
//
// # Sources
//
// The meaning of each property follows the AWS SAM specification
// (https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/sam-specification.html)
// and the AWS CloudFormation resource reference
// (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-template-resource-type-ref.html).
package sam

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// Local identity of the resources: the region and account every local ARN and URL names.
const (
	// Region is the AWS region of every local ARN and queue URL, and the value of
	// Ref AWS::Region.
	Region = "us-east-1"
	// AccountID is the 12-digit AWS account of every local ARN and queue URL, and the
	// value of Ref AWS::AccountId.
	AccountID = "000000000000"
	// StackName is the value of Ref AWS::StackName.
	StackName = "stockguard-local"
)

// Template is a parsed SAM template with its intrinsic functions resolved to local
// values. Fn::GetAtt resolves as follows (any other attribute is an error from Load):
//
//	AWS::DynamoDB::Table                  Arn        arn:aws:dynamodb:<Region>:<AccountID>:table/<LogicalId>
//	                                      StreamArn  arn:aws:dynamodb:<Region>:<AccountID>:table/<LogicalId>/stream/local
//	AWS::SQS::Queue                       Arn        arn:aws:sqs:<Region>:<AccountID>:<QueueName>
//	                                      QueueName  <QueueName> (the logical id, plus ".fifo" for a FIFO queue)
//	                                      QueueUrl   https://sqs.<Region>.amazonaws.com/<AccountID>/<QueueName>
//	AWS::Serverless::Function,
//	AWS::Lambda::Function                 Arn        arn:aws:lambda:<Region>:<AccountID>:function:<LogicalId>
//	AWS::IAM::Role                        Arn        arn:aws:iam::<AccountID>:role/<LogicalId>
//	AWS::SNS::Topic                       TopicArn   arn:aws:sns:<Region>:<AccountID>:<LogicalId>
//	AWS::Events::Rule                     Arn        arn:aws:events:<Region>:<AccountID>:rule/<LogicalId>
//	AWS::Scheduler::Schedule              Arn        arn:aws:scheduler:<Region>:<AccountID>:schedule/default/<LogicalId>
//	AWS::Logs::LogGroup                   Arn        arn:aws:logs:<Region>:<AccountID>:log-group:<LogicalId>:*
//
// The QueueUrl host is a placeholder: only its last path segment, the queue name, means
// anything locally. A Template is read-only after Load and safe for concurrent use.
type Template struct {
	cf *cloudformation.Template
	// resources holds each resource's resolved JSON for the parts goformation models
	// lossily (function events and policies), keyed by logical id.
	resources map[string]rawResource
	// source is the template as written, intrinsic functions unresolved (short forms
	// turned into long ones), for Dependencies.
	source map[string]any
	// globalFunctionJSON is the resolved Globals.Function ("null" when absent), for
	// what goformation's global.Function lacks (LoggingConfig).
	globalFunctionJSON json.RawMessage
}

// rawResource is one entry of the resolved template's Resources section.
type rawResource struct {
	Type       string
	Properties json.RawMessage
}

// goformationYAML serialises calls into goformation's YAML front end.
// intrinsics.ProcessYAML (goformation v7.14.9, intrinsics/tags.go) writes its short-form
// tag handlers into a package-level map on every call, so two concurrent calls race.
// The mutex holds no data of this package.
var goformationYAML sync.Mutex

// Load parses the SAM template at path (YAML, or JSON when the name ends in .json) and
// resolves its intrinsic functions to local values as described in the package
// documentation, with every parameter at its Default.
//
// It returns an error, wrapped with the path, when the file cannot be read, is not a
// template goformation can parse (goformation rejects properties its generated schema
// does not know and this package does not read, e.g. a function's RecursiveLoop), or uses a
// Ref or Fn::GetAtt that names nothing in the template or an attribute listed nowhere in
// [Template].
func Load(path string) (*Template, error) {
	return LoadWithParameters(path, nil)
}

// LoadWithParameters is [Load] with parameter values: values maps a parameter name to
// the value Ref resolves to instead of its Default, as `sam deploy
// --parameter-overrides` would. Naming a parameter the template does not declare is an
// error.
func LoadWithParameters(path string, values map[string]string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load template %s: %w", path, err)
	}
	t, err := parse(data, values, isJSON(path))
	if err != nil {
		return nil, fmt.Errorf("load template %s: %w", path, err)
	}
	return t, nil
}

// isJSON reports whether path names a JSON template, by the rule goformation.Open uses.
func isJSON(path string) bool {
	return strings.HasSuffix(path, ".json")
}

// parse resolves the intrinsic functions of a template's source, normalises what
// CloudFormation would coerce, and decodes the result with goformation.
func parse(source []byte, values map[string]string, sourceIsJSON bool) (*Template, error) {
	unresolved, err := processIntrinsics(source, &intrinsics.ProcessorOptions{NoProcess: true}, sourceIsJSON)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	var written map[string]any
	if err := json.Unmarshal(unresolved, &written); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	unconditional, conditions, err := withoutResourceConditions(unresolved)
	if err != nil {
		return nil, err
	}
	resolved, err := resolveIntrinsics(unconditional, values, true)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(resolved, &doc); err != nil {
		return nil, fmt.Errorf("decode resolved template: %w", err)
	}
	if err := dropFalseResources(doc, conditions); err != nil {
		return nil, err
	}
	dropNoValueItems(doc)
	if err := stringifyEnvironments(doc); err != nil {
		return nil, err
	}
	normalised, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode resolved template: %w", err)
	}
	var sections struct {
		Resources map[string]rawResource
		Globals   struct{ Function json.RawMessage }
	}
	if err := json.Unmarshal(normalised, &sections); err != nil {
		return nil, fmt.Errorf("decode resources: %w", err)
	}
	if normalised, err = withoutUnmodelled(doc); err != nil {
		return nil, err
	}
	cf, err := goformation.ParseJSONWithOptions(normalised, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		return nil, fmt.Errorf("decode template with goformation: %w", err)
	}
	if err := checkParameterNames(cf, values); err != nil {
		return nil, err
	}
	globalFunction := sections.Globals.Function
	if globalFunction == nil {
		globalFunction = json.RawMessage("null")
	}
	return &Template{cf: cf, resources: sections.Resources, source: written, globalFunctionJSON: globalFunction}, nil
}

// withoutResourceConditions returns the template (JSON, intrinsic functions
// unresolved) without its resources' Condition attributes, and each conditional
// resource's condition name. goformation v7.14.9's processor (intrinsics.search)
// replaces any object with a "Condition" key by that condition's value, so a
// conditional resource would become a bare true or false.
func withoutResourceConditions(unresolved []byte) ([]byte, map[string]string, error) {
	var doc map[string]any
	if err := json.Unmarshal(unresolved, &doc); err != nil {
		return nil, nil, fmt.Errorf("decode template: %w", err)
	}
	conditions := map[string]string{}
	for id, r := range asMap(doc["Resources"]) {
		res := asMap(r)
		if c, ok := res["Condition"]; ok {
			name, isName := c.(string)
			if !isName {
				return nil, nil, fmt.Errorf("resource %s: Condition must name a condition", id)
			}
			conditions[id] = name
			delete(res, "Condition")
		}
	}
	out, err := json.Marshal(doc)
	return out, conditions, err
}

// dropFalseResources removes from doc (resolved, its Conditions evaluated to true or
// false) each resource whose condition is false, as CloudFormation creates none of
// them. An error names a condition that is not in Conditions.
func dropFalseResources(doc map[string]any, conditions map[string]string) error {
	evaluated := asMap(doc["Conditions"])
	for id, name := range conditions {
		value, ok := evaluated[name].(bool)
		if !ok {
			return fmt.Errorf("resource %s: condition %s is not a condition of the template", id, name)
		}
		if !value {
			delete(asMap(doc["Resources"]), id)
		}
	}
	return nil
}

// dropNoValueItems removes from every list of v the items that resolved to null: a Ref
// AWS::NoValue in a list removes that item, as a Fn::If choosing it for one of a
// policy's resources (CloudFormation User Guide, "Pseudo parameters reference").
func dropNoValueItems(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = dropNoValueItems(item)
		}
	case []any:
		kept := v[:0]
		for _, item := range v {
			if item != nil {
				kept = append(kept, dropNoValueItems(item))
			}
		}
		return kept
	}
	return v
}

// withoutUnmodelled encodes doc without the SAM properties goformation v7.14.9's
// schema lacks and would reject: an AWS::Serverless::HttpApi's Auth.EnableIamAuthorizer
// (SAM HttpApiAuth) and AccessLogSettings (which goformation spells AccessLogSetting),
// an AWS::Serverless::Function's LoggingConfig (Lambda's advanced logging
// controls) and ProvisionedConcurrencyConfig (whose ProvisionedConcurrentExecutions
// goformation types as a string, where CloudFormation's AWS::Lambda::Alias takes an
// integer; the local stack provisions nothing), and an AWS::DynamoDB::Table's WarmThroughput and its global secondary
// indexes' (pre-warming, which the local tables need not). They stay in the raw resources (see HTTPAPIs and Functions).
func withoutUnmodelled(doc map[string]any) ([]byte, error) {
	for _, r := range asMap(doc["Resources"]) {
		res := asMap(r)
		switch res["Type"] {
		case "AWS::Serverless::HttpApi":
			delete(asMap(asMap(res["Properties"])["Auth"]), "EnableIamAuthorizer")
			delete(asMap(res["Properties"]), "AccessLogSettings")
		case "AWS::Serverless::Function":
			delete(asMap(res["Properties"]), "LoggingConfig")
			delete(asMap(res["Properties"]), "ProvisionedConcurrencyConfig")
		case "AWS::DynamoDB::Table":
			delete(asMap(res["Properties"]), "WarmThroughput")
			if gsis, ok := asMap(res["Properties"])["GlobalSecondaryIndexes"].([]any); ok {
				for _, g := range gsis {
					delete(asMap(g), "WarmThroughput")
				}
			}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode resolved template: %w", err)
	}
	return out, nil
}

// resolveIntrinsics runs goformation's intrinsic processor with this package's Ref,
// Fn::GetAtt and Fn::Sub handlers and returns the resolved template as JSON.
func resolveIntrinsics(source []byte, values map[string]string, sourceIsJSON bool) ([]byte, error) {
	r := &resolver{values: values}
	options := &intrinsics.ProcessorOptions{IntrinsicHandlerOverrides: r.handlers(), EvaluateConditions: true}
	resolved, err := processIntrinsics(source, options, sourceIsJSON)
	if err != nil {
		return nil, fmt.Errorf("resolve intrinsic functions: %w", err)
	}
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("resolve intrinsic functions: %w", errors.Join(r.errs...))
	}
	return resolved, nil
}

// processIntrinsics runs goformation's intrinsic processor over a YAML or JSON
// template and returns it as JSON.
func processIntrinsics(source []byte, options *intrinsics.ProcessorOptions, sourceIsJSON bool) ([]byte, error) {
	if sourceIsJSON {
		return intrinsics.ProcessJSON(source, options)
	}
	goformationYAML.Lock()
	defer goformationYAML.Unlock()
	return intrinsics.ProcessYAML(source, options)
}

func checkParameterNames(cf *cloudformation.Template, values map[string]string) error {
	var unknown []string
	for name := range values {
		if _, ok := cf.Parameters[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("parameter values %q: no such parameter in the template", unknown)
	}
	return nil
}

// stringifyEnvironments turns the number and boolean values of every function's
// environment variables (and of Globals.Function's) into strings, as CloudFormation
// does for Lambda's string-only Environment.Variables; a null value (Ref AWS::NoValue)
// removes the variable.
func stringifyEnvironments(doc map[string]any) error {
	if err := stringifyVariables("Globals.Function", asMap(asMap(doc["Globals"])["Function"])); err != nil {
		return err
	}
	for id, res := range asMap(doc["Resources"]) {
		resource := asMap(res)
		if !isFunctionType(resource["Type"]) {
			continue
		}
		if err := stringifyVariables(id, asMap(resource["Properties"])); err != nil {
			return err
		}
	}
	return nil
}

func stringifyVariables(owner string, properties map[string]any) error {
	variables := asMap(asMap(properties["Environment"])["Variables"])
	for name, value := range variables {
		if value == nil {
			delete(variables, name)
			continue
		}
		s, err := scalarString(value)
		if err != nil {
			return fmt.Errorf("%s environment variable %s: %w", owner, name, err)
		}
		variables[name] = s
	}
	return nil
}

// isFunctionType reports whether a resource Type is a Lambda function, whose
// Environment.Variables Lambda receives as strings.
func isFunctionType(resourceType any) bool {
	return resourceType == "AWS::Serverless::Function" || resourceType == "AWS::Lambda::Function"
}

// asMap returns v as a JSON object, or nil when it is not one.
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// Parameters returns the template's parameters by name, with their constraints
// (AllowedPattern, AllowedValues, MinLength, MinValue, …) as written.
func (t *Template) Parameters() map[string]cloudformation.Parameter {
	return t.cf.Parameters
}

// ReservedParameter is the name of the template parameter the function's
// ReservedConcurrentExecutions refers to (a Ref, e.g. CloseOrderReserved for
// CloseOrderFunction), read from the template as written; "" when function (a logical
// id) reserves a number written in place, reserves nothing or is not in the template.
func (t *Template) ReservedParameter(function string) string {
	props := asMap(asMap(asMap(t.source["Resources"])[function])["Properties"])
	ref, _ := asMap(props["ReservedConcurrentExecutions"])["Ref"].(string)
	return ref
}

// inIDOrder returns build's value for each of resources (a template's resources of
// one type, by logical id) in the order of their logical ids. The first error stops
// it, wrapped with kind and the id, e.g. "table Orders: …".
func inIDOrder[R, T any](kind string, resources map[string]R, build func(id string, r R) (T, error)) ([]T, error) {
	out := make([]T, 0, len(resources))
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		v, err := build(id, resources[id])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, id, err)
		}
		out = append(out, v)
	}
	return out, nil
}
