package idtoken

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
)

// KeySigner is a Signer holding a 2048-bit RSA private key in memory: for the local
// stack and tests. Deployed functions use kmssign.Signer, so that no private key is in
// the function.
type KeySigner struct {
	key *rsa.PrivateKey
}

// NewKeySigner returns a KeySigner for key; an error unless key is RSA 2048.
func NewKeySigner(key *rsa.PrivateKey) (*KeySigner, error) {
	if key == nil || CheckRSA2048(&key.PublicKey) != nil {
		return nil, errors.New("idtoken: KeySigner needs an RSA 2048 key")
	}
	return &KeySigner{key: key}, nil
}

// GenerateKeySigner returns a KeySigner with a fresh RSA 2048 key from crypto/rand.
func GenerateKeySigner() (*KeySigner, error) {
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, fmt.Errorf("idtoken: generate key: %w", err)
	}
	return &KeySigner{key: key}, nil
}

// PublicKey is the key to publish in the JWK set.
func (s *KeySigner) PublicKey() *rsa.PublicKey { return &s.key.PublicKey }

// Sign signs digest (32 bytes) with RSASSA-PKCS1-v1_5 and returns the 256-byte
// signature, as kms:Sign with RSASSA_PKCS1_V1_5_SHA_256 and MessageType DIGEST does.
func (s *KeySigner) Sign(_ context.Context, digest []byte) ([]byte, error) {
	if len(digest) != sha256.Size {
		return nil, fmt.Errorf("idtoken: digest is %d bytes, want %d", len(digest), sha256.Size)
	}
	sig, err := rsa.SignPKCS1v15(nil, s.key, crypto.SHA256, digest)
	if err != nil {
		return nil, fmt.Errorf("idtoken: sign: %w", err)
	}
	return sig, nil
}
