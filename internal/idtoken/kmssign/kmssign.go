// Package kmssign signs login tokens with an AWS KMS key (Signer, an idtoken.Signer),
// so that no private key is ever in a function, and reads the public keys the issuer
// publishes (PublishedKeys); only the functions that sign or publish the key (login,
// jwks) link the KMS client.
package kmssign

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/stockguard/stockguard/internal/idtoken"
)

// Signer is an idtoken.Signer backed by an AWS KMS asymmetric key of KeySpec RSA_2048
// and KeyUsage SIGN_VERIFY: the private key never leaves KMS. The caller needs kms:Sign
// on the key (and kms:GetPublicKey for PublicKey). Errors from KMS are wrapped as they
// come (errors.As with smithy-go types works); their text is AWS's, for logs only.
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

// Sign calls kms:Sign with MessageType DIGEST and SigningAlgorithm
// RSASSA_PKCS1_V1_5_SHA_256 (AWS KMS API reference, Sign) and returns the signature KMS
// answers, which for RSASSA-PKCS1-v1_5 is the JWS signature as it is (RFC 7518 §3.3):
// 256 bytes under an RSA_2048 key. Errors: a digest that is not 32 bytes (nothing
// sent); the KMS error; an answer with another algorithm or another length.
func (s *Signer) Sign(ctx context.Context, digest []byte) ([]byte, error) {
	if len(digest) != sha256.Size {
		return nil, fmt.Errorf("idtoken: digest is %d bytes, want %d", len(digest), sha256.Size)
	}
	out, err := s.client.Sign(ctx, &kms.SignInput{
		KeyId:            &s.keyID,
		Message:          digest,
		MessageType:      types.MessageTypeDigest,
		SigningAlgorithm: types.SigningAlgorithmSpecRsassaPkcs1V15Sha256,
	})
	if err != nil {
		return nil, fmt.Errorf("idtoken: kms:Sign: %w", err)
	}
	if out.SigningAlgorithm != types.SigningAlgorithmSpecRsassaPkcs1V15Sha256 || len(out.Signature) != idtoken.KeyBits/8 {
		return nil, fmt.Errorf("idtoken: kms:Sign answered %d bytes of %q, want %d of RSASSA_PKCS1_V1_5_SHA_256", len(out.Signature), out.SigningAlgorithm, idtoken.KeyBits/8)
	}
	return out.Signature, nil
}

// PublicKey calls kms:GetPublicKey and returns the key to publish in the JWK set. Errors:
// the KMS error; a key whose KeySpec is not RSA_2048 or KeyUsage not SIGN_VERIFY (an
// ECC_NIST_P256 key of the ES256 tokens before, say); a public key that does not parse
// (DER SubjectPublicKeyInfo, RFC 5280).
func (s *Signer) PublicKey(ctx context.Context) (*rsa.PublicKey, error) {
	out, err := s.client.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: &s.keyID})
	if err != nil {
		return nil, fmt.Errorf("idtoken: kms:GetPublicKey %s: %w", s.keyID, err)
	}
	if out.KeySpec != types.KeySpecRsa2048 || out.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, fmt.Errorf("idtoken: KMS key %s is %s/%s, want RSA_2048/SIGN_VERIFY", s.keyID, out.KeySpec, out.KeyUsage)
	}
	pub, err := x509.ParsePKIXPublicKey(out.PublicKey)
	if err != nil {
		return nil, errors.New("idtoken: kms:GetPublicKey: public key is not DER SubjectPublicKeyInfo")
	}
	key, ok := pub.(*rsa.PublicKey)
	if !ok || idtoken.CheckRSA2048(key) != nil {
		return nil, errors.New("idtoken: kms:GetPublicKey: public key is not RSA 2048")
	}
	return key, nil
}

// PublishedKeys reads the public key of each of keyIDs through client (kms:GetPublicKey)
// and returns the JWK set the issuer publishes, each key's kid its id: the signing key,
// and during a key rotation the other one. Errors: no key id, an empty one, and
// PublicKey's, naming the key.
func PublishedKeys(ctx context.Context, client *kms.Client, keyIDs ...string) (idtoken.JWKSet, error) {
	if len(keyIDs) == 0 {
		return idtoken.JWKSet{}, errors.New("kmssign: no key to publish")
	}
	var set idtoken.JWKSet
	for _, id := range keyIDs {
		s, err := New(client, id)
		if err != nil {
			return idtoken.JWKSet{}, err
		}
		pub, err := s.PublicKey(ctx)
		if err != nil {
			return idtoken.JWKSet{}, err
		}
		jwk, err := idtoken.NewJWK(id, pub)
		if err != nil {
			return idtoken.JWKSet{}, err
		}
		set.Keys = append(set.Keys, jwk)
	}
	return set, set.Check()
}
