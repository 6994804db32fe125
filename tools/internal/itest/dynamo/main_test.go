package dynamo_test

import (
	"os"
	"testing"

	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// TestMain runs the store's suite on the AWS implementation STOCKGUARD_AWS names
// (stacktest.AWSEnv): the embedded servers when unset, moto_server with "moto".
func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, os.Getenv(stacktest.AWSEnv))) }
