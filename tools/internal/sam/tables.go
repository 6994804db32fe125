package sam

import (
	"cmp"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	cfndynamodb "github.com/awslabs/goformation/v7/cloudformation/dynamodb"
)

// Tables returns a DynamoDB CreateTable request for every AWS::DynamoDB::Table of the
// template, sorted by TableName, which is the logical id (the TableName property is
// ignored locally).
//
// Each request carries the key schema, attribute definitions, global and local
// secondary indexes (projection type and INCLUDE NonKeyAttributes), the billing mode
// (PROVISIONED when the template sets none, the CloudFormation default) with its
// provisioned throughput, and the stream specification. CreateTable cannot set time to
// live or point-in-time recovery: see [Template.TableSettings]. SSE, table class,
// deletion protection, tags and AWS::Serverless::SimpleTable resources are not mapped.
//
// Property meanings: AWS::DynamoDB::Table in the CloudFormation resource reference and
// CreateTable in the DynamoDB API reference. It returns an error naming the table when
// a PROVISIONED table or index lacks ProvisionedThroughput.
func (t *Template) Tables() ([]*dynamodb.CreateTableInput, error) {
	return inIDOrder("table", t.cf.GetAllDynamoDBTableResources(), createTableInput)
}

// TableSettings are the settings of a table that CreateTable cannot carry.
type TableSettings struct {
	// Name is the table's logical id, its local TableName.
	Name string
	// TimeToLiveAttribute names the attribute holding each item's expiry (epoch
	// seconds); "" when TimeToLiveSpecification is absent or not Enabled.
	TimeToLiveAttribute string
	// PointInTimeRecovery reports PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled.
	PointInTimeRecovery bool
	// DeletionPolicy is the resource's DeletionPolicy attribute (Retain, Snapshot,
	// Delete); "" when unset, which CloudFormation treats as Delete.
	DeletionPolicy string
	// DeletionProtection reports DeletionProtectionEnabled: DynamoDB refuses to
	// delete the table until it is turned off.
	DeletionProtection bool
	// KMSKey is SSESpecification.KMSMasterKeyId (resolved: a key of the template is
	// its local ARN, see [Template]) when SSEEnabled with SSEType KMS: the table is
	// encrypted at rest with that key; "" when it keeps the AWS owned key (DynamoDB
	// Developer Guide, "Encryption at rest: how it works"). A KMS table without
	// KMSMasterKeyId (the AWS managed key aws/dynamodb) reads "alias/aws/dynamodb".
	KMSKey string
	// WarmIndexes names the global secondary indexes whose WarmThroughput the template
	// sets (pre-warming; "Understanding DynamoDB warm throughput"), in template order.
	WarmIndexes []string
}

// TableSettings returns the TTL, point-in-time recovery, deletion policy, deletion
// protection, encryption key and pre-warmed indexes of every AWS::DynamoDB::Table, sorted by Name (the logical id). It never
// fails today; the error is there so that it can grow checks without changing callers.
func (t *Template) TableSettings() ([]TableSettings, error) {
	return inIDOrder("table", t.cf.GetAllDynamoDBTableResources(), func(id string, table *cfndynamodb.Table) (TableSettings, error) {
		s := TableSettings{Name: id, DeletionPolicy: string(table.AWSCloudFormationDeletionPolicy),
			DeletionProtection: aws.ToBool(table.DeletionProtectionEnabled)}
		if ttl := table.TimeToLiveSpecification; ttl != nil && ttl.Enabled {
			s.TimeToLiveAttribute = aws.ToString(ttl.AttributeName)
		}
		if pitr := table.PointInTimeRecoverySpecification; pitr != nil {
			s.PointInTimeRecovery = aws.ToBool(pitr.PointInTimeRecoveryEnabled)
		}
		if sse := table.SSESpecification; sse != nil && sse.SSEEnabled && aws.ToString(sse.SSEType) == "KMS" {
			s.KMSKey = cmp.Or(aws.ToString(sse.KMSMasterKeyId), "alias/aws/dynamodb")
		}
		// WarmThroughput is not in goformation's schema (withoutUnmodelled): read raw.
		gsis, _ := asMap(asMap(asMap(t.source["Resources"])[id])["Properties"])["GlobalSecondaryIndexes"].([]any)
		for _, g := range gsis {
			if gsi := asMap(g); gsi["WarmThroughput"] != nil {
				name, _ := gsi["IndexName"].(string)
				s.WarmIndexes = append(s.WarmIndexes, name)
			}
		}
		return s, nil
	})
}

func createTableInput(id string, table *cfndynamodb.Table) (*dynamodb.CreateTableInput, error) {
	mode := types.BillingModeProvisioned
	if table.BillingMode != nil {
		mode = types.BillingMode(*table.BillingMode)
	}
	throughput, err := provisionedThroughput(mode, table.ProvisionedThroughput)
	if err != nil {
		return nil, err
	}
	input := &dynamodb.CreateTableInput{
		TableName:             aws.String(id),
		BillingMode:           mode,
		KeySchema:             keySchema(table.KeySchema),
		AttributeDefinitions:  attributeDefinitions(table.AttributeDefinitions),
		ProvisionedThroughput: throughput,
		StreamSpecification:   streamSpecification(table.StreamSpecification),
	}
	for _, index := range table.GlobalSecondaryIndexes {
		gsi, err := globalSecondaryIndex(mode, index)
		if err != nil {
			return nil, err
		}
		input.GlobalSecondaryIndexes = append(input.GlobalSecondaryIndexes, gsi)
	}
	for _, index := range table.LocalSecondaryIndexes {
		input.LocalSecondaryIndexes = append(input.LocalSecondaryIndexes, types.LocalSecondaryIndex{
			IndexName:  aws.String(index.IndexName),
			KeySchema:  keySchema(index.KeySchema),
			Projection: projection(index.Projection),
		})
	}
	return input, nil
}

func globalSecondaryIndex(mode types.BillingMode, index cfndynamodb.Table_GlobalSecondaryIndex) (types.GlobalSecondaryIndex, error) {
	throughput, err := provisionedThroughput(mode, index.ProvisionedThroughput)
	if err != nil {
		return types.GlobalSecondaryIndex{}, fmt.Errorf("index %s: %w", index.IndexName, err)
	}
	return types.GlobalSecondaryIndex{
		IndexName:             aws.String(index.IndexName),
		KeySchema:             keySchema(index.KeySchema),
		Projection:            projection(index.Projection),
		ProvisionedThroughput: throughput,
	}, nil
}

// provisionedThroughput maps a throughput setting, which only PROVISIONED mode uses
// and requires.
func provisionedThroughput(mode types.BillingMode, p *cfndynamodb.Table_ProvisionedThroughput) (*types.ProvisionedThroughput, error) {
	if mode != types.BillingModeProvisioned {
		return nil, nil
	}
	if p == nil {
		return nil, fmt.Errorf("billing mode %s needs ProvisionedThroughput", mode)
	}
	return &types.ProvisionedThroughput{
		ReadCapacityUnits:  aws.Int64(int64(p.ReadCapacityUnits)),
		WriteCapacityUnits: aws.Int64(int64(p.WriteCapacityUnits)),
	}, nil
}

// convert returns f of each element of in, in order.
func convert[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

func keySchema(keys []cfndynamodb.Table_KeySchema) []types.KeySchemaElement {
	return convert(keys, func(k cfndynamodb.Table_KeySchema) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)}
	})
}

func attributeDefinitions(defs []cfndynamodb.Table_AttributeDefinition) []types.AttributeDefinition {
	return convert(defs, func(d cfndynamodb.Table_AttributeDefinition) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(d.AttributeName), AttributeType: types.ScalarAttributeType(d.AttributeType)}
	})
}

func projection(p *cfndynamodb.Table_Projection) *types.Projection {
	if p == nil {
		return &types.Projection{}
	}
	return &types.Projection{
		ProjectionType:   types.ProjectionType(aws.ToString(p.ProjectionType)),
		NonKeyAttributes: p.NonKeyAttributes,
	}
}

func streamSpecification(s *cfndynamodb.Table_StreamSpecification) *types.StreamSpecification {
	if s == nil {
		return nil
	}
	return &types.StreamSpecification{
		StreamEnabled:  aws.Bool(true),
		StreamViewType: types.StreamViewType(s.StreamViewType),
	}
}
