package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	snsapi "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The DynamoDB rules the store relies on, each checked on both implementations the
// stack runs on: minidyn behind the transactor (embedded) and moto_server behind its
// front (moto). Where one answers otherwise than the DynamoDB API Reference says, the
// embedded side is fixed (third_party/minidyn/PATCHES.md, transactions.go) and moto's
// deviation is skipped on moto, naming the page.

// Implementations of the DynamoDB API.
const (
	embedded = "embedded"
	moto     = "moto"
)

// testMoto is this test binary's moto_server, started by the first test that needs it
// and held by one test at a time (reset after each).
var testMoto struct {
	mu     sync.Mutex
	server *MotoServer
	err    error
}

// motoEndpoint returns the URL of this test binary's moto_server, held by t until it
// ends and reset then. It skips t, naming the install command, when moto_server is not
// installed.
func motoEndpoint(t *testing.T) string {
	t.Helper()
	testMoto.mu.Lock()
	if testMoto.server == nil && testMoto.err == nil {
		testMoto.server, testMoto.err = StartMoto(t.Context(), "127.0.0.1:0")
	}
	if testMoto.err != nil {
		testMoto.mu.Unlock()
		if errors.Is(testMoto.err, ErrNoMoto) {
			t.Skipf("%v: the moto side of this check is not run", testMoto.err)
		}
		t.Fatal(testMoto.err)
	}
	m := testMoto.server
	t.Cleanup(func() {
		defer testMoto.mu.Unlock()
		if err := m.Reset(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return m.URL()
}

// eachDynamoDB runs test on each implementation of the DynamoDB API (embedded, moto),
// with a client that does not retry.
func eachDynamoDB(t *testing.T, test func(t *testing.T, impl string, client *dynamodb.Client)) {
	for _, impl := range []string{embedded, moto} {
		t.Run(impl, func(t *testing.T) {
			var opts DynamoDBOptions
			if impl == moto {
				opts.Endpoint = motoEndpoint(t)
			}
			_, client := startDynamoDB(t, opts)
			if _, err := client.CreateTable(t.Context(), skusTable("t")); err != nil {
				t.Fatal(err)
			}
			test(t, impl, client)
		})
	}
}

// deviation skips t on moto, where moto answers what t checks otherwise than the AWS
// page titled page documents.
func deviation(t *testing.T, impl, what, page string) {
	t.Helper()
	if impl == moto {
		t.Skipf("moto_server deviates from AWS: %s (AWS documentation: %q)", what, page)
	}
}

// add is a TransactWriteItems of one update adding q to pk's available, under token
// ("" sends none).
func add(t *testing.T, client *dynamodb.Client, token, pk, q string) error {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String("t"), Key: key(pk), UpdateExpression: aws.String("ADD available :q"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: q}},
	}}}}
	if token != "" {
		in.ClientRequestToken = aws.String(token)
	}
	_, err := client.TransactWriteItems(t.Context(), in)
	return err
}

// available reads pk's available, "" when it has none.
func available(t *testing.T, client *dynamodb.Client, pk string) string {
	t.Helper()
	out, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key(pk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := out.Item["available"].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

// DynamoDB API Reference, TransactWriteItems: ClientRequestToken is 1 to 36
// characters; a repeat with the same parameters within 10 minutes has the effect of
// one call; the same token with other parameters is refused with
// IdempotentParameterMismatchException.
func TestDynamoDB_ClientRequestTokenMakesATransactionIdempotent(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, impl string, client *dynamodb.Client) {
		deviation(t, impl, "TransactWriteItems ignores ClientRequestToken: a 37-character token is taken, a repeat is applied again, "+
			"and other parameters under a used token are applied too", "TransactWriteItems - Amazon DynamoDB")
		token := strings.Repeat("t", 36)
		if err := add(t, client, token+"x", "cup", "1"); err == nil || !strings.Contains(err.Error(), "ValidationException") {
			t.Errorf("37-character token: %v, want ValidationException", err)
		}
		if got := available(t, client, "cup"); got != "" {
			t.Fatalf("a refused request was applied: available %s", got)
		}
		if err := add(t, client, token, "cup", "1"); err != nil {
			t.Fatal(err)
		}
		if err := add(t, client, token, "cup", "1"); err != nil {
			t.Errorf("same token, same parameters: %v, want the first answer", err)
		}
		if got := available(t, client, "cup"); got != "1" {
			t.Errorf("available %s after a repeated token, want 1 (applied once)", got)
		}
		if err := add(t, client, token, "cup", "2"); err == nil || !strings.Contains(err.Error(), "IdempotentParameterMismatch") {
			t.Errorf("same token, other parameters: %v, want IdempotentParameterMismatchException", err)
		}
		if err := add(t, client, "another-token", "cup", "1"); err != nil || available(t, client, "cup") != "2" {
			t.Errorf("a new token: %v, available %s; want applied (2)", err, available(t, client, "cup"))
		}
	})
}

// DynamoDB API Reference, TransactWriteItems and TransactGetItems: TransactItems holds
// up to 100 actions; the store's cart and shard reads use up to 100.
func TestDynamoDB_TransactionsTakeUpTo100Actions(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, impl string, client *dynamodb.Client) {
		writes := make([]types.TransactWriteItem, 101)
		gets := make([]types.TransactGetItem, 101)
		for i := range writes {
			writes[i] = types.TransactWriteItem{Update: &types.Update{
				TableName: aws.String("t"), Key: key(fmt.Sprintf("sku-%d", i)), UpdateExpression: aws.String("ADD available :q"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: "1"}},
			}}
			gets[i] = types.TransactGetItem{Get: &types.Get{TableName: aws.String("t"), Key: key(fmt.Sprintf("sku-%d", i))}}
		}
		if _, err := client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: writes}); err == nil || !strings.Contains(err.Error(), "ValidationException") {
			t.Errorf("101 writes: %v, want ValidationException", err)
		}
		if _, err := client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: writes[:100]}); err != nil {
			t.Errorf("100 writes: %v", err)
		}
		if _, err := client.TransactGetItems(t.Context(), &dynamodb.TransactGetItemsInput{TransactItems: gets}); err == nil || !strings.Contains(err.Error(), "ValidationException") {
			t.Errorf("101 reads: %v, want ValidationException", err)
		}
		deviation(t, impl, "TransactGetItems refuses more than 25 items, the limit before 2022", "TransactGetItems - Amazon DynamoDB")
		out, err := client.TransactGetItems(t.Context(), &dynamodb.TransactGetItemsInput{TransactItems: gets[:100]})
		if err != nil || len(out.Responses) != 100 {
			t.Errorf("100 reads: %v, want 100 answers", err)
		}
	})
}

// DynamoDB API Reference, TransactWriteItems ("TransactionCanceledException") and
// CancellationReason: one reason per action, in order, None for an action that did
// not fail, ConditionalCheckFailed for a failed condition, with the item as it was
// when that action asked for ReturnValuesOnConditionCheckFailure ALL_OLD (and the
// item exists).
func TestDynamoDB_CancellationReasonsFollowTheActions(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, impl string, client *dynamodb.Client) {
		for _, pk := range []string{"a", "b"} {
			if err := putSKU(t.Context(), client, "t", pk, "5"); err != nil {
				t.Fatal(err)
			}
		}
		ten := map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: "10"}}
		_, err := client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String("t"), Key: key("a"), UpdateExpression: aws.String("ADD available :q"), ExpressionAttributeValues: ten}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String("t"), Key: key("b"), ConditionExpression: aws.String("available > :q"),
				ExpressionAttributeValues: ten, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
			{Put: &types.Put{TableName: aws.String("t"), Item: key("c")}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String("t"), Key: key("absent"), ConditionExpression: aws.String("attribute_exists(pk)"),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		}})
		tce, ok := errors.AsType[*types.TransactionCanceledException](err)
		if !ok || len(tce.CancellationReasons) != 4 {
			t.Fatalf("%v, want a TransactionCanceledException with 4 reasons", err)
		}
		var got []string
		for _, r := range tce.CancellationReasons {
			got = append(got, fmt.Sprintf("%s item:%d", aws.ToString(r.Code), len(r.Item)))
		}
		if want := "[None item:0 ConditionalCheckFailed item:3 None item:0 ConditionalCheckFailed item:0]"; fmt.Sprint(got) != want {
			t.Errorf("reasons %v, want %s", got, want)
		}
		if available(t, client, "a") != "5" || available(t, client, "c") != "" {
			t.Errorf("a cancelled transaction was applied: a %s, c %q", available(t, client, "a"), available(t, client, "c"))
		}
	})
}

// Requests DynamoDB refuses with ValidationException, changing nothing, each with the
// page that says so.
func TestDynamoDB_RefusesWhatDynamoDBRefuses(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, impl string, client *dynamodb.Client) {
		for _, c := range refusals(t, client) {
			t.Run(c.name, func(t *testing.T) {
				if c.moto != "" {
					deviation(t, impl, c.moto, c.page)
				}
				if err := c.send(); err == nil || !strings.Contains(err.Error(), "ValidationException") {
					t.Errorf("%v, want ValidationException (%s)", err, c.page)
				}
			})
		}
		if got := available(t, client, "big"); got != "" {
			t.Errorf("a refused write was applied: %q", got)
		}
		if out, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key("big0")}); err != nil || out.Item != nil {
			t.Errorf("a refused transaction was applied (or the read failed: %v)", err)
		}
	})
}

// refusal is one request DynamoDB refuses: page is the AWS page saying so, moto what
// moto_server does instead ("" when it refuses too).
type refusal struct {
	name, page, moto string
	send             func() error
}

func refusals(t *testing.T, client *dynamodb.Client) []refusal {
	ctx := t.Context()
	n1 := map[string]types.AttributeValue{":q": &types.AttributeValueMemberN{Value: "1"}}
	keys := func(n int, dup bool) []map[string]types.AttributeValue {
		out := make([]map[string]types.AttributeValue, n)
		for i := range out {
			out[i] = key(fmt.Sprint("k", i))
			if dup {
				out[i] = key("k")
			}
		}
		return out
	}
	writes := make([]types.WriteRequest, 26)
	for i := range writes {
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: key(fmt.Sprint("w", i))}}
	}
	large := make([]types.TransactWriteItem, 11) // 11 items of 390 KB: over 4 MB
	for i := range large {
		large[i] = types.TransactWriteItem{Put: &types.Put{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: fmt.Sprint("big", i)}, "pad": &types.AttributeValueMemberS{Value: strings.Repeat("x", 390<<10)}}}}
	}
	placeholder := "#" + strings.Repeat("n", 255)
	return []refusal{
		{"a partition key value over 2,048 bytes", "Constraints in Amazon DynamoDB (Partition keys and sort keys)", "", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key(strings.Repeat("k", 2049))})
			return err
		}},
		{"an empty partition key value", "Constraints in Amazon DynamoDB (Partition keys and sort keys)", "", func() error {
			_, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key("")})
			return err
		}},
		{"a sort key value over 1,024 bytes", "Constraints in Amazon DynamoDB (Partition keys and sort keys)", "", func() error {
			if _, err := client.CreateTable(ctx, pairsTable("pairs")); err != nil {
				return err
			}
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("pairs"), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: strings.Repeat("s", 1025)}}})
			return err
		}},
		{"an expression over 4 KB", "Constraints in Amazon DynamoDB (Expression parameters)", "moto takes expressions over 4 KB", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key("big"),
				ConditionExpression: aws.String(strings.Repeat("attribute_not_exists(pk) AND ", 146) + "attribute_not_exists(pk)")})
			return err
		}},
		{"an expression attribute name over 255 bytes", "Constraints in Amazon DynamoDB (Expression parameters)", "moto takes longer placeholders", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key("big"),
				ConditionExpression: aws.String("attribute_not_exists(" + placeholder + ")"), ExpressionAttributeNames: map[string]string{placeholder: "pk"}})
			return err
		}},
		{"a transaction of items over 4 MB", "TransactWriteItems - Amazon DynamoDB", "moto takes transactions over 4 MB", func() error {
			_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: large})
			return err
		}},
		{"two actions on one item", "TransactWriteItems - Amazon DynamoDB", "", func() error {
			_, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Update: &types.Update{TableName: aws.String("t"), Key: key("a"), UpdateExpression: aws.String("ADD available :q"), ExpressionAttributeValues: n1}},
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String("t"), Key: key("a"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			}})
			return err
		}},
		{"BatchGetItem of 101 keys", "BatchGetItem - Amazon DynamoDB", "", func() error {
			_, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: keys(101, false)}}})
			return err
		}},
		{"BatchGetItem naming one key twice", "BatchGetItem - Amazon DynamoDB (undocumented; the service refuses it: boto/boto3 issue 4131)", "", func() error {
			_, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: keys(2, true)}}})
			return err
		}},
		{"BatchWriteItem of 26 writes", "BatchWriteItem - Amazon DynamoDB", "BatchWriteItem takes more than 25 writes", func() error {
			_, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": writes}})
			return err
		}},
		{"a strongly consistent Query of a global secondary index", "Query - Amazon DynamoDB", "", func() error {
			_, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t"), IndexName: aws.String("byStatus"), ConsistentRead: aws.Bool(true),
				KeyConditionExpression: aws.String("#s = :s"), ExpressionAttributeNames: map[string]string{"#s": "status"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "ON_SALE"}}})
			return err
		}},
		{"an item over 400 KB", "Constraints in Amazon DynamoDB (Items: item size) and DynamoDB item sizes and formats", "", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "big"}, "available": &types.AttributeValueMemberN{Value: "1"},
				"pad": &types.AttributeValueMemberS{Value: strings.Repeat("x", 400<<10)}}})
			return err
		}},
	}
}

// The SQS and SNS behaviours the stack relies on, on goaws (embedded) and on
// moto_server (moto). goaws v0.5.4 is patched only where third_party/goaws/PATCHES.md
// says: where it answers otherwise than the SQS or SNS API Reference, the check is
// skipped on it, naming the page, and the gap is listed on SQSServer; the stack's own
// code does not lean on it.
func TestSQS_BehavesAsTheAPIReferenceSays(t *testing.T) {
	for _, impl := range []string{embedded, moto} {
		t.Run(impl, func(t *testing.T) {
			var opts SQSOptions
			if impl == moto {
				opts.Endpoint = motoEndpoint(t)
			}
			srv, err := StartSQS(t.Context(), "127.0.0.1:0", opts)
			if err != nil {
				t.Fatal(err)
			}
			closeAtEnd(t, srv)
			client := NewSQSClient(srv.URL(), func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
			urls := createQueues(t, client, Queue{Name: "dlq"}, Queue{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "1", "RedrivePolicy": redriveTo("dlq", "2")}})
			for _, c := range sqsChecks(srv, client, urls) {
				t.Run(c.name, func(t *testing.T) {
					if impl == embedded && c.goaws != "" {
						t.Skipf("goaws v0.5.4 deviates from AWS: %s (AWS documentation: %q)", c.goaws, c.page)
					}
					if err := c.check(t); err != nil {
						t.Errorf("%v (%s)", err, c.page)
					}
				})
			}
		})
	}
}

// sqsCheck is one documented SQS or SNS behaviour: page is the AWS page saying so,
// goaws what goaws does instead ("" when it behaves so too).
type sqsCheck struct {
	name, page, goaws string
	check             func(t *testing.T) error
}

func sqsChecks(srv *SQSServer, client *sqs.Client, urls map[string]string) []sqsCheck {
	q := aws.String(urls["q"])
	attrs := func(t *testing.T) map[string]string {
		out, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: q, AttributeNames: []sqstypes.QueueAttributeName{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	return []sqsCheck{
		{"a delay over 900 s is refused", "SendMessage - Amazon Simple Queue Service", "DelaySeconds 901 is taken", func(t *testing.T) error {
			if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: q, MessageBody: aws.String("x"), DelaySeconds: 901}); err == nil {
				return errors.New("DelaySeconds 901 taken")
			}
			return nil
		}},
		{"an existing name with other attributes is QueueAlreadyExists", "CreateQueue - Amazon Simple Queue Service", "the existing queue's URL is answered", func(t *testing.T) error {
			_, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("q"), Attributes: map[string]string{"VisibilityTimeout": "7"}})
			if _, ok := errors.AsType[*sqstypes.QueueNameExists](err); !ok && !strings.Contains(fmt.Sprint(err), "QueueAlreadyExists") {
				return fmt.Errorf("CreateQueue: %v, want QueueAlreadyExists", err)
			}
			return nil
		}},
		{"a delayed message is counted as delayed", "GetQueueAttributes - Amazon Simple Queue Service", "it is counted in ApproximateNumberOfMessages and not in ApproximateNumberOfMessagesDelayed", func(t *testing.T) error {
			if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: q, MessageBody: aws.String("later"), DelaySeconds: 1}); err != nil {
				return err
			}
			if a := attrs(t); a["ApproximateNumberOfMessages"] != "0" || a["ApproximateNumberOfMessagesDelayed"] != "1" {
				return fmt.Errorf("attributes %v, want 0 visible and 1 delayed", a)
			}
			return nil
		}},
		{"ApproximateReceiveCount counts the receives, then the dead-letter queue takes the message", "ReceiveMessage - Amazon Simple Queue Service; Using dead-letter queues in Amazon SQS",
			"", func(t *testing.T) error { return receiveCounts(t, client) }},
		{"a topic's ARN names its region, and a publish reaches a subscribed queue as a notification", "CreateTopic - Amazon Simple Notification Service; Amazon SNS message and JSON formats",
			"the topic ARN has no region", func(t *testing.T) error { return publishToQueue(t, srv, client, urls) }},
	}
}

// receiveCounts sends a message to a queue of its own and receives it until it is gone:
// ApproximateReceiveCount 1 then 2, then it is in the dead-letter queue (the
// RedrivePolicy's maxReceiveCount is 2).
func receiveCounts(t *testing.T, client *sqs.Client) error {
	urls := createQueues(t, client, Queue{Name: "counted-dlq"},
		Queue{Name: "counted", Attributes: map[string]string{"VisibilityTimeout": "1", "RedrivePolicy": redriveTo("counted-dlq", "2")}})
	if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(urls["counted"]), MessageBody: aws.String("later")}); err != nil {
		return err
	}
	var counts []string
	for range pollLimit {
		out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls["counted"]), WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount}})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			counts = append(counts, m.Attributes["ApproximateReceiveCount"])
		}
		if dead := receive(t.Context(), t, client, urls["counted-dlq"]); dead != nil {
			if fmt.Sprint(counts) != "[1 2]" || aws.ToString(dead.Body) != "later" {
				return fmt.Errorf("receive counts %v, then %q in the dead-letter queue; want [1 2], then later", counts, aws.ToString(dead.Body))
			}
			return nil
		}
	}
	return fmt.Errorf("receive counts %v and nothing in the dead-letter queue", counts)
}

// publishToQueue creates a topic, subscribes the dead-letter queue to it and publishes.
func publishToQueue(t *testing.T, srv *SQSServer, client *sqs.Client, urls map[string]string) error {
	sns := NewSNSClient(srv.URL())
	topic, err := sns.CreateTopic(t.Context(), &snsapi.CreateTopicInput{Name: aws.String("AlertsTopic")})
	if err != nil {
		return err
	}
	if want := "arn:aws:sns:" + Region + ":" + AccountID + ":AlertsTopic"; aws.ToString(topic.TopicArn) != want {
		return fmt.Errorf("topic ARN %s, want %s", aws.ToString(topic.TopicArn), want)
	}
	if _, err := sns.Subscribe(t.Context(), &snsapi.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(queueARN(Region, "dlq"))}); err != nil {
		return err
	}
	if _, err := sns.Publish(t.Context(), &snsapi.PublishInput{TopicArn: topic.TopicArn, Subject: aws.String("s"), Message: aws.String("hello")}); err != nil {
		return err
	}
	for range pollLimit {
		if m := receive(t.Context(), t, client, urls["dlq"]); m != nil {
			var n struct{ Type, TopicArn, Subject, Message string }
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &n); err != nil || n != (struct{ Type, TopicArn, Subject, Message string }{"Notification", aws.ToString(topic.TopicArn), "s", "hello"}) {
				return fmt.Errorf("delivered %s (%v), want the notification envelope", aws.ToString(m.Body), err)
			}
			return nil
		}
	}
	return errors.New("nothing delivered")
}

// DynamoDB API Reference, BatchGetItem: one call returns at most 16 MB, the rest as
// UnprocessedKeys: "if you ask to retrieve 100 items, but each individual item is 300
// KB in size, the system returns 52 items (so as not to exceed the 16 MB limit)". The
// keys left over then read the other 48.
func TestDynamoDB_BatchGetItemReturnsAtMost16MB(t *testing.T) {
	eachDynamoDB(t, func(t *testing.T, impl string, client *dynamodb.Client) {
		ctx := t.Context()
		keys := make([]map[string]types.AttributeValue, 100)
		for i := range keys {
			keys[i] = key(fmt.Sprintf("k%02d", i))
			item := key(fmt.Sprintf("k%02d", i))
			item["pad"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", 300<<10-5)} // 300 KB with pk and its name
			if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: item}); err != nil {
				t.Fatal(err)
			}
		}
		out, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: keys}}})
		if err != nil {
			t.Fatal(err)
		}
		left := out.UnprocessedKeys["t"].Keys
		deviation(t, impl, "moto counts item sizes otherwise", "BatchGetItem - Amazon DynamoDB")
		if len(out.Responses["t"]) != 52 || len(left) != 48 {
			t.Fatalf("%d items and %d keys unprocessed, want 52 and 48", len(out.Responses["t"]), len(left))
		}
		out, err = client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: left}}})
		if err != nil || len(out.Responses["t"]) != 48 || len(out.UnprocessedKeys) != 0 {
			t.Errorf("the 48 keys left: %v, %d items, %d tables unprocessed; want 48 items", err, len(out.Responses["t"]), len(out.UnprocessedKeys))
		}
	})
}
