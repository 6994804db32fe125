// Package paytest is WeChat Pay's side of the APIv3 merchant API and its notifications, for
// tests and the local stack only; it is never linked into a function binary. A Platform
// holds what WeChat Pay holds — the platform private key and the merchant's APIv3 key — and
// builds notifications exactly as WeChat Pay sends them ("支付成功回调通知", "签名验证",
// "证书和回调报文解密"), so that wechatpay.Verifier can be tested against the real format.
// A Server is a stand-in WeChat Pay on its own port that wechatpay.Client talks to:
// JSAPI ordering, query and close, refunds and refund queries, with real signatures both
// ways; a buyer paying, followed by the notification POSTed to the merchant's notify_url;
// and refunds settling, followed by the refund notification ("退款结果通知").
package paytest

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/stockguard/stockguard/internal/wechatpay"
)

// KeyBits is the size of the RSA key NewPlatform generates (WeChat Pay platform keys are
// RSA 2048).
const KeyBits = 2048

// AssociatedData is the resource.associated_data WeChat Pay uses for transactions.
const AssociatedData = "transaction"

// ContentType is the content-type header of a notification.
const ContentType = "application/json"

// beijing is the +08:00 offset WeChat Pay writes times in.
var beijing = time.FixedZone("CST", 8*60*60)

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Platform plays WeChat Pay for one merchant. Fields may be changed between calls (for
// example Serial, to test an unknown key id); a Platform is not safe for concurrent
// mutation, but concurrent Notify calls on an unchanged Platform are fine.
type Platform struct {
	Key          *rsa.PrivateKey // platform signing key
	Serial       string          // Wechatpay-Serial naming Key's public half
	APIv3Key     []byte          // the merchant's 32-byte APIv3 key
	MchID, AppID string          // defaults for transactions that leave them empty
}

// NewPlatform generates a KeyBits RSA key, a random 40-hex-digit serial (like a platform
// certificate serial) and a random 32-character alphanumeric APIv3 key, all from
// crypto/rand. mchID and appID must be non-empty.
func NewPlatform(mchID, appID string) (*Platform, error) {
	if mchID == "" || appID == "" {
		return nil, errors.New("paytest: mchID and appID are required")
	}
	key, serial, err := newKey()
	if err != nil {
		return nil, err
	}
	apiV3Key, err := RandomString(wechatpay.APIv3KeySize)
	if err != nil {
		return nil, err
	}
	return &Platform{
		Key:      key,
		Serial:   serial,
		APIv3Key: []byte(apiV3Key),
		MchID:    mchID,
		AppID:    appID,
	}, nil
}

// newKey generates a KeyBits RSA key and a random serial of 40 upper-case hex digits
// (like a certificate serial), from crypto/rand.
func newKey() (*rsa.PrivateKey, string, error) {
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, "", fmt.Errorf("paytest: generate key: %w", err)
	}
	serial := make([]byte, 20)
	if _, err := rand.Read(serial); err != nil {
		return nil, "", fmt.Errorf("paytest: serial: %w", err)
	}
	return key, strings.ToUpper(hex.EncodeToString(serial)), nil
}

// Config returns a verifier configuration that trusts this platform: its merchant, APIv3
// key (copied) and Serial → public key. MaxSkew and Now are left zero (defaults).
func (p *Platform) Config() wechatpay.Config {
	return wechatpay.Config{
		MchID:      p.MchID,
		AppID:      p.AppID,
		APIv3Key:   append([]byte(nil), p.APIv3Key...),
		PublicKeys: map[string]*rsa.PublicKey{p.Serial: &p.Key.PublicKey},
	}
}

// Secret returns the Secrets Manager secret JSON (see wechatpay.Secret) that configures a
// merchant to trust this platform: its ids, APIv3 key and public key as a PEM "PUBLIC
// KEY" block under Serial.
func (p *Platform) Secret() ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(&p.Key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("paytest: marshal public key: %w", err)
	}
	return json.Marshal(wechatpay.Secret{
		MchID: p.MchID, AppID: p.AppID, APIv3Key: string(p.APIv3Key),
		PublicKeys: map[string]string{p.Serial: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
	})
}

// Notify builds the notification WeChat Pay would POST for tx at now: the transaction JSON
// (documented field names; success_time RFC 3339 at +08:00, omitted when zero; empty
// MchID/AppID replaced by the Platform's) sealed by Seal with event_type
// TRANSACTION.SUCCESS when tx.TradeState is SUCCESS ("TRANSACTION." + trade_state
// otherwise, which WeChat Pay does not send — useful for negative tests), and headers from
// Headers. Header names are lower case, as API Gateway HTTP API delivers them.
func (p *Platform) Notify(tx wechatpay.Transaction, now time.Time) (headers map[string]string, body []byte, err error) {
	if tx.MchID == "" {
		tx.MchID = p.MchID
	}
	if tx.AppID == "" {
		tx.AppID = p.AppID
	}
	plaintext, err := MarshalTransaction(tx)
	if err != nil {
		return nil, nil, err
	}
	event := wechatpay.EventTransactionSuccess
	if tx.TradeState != wechatpay.TradeStateSuccess {
		event = "TRANSACTION." + string(tx.TradeState)
	}
	body, err = p.Seal(plaintext, event, now)
	if err != nil {
		return nil, nil, err
	}
	headers, err = p.Headers(body, now)
	if err != nil {
		return nil, nil, err
	}
	return headers, body, nil
}

// Seal encrypts plaintext (transaction JSON) and wraps it in a notification envelope
// ("支付成功回调通知"): random UUID-shaped id, create_time now at +08:00, resource_type
// encrypt-resource, the given event_type, summary "支付成功" for TRANSACTION.SUCCESS, and
// the resource from Encrypt with associated_data "transaction".
func (p *Platform) Seal(plaintext []byte, eventType string, now time.Time) ([]byte, error) {
	return p.seal(wechatpay.OriginalTypeTransaction, plaintext, eventType, now)
}

// SealRefund is Seal for a refund notification ("退款结果通知"): plaintext is refund JSON
// (see MarshalRefundNotice), original_type and associated_data are "refund", and the
// summary is "退款成功", "退款关闭" or "退款异常" by event_type.
func (p *Platform) SealRefund(plaintext []byte, eventType string, now time.Time) ([]byte, error) {
	return p.seal(wechatpay.OriginalTypeRefund, plaintext, eventType, now)
}

// summaries are the envelope summaries of the documented event types.
var summaries = map[string]string{
	wechatpay.EventTransactionSuccess: "支付成功",
	wechatpay.EventRefundSuccess:      "退款成功",
	wechatpay.EventRefundClosed:       "退款关闭",
	wechatpay.EventRefundAbnormal:     "退款异常",
}

// seal encrypts plaintext as a resource of originalType (also its associated_data) and
// wraps it in an envelope of eventType; undocumented event types get themselves as summary.
func (p *Platform) seal(originalType string, plaintext []byte, eventType string, now time.Time) ([]byte, error) {
	res, err := p.encrypt(originalType, plaintext, originalType)
	if err != nil {
		return nil, err
	}
	id, err := randomUUID()
	if err != nil {
		return nil, err
	}
	summary, ok := summaries[eventType]
	if !ok {
		summary = eventType
	}
	return marshal(Envelope{
		ID:           id,
		CreateTime:   now.In(beijing).Format(time.RFC3339),
		ResourceType: wechatpay.ResourceTypeEncrypted,
		EventType:    eventType,
		Summary:      summary,
		Resource:     res,
	})
}

// Envelope is a notification body in the documented field order.
type Envelope struct {
	ID           string   `json:"id"`
	CreateTime   string   `json:"create_time"`
	ResourceType string   `json:"resource_type"`
	EventType    string   `json:"event_type"`
	Summary      string   `json:"summary"`
	Resource     Resource `json:"resource"`
}

// Resource is an encrypted notification resource ("证书和回调报文解密").
type Resource struct {
	OriginalType   string `json:"original_type"`   // "transaction" or "refund"
	Algorithm      string `json:"algorithm"`       // "AEAD_AES_256_GCM"
	Ciphertext     string `json:"ciphertext"`      // base64(ciphertext || 16-byte tag)
	AssociatedData string `json:"associated_data"` // GCM additional data
	Nonce          string `json:"nonce"`           // 12-character GCM nonce
}

// Encrypt seals plaintext with AES-256-GCM under APIv3Key, a fresh random 12-character
// alphanumeric nonce and associatedData, returning the resource object WeChat Pay sends.
func (p *Platform) Encrypt(plaintext []byte, associatedData string) (Resource, error) {
	return p.encrypt(wechatpay.OriginalTypeTransaction, plaintext, associatedData)
}

// encrypt is Encrypt with the resource's original_type.
func (p *Platform) encrypt(originalType string, plaintext []byte, associatedData string) (Resource, error) {
	block, err := aes.NewCipher(p.APIv3Key)
	if err != nil {
		return Resource{}, fmt.Errorf("paytest: APIv3 key: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return Resource{}, fmt.Errorf("paytest: AES-GCM: %w", err)
	}
	nonce, err := RandomString(gcm.NonceSize())
	if err != nil {
		return Resource{}, err
	}
	sealed := gcm.Seal(nil, []byte(nonce), plaintext, []byte(associatedData))
	return Resource{
		OriginalType:   originalType,
		Algorithm:      wechatpay.AlgorithmAEADAES256GCM,
		Ciphertext:     base64.StdEncoding.EncodeToString(sealed),
		AssociatedData: associatedData,
		Nonce:          nonce,
	}, nil
}

// Headers signs body as sent at now (Wechatpay-Timestamp = now.Unix(), a fresh random
// 32-character Wechatpay-Nonce) and returns the lower-case notification headers:
// wechatpay-timestamp, wechatpay-nonce, wechatpay-signature, wechatpay-serial,
// wechatpay-signature-type and content-type. Use it to deliver hand-built bodies.
func (p *Platform) Headers(body []byte, now time.Time) (map[string]string, error) {
	nonce, err := RandomString(32)
	if err != nil {
		return nil, err
	}
	timestamp := strconv.FormatInt(now.Unix(), 10)
	sig, err := p.Sign(timestamp, nonce, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		strings.ToLower(wechatpay.HeaderTimestamp):     timestamp,
		strings.ToLower(wechatpay.HeaderNonce):         nonce,
		strings.ToLower(wechatpay.HeaderSignature):     sig,
		strings.ToLower(wechatpay.HeaderSerial):        p.Serial,
		strings.ToLower(wechatpay.HeaderSignatureType): wechatpay.SignatureType,
		"content-type": ContentType,
	}, nil
}

// Sign returns the base64 Wechatpay-Signature of timestamp+"\n"+nonce+"\n"+body+"\n":
// SHA256 with RSA, PKCS #1 v1.5, under Key ("签名验证").
func (p *Platform) Sign(timestamp, nonce string, body []byte) (string, error) {
	h := sha256.New()
	h.Write([]byte(timestamp + "\n" + nonce + "\n"))
	h.Write(body)
	h.Write([]byte("\n"))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.Key, crypto.SHA256, h.Sum(nil))
	if err != nil {
		return "", fmt.Errorf("paytest: sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// MarshalTransaction renders tx as the documented transaction JSON: appid, mchid,
// out_trade_no, transaction_id, trade_type, trade_state, trade_state_desc, bank_type,
// attach, success_time (RFC 3339 at +08:00, omitted when zero), payer.openid and
// amount{total, payer_total, currency, payer_currency} in fen.
func MarshalTransaction(tx wechatpay.Transaction) ([]byte, error) {
	type payer struct {
		OpenID string `json:"openid"`
	}
	type amount struct {
		Total         int64  `json:"total"`
		PayerTotal    int64  `json:"payer_total"`
		Currency      string `json:"currency"`
		PayerCurrency string `json:"payer_currency"`
	}
	w := struct {
		AppID          string `json:"appid"`
		MchID          string `json:"mchid"`
		OutTradeNo     string `json:"out_trade_no"`
		TransactionID  string `json:"transaction_id,omitempty"`
		TradeType      string `json:"trade_type,omitempty"`
		TradeState     string `json:"trade_state"`
		TradeStateDesc string `json:"trade_state_desc"`
		BankType       string `json:"bank_type,omitempty"`
		Attach         string `json:"attach"`
		SuccessTime    string `json:"success_time,omitempty"`
		Payer          payer  `json:"payer"`
		Amount         amount `json:"amount"`
	}{
		AppID:          tx.AppID,
		MchID:          tx.MchID,
		OutTradeNo:     tx.OutTradeNo,
		TransactionID:  tx.TransactionID,
		TradeType:      tx.TradeType,
		TradeState:     string(tx.TradeState),
		TradeStateDesc: tx.TradeStateDesc,
		BankType:       tx.BankType,
		Attach:         tx.Attach,
		Payer:          payer{OpenID: tx.Payer.OpenID},
		Amount: amount{
			Total:         tx.Amount.Total,
			PayerTotal:    tx.Amount.PayerTotal,
			Currency:      tx.Amount.Currency,
			PayerCurrency: tx.Amount.PayerCurrency,
		},
	}
	w.SuccessTime = formatTime(tx.SuccessTime)
	return marshal(w)
}

// NotifyRefund builds the refund notification WeChat Pay would POST for r at now
// ("退款结果通知"): the refund JSON of MarshalRefundNotice (empty MchID replaced by the
// Platform's) sealed by SealRefund with event_type "REFUND." + r.Status, and headers from
// Headers (lower-case names). WeChat Pay sends REFUND.SUCCESS, REFUND.CLOSED and
// REFUND.ABNORMAL only; other statuses make notifications for negative tests.
func (p *Platform) NotifyRefund(r wechatpay.Refund, now time.Time) (headers map[string]string, body []byte, err error) {
	if r.MchID == "" {
		r.MchID = p.MchID
	}
	plaintext, err := MarshalRefundNotice(r)
	if err != nil {
		return nil, nil, err
	}
	if body, err = p.SealRefund(plaintext, "REFUND."+string(r.Status), now); err != nil {
		return nil, nil, err
	}
	if headers, err = p.Headers(body, now); err != nil {
		return nil, nil, err
	}
	return headers, body, nil
}

// MarshalRefundNotice renders r as the documented resource of a refund notification
// ("退款结果通知"): mchid, out_trade_no, transaction_id, out_refund_no, refund_id,
// refund_status, success_time (RFC 3339 at +08:00, omitted when zero),
// user_received_account and amount{total, refund, payer_total, payer_refund} in fen.
func MarshalRefundNotice(r wechatpay.Refund) ([]byte, error) {
	type amount struct {
		Total       int64 `json:"total"`
		Refund      int64 `json:"refund"`
		PayerTotal  int64 `json:"payer_total"`
		PayerRefund int64 `json:"payer_refund"`
	}
	return marshal(struct {
		MchID               string `json:"mchid"`
		OutTradeNo          string `json:"out_trade_no"`
		TransactionID       string `json:"transaction_id"`
		OutRefundNo         string `json:"out_refund_no"`
		RefundID            string `json:"refund_id"`
		RefundStatus        string `json:"refund_status"`
		SuccessTime         string `json:"success_time,omitempty"`
		UserReceivedAccount string `json:"user_received_account"`
		Amount              amount `json:"amount"`
	}{
		r.MchID, r.OutTradeNo, r.TransactionID, r.OutRefundNo, r.RefundID, string(r.Status), formatTime(r.SuccessTime),
		r.UserReceivedAccount, amount{r.Amount.Total, r.Amount.Refund, r.Amount.PayerTotal, r.Amount.PayerRefund},
	})
}

// MarshalRefund renders r as the documented answer of "申请退款" and "查询单笔退款":
// refund_id, out_refund_no, transaction_id, out_trade_no, channel, user_received_account,
// success_time and create_time (RFC 3339 at +08:00, omitted when zero), status and
// amount{refund, total, payer_total, payer_refund, currency} in fen.
func MarshalRefund(r wechatpay.Refund) ([]byte, error) {
	return marshal(struct {
		RefundID            string                 `json:"refund_id"`
		OutRefundNo         string                 `json:"out_refund_no"`
		TransactionID       string                 `json:"transaction_id"`
		OutTradeNo          string                 `json:"out_trade_no"`
		Channel             string                 `json:"channel"`
		UserReceivedAccount string                 `json:"user_received_account"`
		SuccessTime         string                 `json:"success_time,omitempty"`
		CreateTime          string                 `json:"create_time,omitempty"`
		Status              string                 `json:"status"`
		Amount              wechatpay.RefundAmount `json:"amount"`
	}{
		r.RefundID, r.OutRefundNo, r.TransactionID, r.OutTradeNo, r.Channel, r.UserReceivedAccount,
		formatTime(r.SuccessTime), formatTime(r.CreateTime), string(r.Status), r.Amount,
	})
}

// formatTime renders t as WeChat Pay writes times (RFC 3339 at +08:00), "" when zero.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(beijing).Format(time.RFC3339)
}

// marshal encodes v as compact JSON without HTML escaping (WeChat Pay sends "&", "<" and
// ">" in attach and summary as they are).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("paytest: marshal: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// RandomString returns n characters drawn uniformly from [A-Za-z0-9] with crypto/rand, the
// shape of WeChat Pay nonces and APIv3 keys.
func RandomString(n int) (string, error) {
	size := big.NewInt(int64(len(alphanumeric)))
	b := make([]byte, n)
	for i := range b {
		j, err := rand.Int(rand.Reader, size)
		if err != nil {
			return "", fmt.Errorf("paytest: random: %w", err)
		}
		b[i] = alphanumeric[j.Int64()]
	}
	return string(b), nil
}

// randomUUID returns a random RFC 9562 version 4 UUID string, the shape of notification ids.
func randomUUID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", fmt.Errorf("paytest: random: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}
