package kmssign_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"

	"github.com/stockguard/stockguard/internal/idtoken"
	"github.com/stockguard/stockguard/internal/idtoken/kmssign"
	"github.com/stockguard/stockguard/tools/internal/testing/kmstest"
)

// The issuer, audience and clock of the tokens signed here.
const (
	issuer   = "https://abc123.execute-api.cn-north-1.amazonaws.com.cn"
	audience = "wxd678efh567hg6787"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Tokens signed through kms:Sign (local-kms, through the SDK) verify under the key
// kms:GetPublicKey returns, as the JWK set publishes it; one Sign request per token.
func TestSigner_TokensVerifyWithTheKMSPublicKey(t *testing.T) {
	srv := kmstest.New(t)
	keyID := srv.CreateSigningKey(t, types.KeySpecRsa2048)
	signer, err := kmssign.New(srv.Client, keyID)
	if err != nil {
		t.Fatal(err)
	}
	set, err := kmssign.PublishedKeys(context.Background(), srv.Client, keyID)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].Kid != keyID || set.Keys[0].Kty != "RSA" || set.Keys[0].Alg != "RS256" {
		t.Fatalf("JWK set %+v", set)
	}
	pub, err := set.Keys[0].PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	iss, err := idtoken.NewIssuer(idtoken.IssuerConfig{Issuer: issuer, Audience: audience, KeyID: keyID, Now: func() time.Time { return t0 }}, signer)
	if err != nil {
		t.Fatal(err)
	}
	const tokens = 20
	for i := range tokens {
		tok, err := iss.Issue(context.Background(), "o-alice")
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(tok.Token, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
			t.Fatalf("token %d does not verify under the published key: %v", i, err)
		}
	}
	if n := srv.Calls("Sign"); n != tokens {
		t.Errorf("%d kms:Sign requests for %d tokens", n, tokens)
	}
}

func TestSigner_Errors(t *testing.T) {
	srv := kmstest.New(t)
	ecc := srv.CreateSigningKey(t, types.KeySpecEccNistP256)
	digest := sha256.Sum256([]byte("x"))
	t.Run("UnknownKeyIsTheKMSError", func(t *testing.T) {
		s, _ := kmssign.New(srv.Client, "00000000-0000-0000-0000-000000000000")
		_, err := s.Sign(context.Background(), digest[:])
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFoundException" {
			t.Errorf("Sign = %v, want NotFoundException", err)
		}
		if _, err := s.PublicKey(context.Background()); !errors.As(err, &apiErr) {
			t.Errorf("PublicKey = %v", err)
		}
	})
	t.Run("ECCKeyOfTheES256TokensRefused", func(t *testing.T) {
		s, _ := kmssign.New(srv.Client, ecc)
		if _, err := s.PublicKey(context.Background()); err == nil || !strings.Contains(err.Error(), "RSA_2048") {
			t.Errorf("PublicKey = %v", err)
		}
		var apiErr smithy.APIError
		if _, err := s.Sign(context.Background(), digest[:]); !errors.As(err, &apiErr) {
			t.Errorf("Sign with an RSA algorithm on an ECC key = %v, want KMS's refusal", err)
		}
		if _, err := kmssign.PublishedKeys(context.Background(), srv.Client, srv.CreateSigningKey(t, types.KeySpecRsa2048), ecc); err == nil || !strings.Contains(err.Error(), ecc) {
			t.Errorf("PublishedKeys with the ECC key = %v, want an error naming it", err)
		}
	})
	t.Run("WrongDigestSizeNotSent", func(t *testing.T) {
		s, _ := kmssign.New(srv.Client, ecc)
		before := srv.Calls("Sign")
		if _, err := s.Sign(context.Background(), []byte("short")); err == nil {
			t.Error("signed a 5-byte digest")
		}
		if srv.Calls("Sign") != before {
			t.Error("a bad digest reached KMS")
		}
	})
	if _, err := kmssign.New(nil, "k"); err == nil {
		t.Error("New accepted a nil client")
	}
	if _, err := kmssign.PublishedKeys(context.Background(), srv.Client); err == nil {
		t.Error("PublishedKeys published no key")
	}
}

// During a rotation the issuer publishes two keys, each under its own key id.
func TestPublishedKeys_BothKeysOfARotation(t *testing.T) {
	srv := kmstest.New(t)
	current, other := srv.CreateSigningKey(t, types.KeySpecRsa2048), srv.CreateSigningKey(t, types.KeySpecRsa2048)
	set, err := kmssign.PublishedKeys(context.Background(), srv.Client, current, other)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 || set.Keys[0].Kid != current || set.Keys[1].Kid != other || set.Keys[0].N == set.Keys[1].N {
		t.Errorf("JWK set %+v", set)
	}
	if n := srv.Calls("GetPublicKey"); n != 2 {
		t.Errorf("%d kms:GetPublicKey requests for two keys", n)
	}
}
