package wechatpay

// ReadVerifiedAnswer runs what a Client does with an answer of operation op ("JSAPI下单" or
// "查询订单") once its signature has verified, so that FuzzClientAnswer reaches the answer
// parsers without an RSA signature per input. It returns the prepay_id or the transaction.
func (c *Client) ReadVerifiedAnswer(op string, status int, body []byte, outTradeNo string) (prepayID string, tx *Transaction, err error) {
	body, err = readAnswer(op, status, "", body)
	if err != nil {
		return "", nil, err
	}
	if op == "JSAPI下单" {
		prepayID, err = decodePrepay(body)
		return prepayID, nil, err
	}
	tx, err = c.decodeQuery(body, outTradeNo)
	return "", tx, err
}

// CheckAnswer runs the whole of a Client's answer handling, signature verification
// included, for an answer to op.
func (c *Client) CheckAnswer(op string, status int, h Headers, body []byte) ([]byte, error) {
	header := map[string][]string{
		HeaderTimestamp: {h.Timestamp}, HeaderNonce: {h.Nonce}, HeaderSignature: {h.Signature}, HeaderSerial: {h.Serial},
	}
	return c.checkResponse(op, status, header, body)
}
