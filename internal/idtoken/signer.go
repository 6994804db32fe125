package idtoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
)

// KeySigner is a Signer holding a P-256 private key in memory: for the local stack and
// tests. Deployed functions use kmssign.Signer, so that no private key is in the
// function.
type KeySigner struct {
	key *ecdsa.PrivateKey
}

// NewKeySigner returns a KeySigner for key; an error unless key is ECDSA P-256.
func NewKeySigner(key *ecdsa.PrivateKey) (*KeySigner, error) {
	if key == nil || CheckP256(&key.PublicKey) != nil {
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
	return JOSESignature(der)
}

// JOSESignature converts a DER ECDSA-Sig-Value, SEQUENCE { r INTEGER, s INTEGER }
// (RFC 3279 §2.2.3), as KMS and crypto/ecdsa return it, to the JWS form: r||s with each
// half left-padded to 32 bytes (RFC 7518 §3.4). Errors: not DER, or r or s out of range
// for P-256.
func JOSESignature(der []byte) ([]byte, error) {
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
