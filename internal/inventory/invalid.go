package inventory

// InvalidRequestError is a request that breaks the contract's input rules, with the
// reason in words safe to show the client (the message of a 400 INVALID_REQUEST).
// Like io/fs.PathError it carries its parts as fields and unwraps to the sentinel,
// so callers test it with errors.Is(err, ErrInvalidRequest) and read the reason with
// errors.As, never from the error text.
type InvalidRequestError struct {
	Reason string // e.g. "items[0].qty must be an integer from 1 to 9999"
}

// Error reports ErrInvalidRequest's text and the reason.
func (e *InvalidRequestError) Error() string { return ErrInvalidRequest.Error() + ": " + e.Reason }

// Unwrap lets errors.Is see ErrInvalidRequest.
func (e *InvalidRequestError) Unwrap() error { return ErrInvalidRequest }
