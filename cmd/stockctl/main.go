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
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/smithy-go/logging"

	"github.com/stockguard/stockguard/internal/buildinfo"
	"github.com/stockguard/stockguard/internal/stockctl"
)

func main() {
	env := stockctl.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		HTTP: &http.Client{Timeout: 150 * time.Second},
		LoadConfig: func(ctx context.Context, o stockctl.ConfigOptions) (aws.Config, error) {
			// The SDK's own log lines (e.g. its IMDSv1 fallback warning) would stand
			// before stockctl's answer; its errors stockctl says in an operator's words.
			opts := []func(*config.LoadOptions) error{config.WithRegion(o.Region), config.WithSharedConfigProfile(o.Profile), config.WithLogger(logging.Nop{})}
			if o.Local { // the local stack needs no credentials: do not ask the EC2 metadata service
				opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
			}
			return config.LoadDefaultConfig(ctx, opts...)
		},
		StackOutputs: stackOutputs,
		Version:      buildinfo.String("stockctl"),
	}
	os.Exit(stockctl.Run(context.Background(), os.Args[1:], env))
}

// stackOutputs is the outputs of the CloudFormation stack named stack
// (DescribeStacks), key → value.
func stackOutputs(ctx context.Context, cfg aws.Config, stack string) (map[string]string, error) {
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	if err != nil {
		return nil, err
	}
	outputs := map[string]string{}
	for _, s := range out.Stacks {
		for _, o := range s.Outputs {
			outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
		}
	}
	return outputs, nil
}
