// Package wechatpay verifies, decrypts and parses WeChat Pay APIv3 payment notifications
// (docs/contract.md, "POST /payments/wechatpay/notify") with the standard library only.
//
// The rules come from the WeChat Pay APIv3 docs: "签名验证" (signature verification:
// SHA256 with RSA, PKCS #1 v1.5, over timestamp\nnonce\nbody\n, key chosen by
// Wechatpay-Serial), "证书和回调报文解密" (AEAD_AES_256_GCM under the APIv3 key) and
// "支付成功回调通知" (the envelope and the transaction resource). Parse verifies before it
// parses any JSON, and every failure wraps exactly one of ErrVerification, ErrMalformed or
// ErrMerchantMismatch.
//
// Client is the merchant's side of the APIv3 merchant API ("JSAPI下单", "查询订单",
// "关闭订单", "JSAPI调起支付"): requests signed with the merchant key ("签名生成"), answers
// verified with the platform keys by the same code as notifications ("签名验证") before
// their bodies are read.
package wechatpay

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names WeChat Pay sets on a notification ("签名验证"). HTTP header names are
// case-insensitive; API Gateway HTTP API delivers them lower-cased (see HeadersFrom).
const (
	HeaderTimestamp     = "Wechatpay-Timestamp"      // Unix time, seconds, decimal
	HeaderNonce         = "Wechatpay-Nonce"          // random string, part of the signed message
	HeaderSignature     = "Wechatpay-Signature"      // base64 (standard, padded) RSA signature
	HeaderSerial        = "Wechatpay-Serial"         // platform certificate serial or public key id
	HeaderSignatureType = "Wechatpay-Signature-Type" // "WECHATPAY2-SHA256-RSA2048"; informative only
)

// SignatureType is the Wechatpay-Signature-Type value of an RSA-signed notification.
const SignatureType = "WECHATPAY2-SHA256-RSA2048"

// SignTestPrefix starts the Wechatpay-Signature of the signature-test probes WeChat Pay
// sends to check that merchants really verify ("签名验证", 签名探测流量); Parse rejects them
// with ErrVerification before doing any cryptography.
const SignTestPrefix = "WECHATPAY/SIGNTEST/"

// DefaultMaxSkew is the largest distance, either direction, between Wechatpay-Timestamp
// and the verifier's clock that Parse accepts when Config.MaxSkew is zero (docs/contract.md,
// "POST /payments/wechatpay/notify": 5 minutes; "签名验证" recommends rejecting timestamps older than that).
const DefaultMaxSkew = 5 * time.Minute

// MaxBodyBytes is the largest notification body Parse accepts, in bytes (64 KiB); larger
// bodies fail with ErrMalformed before any header is looked at. Real payment notifications
// are around 1 KiB.
const MaxBodyBytes = 64 << 10

// APIv3KeySize is the length of the APIv3 key in bytes: the 32-character string set in the
// merchant platform, used as the AES-256 key as-is ("APIv3密钥").
const APIv3KeySize = 32

// MinRSABits is the smallest RSA modulus, in bits, NewVerifier accepts for a platform key
// (WeChat Pay platform keys are RSA 2048; Wechatpay-Signature-Type WECHATPAY2-SHA256-RSA2048).
const MinRSABits = 2048

// Bounds on header values, checked before any cryptography. WeChat Pay sends 32-character
// nonces, 40-character serials or "PUB_KEY_ID_" ids, and 344-character signatures (RSA 2048);
// these limits leave room for RSA 4096 and longer ids while refusing junk early.
const (
	maxNonceLen     = 128
	maxSerialLen    = 128
	maxSignatureLen = 1024
	maxTimestampLen = 19 // digits in math.MaxInt64
)

// Sentinel errors; every error Parse returns wraps exactly one of them (errors.Is).
var (
	// ErrVerification: the notification cannot be shown to come from WeChat Pay unchanged —
	// a missing or malformed header, bad base64 in Wechatpay-Signature, a sign-test probe,
	// a timestamp outside MaxSkew, an unknown Wechatpay-Serial, a bad signature, or a
	// resource whose AES-GCM tag does not verify under the APIv3 key. The notify routes: 401.
	ErrVerification = errors.New("wechatpay: verification failed")

	// ErrMalformed: the body is larger than MaxBodyBytes, or the verified body or the
	// decrypted resource is not the documented JSON shape (including an algorithm other than
	// AEAD_AES_256_GCM, a resource type other than encrypt-resource/transaction, an unknown
	// trade_state). The notify routes: 400.
	ErrMalformed = errors.New("wechatpay: malformed notification")

	// ErrMerchantMismatch: a genuine notification whose transaction mchid or appid is not the
	// configured merchant's. The notify routes: 400.
	ErrMerchantMismatch = errors.New("wechatpay: notification is for another merchant")

	// ErrUnknownSerial: the Wechatpay-Serial of a notification or answer names no
	// configured platform key (WeChat Pay may have rotated its key: see Rotating). It
	// wraps ErrVerification.
	ErrUnknownSerial = fmt.Errorf("%w: unknown %s", ErrVerification, HeaderSerial)
)

// Config is what a Verifier trusts. APIv3Key is a secret; NewVerifier copies it and the
// PublicKeys map, so later changes to the caller's slice or map do not affect the Verifier.
type Config struct {
	// MchID and AppID are the merchant id (商户号, e.g. "1230000109") and app id
	// (e.g. "wxd678efh567hg6787") every transaction must carry; both required.
	MchID, AppID string

	// APIv3Key is the 32-byte APIv3 key (the bytes of the 32-character string), the
	// AES-256-GCM key of notification resources ("证书和回调报文解密").
	APIv3Key []byte

	// PublicKeys maps a Wechatpay-Serial value to the RSA public key it names: platform
	// certificate serials (hex, e.g. "5157F09EFDC096DE15EBE81A47057A7232F1B8E1") and WeChat
	// Pay public key ids ("PUB_KEY_ID_..."). Several entries allow key rotation; at least one
	// is required and each key must be RSA of at least MinRSABits bits (see ParsePublicKey).
	PublicKeys map[string]*rsa.PublicKey

	// MaxSkew is how far, either direction, Wechatpay-Timestamp may be from Now; a timestamp
	// exactly MaxSkew away is accepted. Zero means DefaultMaxSkew; negative is an error.
	MaxSkew time.Duration

	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verifier checks and decodes payment notifications for one merchant. It is immutable
// after NewVerifier and safe for concurrent use.
type Verifier struct {
	mchID, appID string
	apiV3Key     []byte
	keys         map[string]*rsa.PublicKey
	maxSkew      time.Duration
	now          func() time.Time
}

// NewVerifier validates cfg and returns a Verifier. It returns an error (never mentioning
// key material) when MchID or AppID is empty, APIv3Key is not APIv3KeySize (32) bytes,
// PublicKeys is empty or has an empty serial, a nil key, a key under MinRSABits bits or an
// invalid public exponent, or MaxSkew is negative.
func NewVerifier(cfg Config) (*Verifier, error) {
	if cfg.MchID == "" || cfg.AppID == "" {
		return nil, errors.New("wechatpay: config: MchID and AppID are required")
	}
	if len(cfg.APIv3Key) != APIv3KeySize {
		return nil, fmt.Errorf("wechatpay: config: APIv3Key must be %d bytes, got %d", APIv3KeySize, len(cfg.APIv3Key))
	}
	if len(cfg.PublicKeys) == 0 {
		return nil, errors.New("wechatpay: config: at least one platform public key is required")
	}
	if cfg.MaxSkew < 0 {
		return nil, fmt.Errorf("wechatpay: config: MaxSkew %v is negative", cfg.MaxSkew)
	}
	keys := make(map[string]*rsa.PublicKey, len(cfg.PublicKeys))
	for serial, key := range cfg.PublicKeys {
		if serial == "" || len(serial) > maxSerialLen {
			return nil, fmt.Errorf("wechatpay: config: serial %q must be 1..%d bytes", serial, maxSerialLen)
		}
		if err := checkRSAKey(key); err != nil {
			return nil, fmt.Errorf("wechatpay: config: key %q: %w", serial, err)
		}
		keys[serial] = key
	}
	v := &Verifier{
		mchID:    cfg.MchID,
		appID:    cfg.AppID,
		apiV3Key: append([]byte(nil), cfg.APIv3Key...),
		keys:     keys,
		maxSkew:  cfg.MaxSkew,
		now:      cfg.Now,
	}
	if v.maxSkew == 0 {
		v.maxSkew = DefaultMaxSkew
	}
	if v.now == nil {
		v.now = time.Now
	}
	return v, nil
}

func checkRSAKey(key *rsa.PublicKey) error {
	if key == nil || key.N == nil {
		return errors.New("nil RSA public key")
	}
	if bits := key.N.BitLen(); bits < MinRSABits {
		return fmt.Errorf("RSA key is %d bits, want at least %d", bits, MinRSABits)
	}
	if key.E < 3 || key.E%2 == 0 {
		return fmt.Errorf("RSA public exponent %d is invalid", key.E)
	}
	return nil
}

// Headers are the four WeChat Pay headers Parse needs, as received (strings, untrimmed).
type Headers struct {
	Timestamp string // Wechatpay-Timestamp: Unix seconds, decimal digits
	Nonce     string // Wechatpay-Nonce
	Signature string // Wechatpay-Signature: base64
	Serial    string // Wechatpay-Serial: key id, see Config.PublicKeys
}

// HeadersFrom picks the WeChat Pay headers out of h, matching names case-insensitively
// (API Gateway HTTP API payload 2.0 delivers lower-case names, other callers canonical
// ones). If h holds the same header under several spellings with different values, the
// field is left empty, so Parse rejects it as missing instead of picking one by map order.
func HeadersFrom(h map[string]string) Headers {
	var out Headers
	fields := []struct {
		name string
		dst  *string
	}{
		{HeaderTimestamp, &out.Timestamp},
		{HeaderNonce, &out.Nonce},
		{HeaderSignature, &out.Signature},
		{HeaderSerial, &out.Serial},
	}
	for _, f := range fields {
		found, ambiguous := false, false
		var value string
		for name, v := range h {
			if !strings.EqualFold(name, f.name) {
				continue
			}
			if found && v != value {
				ambiguous = true
			}
			found, value = true, v
		}
		if found && !ambiguous {
			*f.dst = value
		}
	}
	return out
}

// Parse verifies a payment notification and returns its envelope and decrypted transaction.
// body is the raw request body exactly as received (API Gateway: base64-decoded if
// isBase64Encoded). In order, and before parsing any JSON:
//
//   - len(body) > MaxBodyBytes: ErrMalformed;
//   - a missing header, a Wechatpay-Signature starting with SignTestPrefix, a
//     Wechatpay-Timestamp that is not decimal seconds or lies more than MaxSkew from Now,
//     an oversize or non-printable nonce or serial, an unknown Wechatpay-Serial, signature
//     base64 that does not decode, or a signature (SHA256 with RSA, PKCS #1 v1.5, over
//     timestamp+"\n"+nonce+"\n"+body+"\n") that does not verify: ErrVerification.
//
// Then the envelope is parsed ("支付成功回调通知": id, create_time RFC 3339,
// resource_type "encrypt-resource", event_type, summary, resource) and the resource
// (original_type "transaction", algorithm "AEAD_AES_256_GCM", base64 ciphertext with the
// 16-byte tag appended, 12-byte nonce, associated_data) decrypted under the APIv3 key. A
// shape error is ErrMalformed; a GCM tag that does not verify is ErrVerification. The
// transaction JSON is checked as described on Transaction (ErrMalformed; so is event_type
// TRANSACTION.SUCCESS with a trade_state other than SUCCESS), and finally its mchid and
// appid against Config (ErrMerchantMismatch).
//
// A nil error means the notification is genuine and for this merchant; the caller still
// decides what EventType, TradeState and Amount mean for the order. Parse is stateless:
// a genuine notification replayed within MaxSkew parses again, so the caller's state
// change must be idempotent (WeChat Pay itself resends until it gets a success answer).
func (v *Verifier) Parse(h Headers, body []byte) (*Notification, error) {
	if err := v.check(h, body); err != nil {
		return nil, err
	}
	return v.decode(body)
}

// check is what every notification kind goes through before any JSON is read: the size
// bound, then the header and signature checks ("签名验证").
func (v *Verifier) check(h Headers, body []byte) error {
	if len(body) > MaxBodyBytes {
		return fmt.Errorf("%w: body is %d bytes, limit %d", ErrMalformed, len(body), MaxBodyBytes)
	}
	return v.verify(h, body)
}

// resource is the decrypted resource of a notification kind: *Transaction or *Refund.
type resource interface {
	merchant() string // mchid
}

// open is what every notification kind goes through after check: it parses the envelope
// of a verified body, decrypts its resource (which must be of originalType; "证书和回调报文解密"),
// parses the plaintext with decode and checks its mchid against the configured merchant
// (ErrMerchantMismatch).
func open[R resource](v *Verifier, body []byte, originalType string, decode func([]byte) (R, error)) (*wireEnvelope, R, error) {
	var zero R
	env, err := decodeEnvelope(body)
	if err != nil {
		return nil, zero, err
	}
	plaintext, err := v.decrypt(env.Resource, originalType)
	if err != nil {
		return nil, zero, err
	}
	r, err := decode(plaintext)
	if err != nil {
		return nil, zero, err
	}
	if r.merchant() != v.mchID {
		return nil, zero, fmt.Errorf("%w: mchid %q, configured %q", ErrMerchantMismatch, truncate(r.merchant()), v.mchID)
	}
	return env, r, nil
}

// decode opens a payment notification whose signature has been verified and checks what
// is particular to payments: the event's trade_state and the appid.
func (v *Verifier) decode(body []byte) (*Notification, error) {
	env, tx, err := open(v, body, OriginalTypeTransaction, decodeTransaction)
	if err != nil {
		return nil, err
	}
	if env.EventType == EventTransactionSuccess && tx.TradeState != TradeStateSuccess {
		return nil, fmt.Errorf("%w: event_type %s with trade_state %s", ErrMalformed, env.EventType, tx.TradeState)
	}
	if tx.AppID != v.appID {
		return nil, fmt.Errorf("%w: appid %q, configured %q", ErrMerchantMismatch, tx.AppID, v.appID)
	}
	return &Notification{Envelope: env.envelope(), Transaction: tx}, nil
}

// verify runs every header check and the RSA signature check ("签名验证").
func (v *Verifier) verify(h Headers, body []byte) error {
	switch {
	case h.Timestamp == "":
		return fmt.Errorf("%w: missing %s", ErrVerification, HeaderTimestamp)
	case h.Nonce == "":
		return fmt.Errorf("%w: missing %s", ErrVerification, HeaderNonce)
	case h.Signature == "":
		return fmt.Errorf("%w: missing %s", ErrVerification, HeaderSignature)
	case h.Serial == "":
		return fmt.Errorf("%w: missing %s", ErrVerification, HeaderSerial)
	}
	if strings.HasPrefix(h.Signature, SignTestPrefix) {
		return fmt.Errorf("%w: sign-test probe (%s starts with %s)", ErrVerification, HeaderSignature, SignTestPrefix)
	}
	if err := v.checkTimestamp(h.Timestamp); err != nil {
		return err
	}
	if len(h.Nonce) > maxNonceLen || !printable(h.Nonce) {
		return fmt.Errorf("%w: %s must be 1..%d printable ASCII characters", ErrVerification, HeaderNonce, maxNonceLen)
	}
	if len(h.Serial) > maxSerialLen || !printable(h.Serial) {
		return fmt.Errorf("%w: %s must be 1..%d printable ASCII characters", ErrVerification, HeaderSerial, maxSerialLen)
	}
	key, ok := v.keys[h.Serial]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownSerial, h.Serial)
	}
	if len(h.Signature) > maxSignatureLen {
		return fmt.Errorf("%w: %s longer than %d characters", ErrVerification, HeaderSignature, maxSignatureLen)
	}
	sig, err := base64.StdEncoding.DecodeString(h.Signature)
	if err != nil {
		return fmt.Errorf("%w: %s is not base64: %w", ErrVerification, HeaderSignature, err)
	}
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, digest(h.Timestamp, h.Nonce, string(body)), sig); err != nil {
		return fmt.Errorf("%w: signature does not verify under %s %q", ErrVerification, HeaderSerial, h.Serial)
	}
	return nil
}

// checkTimestamp parses decimal Unix seconds and compares them with the clock.
func (v *Verifier) checkTimestamp(ts string) error {
	if len(ts) > maxTimestampLen || !digits(ts) {
		return fmt.Errorf("%w: %s %q is not decimal Unix seconds", ErrVerification, HeaderTimestamp, truncate(ts))
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not decimal Unix seconds", ErrVerification, HeaderTimestamp, ts)
	}
	// Sub saturates, so absurd timestamps become huge skews rather than overflows.
	skew := v.now().Sub(time.Unix(sec, 0))
	if skew > v.maxSkew || skew < -v.maxSkew {
		return fmt.Errorf("%w: %s %s is %v from now, limit %v", ErrVerification, HeaderTimestamp, ts, skew.Round(time.Second), v.maxSkew)
	}
	return nil
}

// decrypt opens an AEAD_AES_256_GCM resource ("证书和回调报文解密").
func (v *Verifier) decrypt(r *wireResource, originalType string) ([]byte, error) {
	if r.Algorithm != AlgorithmAEADAES256GCM {
		return nil, fmt.Errorf("%w: resource.algorithm %q, want %s", ErrMalformed, truncate(r.Algorithm), AlgorithmAEADAES256GCM)
	}
	if r.OriginalType != originalType {
		return nil, fmt.Errorf("%w: resource.original_type %q, want %s", ErrMalformed, truncate(r.OriginalType), originalType)
	}
	block, err := aes.NewCipher(v.apiV3Key)
	if err != nil { // unreachable: NewVerifier checked the key length
		return nil, fmt.Errorf("%w: AES key: %w", ErrVerification, err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: AES-GCM: %w", ErrVerification, err)
	}
	if len(r.Nonce) != gcm.NonceSize() {
		return nil, fmt.Errorf("%w: resource.nonce is %d bytes, want %d", ErrMalformed, len(r.Nonce), gcm.NonceSize())
	}
	sealed, err := base64.StdEncoding.DecodeString(r.Ciphertext)
	if err != nil {
		return nil, fmt.Errorf("%w: resource.ciphertext is not base64: %w", ErrMalformed, err)
	}
	if len(sealed) < gcm.Overhead() {
		return nil, fmt.Errorf("%w: resource.ciphertext is %d bytes, shorter than the %d-byte tag", ErrMalformed, len(sealed), gcm.Overhead())
	}
	plaintext, err := gcm.Open(nil, []byte(r.Nonce), sealed, []byte(r.AssociatedData))
	if err != nil {
		return nil, fmt.Errorf("%w: resource does not decrypt under the APIv3 key (AES-GCM tag mismatch)", ErrVerification)
	}
	return plaintext, nil
}

// printable reports whether s is visible ASCII (0x21..0x7e): no spaces, newlines or
// controls, so the signed message timestamp\nnonce\nbody\n cannot be re-split.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// truncate bounds attacker-supplied text quoted in error messages.
func truncate(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
