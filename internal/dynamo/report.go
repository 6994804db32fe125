package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// The latest reconcile report, kept in the skus table (pk reconcile#report) for the
// merchant API.
const (
	kindReport = "REPORT"
	reportKey  = "reconcile#report"
)

type reportRecord struct {
	PK     string `dynamodbav:"pk"`
	Kind   string `dynamodbav:"kind"`
	At     int64  `dynamodbav:"at"`     // Unix milliseconds of the run
	Report string `dynamodbav:"report"` // the report's JSON
}

// SaveReport keeps report (a reconcile report's JSON) as the latest one.
func (s *Store) SaveReport(ctx context.Context, report []byte) error {
	item, err := attributevalue.MarshalMap(reportRecord{PK: reportKey, Kind: kindReport, At: s.now().UnixMilli(), Report: string(report)})
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.SKUs), Item: item}); err != nil {
		return s.storeError("save report", err)
	}
	return nil
}

// LatestReport returns the JSON of the last report SaveReport kept, nil when none.
func (s *Store) LatestReport(ctx context.Context) ([]byte, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.tables.SKUs), Key: pkOf(reportKey), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, s.storeError("read report", err)
	}
	var rec reportRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if rec.Report == "" {
		return nil, nil
	}
	return []byte(rec.Report), nil
}
