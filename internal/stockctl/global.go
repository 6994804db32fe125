package stockctl

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
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

// regionName is the shape of an AWS region's name: lowercase groups of letters, the
// last of digits, joined by hyphens (us-east-1, cn-north-1, us-gov-west-1,
// ap-southeast-5). A value of another shape would be signed for (SigV4's credential
// scope) or put into a CloudFormation host name as given.
var regionName = regexp.MustCompile(`^[a-z]+(-[a-z]+)+-[0-9]+$`)

// stackName is the shape of what --stack names: a stack's name ("can contain only
// alphanumeric characters (case sensitive) and hyphens. It must start with an
// alphabetical character and can't be longer than 128 characters", AWS CloudFormation
// API Reference, CreateStack, StackName) or its unique id, the stack's ARN
// (DescribeStacks takes either).
var stackName = regexp.MustCompile(`^([A-Za-z][-A-Za-z0-9]{0,127}|arn:aws[-a-z]*:cloudformation:[a-z0-9-]+:[0-9]{12}:stack/[A-Za-z][-A-Za-z0-9]{0,127}/[-0-9a-f]+)$`)

// checkRegion refuses a region from where (a flag, the environment or the profile)
// not shaped as a region's name (regionName): a usage error quoting it, made
// printable.
func checkRegion(region, where string) error {
	if !regionName.MatchString(region) {
		return usageError("%s %q is not an AWS region name (e.g. us-east-1, cn-north-1, us-gov-west-1)", where, printable(region))
	}
	return nil
}

// splitGlobals takes the global flags out of args, wherever they are before a "--"
// (-name value, --name value, -name=value or --name=value), and returns them with the
// rest: the command and its own arguments. -h or --help counts as global only before
// the command; --version anywhere, last. Errors: a global flag without its value or
// given twice, an argument after --version, a --region not shaped as a region's name (regionName), a --stack not shaped
// as a stack's name or id (stackName).
func splitGlobals(args []string, endpoint string) (globals, []string, error) {
	g := globals{endpoint: endpoint, output: "table"}
	var rest []string
	given := map[string]bool{}
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
		case name == "version" && !hasValue && i+1 < len(args):
			return g, nil, usageError("--version takes nothing after it, got %q", printable(args[i+1]))
		case name == "version" && !hasValue:
			g.version = true
		case (name == "h" || name == "help") && len(rest) == 0:
			g.help = true
		case slices.Contains(valued, name) && given[name]:
			return g, nil, usageError("%s given twice: it takes one value", dashed(name))
		case slices.Contains(valued, name):
			given[name] = true
			if !hasValue {
				if i+1 == len(args) {
					return g, nil, usageError("flag needs an argument: %s", a)
				}
				i++
				value = args[i]
			}
			if name == "region" {
				if err := checkRegion(value, "--region"); err != nil {
					return g, nil, err
				}
			}
			if name == "stack" && !stackName.MatchString(value) {
				return g, nil, usageError("--stack %q is not a CloudFormation stack's name (letters, digits and hyphens, a letter first, at most 128) or id", printable(value))
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
const credentialsHint = "give --profile NAME, or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"

// awsConfigFiles names the AWS CLI's shared configuration files, where profiles are defined.
const awsConfigFiles = "~/.aws/config and ~/.aws/credentials"

// credentialsProblem is what the operator reads when the AWS configuration of profile
// ("" for the default chain) cannot be loaded (loading), or gives no usable
// credentials: what is missing and how to give it. The SDK's error is left out: it
// names credential providers, EC2 instance metadata calls and HTTP statuses, nothing
// an operator acts on, and stockctl has no verbose mode to show it in.
func credentialsProblem(profile string, loading bool) error {
	switch {
	case loading && profile != "":
		return fmt.Errorf("cannot load AWS profile %q: check that %s define it and are well formed, or give another with --profile", profile, awsConfigFiles)
	case loading:
		return fmt.Errorf("cannot load the AWS configuration: check that %s and the AWS_ environment variables are well formed", awsConfigFiles)
	case profile != "":
		return fmt.Errorf("AWS profile %q gives no usable credentials: %s", profile, profileFix(profile))
	}
	return errors.New("no AWS credentials found: " + credentialsHint)
}

// profileFix says how to mend the credentials of the AWS profile named profile.
func profileFix(profile string) string {
	return fmt.Sprintf("check its keys or role in %s (an SSO profile: aws sso login --profile %s), or give another with --profile", awsConfigFiles, profile)
}

// refusedCredentials are the error codes of AWS APIs for a request whose credentials
// AWS does not take: unknown, expired or wrongly signed (AWS CloudFormation API
// Reference, "Common Errors",
// https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/CommonErrors.html;
// ExpiredTokenException and UnrecognizedClientException are the JSON protocols'
// names of the same refusals).
var refusedCredentials = []string{"InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException", "UnrecognizedClientException",
	"SignatureDoesNotMatch", "IncompleteSignature", "MissingAuthenticationToken"}

// requestExpired is the error code of AWS APIs for a request whose signing time is more
// than 15 minutes from AWS's own ("The request reached the service more than 15 minutes
// after the date stamp on the request …, or the date stamp on the request is more than
// 15 minutes in the future", the same page): this machine's clock, not its credentials.
const requestExpired = "RequestExpired"

// deniedCodes are the error codes of AWS APIs for credentials AWS takes but whose
// principal may not make the call (the same page).
var deniedCodes = []string{"AccessDenied", "AccessDeniedException"}

// credentialsRefused says that AWS refused the credentials of profile ("" for the
// default chain) reading stack, with the error code, code (made printable; never AWS's
// message, which names the account and principal), and how to mend them; for
// requestExpired, that AWS refused the request's signing time: check the clock.
func credentialsRefused(stack, profile, code string) error {
	code = printable(code)
	switch {
	case code == requestExpired:
		return fmt.Errorf("read stack %s: AWS refused the request as signed at another time than its own (%s): check this machine's clock (AWS takes a request signed within 15 minutes of its time)", stack, code)
	case slices.Contains(deniedCodes, code):
		return fmt.Errorf("read stack %s: AWS refused these credentials (%s): they may not call cloudformation:DescribeStacks; use a profile that may", stack, code)
	case profile != "":
		return fmt.Errorf("read stack %s: AWS refused the credentials of profile %q (%s): %s", stack, profile, code, profileFix(profile))
	}
	return fmt.Errorf("read stack %s: AWS refused these credentials (%s): renew or replace them: %s", stack, code, credentialsHint)
}

// loadConfig loads the AWS configuration with env.LoadConfig; an error is said as
// credentialsProblem says it.
func loadConfig(ctx context.Context, env Env, g globals, o ConfigOptions) (aws.Config, error) {
	cfg, err := env.LoadConfig(ctx, o)
	if err != nil {
		return cfg, credentialsProblem(g.profileName(env), true)
	}
	return cfg, nil
}

// profileName is the profile the AWS configuration is loaded from: --profile, else
// AWS_PROFILE, else "" (the default chain).
func (g globals) profileName(env Env) string {
	if g.profile != "" {
		return g.profile
	}
	return env.Getenv("AWS_PROFILE")
}

// ApiURLOutput is the template's stack output naming the HTTP API's URL (template.yaml,
// Outputs), which --stack reads.
const ApiURLOutput = "ApiUrl"

// stackEndpoint is the API URL of the CloudFormation stack name: its ApiUrl output, read
// with env.StackOutputs (DescribeStacks) under the region and profile of g. Errors: no
// region, no usable credentials (said before any call), no such stack or output, an
// output that is not an http(s) URL (the stack's, not the command line's: not a usage
// error; one holding a user or password, a query or a fragment too: endpointFault), or
// the AWS configuration cannot be loaded.
func stackEndpoint(ctx context.Context, env Env, g globals) (string, error) {
	if env.StackOutputs == nil {
		return "", usageError("--stack is not available in this build")
	}
	cfg, err := loadConfig(ctx, env, g, ConfigOptions{Region: g.region, Profile: g.profile})
	if err != nil {
		return "", err
	}
	if cfg.Region == "" {
		return "", usageError("no AWS region for --stack: give --region, or set AWS_REGION or the profile's region")
	}
	if err := checkRegion(cfg.Region, "the region from AWS_REGION or the profile,"); err != nil {
		return "", err
	}
	if err := credentialsFailure(ctx, cfg.Credentials, g.profileName(env)); err != nil {
		return "", err
	}
	read, cancel := context.WithTimeout(ctx, stackReadWait)
	defer cancel()
	outputs, err := env.StackOutputs(read, cfg, g.stack)
	if err != nil {
		return "", stackError(env, g, cfg.Region, err)
	}
	url, ok := outputs[ApiURLOutput]
	switch fault := endpointFault(url); {
	case !ok || url == "":
		return "", fmt.Errorf("stack %s has no %s output: is it a stockguard stack?", g.stack, ApiURLOutput)
	case fault != "":
		// %q: as given (shownURL: no password), its white space and control characters escaped
		return "", fmt.Errorf("stack %s's %s output %q %s: is it a stockguard stack?", g.stack, ApiURLOutput, shownURL(url), fault)
	}
	return url, nil
}

// stackError says why stack g.stack's outputs could not be read in region: an answer
// not about the one stack asked for alone (stackAnswerError), credentials,
// permission or the request's signing time refused (credentialsRefused: the error
// code, no AWS message), another CloudFormation refusal by its message (e.g. "Stack
// with id shop does not exist"), or by its status and error code when it gave none,
// CloudFormation's failure (an answer 5xx, or one that is not an AWS error or DescribeStacks's answer:
// its HTTP status and, when it has one, its error code, made printable; no AWS error
// message) with ExitError, or CloudFormation not reached (no answer at all: what
// failed when the SDK's error says it, netFailure's words: connection refused, no such
// host, timed out, its TLS certificate not trusted…; an *UnreachableError: Run exits
// ExitUnreachable, as for an endpoint that does not answer); never the SDK's request
// details.
func stackError(env Env, g globals, region string, err error) error {
	var other *stackAnswerError
	if errors.As(err, &other) {
		return fmt.Errorf("read stack %s: CloudFormation in %s answered %s, not the one stack asked for: none of its outputs is used", g.stack, region, other.what)
	}
	var apiErr smithy.APIError
	isAPIErr := errors.As(err, &apiErr)
	var answer *smithyhttp.ResponseError
	status := 0 // the SDK's answer to a request not sent has none
	if errors.As(err, &answer) {
		status = answer.HTTPStatusCode()
	}
	switch {
	case isAPIErr && (slices.Contains(refusedCredentials, apiErr.ErrorCode()) || slices.Contains(deniedCodes, apiErr.ErrorCode()) || apiErr.ErrorCode() == requestExpired):
		return credentialsRefused(g.stack, g.profileName(env), apiErr.ErrorCode())
	case isAPIErr && status/100 != 5 && givesReason(apiErr):
		return fmt.Errorf("read stack %s: %s", g.stack, printable(apiErr.ErrorMessage()))
	case isAPIErr && status/100 == 4:
		return fmt.Errorf("read stack %s: CloudFormation in %s answered %d %s%s and gave no reason", g.stack, region, status, statusText(status), codeNote(apiErr))
	case status != 0:
		what := "an answer stockctl cannot read"
		if isAPIErr {
			what = printable(apiErr.ErrorCode())
		}
		return fmt.Errorf("read stack %s: CloudFormation in %s failed: %d %s (%s)", g.stack, region, status, statusText(status), what)
	}
	reason := "check the network and --region"
	if kind := netFailure(err); kind != "" {
		reason = kind + " (" + reason + ")"
	}
	return fmt.Errorf("read stack %s: %w", g.stack, &UnreachableError{Endpoint: "CloudFormation in " + region, Reason: reason})
}

// givesReason reports whether err, an AWS error, has a message to show: the SDK puts
// "UnknownError" in place of an answer's missing message.
func givesReason(err smithy.APIError) bool {
	m := printable(err.ErrorMessage())
	return m != "" && m != "UnknownError"
}

// codeNote is err's error code, made printable, as " (CODE)"; "" when the answer
// had none (the SDK's "UnknownError").
func codeNote(err smithy.APIError) string {
	if c := printable(err.ErrorCode()); c != "" && c != "UnknownError" {
		return " (" + c + ")"
	}
	return ""
}

// stackReadWait bounds reading a stack's outputs, the SDK's retries included: a
// CloudFormation endpoint that never answers is unreachable (exit 5), not a wait
// without end.
const stackReadWait = 150 * time.Second

// StackOutputsFunc reads a CloudFormation stack's outputs, key → value
// (DescribeStacks; AWS CloudFormation API Reference, "DescribeStacks", "Output").
type StackOutputsFunc func(ctx context.Context, cfg aws.Config, stack string) (map[string]string, error)

// stackAnswerError is a DescribeStacks answer that is not about the one stack asked
// for, alone: what says what it lists instead (n stacks, stack "other", two ApiUrl
// outputs); none of its outputs is taken.
type stackAnswerError struct{ what string }

func (e *stackAnswerError) Error() string { return "DescribeStacks answered " + e.what }

// DescribeStackOutputs is the StackOutputsFunc of CloudFormation itself: the outputs
// of the stack named stack (its name or id), with DescribeStacks under cfg. Errors are
// the SDK's (an *smithyhttp.ResponseError with CloudFormation's status when it
// answered, a smithy.APIError when the answer was an AWS error), or a
// *stackAnswerError when the answer lists other than exactly one stack, a stack whose
// StackName (exactly: names are case sensitive) or, for an ARN, StackId is not stack,
// or an output key twice.
func DescribeStackOutputs(ctx context.Context, cfg aws.Config, stack string) (map[string]string, error) {
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	if err != nil {
		return nil, err
	}
	if len(out.Stacks) != 1 {
		return nil, &stackAnswerError{fmt.Sprintf("%d stacks", len(out.Stacks))}
	}
	s := out.Stacks[0]
	if got := aws.ToString(s.StackName); strings.HasPrefix(stack, "arn:") && aws.ToString(s.StackId) != stack {
		return nil, &stackAnswerError{fmt.Sprintf("stack id %q", printable(aws.ToString(s.StackId)))}
	} else if !strings.HasPrefix(stack, "arn:") && got != stack {
		return nil, &stackAnswerError{fmt.Sprintf("stack %q", printable(got))}
	}
	outputs := map[string]string{}
	for _, o := range s.Outputs {
		key := aws.ToString(o.OutputKey)
		if _, twice := outputs[key]; twice {
			return nil, &stackAnswerError{fmt.Sprintf("two %s outputs", printable(key))}
		}
		outputs[key] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}
