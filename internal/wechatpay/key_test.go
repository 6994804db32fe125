package wechatpay_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// selfSigned returns a DER certificate for pub, signed by signer (a stand-in for a WeChat
// Pay platform certificate; its serial is what Wechatpay-Serial would carry, in hex).
func selfSigned(t *testing.T, pub, signer any) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0x5157F09EFDC096DE),
		Subject:      pkix.Name{CommonName: "Tenpay.com Root CA test"},
		NotBefore:    time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestParsePublicKey(t *testing.T) {
	f := newFixture(t)
	rsaKey := f.p.Key
	spki, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPKIX, err := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaCert := pemBlock("CERTIFICATE", selfSigned(t, &rsaKey.PublicKey, rsaKey))
	tests := []struct {
		name string
		pem  []byte
		ok   bool
		msg  string // error fragment when !ok
	}{
		{"WeChatPayPublicKey", pemBlock("PUBLIC KEY", spki), true, ""},
		{"WeChatPayPublicKeyWithPreambleAndTrailingNewlines", append(append([]byte("WeChat Pay public key\n"), pemBlock("PUBLIC KEY", spki)...), "\n\n"...), true, ""},
		{"PlatformCertificate", rsaCert, true, ""},
		{"ECPublicKey", pemBlock("PUBLIC KEY", ecPKIX), false, "not RSA"},
		{"ECCertificate", pemBlock("CERTIFICATE", selfSigned(t, &ecKey.PublicKey, ecKey)), false, "not RSA"},
		{"PKCS1RSAPublicKeyBlock", pemBlock("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)), false, "PEM block type"},
		{"PrivateKeyBlock", pemBlock("PRIVATE KEY", []byte("not really")), false, "PEM block type"},
		{"CorruptPublicKey", pemBlock("PUBLIC KEY", spki[:len(spki)-10]), false, "public key"},
		{"CorruptCertificate", pemBlock("CERTIFICATE", []byte{0x30, 0x03, 0x02, 0x01, 0x01}), false, "certificate"},
		{"NotPEM", []byte("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"), false, "no PEM block"},
		{"Empty", nil, false, "no PEM block"},
		{"TwoBlocks", append(pemBlock("PUBLIC KEY", spki), rsaCert...), false, "exactly one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := wechatpay.ParsePublicKey(tt.pem)
			if !tt.ok {
				if err == nil {
					t.Fatalf("ParsePublicKey accepted it: %v", key)
				}
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not contain %q", err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePublicKey: %v", err)
			}
			if !key.Equal(&rsaKey.PublicKey) {
				t.Errorf("ParsePublicKey returned another key")
			}
		})
	}
}

// TestParsePublicKey_KeyVerifiesNotifications: a key read from PEM is usable in Config.
func TestParsePublicKey_KeyVerifiesNotifications(t *testing.T) {
	f := newFixture(t)
	cert := pemBlock("CERTIFICATE", selfSigned(t, &f.p.Key.PublicKey, f.p.Key))
	key, err := wechatpay.ParsePublicKey(cert)
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.PublicKeys[f.p.Serial] = key
	h, body := f.genuine(t)
	if _, err := testkit.Must(t, wechatpay.NewVerifier, cfg).Parse(h, body); err != nil {
		t.Fatalf("Parse: %v", err)
	}
}

func TestParsePrivateKey(t *testing.T) {
	m := testMerchants(t)[0]
	pkcs8, err := x509.MarshalPKCS8PrivateKey(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPKCS8, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pem  []byte
		msg  string // error fragment; "" when the key must parse
	}{
		{"PKCS8", pemBlock("PRIVATE KEY", pkcs8), ""},
		{"PKCS1", pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(m.Key)), ""},
		{"ECKey", pemBlock("PRIVATE KEY", ecPKCS8), "not RSA"},
		{"PublicKeyBlock", pemBlock("PUBLIC KEY", pkcs8), "PEM block type"},
		{"Corrupt", pemBlock("PRIVATE KEY", pkcs8[:40]), "PKCS #8"},
		{"TwoBlocks", append(pemBlock("PRIVATE KEY", pkcs8), pemBlock("PRIVATE KEY", pkcs8)...), "exactly one"},
		{"NotPEM", []byte("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"), "no PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := wechatpay.ParsePrivateKey(tt.pem)
			if tt.msg == "" {
				if err != nil || !key.Equal(m.Key) {
					t.Fatalf("ParsePrivateKey = %v, %v", key != nil, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err %v, want %q", err, tt.msg)
			}
			if strings.Contains(err.Error(), "MII") {
				t.Errorf("error quotes key material: %v", err)
			}
		})
	}
}

func TestClientConfigFromSecret_NamesTheFieldAtFault(t *testing.T) {
	f := newFixture(t)
	m := testMerchants(t)[0]
	secret, err := f.p.MerchantSecret(m, "app-secret")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(change func(s map[string]any)) []byte {
		var s map[string]any
		if err := json.Unmarshal(secret, &s); err != nil {
			t.Fatal(err)
		}
		change(s)
		b, _ := json.Marshal(s)
		return b
	}
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"NoMerchantKey", edit(func(s map[string]any) { delete(s, "merchantPrivateKey") }), "merchantPrivateKey is required"},
		{"BadMerchantKey", edit(func(s map[string]any) {
			s["merchantPrivateKey"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
		}), "merchantPrivateKey"},
		{"NoSerial", edit(func(s map[string]any) { delete(s, "merchantSerial") }), "merchantSerial"},
		{"SerialWithNewline", edit(func(s map[string]any) { s["merchantSerial"] = "AB\nCD" }), "merchantSerial"},
		{"MisspeltField", edit(func(s map[string]any) { s["merchantSerialNo"] = "AB" }), "not a JSON object"},
		{"BadPlatformKey", edit(func(s map[string]any) { s["platformPublicKeys"] = map[string]string{"S": "x"} }), "platformPublicKeys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wechatpay.ClientConfigFromSecret(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err %v, want %q", err, tt.msg)
			}
		})
	}
	cfg, err := wechatpay.ClientConfigFromSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.MerchantKey.Equal(m.Key) || cfg.MerchantSerial != m.Serial || cfg.MchID != testMchID || cfg.AppID != testAppID {
		t.Errorf("config %+v", cfg)
	}
	if _, err := wechatpay.NewClient(cfg); err != nil {
		t.Errorf("NewClient: %v", err)
	}
}
