package dynamo

import (
	"errors"
	"fmt"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"github.com/stockguard/stockguard/internal/inventory"
)

// definiteFailure returns the error to answer when a failed write certainly changed
// nothing: ErrBusy for throttling and conflicts, the cause itself for other client
// faults (bugs), whether the SDK models the error (smithy.FaultClient) or only saw a
// 4xx status (an unmodeled error such as ValidationException). It returns nil when the
// write may have been applied (timeouts, 5xx after the SDK's retries, a cancelled
// context): the caller must read back.
func definiteFailure(what string, cause error) error {
	if isTransient(cause) {
		return inventory.Busy(what, cause)
	}
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if errors.As(cause, &ae) && ae.ErrorFault() == smithy.FaultClient ||
		errors.As(cause, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500 {
		return fmt.Errorf("%s: %w", what, cause)
	}
	return nil
}

// storeError wraps a failed read with context, marking it inventory.ErrBusy when
// DynamoDB was throttled, conflicted or unavailable (a server fault or no answer at
// all after the SDK's retries): nothing was written, so the caller may answer "busy,
// retry". A read cut short by its caller's context (cancelled, or past its deadline)
// is answered the same way but says so, and is errors.Is the context's error
// (inventory.Busy). Client faults stay plain errors: they are bugs.
func (s *store) storeError(op string, err error) error {
	if ferr := definiteFailure(op, err); ferr != nil {
		return ferr // busy when throttled or conflicted; a plain error for other 4xx
	}
	return inventory.Busy(op, err)
}

// outcomeUnknown is the error for a write whose outcome stayed unknown even after it
// was sent again under its ClientRequestToken (store.resend) and read back: it may
// have been applied, so it wraps no inventory sentinel — never inventory.ErrBusy,
// whose answer promises that nothing changed — and the API answers it 500 INTERNAL
// (docs/contract.md, "Ambiguous outcomes" in docs/design.md).
func outcomeUnknown(what string, cause error) error {
	return fmt.Errorf("%s: outcome unknown after %v", what, cause)
}
