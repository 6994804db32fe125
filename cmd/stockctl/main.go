// Command stockctl drives the merchant API (/admin/ routes): create SKUs, restock and
// write off, reshard, put on or off sale (at a time), list, read ledgers and orders,
// run reconcile, load a seed file. Requests are signed with SigV4 (service
// execute-api) from the default AWS credential chain; --endpoint (or
// STOCKCTL_ENDPOINT) names the API, e.g. the local stack's http://127.0.0.1:3000,
// or --stack NAME reads it from the deployed stack's ApiUrl output; --profile picks
// the shared-config profile; --version, and `stockctl completion bash|zsh|fish`.
// Tables for people, -o json for scripts; a non-zero exit status and a one-line
// message on every error. Run it without arguments for the commands.
package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go/logging"

	"github.com/stockguard/stockguard/internal/buildinfo"
	"github.com/stockguard/stockguard/internal/stockctl"
)

func main() {
	// Go's net/http logs through the standard logger (e.g. bytes a server sent past
	// its answer); stockctl says each error in its one line and uses no other log.
	log.SetOutput(io.Discard)
	os.Exit(stockctl.Run(context.Background(), os.Args[1:], newEnv()))
}

// newEnv is stockctl's environment: this process's streams and environment, the AWS
// SDK's configuration and CloudFormation, and the build's version. Its HTTP client
// keeps no connection idle after an answer: bytes a server sends past an answer's
// Content-Length on an idle connection Go's transport would log, server data and all.
func newEnv() stockctl.Env {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableKeepAlives = true
	return stockctl.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		HTTP: &http.Client{Timeout: stockctl.RequestWait, Transport: transport},
		LoadConfig: func(ctx context.Context, o stockctl.ConfigOptions) (aws.Config, error) {
			// The SDK's own log lines (e.g. its IMDSv1 fallback warning) would stand
			// before stockctl's answer; its errors stockctl says in an operator's words.
			opts := []func(*config.LoadOptions) error{config.WithRegion(o.Region), config.WithSharedConfigProfile(o.Profile), config.WithLogger(logging.Nop{})}
			if o.Local { // the local stack needs no credentials: do not ask the EC2 metadata service
				opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
			}
			return config.LoadDefaultConfig(ctx, opts...)
		},
		StackOutputs: stockctl.DescribeStackOutputs,
		Version:      buildinfo.String("stockctl"),
	}
}
