package sam

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func key(name string, typ types.KeyType) types.KeySchemaElement {
	return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: typ}
}

func attribute(name string, typ types.ScalarAttributeType) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ}
}

func throughput(read, write int64) *types.ProvisionedThroughput {
	return &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(read), WriteCapacityUnits: aws.Int64(write)}
}

func TestTables_BuildsCreateTableInputsNamedByLogicalID(t *testing.T) {
	got, err := load(t, "tables.yaml").Tables()
	if err != nil {
		t.Fatal(err)
	}
	want := []*dynamodb.CreateTableInput{
		{
			// No BillingMode: CloudFormation's default, PROVISIONED, with throughput
			// on the table and its index.
			TableName:             aws.String("LedgerTable"),
			BillingMode:           types.BillingModeProvisioned,
			ProvisionedThroughput: throughput(5, 10),
			AttributeDefinitions:  []types.AttributeDefinition{attribute("pk", "S"), attribute("skuId", "S")},
			KeySchema:             []types.KeySchemaElement{key("pk", types.KeyTypeHash)},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:             aws.String("BySku"),
				KeySchema:             []types.KeySchemaElement{key("skuId", types.KeyTypeHash)},
				Projection:            &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
				ProvisionedThroughput: throughput(1, 2),
			}},
		},
		{
			// TableName orders-prod is ignored: locally the logical id names it.
			TableName:   aws.String("OrdersTable"),
			BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{
				attribute("pk", "S"), attribute("sk", "S"), attribute("pendingBucket", "S"),
				attribute("pendingExpiresAt", "N"), attribute("createdAt", "S"),
			},
			KeySchema: []types.KeySchemaElement{key("pk", types.KeyTypeHash), key("sk", types.KeyTypeRange)},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName: aws.String("PendingByExpiry"),
				KeySchema: []types.KeySchemaElement{key("pendingBucket", types.KeyTypeHash), key("pendingExpiresAt", types.KeyTypeRange)},
				Projection: &types.Projection{
					ProjectionType:   types.ProjectionTypeInclude,
					NonKeyAttributes: []string{"userId", "items"},
				},
			}},
			LocalSecondaryIndexes: []types.LocalSecondaryIndex{{
				IndexName:  aws.String("ByCreatedAt"),
				KeySchema:  []types.KeySchemaElement{key("pk", types.KeyTypeHash), key("createdAt", types.KeyTypeRange)},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			}},
			StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		},
	}
	equalJSON(t, "tables", got, want)
}

func TestTableSettings_ReportsWhatCreateTableCannotSet(t *testing.T) {
	got, err := load(t, "tables.yaml").TableSettings()
	if err != nil {
		t.Fatal(err)
	}
	want := []TableSettings{
		{Name: "LedgerTable"}, // TTL specified but disabled
		{Name: "OrdersTable", TimeToLiveAttribute: "ttl", PointInTimeRecovery: true, DeletionPolicy: "Retain", WarmIndexes: []string{"PendingByExpiry"}},
	}
	equalJSON(t, "table settings", got, want)
}

func TestTables_RejectsProvisionedTableWithoutThroughput(t *testing.T) {
	_, err := load(t, "invalid/provisioned_without_throughput.yaml").Tables()
	if err == nil || !strings.Contains(err.Error(), "table SkusTable: billing mode PROVISIONED needs ProvisionedThroughput") {
		t.Errorf("err = %v, want an error naming the table and the missing throughput", err)
	}
}
