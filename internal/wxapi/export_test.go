package wxapi

import "time"

// DecodeToken runs a Client's handling of a getStableAccessToken answer, for the fuzz test.
func DecodeToken(status int, body []byte) (string, time.Duration, error) {
	return decodeToken(status, body)
}

// DecodeResult runs a Client's handling of an {"errcode","errmsg"} answer to op.
func DecodeResult(op string, status int, body []byte) error { return decodeResult(op, status, body) }
