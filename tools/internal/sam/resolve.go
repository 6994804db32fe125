package sam

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/awslabs/goformation/v7/intrinsics"
)

// resolver holds the state of one template's intrinsic resolution: the parameter values
// chosen by the caller and the errors met on the way (goformation's handlers cannot
// return errors, so they are collected here and reported after processing).
type resolver struct {
	values map[string]string
	errs   []error
}

// handlers are the goformation intrinsic handler overrides of this resolver.
func (r *resolver) handlers() map[string]intrinsics.IntrinsicHandler {
	return map[string]intrinsics.IntrinsicHandler{
		"Ref":        r.ref,
		"Fn::GetAtt": r.getAtt,
		"Fn::Sub":    r.sub,
	}
}

func (r *resolver) fail(format string, args ...any) any {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
	return nil
}

// ref resolves {"Ref": name}; template is the whole unresolved template as decoded JSON.
func (r *resolver) ref(_ string, input, template any) any {
	name, ok := input.(string)
	if !ok {
		return r.fail("Ref: want a name, got %T", input)
	}
	if value, ok := pseudoParameter(name); ok {
		return value
	}
	sections := asMap(template)
	if parameter := asMap(asMap(sections["Parameters"])[name]); parameter != nil {
		return r.parameterValue(name, parameter)
	}
	if resource := resourceNamed(name, template); resource != nil {
		return localName(name, resource)
	}
	return r.fail("Ref %s: no parameter or resource of that name", name)
}

// pseudoParameter resolves the AWS pseudo parameters
// (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/pseudo-parameter-reference.html).
func pseudoParameter(name string) (any, bool) {
	switch name {
	case "AWS::Region":
		return Region, true
	case "AWS::AccountId":
		return AccountID, true
	case "AWS::Partition":
		return "aws", true
	case "AWS::URLSuffix":
		return "amazonaws.com", true
	case "AWS::StackName":
		return StackName, true
	case "AWS::StackId":
		return "arn:aws:cloudformation:" + Region + ":" + AccountID + ":stack/" + StackName + "/local", true
	case "AWS::NotificationARNs":
		return []any{}, true
	case "AWS::NoValue":
		return nil, true
	}
	return nil, false
}

// parameterValue is the value of a parameter (the caller's, else its Default, else "")
// typed as CloudFormation passes it: a number for Number, a list of strings for List<…>
// and CommaDelimitedList, otherwise a string.
func (r *resolver) parameterValue(name string, parameter map[string]any) any {
	var raw any = parameter["Default"]
	if value, given := r.values[name]; given {
		raw = value
	}
	if raw == nil {
		return ""
	}
	typ, _ := parameter["Type"].(string)
	switch {
	case typ == "Number":
		return r.number(name, raw)
	case typ == "CommaDelimitedList" || strings.HasPrefix(typ, "List<"):
		return r.list(name, raw)
	}
	s, err := scalarString(raw)
	if err != nil {
		return r.fail("parameter %s: %w", name, err)
	}
	return s
}

func (r *resolver) number(name string, raw any) any {
	switch v := raw.(type) {
	case float64:
		return v
	case string:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return r.fail("parameter %s: Number value %q: %w", name, v, err)
		}
		return n
	}
	return r.fail("parameter %s: Number value of type %T", name, raw)
}

func (r *resolver) list(name string, raw any) any {
	switch v := raw.(type) {
	case []any:
		return v
	case string:
		items := []any{}
		for _, item := range strings.Split(v, ",") {
			items = append(items, strings.TrimSpace(item))
		}
		return items
	}
	return r.fail("parameter %s: list value of type %T", name, raw)
}

// getAtt resolves {"Fn::GetAtt": "Name.Attribute"} and {"Fn::GetAtt": [Name, Attribute]}.
func (r *resolver) getAtt(_ string, input, template any) any {
	id, attribute, ok := getAttTarget(input)
	if !ok {
		return r.fail("Fn::GetAtt: want \"Name.Attribute\" or [Name, Attribute], got %v", input)
	}
	resource := resourceNamed(id, template)
	if resource == nil {
		return r.fail("Fn::GetAtt %s.%s: no resource %s", id, attribute, id)
	}
	value, ok := localAttribute(id, resource, attribute)
	if !ok {
		return r.fail("Fn::GetAtt %s.%s: no local value for attribute %s of %v", id, attribute, attribute, resource["Type"])
	}
	return value
}

// generatedTypes are the resource types SAM generates for a function's event, by
// event type, that a template may name as <Function><Event> (AWS SAM developer guide,
// "Generated AWS CloudFormation resources for AWS SAM": Schedule and ScheduleV2).
var generatedTypes = map[string]string{
	"Schedule":   "AWS::Events::Rule",
	"ScheduleV2": "AWS::Scheduler::Schedule",
}

// resourceNamed is the resource a template calls id: one of its Resources, or one SAM
// generates, as {"Type": …}: for a function's event (see generatedTypes), or the
// execution role <Function>Role of a function that names no Role (AWS SAM
// specification, "Generated AWS CloudFormation resources"); nil for neither.
func resourceNamed(id string, template any) map[string]any {
	resources := asMap(asMap(template)["Resources"])
	if resource := asMap(resources[id]); resource != nil {
		return resource
	}
	if fn := asMap(resources[strings.TrimSuffix(id, "Role")]); strings.HasSuffix(id, "Role") &&
		fn["Type"] == "AWS::Serverless::Function" && asMap(fn["Properties"])["Role"] == nil {
		return map[string]any{"Type": "AWS::IAM::Role"}
	}
	for fn, r := range resources {
		events := asMap(asMap(asMap(r)["Properties"])["Events"])
		if event, ok := strings.CutPrefix(id, fn); ok && asMap(r)["Type"] == "AWS::Serverless::Function" && events[event] != nil {
			eventType, _ := asMap(events[event])["Type"].(string)
			if typ, ok := generatedTypes[eventType]; ok {
				return map[string]any{"Type": typ}
			}
		}
	}
	return nil
}

func getAttTarget(input any) (id, attribute string, ok bool) {
	switch v := input.(type) {
	case string:
		return strings.Cut(v, ".")
	case []any:
		if len(v) != 2 {
			return "", "", false
		}
		id, idOK := v[0].(string)
		attribute, attributeOK := v[1].(string)
		return id, attribute, idOK && attributeOK
	}
	return "", "", false
}

// localName is the name a resource has locally: its logical id, plus the ".fifo"
// suffix SQS requires of a FIFO queue's name (SQS CreateQueue, QueueName).
func localName(id string, resource map[string]any) string {
	if resource["Type"] == "AWS::SQS::Queue" && asMap(resource["Properties"])["FifoQueue"] == true {
		return id + ".fifo"
	}
	return id
}

// localAttribute is the local value of Fn::GetAtt id.attribute (table in [Template]).
func localAttribute(id string, resource map[string]any, attribute string) (string, bool) {
	const regionAccount = Region + ":" + AccountID + ":"
	name := localName(id, resource)
	switch resource["Type"].(string) + " " + attribute {
	case "AWS::DynamoDB::Table Arn":
		return "arn:aws:dynamodb:" + regionAccount + "table/" + name, true
	case "AWS::DynamoDB::Table StreamArn":
		return "arn:aws:dynamodb:" + regionAccount + "table/" + name + "/stream/local", true
	case "AWS::SQS::Queue Arn":
		return queueARN(name), true
	case "AWS::SQS::Queue QueueName":
		return name, true
	case "AWS::SQS::Queue QueueUrl":
		return "https://sqs." + Region + ".amazonaws.com/" + AccountID + "/" + name, true
	case "AWS::Serverless::Function Arn", "AWS::Lambda::Function Arn":
		return "arn:aws:lambda:" + regionAccount + "function:" + name, true
	case "AWS::KMS::Key Arn":
		return "arn:aws:kms:" + regionAccount + "key/" + name, true
	case "AWS::IAM::Role Arn":
		return "arn:aws:iam::" + AccountID + ":role/" + name, true
	case "AWS::SNS::Topic TopicArn":
		return "arn:aws:sns:" + regionAccount + name, true
	case "AWS::Events::Rule Arn":
		return "arn:aws:events:" + regionAccount + "rule/" + name, true
	case "AWS::Scheduler::Schedule Arn":
		return "arn:aws:scheduler:" + regionAccount + "schedule/default/" + name, true
	case "AWS::Logs::LogGroup Arn":
		return "arn:aws:logs:" + regionAccount + "log-group:" + name + ":*", true
	case "AWS::S3::Bucket Arn":
		return "arn:aws:s3:::" + strings.ToLower(name), true
	case "AWS::S3::Bucket RegionalDomainName":
		return strings.ToLower(name) + ".s3." + Region + ".amazonaws.com", true
	case "AWS::CloudFront::Distribution DomainName":
		return strings.ToLower(name) + ".cloudfront.net", true
	case "AWS::CloudFront::OriginAccessControl Id", "AWS::CloudFront::Function FunctionARN":
		return name, true
	}
	return "", false
}

// queueARN is the local ARN of the queue with the given local name.
func queueARN(name string) string {
	return "arn:aws:sqs:" + Region + ":" + AccountID + ":" + name
}

// queueFromARN returns the queue name of a local SQS queue ARN.
func queueFromARN(arn string) (string, bool) {
	return strings.CutPrefix(arn, queueARN(""))
}

// subVariable matches one ${…} placeholder of Fn::Sub.
var subVariable = regexp.MustCompile(`\$\{([^}]*)\}`)

// sub resolves {"Fn::Sub": "text"} and {"Fn::Sub": ["text", {name: value}]}
// (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference-sub.html).
func (r *resolver) sub(_ string, input, template any) any {
	text, variables, ok := subArguments(input)
	if !ok {
		return r.fail("Fn::Sub: want a string or [string, map], got %v", input)
	}
	return subVariable.ReplaceAllStringFunc(text, func(placeholder string) string {
		name := placeholder[2 : len(placeholder)-1]
		if literal, ok := strings.CutPrefix(name, "!"); ok {
			return "${" + literal + "}"
		}
		value, ok := variables[name]
		if !ok {
			value = r.subReference(name, template)
		}
		s, err := scalarString(value)
		if err != nil {
			r.fail("Fn::Sub ${%s}: %w", name, err)
		}
		return s
	})
}

func subArguments(input any) (string, map[string]any, bool) {
	switch v := input.(type) {
	case string:
		return v, nil, true
	case []any:
		if len(v) != 2 {
			return "", nil, false
		}
		text, textOK := v[0].(string)
		variables, variablesOK := v[1].(map[string]any)
		return text, variables, textOK && variablesOK
	}
	return "", nil, false
}

// subReference resolves a Fn::Sub variable that is not in its variable map: Name.Attr
// as Fn::GetAtt, anything else as Ref.
func (r *resolver) subReference(name string, template any) any {
	if strings.Contains(name, ".") {
		return r.getAtt("Fn::GetAtt", name, template)
	}
	return r.ref("Ref", name, template)
}

// scalarString formats a JSON scalar as CloudFormation does where a string is expected.
func scalarString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("want a string, number or boolean, got %T", v)
}
