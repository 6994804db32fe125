package sam

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Policies is a function's Policies property (SAM AWS::Serverless::Function Policies),
// split by kind. It is decoded from the resolved template because goformation's
// Function_Policies drops a list that mixes kinds.
type Policies struct {
	// Statements are the statements of every inline IAM policy document, in order.
	Statements []Statement
	// Managed are the AWS managed or customer managed policy names and ARNs.
	Managed []string
	// Templates are the names of the SAM policy templates used, e.g.
	// DynamoDBReadPolicy.
	Templates []string
}

// Statement is one statement of an IAM policy (IAM User Guide, "IAM JSON policy
// elements reference"), with single values normalised to one-element lists.
type Statement struct {
	// Sid is the statement id, "" when unset.
	Sid string
	// Effect is Allow or Deny.
	Effect string
	// Action lists the actions granted or denied, e.g. dynamodb:PutItem.
	Action []string
	// NotAction lists the actions excluded: the statement covers all others.
	NotAction []string
	// Resource lists the resource ARNs, resolved to local ARNs (see [Template]).
	Resource []string
	// NotResource lists the resources excluded: the statement covers all others.
	NotResource []string
	// Principal lists the principals of a resource policy's statement by kind (AWS,
	// Service, Federated); "*" is {"AWS": ["*"]}. Empty in an identity policy.
	Principal map[string][]string
	// Condition is the Condition element: operator (StringEquals, ArnLike, …) →
	// condition key (aws:SourceArn, …) → values.
	Condition map[string]map[string][]string
}

// newPolicies splits a Policies value: a string, a policy document, or a list of
// strings, policy documents and SAM policy templates.
func newPolicies(value any) (Policies, error) {
	var p Policies
	items, ok := value.([]any)
	if !ok && value != nil {
		items = []any{value}
	}
	for i, item := range items {
		if err := p.add(item); err != nil {
			return Policies{}, fmt.Errorf("policy %d: %w", i, err)
		}
	}
	return p, nil
}

func (p *Policies) add(item any) error {
	switch v := item.(type) {
	case string:
		p.Managed = append(p.Managed, v)
		return nil
	case map[string]any:
		if _, isDocument := v["Statement"]; isDocument {
			return p.addDocument(v)
		}
		p.Templates = append(p.Templates, slices.Sorted(maps.Keys(v))...)
		return nil
	}
	return fmt.Errorf("want a policy name, document or SAM policy template, got %T", item)
}

func (p *Policies) addDocument(document map[string]any) error {
	statements, ok := document["Statement"].([]any)
	if !ok {
		statements = []any{document["Statement"]}
	}
	for i, s := range statements {
		statement, err := newStatement(s)
		if err != nil {
			return fmt.Errorf("statement %d: %w", i, err)
		}
		p.Statements = append(p.Statements, statement)
	}
	return nil
}

func newStatement(value any) (Statement, error) {
	var raw struct {
		Sid, Effect                              string
		Action, NotAction, Resource, NotResource stringList
		Principal                                principal
		Condition                                map[string]map[string]stringList
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		return Statement{}, fmt.Errorf("encode: %w", err)
	}
	if err := json.Unmarshal(encoded, &raw); err != nil {
		return Statement{}, fmt.Errorf("decode: %w", err)
	}
	return Statement{
		Sid:         raw.Sid,
		Effect:      raw.Effect,
		Action:      raw.Action,
		NotAction:   raw.NotAction,
		Resource:    raw.Resource,
		NotResource: raw.NotResource,
		Principal:   raw.Principal,
		Condition:   conditions(raw.Condition),
	}, nil
}

func conditions(raw map[string]map[string]stringList) map[string]map[string][]string {
	if raw == nil {
		return nil
	}
	out := make(map[string]map[string][]string, len(raw))
	for op, keys := range raw {
		out[op] = map[string][]string{}
		for k, v := range keys {
			out[op][k] = v
		}
	}
	return out
}

// principal decodes an IAM Principal element: "*", or a map of kinds to a string or
// a list of strings.
type principal map[string][]string

// UnmarshalJSON implements json.Unmarshaler.
func (p *principal) UnmarshalJSON(data []byte) error {
	var star string
	if err := json.Unmarshal(data, &star); err == nil {
		*p = principal{"AWS": {star}}
		return nil
	}
	var kinds map[string]stringList
	if err := json.Unmarshal(data, &kinds); err != nil {
		return fmt.Errorf("principal: want \"*\" or a map of kinds: %w", err)
	}
	*p = principal{}
	for k, v := range kinds {
		(*p)[k] = v
	}
	return nil
}

// stringList decodes an IAM element that is a string or a list of strings.
type stringList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *stringList) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*l = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*l = many
	return nil
}
