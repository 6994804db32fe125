package xray_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stockguard/stockguard/internal/xray"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// daemon is a UDP listener standing where Lambda's X-Ray daemon listens; it reads the
// datagrams as the daemon takes them (AWS X-Ray Developer Guide, "Sending segment
// documents to the X-Ray daemon").
type daemon struct{ conn net.PacketConn }

func newDaemon(t *testing.T) *daemon {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &daemon{conn}
}

// next is the next datagram's document; it fails t on a datagram without the daemon's
// header, or none within 5 s.
func (d *daemon) next(t *testing.T) map[string]any {
	t.Helper()
	buf := make([]byte, 64<<10)
	d.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := d.conn.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no datagram: %v", err)
	}
	head, body, ok := strings.Cut(string(buf[:n]), "\n")
	if !ok || head != `{"format": "json", "version": 1}` {
		t.Fatalf("datagram %q lacks the daemon's header", buf[:n])
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

const (
	root   = "1-5759e988-bd862e3fe1be46a994272793"
	parent = "53995c3f42cd8ad8"
)

// Each DynamoDB call made inside a sampled invocation reaches the daemon as a
// subsegment of the function's segment (the trace header's Root and Parent), named
// for the service, with the operation, region, request id, table and HTTP status; a
// refused call is marked error; a call inside an unsampled invocation, or outside
// any, sends nothing. The calls go to the embedded DynamoDB API through the real
// client.
func TestInstrument_SendsEachSDKCallOfASampledInvocationAsASubsegment(t *testing.T) {
	stack := stacktest.New(t, stacktest.Options{})
	d := newDaemon(t)
	cfg := aws.Config{Region: "cn-north-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		BaseEndpoint: aws.String(stack.DynamoDB.URL())}
	xray.Instrument(&cfg, d.conn.LocalAddr().String())
	db := dynamodb.NewFromConfig(cfg)
	get := func(ctx context.Context, table string) error {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "cup-01"}}})
		return err
	}
	sampled := xray.Context(context.Background(), "Root="+root+";Parent="+parent+";Sampled=1")
	unsampled := xray.Context(context.Background(), "Root=1-5759e988-00000000000000000000000a;Parent="+parent+";Sampled=0")
	if err := get(unsampled, stack.Tables.SKUs); err != nil {
		t.Fatal(err)
	}
	if err := get(context.Background(), stack.Tables.SKUs); err != nil {
		t.Fatal(err)
	}
	if err := get(sampled, stack.Tables.SKUs); err != nil {
		t.Fatal(err)
	}
	var missing *types.ResourceNotFoundException
	if err := get(sampled, "NoSuchTable"); !errors.As(err, &missing) {
		t.Fatalf("GetItem on a missing table: %v", err)
	}
	for i, want := range []struct {
		table  string
		status float64
		error  bool
	}{{stack.Tables.SKUs, 200, false}, {"NoSuchTable", 400, true}} {
		doc := d.next(t) // the first datagram: the unsampled and untraced calls sent none
		call, _ := doc["aws"].(map[string]any)
		status, _ := doc["http"].(map[string]any)["response"].(map[string]any)["status"].(float64)
		if doc["type"] != "subsegment" || doc["trace_id"] != root || doc["parent_id"] != parent || doc["name"] != "DynamoDB" ||
			doc["namespace"] != "aws" || call["operation"] != "GetItem" || call["region"] != "cn-north-1" || call["table_name"] != want.table ||
			status != want.status || (doc["error"] == true) != want.error || len(doc["id"].(string)) != 16 {
			t.Errorf("call %d: subsegment %v, want table %s, status %v, error %v", i, doc, want.table, want.status, want.error)
		}
		if start, end := doc["start_time"].(float64), doc["end_time"].(float64); start <= 1.7e9 || end < start {
			t.Errorf("call %d: start %v, end %v", i, start, end)
		}
	}
}
