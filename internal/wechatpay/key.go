package wechatpay

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
)

// ParsePublicKey reads the one PEM block in pemBytes and returns its RSA public key. It
// accepts the two forms WeChat Pay hands out ("签名验证"): a "PUBLIC KEY" block (PKIX/SPKI,
// the WeChat Pay public key downloaded from the merchant platform, used with a
// "PUB_KEY_ID_..." serial) and a "CERTIFICATE" block (an X.509 platform certificate, used
// with its serial number in hex). It returns an error when there is no PEM block, more
// than one, another block type, a parse failure, or a key that is not RSA. It does not
// check key size (NewVerifier does) or certificate validity dates or chains.
func ParsePublicKey(pemBytes []byte) (*rsa.PublicKey, error) {
	block, err := onePEMBlock(pemBytes, "public key")
	if err != nil {
		return nil, err
	}
	var pub any
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("wechatpay: public key: %w", err)
		}
		pub = k
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("wechatpay: certificate: %w", err)
		}
		pub = cert.PublicKey
	default:
		return nil, fmt.Errorf("wechatpay: public key: PEM block type %q, want PUBLIC KEY or CERTIFICATE", block.Type)
	}
	key, ok := pub.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("wechatpay: public key: %T is not RSA", pub)
	}
	return key, nil
}

// Secret is the merchant configuration as stored in one AWS Secrets Manager secret (a
// JSON SecretString), so that neither template.yaml nor the repository holds it:
//
//	{"mchid": "1230000109", "appid": "wxd678efh567hg6787",
//	 "apiV3Key": "<32 characters>",
//	 "platformPublicKeys": {"PUB_KEY_ID_…": "-----BEGIN PUBLIC KEY-----…", "<cert serial>": "-----BEGIN CERTIFICATE-----…"},
//	 "merchantPrivateKey": "-----BEGIN PRIVATE KEY-----…", "merchantSerial": "<40 hex digits>",
//	 "appSecret": "<mini-program AppSecret>", "messageToken": "<message push Token>"}
//
// platformPublicKeys maps each Wechatpay-Serial to its PEM (see ParsePublicKey); list
// the old and the new key while WeChat Pay rotates them. merchantPrivateKey and
// merchantSerial are needed only by callers of the merchant API: the merchant API private
// key (apiclient_key.pem, see ParsePrivateKey) and the serial number of the merchant API
// certificate ("签名生成": serial_no). appSecret, the mini-program's AppSecret, is read by
// no function from here any more (the app secret of package secret holds it) and is
// still parsed so that a secret from before keeps working. messageToken is the Token of
// the mini-program's message push (消息推送: 开发管理 → 开发设置 → 消息推送), with which
// WeChat signs the events it pushes (wxapi.VerifyPush); payCallback alone reads it.
type Secret struct {
	MchID      string            `json:"mchid"`
	AppID      string            `json:"appid"`
	APIv3Key   string            `json:"apiV3Key"`
	PublicKeys map[string]string `json:"platformPublicKeys"`

	MerchantPrivateKey string `json:"merchantPrivateKey,omitempty"`
	MerchantSerial     string `json:"merchantSerial,omitempty"`
	AppSecret          string `json:"appSecret,omitempty"`
	MessageToken       string `json:"messageToken,omitempty"`
}

// ParseSecret decodes a Secret's JSON. Unknown fields are rejected so a misspelt key is
// not silently dropped; the error names the accepted fields, never a value. It checks the
// shape only: ConfigFromSecret and ClientConfigFromSecret check the contents.
func ParseSecret(data []byte) (*Secret, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Secret
	if err := dec.Decode(&s); err != nil {
		return nil, errors.New("wechatpay: secret: not a JSON object of mchid, appid, apiV3Key, platformPublicKeys, merchantPrivateKey, merchantSerial, appSecret and messageToken")
	}
	return &s, nil
}

// ConfigFromSecret parses a Secret's JSON into a Config (MaxSkew and Now left zero), the
// configuration of a notification Verifier. Unknown fields are rejected (see ParseSecret).
// Errors name the field at fault, never its value; NewVerifier checks the rest.
func ConfigFromSecret(data []byte) (Config, error) {
	s, err := ParseSecret(data)
	if err != nil {
		return Config{}, err
	}
	return s.config()
}

func (s *Secret) config() (Config, error) {
	cfg := Config{MchID: s.MchID, AppID: s.AppID, APIv3Key: []byte(s.APIv3Key), PublicKeys: map[string]*rsa.PublicKey{}}
	for serial, pemText := range s.PublicKeys {
		key, err := ParsePublicKey([]byte(pemText))
		if err != nil {
			return Config{}, fmt.Errorf("wechatpay: secret: platformPublicKeys[%q]: %w", serial, err)
		}
		cfg.PublicKeys[serial] = key
	}
	return cfg, nil
}

// ClientConfigFromSecret parses a Secret's JSON into a ClientConfig for the merchant API
// (BaseURL and HTTPClient left zero: defaults). It requires merchantPrivateKey (see
// ParsePrivateKey) and merchantSerial (1..128 printable ASCII characters) on top of what
// ConfigFromSecret needs. Errors name the field at fault, never its value; NewClient
// checks the rest.
func ClientConfigFromSecret(data []byte) (ClientConfig, error) {
	s, err := ParseSecret(data)
	if err != nil {
		return ClientConfig{}, err
	}
	cfg, err := s.config()
	if err != nil {
		return ClientConfig{}, err
	}
	if s.MerchantPrivateKey == "" {
		return ClientConfig{}, errors.New("wechatpay: secret: merchantPrivateKey is required")
	}
	key, err := ParsePrivateKey([]byte(s.MerchantPrivateKey))
	if err != nil {
		return ClientConfig{}, fmt.Errorf("wechatpay: secret: merchantPrivateKey: %w", err)
	}
	if s.MerchantSerial == "" || len(s.MerchantSerial) > maxSerialLen || !printable(s.MerchantSerial) {
		return ClientConfig{}, fmt.Errorf("wechatpay: secret: merchantSerial must be 1..%d printable ASCII characters", maxSerialLen)
	}
	return ClientConfig{Config: cfg, MerchantKey: key, MerchantSerial: s.MerchantSerial}, nil
}

// ParsePrivateKey reads the one PEM block in pemBytes and returns the merchant API RSA
// private key: a "PRIVATE KEY" block (PKCS #8, the form of apiclient_key.pem that the
// merchant platform's certificate tool writes) or an "RSA PRIVATE KEY" block (PKCS #1).
// It returns an error, never quoting key material, when there is no PEM block, more than
// one, another block type, a parse failure, a key that is not RSA, or a key under
// MinRSABits bits ("签名生成": SHA256 with RSA 2048).
func ParsePrivateKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	block, err := onePEMBlock(pemBytes, "private key")
	if err != nil {
		return nil, err
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("wechatpay: private key: not a PKCS #8 key")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("wechatpay: private key: %T is not RSA", k)
		}
		key = rk
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("wechatpay: private key: not a PKCS #1 key")
		}
		key = k
	default:
		return nil, fmt.Errorf("wechatpay: private key: PEM block type %q, want PRIVATE KEY or RSA PRIVATE KEY", block.Type)
	}
	if err := checkRSAKey(&key.PublicKey); err != nil {
		return nil, fmt.Errorf("wechatpay: private key: %w", err)
	}
	return key, nil
}

// onePEMBlock returns the one PEM block of pemBytes; what (e.g. "public key") names
// it in the error for none, or for data after it.
func onePEMBlock(pemBytes []byte, what string) (*pem.Block, error) {
	block, rest := pem.Decode(pemBytes)
	if block == nil {
		return nil, fmt.Errorf("wechatpay: %s: no PEM block", what)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("wechatpay: %s: data after the PEM block (want exactly one)", what)
	}
	return block, nil
}
