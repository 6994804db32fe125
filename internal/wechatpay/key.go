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
	block, rest := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("wechatpay: public key: no PEM block")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("wechatpay: public key: data after the PEM block (want exactly one)")
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
//	 "platformPublicKeys": {"PUB_KEY_ID_…": "-----BEGIN PUBLIC KEY-----…", "<cert serial>": "-----BEGIN CERTIFICATE-----…"}}
//
// platformPublicKeys maps each Wechatpay-Serial to its PEM (see ParsePublicKey); list
// the old and the new key while WeChat Pay rotates them.
type Secret struct {
	MchID      string            `json:"mchid"`
	AppID      string            `json:"appid"`
	APIv3Key   string            `json:"apiV3Key"`
	PublicKeys map[string]string `json:"platformPublicKeys"`
}

// ConfigFromSecret parses a Secret's JSON into a Config (MaxSkew and Now left zero).
// Unknown fields are rejected so a misspelt key is not silently dropped. Errors name
// the field at fault, never its value; NewVerifier checks the rest.
func ConfigFromSecret(data []byte) (Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Secret
	if err := dec.Decode(&s); err != nil {
		return Config{}, errors.New("wechatpay: secret: not a JSON object of mchid, appid, apiV3Key and platformPublicKeys")
	}
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
