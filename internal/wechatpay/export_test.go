package wechatpay

// DecodeVerified runs the part of Parse that follows signature verification, so that
// FuzzParse can reach envelope, decryption and transaction parsing without an RSA
// signature per input (RSA under fuzzing instrumentation starves the fuzzer).
func (v *Verifier) DecodeVerified(body []byte) (*Notification, error) {
	return v.decode(body)
}

// DecodeVerifiedRefund is DecodeVerified for refund notifications (ParseRefund after
// signature verification), for FuzzParse's refund modes.
func (v *Verifier) DecodeVerifiedRefund(body []byte) (*RefundNotification, error) {
	return v.decodeRefundNotification(body)
}
