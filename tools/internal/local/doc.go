// Package local runs the AWS parts of stockguard inside one process, for the
// local runner (cmd/local) and for integration tests: an embedded
// DynamoDB-compatible server (minidyn), an embedded SQS-compatible server
// (goaws, which serves the SNS API too: the template's topics, each function's SNS
// event played as a subscription, see NewSNSClient), helpers that create tables,
// queues and topics through the real aws-sdk-go-v2 clients, an HTTP gateway that turns plain HTTP requests
// into API Gateway HTTP API (payload format 2.0) events for Lambda handlers,
// an SQS poller that plays Lambda's SQS event source mapping (Poll), and
// timers that play EventBridge rate schedules (Every), and a slog handler that
// prints one readable line per event for a terminal (ConsoleHandler). Start
// builds the whole stack from template.yaml; Stack.Run plays its event sources;
// Stack.ExposedAPI is what cmd/local serves on its listener: the local-only
// conveniences to requests sent from this machine, the deployed API's surface to
// any other.
//
// Everything here is local-only: no package under functions/ may import it,
// so none of it is linked into a deployed Lambda binary.
//
// Both servers listen on TCP (127.0.0.1:8000 and 127.0.0.1:9324 for
// cmd/local, 127.0.0.1:0 in tests) and speak the AWS JSON protocols, so the
// same clients work from Go code and from the AWS CLI with --endpoint-url.
package local

const (
	// Region is the AWS region the local clients sign for and the servers
	// report ("us-east-1"). Nothing checks it; it only has to be consistent.
	Region = "us-east-1"

	// AccountID is the 12-digit account id the local stack uses in queue
	// URLs (http://<sqs address>/<AccountID>/<queue>) and ARNs, and in the
	// requestContext.accountId of gateway events.
	AccountID = "000000000000"
)
