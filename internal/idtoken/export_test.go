package idtoken

// JOSESignature exposes the DER → r||s conversion for a deterministic padding test.
var JOSESignature = joseSignature
