package sam

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/goformation/v7/cloudformation/iam"
	"github.com/awslabs/goformation/v7/cloudformation/kms"
	"github.com/awslabs/goformation/v7/cloudformation/sqs"
)

// Resource is what every resource of the template has, as written: its logical id, its
// Type and its DeletionPolicy and UpdateReplacePolicy attributes ("" when unset, which
// CloudFormation treats as Delete; CloudFormation User Guide, "DeletionPolicy
// attribute" and "UpdateReplacePolicy attribute").
type Resource struct {
	Name, Type                          string
	DeletionPolicy, UpdateReplacePolicy string
}

// Retained reports whether r outlives both the stack's deletion and its own
// replacement by an update: both policies Retain.
func (r Resource) Retained() bool {
	return r.DeletionPolicy == "Retain" && r.UpdateReplacePolicy == "Retain"
}

// Resources returns every resource of the template, sorted by Name. Resources SAM
// generates (roles, aliases, event rules) are not among them.
func (t *Template) Resources() []Resource {
	resources := asMap(t.source["Resources"])
	out := make([]Resource, 0, len(resources))
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		r := asMap(resources[id])
		res := Resource{Name: id}
		res.Type, _ = r["Type"].(string)
		res.DeletionPolicy, _ = r["DeletionPolicy"].(string)
		res.UpdateReplacePolicy, _ = r["UpdateReplacePolicy"].(string)
		out = append(out, res)
	}
	return out
}

// LogGroups maps the logical id of every AWS::Logs::LogGroup to its RetentionInDays
// (resolved: a parameter's value); 0 when unset, which keeps events forever.
func (t *Template) LogGroups() map[string]int {
	out := map[string]int{}
	for id, g := range t.cf.GetAllLogsLogGroupResources() {
		out[id] = aws.ToInt(g.RetentionInDays)
	}
	return out
}

// Topic is an AWS::SNS::Topic: its logical id and the KMS key of its server-side
// encryption (KmsMasterKeyId resolved: a Ref to a key of the template is the key's
// logical id; "" when the topic is not encrypted).
type Topic struct {
	Name, KMSKey string
}

// Topics returns every AWS::SNS::Topic, sorted by Name.
func (t *Template) Topics() []Topic {
	topics := t.cf.GetAllSNSTopicResources()
	out := make([]Topic, 0, len(topics))
	for _, id := range slices.Sorted(maps.Keys(topics)) {
		out = append(out, Topic{Name: id, KMSKey: aws.ToString(topics[id].KmsMasterKeyId)})
	}
	return out
}

// KMSKey is an AWS::KMS::Key: its logical id, KeySpec ("" means SYMMETRIC_DEFAULT),
// whether automatic rotation is on, and its key policy's statements.
type KMSKey struct {
	Name     string
	KeySpec  string
	Rotation bool
	Policy   []Statement
}

// KMSKeys returns every AWS::KMS::Key, sorted by Name. An error names a key whose
// KeyPolicy is not an IAM policy document.
func (t *Template) KMSKeys() ([]KMSKey, error) {
	return inIDOrder("KMS key", t.cf.GetAllKMSKeyResources(), func(id string, k *kms.Key) (KMSKey, error) {
		key := KMSKey{Name: id, KeySpec: aws.ToString(k.KeySpec), Rotation: aws.ToBool(k.EnableKeyRotation)}
		policy, err := documentStatements(k.KeyPolicy)
		key.Policy = policy
		return key, err
	})
}

// ManagedPolicy is an AWS::IAM::ManagedPolicy: its logical id (what a function's
// Policies entry !Ref names, resolved locally) and its statements.
type ManagedPolicy struct {
	Name       string
	Statements []Statement
}

// ManagedPolicies returns every AWS::IAM::ManagedPolicy, sorted by Name. An error names
// a policy whose PolicyDocument is not an IAM policy document.
func (t *Template) ManagedPolicies() ([]ManagedPolicy, error) {
	return inIDOrder("managed policy", t.cf.GetAllIAMManagedPolicyResources(), func(id string, p *iam.ManagedPolicy) (ManagedPolicy, error) {
		statements, err := documentStatements(p.PolicyDocument)
		return ManagedPolicy{Name: id, Statements: statements}, err
	})
}

// QueuePolicy is an AWS::SQS::QueuePolicy: its logical id, the queues it applies to
// (resolved: a Ref to a queue of the template is the queue's local name) and its
// statements.
type QueuePolicy struct {
	Name       string
	Queues     []string
	Statements []Statement
}

// QueuePolicies returns every AWS::SQS::QueuePolicy, sorted by Name. An error names a
// policy whose PolicyDocument is not an IAM policy document.
func (t *Template) QueuePolicies() ([]QueuePolicy, error) {
	return inIDOrder("queue policy", t.cf.GetAllSQSQueuePolicyResources(), func(id string, p *sqs.QueuePolicy) (QueuePolicy, error) {
		statements, err := documentStatements(p.PolicyDocument)
		return QueuePolicy{Name: id, Queues: p.Queues, Statements: statements}, err
	})
}

// documentStatements reads the statements of an IAM policy document.
func documentStatements(document any) ([]Statement, error) {
	doc := asMap(document)
	if doc == nil {
		return nil, fmt.Errorf("not a policy document: %T", document)
	}
	var p Policies
	if err := p.addDocument(doc); err != nil {
		return nil, err
	}
	return p.Statements, nil
}
