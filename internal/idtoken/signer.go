package idtoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// KeySigner is a Signer holding a P-256 private key in memory: for the local stack and
// tests. Deployed functions use KMSSigner, so that no private key is in the function.
type KeySigner struct {
	key *ecdsa.PrivateKey
}

// NewKeySigner returns a KeySigner for key; an error unless key is ECDSA P-256.
func NewKeySigner(key *ecdsa.PrivateKey) (*KeySigner, error) {
	if key == nil || checkP256(&key.PublicKey) != nil {
		return nil, errors.New("idtoken: KeySigner needs an ECDSA P-256 key")
	}
	return &KeySigner{key: key}, nil
}

// GenerateKeySigner returns a KeySigner with a fresh P-256 key from crypto/rand.
func GenerateKeySigner() (*KeySigner, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("idtoken: generate key: %w", err)
	}
	return &KeySigner{key: key}, nil
}

// PublicKey is the key to publish in the JWK set.
func (s *KeySigner) PublicKey() *ecdsa.PublicKey { return &s.key.PublicKey }

// Sign signs digest (32 bytes) and returns r||s (64 bytes). It goes through the same DER
// conversion as KMSSigner.
func (s *KeySigner) Sign(_ context.Context, digest []byte) ([]byte, error) {
	if len(digest) != sha256.Size {
		return nil, fmt.Errorf("idtoken: digest is %d bytes, want %d", len(digest), sha256.Size)
	}
	der, err := ecdsa.SignASN1(rand.Reader, s.key, digest)
	if err != nil {
		return nil, fmt.Errorf("idtoken: sign: %w", err)
	}
	return joseSignature(der)
}

// KMSSigner is a Signer backed by an AWS KMS asymmetric key of KeySpec ECC_NIST_P256 and
// KeyUsage SIGN_VERIFY: the private key never leaves KMS. The caller's role needs
// kms:Sign (and kms:GetPublicKey for PublicKey). Errors from KMS are wrapped as they come
// (errors.As with smithy-go types works); their text is AWS's, for logs only.
type KMSSigner struct {
	client *kms.Client
	keyID  string
}

// NewKMSSigner returns a KMSSigner for keyID (key id, key ARN, alias name or alias ARN, as
// kms:Sign accepts) through client; an error when either is missing.
func NewKMSSigner(client *kms.Client, keyID string) (*KMSSigner, error) {
	if client == nil || keyID == "" {
		return nil, errors.New("idtoken: KMSSigner needs a KMS client and a key id")
	}
	return &KMSSigner{client: client, keyID: keyID}, nil
}

// Sign calls kms:Sign with MessageType DIGEST and SigningAlgorithm ECDSA_SHA_256 (AWS KMS
// API reference, Sign) and converts the DER ECDSA-Sig-Value that KMS returns (RFC 3279
// §2.2.3) to the JWS r||s form (64 bytes). Errors: a digest that is not 32 bytes (nothing
// sent); the KMS error; an answer with another algorithm or a malformed signature.
func (s *KMSSigner) Sign(ctx context.Context, digest []byte) ([]byte, error) {
	if len(digest) != sha256.Size {
		return nil, fmt.Errorf("idtoken: digest is %d bytes, want %d", len(digest), sha256.Size)
	}
	out, err := s.client.Sign(ctx, &kms.SignInput{
		KeyId:            &s.keyID,
		Message:          digest,
		MessageType:      types.MessageTypeDigest,
		SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256,
	})
	if err != nil {
		return nil, fmt.Errorf("idtoken: kms:Sign: %w", err)
	}
	if out.SigningAlgorithm != types.SigningAlgorithmSpecEcdsaSha256 {
		return nil, fmt.Errorf("idtoken: kms:Sign answered algorithm %q, want ECDSA_SHA_256", out.SigningAlgorithm)
	}
	return joseSignature(out.Signature)
}

// PublicKey calls kms:GetPublicKey and returns the key to publish in the JWK set. Errors:
// the KMS error; a key whose KeySpec is not ECC_NIST_P256 or KeyUsage not SIGN_VERIFY; a
// public key that does not parse (DER SubjectPublicKeyInfo, RFC 5280).
func (s *KMSSigner) PublicKey(ctx context.Context) (*ecdsa.PublicKey, error) {
	out, err := s.client.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: &s.keyID})
	if err != nil {
		return nil, fmt.Errorf("idtoken: kms:GetPublicKey: %w", err)
	}
	if out.KeySpec != types.KeySpecEccNistP256 || out.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, fmt.Errorf("idtoken: KMS key is %s/%s, want ECC_NIST_P256/SIGN_VERIFY", out.KeySpec, out.KeyUsage)
	}
	pub, err := x509.ParsePKIXPublicKey(out.PublicKey)
	if err != nil {
		return nil, errors.New("idtoken: kms:GetPublicKey: public key is not DER SubjectPublicKeyInfo")
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok || checkP256(key) != nil {
		return nil, errors.New("idtoken: kms:GetPublicKey: public key is not ECDSA P-256")
	}
	return key, nil
}

// joseSignature converts a DER ECDSA-Sig-Value, SEQUENCE { r INTEGER, s INTEGER }
// (RFC 3279 §2.2.3), to r||s with each half left-padded to 32 bytes (RFC 7518 §3.4).
func joseSignature(der []byte) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil || len(rest) != 0 {
		return nil, errors.New("idtoken: signature is not a DER ECDSA-Sig-Value")
	}
	n := elliptic.P256().Params().N
	if sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.Cmp(n) >= 0 || sig.S.Cmp(n) >= 0 {
		return nil, errors.New("idtoken: signature r or s out of range for P-256")
	}
	out := make([]byte, signatureSize)
	sig.R.FillBytes(out[:signatureSize/2])
	sig.S.FillBytes(out[signatureSize/2:])
	return out, nil
}
