// Package kmssign signs login tokens with an AWS KMS key (Signer, an idtoken.Signer),
// so that no private key is ever in a function; only the functions that sign or
// publish the key (login, jwks) link the KMS client.
package kmssign

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/stockguard/stockguard/internal/idtoken"
)

// Signer is an idtoken.Signer backed by an AWS KMS asymmetric key of KeySpec ECC_NIST_P256 and
// KeyUsage SIGN_VERIFY: the private key never leaves KMS. The caller's role needs
// kms:Sign (and kms:GetPublicKey for PublicKey). Errors from KMS are wrapped as they come
// (errors.As with smithy-go types works); their text is AWS's, for logs only.
type Signer struct {
	client *kms.Client
	keyID  string
}

// New returns a Signer for keyID (key id, key ARN, alias name or alias ARN, as
// kms:Sign accepts) through client; an error when either is missing.
func New(client *kms.Client, keyID string) (*Signer, error) {
	if client == nil || keyID == "" {
		return nil, errors.New("kmssign: a Signer needs a KMS client and a key id")
	}
	return &Signer{client: client, keyID: keyID}, nil
}

// Sign calls kms:Sign with MessageType DIGEST and SigningAlgorithm ECDSA_SHA_256 (AWS KMS
// API reference, Sign) and converts the DER ECDSA-Sig-Value that KMS returns (RFC 3279
// §2.2.3) to the JWS r||s form (64 bytes). Errors: a digest that is not 32 bytes (nothing
// sent); the KMS error; an answer with another algorithm or a malformed signature.
func (s *Signer) Sign(ctx context.Context, digest []byte) ([]byte, error) {
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
	return idtoken.JOSESignature(out.Signature)
}

// PublicKey calls kms:GetPublicKey and returns the key to publish in the JWK set. Errors:
// the KMS error; a key whose KeySpec is not ECC_NIST_P256 or KeyUsage not SIGN_VERIFY; a
// public key that does not parse (DER SubjectPublicKeyInfo, RFC 5280).
func (s *Signer) PublicKey(ctx context.Context) (*ecdsa.PublicKey, error) {
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
	if !ok || idtoken.CheckP256(key) != nil {
		return nil, errors.New("idtoken: kms:GetPublicKey: public key is not ECDSA P-256")
	}
	return key, nil
}
