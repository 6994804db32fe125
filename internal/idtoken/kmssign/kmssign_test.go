package kmssign_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/smithy-go"

	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// The issuer, audience and clock of the tokens signed here.
const (
	issuer   = "https://abc123.execute-api.cn-north-1.amazonaws.com.cn"
	audience = "wxd678efh567hg6787"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// kmsStandIn speaks the AWS KMS JSON protocol (awsJson1_1: POST /, X-Amz-Target
// TrentService.<Operation>, blobs in base64) for Sign and GetPublicKey, with one key per id.
// It checks what the real service would refuse and what stockguard must send: SigV4
// signing, MessageType DIGEST, ECDSA_SHA_256, a 32-byte digest.
type kmsStandIn struct {
	t     *testing.T
	keys  map[string]any // key id → *ecdsa.PrivateKey or *rsa.PrivateKey
	signs atomic.Int64
	der   func(r, s *big.Int) []byte // encodes a signature; nil means ASN.1 DER
}

func (k *kmsStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		k.t.Errorf("not the KMS JSON protocol: %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDSTOCKGUARD/") {
		k.t.Errorf("request not SigV4-signed: %q", r.Header.Get("Authorization"))
		fail(400, "UnrecognizedClientException", "unsigned")
		return
	}
	var in struct {
		KeyId, MessageType, SigningAlgorithm string
		Message                              []byte // base64 in JSON, as KMS blobs are
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &in); err != nil {
		fail(400, "SerializationException", err.Error())
		return
	}
	key, ok := k.keys[in.KeyId]
	if !ok {
		fail(400, "NotFoundException", "Key '"+in.KeyId+"' does not exist")
		return
	}
	switch r.Header.Get("X-Amz-Target") {
	case "TrentService.Sign":
		ec, isEC := key.(*ecdsa.PrivateKey)
		if !isEC || in.MessageType != "DIGEST" || in.SigningAlgorithm != "ECDSA_SHA_256" || len(in.Message) != sha256.Size {
			k.t.Errorf("Sign request %s", body)
			fail(400, "ValidationException", "bad Sign request")
			return
		}
		k.signs.Add(1)
		var der []byte
		if k.der != nil {
			r, s, err := ecdsa.Sign(rand.Reader, ec, in.Message)
			if err != nil {
				k.t.Fatal(err)
			}
			der = k.der(r, s)
		} else {
			var err error
			if der, err = ecdsa.SignASN1(rand.Reader, ec, in.Message); err != nil {
				k.t.Fatal(err)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"KeyId": "arn:aws:kms:cn-north-1:111122223333:key/" + in.KeyId, "Signature": der, "SigningAlgorithm": "ECDSA_SHA_256"})
	case "TrentService.GetPublicKey":
		var pub any
		spec, algs := "ECC_NIST_P256", []string{"ECDSA_SHA_256"}
		switch key := key.(type) {
		case *ecdsa.PrivateKey:
			pub = &key.PublicKey
		case *rsa.PrivateKey:
			pub, spec, algs = &key.PublicKey, "RSA_2048", []string{"RSASSA_PKCS1_V1_5_SHA_256"}
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			k.t.Fatal(err)
		}
		json.NewEncoder(w).Encode(map[string]any{"KeyId": in.KeyId, "PublicKey": der, "KeySpec": spec, "KeyUsage": "SIGN_VERIFY", "SigningAlgorithms": algs})
	default:
		fail(400, "UnknownOperationException", r.Header.Get("X-Amz-Target"))
	}
}

func kmsClient(t *testing.T, h http.Handler) *kms.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return kms.New(kms.Options{
		Region:           "cn-north-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDSTOCKGUARD", "test-secret", ""),
		RetryMaxAttempts: 1,
	})
}

// TestKMSSigner_TokensVerifyWithTheKMSPublicKey: tokens signed through kms:Sign verify
// under the key kms:GetPublicKey returns, published as a JWK.
func TestKMSSigner_TokensVerifyWithTheKMSPublicKey(t *testing.T) {
	ec := newKey(t)
	standIn := &kmsStandIn{t: t, keys: map[string]any{"key-1": ec}}
	signer, err := kmssign.New(kmsClient(t, standIn), "key-1")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signer.PublicKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(&ec.PublicKey) {
		t.Fatal("GetPublicKey returned another key")
	}
	iss, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: issuer, Audience: audience, KeyID: "key-1", Now: func() time.Time { return t0 }}, signer)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := idtoken.NewJWK("key-1", pub)
	if err != nil {
		t.Fatal(err)
	}
	v, err := idtoken.NewVerifier(idtoken.VerifierConfig{Issuer: issuer, Audiences: []string{audience}, Keys: idtoken.JWKSet{Keys: []idtoken.JWK{jwk}}, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	// Many tokens: about 1 in 256 ECDSA signatures has an r or s shorter than 32 bytes,
	// which the conversion must left-pad.
	for i := range 300 {
		tok, err := iss.Issue(context.Background(), "o-alice")
		if err != nil {
			t.Fatal(err)
		}
		if c, err := v.Verify(tok.Token); err != nil || c.Subject != "o-alice" {
			t.Fatalf("token %d: Verify = %+v, %v", i, c, err)
		}
	}
	if n := standIn.signs.Load(); n != 300 {
		t.Errorf("%d kms:Sign calls for 300 tokens", n)
	}
}

func TestKMSSigner_Errors(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ec := newKey(t)
	digest := sha256.Sum256([]byte("x"))
	t.Run("UnknownKeyIsTheKMSError", func(t *testing.T) {
		s, _ := kmssign.New(kmsClient(t, &kmsStandIn{t: t, keys: map[string]any{}}), "alias/missing")
		_, err := s.Sign(context.Background(), digest[:])
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFoundException" {
			t.Errorf("Sign = %v, want NotFoundException", err)
		}
		if _, err := s.PublicKey(context.Background()); !errors.As(err, &apiErr) {
			t.Errorf("PublicKey = %v", err)
		}
	})
	t.Run("RSAKeyRefusedByPublicKey", func(t *testing.T) {
		s, _ := kmssign.New(kmsClient(t, &kmsStandIn{t: t, keys: map[string]any{"rsa": rk}}), "rsa")
		if _, err := s.PublicKey(context.Background()); err == nil || !strings.Contains(err.Error(), "ECC_NIST_P256") {
			t.Errorf("PublicKey = %v", err)
		}
	})
	t.Run("WrongDigestSizeNotSent", func(t *testing.T) {
		standIn := &kmsStandIn{t: t, keys: map[string]any{"k": ec}}
		s, _ := kmssign.New(kmsClient(t, standIn), "k")
		if _, err := s.Sign(context.Background(), []byte("short")); err == nil {
			t.Error("signed a 5-byte digest")
		}
		if standIn.signs.Load() != 0 {
			t.Error("a bad digest reached KMS")
		}
	})
	bad := map[string]func(r, s *big.Int) []byte{
		"TrailingData": func(r, s *big.Int) []byte {
			b, _ := asn1.Marshal(struct{ R, S *big.Int }{r, s})
			return append(b, 0)
		},
		"ZeroR": func(r, s *big.Int) []byte {
			b, _ := asn1.Marshal(struct{ R, S *big.Int }{big.NewInt(0), s})
			return b
		},
		"SAboveOrder": func(r, s *big.Int) []byte {
			b, _ := asn1.Marshal(struct{ R, S *big.Int }{r, new(big.Int).Add(s, elliptic.P256().Params().N)})
			return b
		},
		"RawRS": func(r, s *big.Int) []byte {
			out := make([]byte, 64)
			r.FillBytes(out[:32])
			s.FillBytes(out[32:])
			return out
		},
	}
	for name, enc := range bad {
		t.Run("Malformed"+name, func(t *testing.T) {
			s, _ := kmssign.New(kmsClient(t, &kmsStandIn{t: t, keys: map[string]any{"k": ec}, der: enc}), "k")
			if sig, err := s.Sign(context.Background(), digest[:]); err == nil {
				t.Errorf("accepted %x", sig)
			}
		})
	}
	if _, err := kmssign.New(nil, "k"); err == nil {
		t.Error("New accepted a nil client")
	}
}

// newKey is a fresh P-256 key.
func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	return testkit.Must(t, func(r io.Reader) (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), r) }, rand.Reader)
}
