package stockctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// ConfigOptions is what a run asks Env.LoadConfig for: the signing region ("" for the
// AWS configuration's), the shared-config profile ("" for the default or AWS_PROFILE)
// and whether the endpoint is local (loopback: no credentials needed, so the EC2
// instance metadata service is not asked).
type ConfigOptions struct {
	Region, Profile string
	Local           bool
}

// globals are stockctl's global flags, accepted before or after the command.
type globals struct {
	endpoint, region, profile, stack, output string
	version, help                            bool
}

// valued are the global flags that take a value.
var valued = []string{"endpoint", "region", "profile", "stack", "o"}

// splitGlobals takes the global flags out of args, wherever they are before a "--"
// (-name value, --name value, -name=value or --name=value), and returns them with the
// rest: the command and its own arguments. -h or --help counts as global only before
// the command; --version anywhere. Errors: a global flag without its value.
func splitGlobals(args []string, endpoint string) (globals, []string, error) {
	g := globals{endpoint: endpoint, output: "table"}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" { // the end of the flags: before the command stockctl's, after it the command's
			if len(rest) == 0 {
				i++
			}
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		case name == "version" && !hasValue:
			g.version = true
		case (name == "h" || name == "help") && len(rest) == 0:
			g.help = true
		case slices.Contains(valued, name):
			if !hasValue {
				if i+1 == len(args) {
					return g, nil, usageError("flag needs an argument: %s", a)
				}
				i++
				value = args[i]
			}
			*g.field(name) = value
		default:
			rest = append(rest, a)
		}
	}
	return g, rest, nil
}

// field is the global flag name's value.
func (g *globals) field(name string) *string {
	return map[string]*string{"endpoint": &g.endpoint, "region": &g.region, "profile": &g.profile, "stack": &g.stack, "o": &g.output}[name]
}

// credentialsHint says how an operator gives stockctl AWS credentials.
const credentialsHint = "give --profile, or set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"

// ApiURLOutput is the template's stack output naming the HTTP API's URL (template.yaml,
// Outputs), which --stack reads.
const ApiURLOutput = "ApiUrl"

// stackEndpoint is the API URL of the CloudFormation stack name: its ApiUrl output, read
// with env.StackOutputs (DescribeStacks) under the region and profile of g. Errors: no
// region, no usable credentials (said before any call), no such stack or output, or
// the AWS configuration cannot be loaded.
func stackEndpoint(ctx context.Context, env Env, g globals) (string, error) {
	if env.StackOutputs == nil {
		return "", usageError("--stack is not available in this build")
	}
	cfg, err := env.LoadConfig(ctx, ConfigOptions{Region: g.region, Profile: g.profile})
	if err != nil {
		return "", fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return "", errors.New("no AWS region for --stack: give --region, or set AWS_REGION or the profile's region")
	}
	if cfg.Credentials == nil {
		return "", errors.New("no AWS credentials found: " + credentialsHint)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return "", fmt.Errorf("no usable AWS credentials (%s): %w", credentialsHint, err)
	}
	outputs, err := env.StackOutputs(ctx, cfg, g.stack)
	if err != nil {
		return "", fmt.Errorf("read stack %s: %w", g.stack, err)
	}
	url, ok := outputs[ApiURLOutput]
	if !ok || url == "" {
		return "", fmt.Errorf("stack %s has no %s output: is it a stockguard stack?", g.stack, ApiURLOutput)
	}
	return url, nil
}

// StackOutputsFunc reads a CloudFormation stack's outputs, key → value
// (DescribeStacks; AWS CloudFormation API Reference, "DescribeStacks", "Output").
type StackOutputsFunc func(ctx context.Context, cfg aws.Config, stack string) (map[string]string, error)
