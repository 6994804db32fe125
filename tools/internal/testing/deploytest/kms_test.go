package deploytest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/stockguard/stockguard/internal/testing/testkit"
	"github.com/stockguard/stockguard/tools/internal/local"
	"github.com/stockguard/stockguard/tools/internal/sam"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// signingAlgorithm is the kms:Sign algorithm of a key spec as the login function signs.
var signingAlgorithm = map[types.KeySpec]types.SigningAlgorithmSpec{
	types.KeySpecEccNistP256: types.SigningAlgorithmSpecEcdsaSha256,
	types.KeySpecRsa2048:     types.SigningAlgorithmSpecRsassaPkcs1V15Sha256,
}

// The KMS calls the login and jwks functions make, on the signing key of template.yaml's
// KeySpec, on local-kms (embedded) and on moto_server (moto), as the AWS KMS API
// Reference documents them: GetPublicKey names the KeySpec and SIGN_VERIFY usage;
// Sign of a SHA-256 DIGEST gives a signature the public key verifies; Sign refuses a
// RAW message over 4,096 bytes.
func TestKMS_TheSigningKeyAnswersAsTheKMSReferenceSays(t *testing.T) {
	tpl, err := sam.Load(filepath.Join(testkit.ModuleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := signingKeySpec(t, tpl)
	for _, impl := range []string{stacktest.Embedded, stacktest.Moto} {
		t.Run(impl, func(t *testing.T) {
			var endpoint string
			switch {
			case impl == stacktest.Embedded:
				endpoint = startKMS(t)
			case !stacktest.MotoInstalled():
				t.Skip(local.ErrNoMoto)
			default:
				endpoint = stacktest.MotoURL(t)
			}
			client, keyID := kmsClient(endpoint), createSigningKey(t, endpoint, spec)
			digest := sha256.Sum256([]byte("header.claims"))
			out, err := client.Sign(context.Background(), &kms.SignInput{KeyId: aws.String(keyID), Message: digest[:],
				MessageType: types.MessageTypeDigest, SigningAlgorithm: signingAlgorithm[spec]})
			if err != nil {
				t.Fatal(err)
			}
			pub, err := client.GetPublicKey(context.Background(), &kms.GetPublicKeyInput{KeyId: aws.String(keyID)})
			if err != nil {
				t.Fatal(err)
			}
			switch twice := sha256.Sum256(digest[:]); {
			case verifies(t, pub.PublicKey, digest[:], out.Signature):
			case impl == stacktest.Moto && verifies(t, pub.PublicKey, twice[:], out.Signature):
				t.Logf(`moto_server deviates from AWS: Sign of a DIGEST hashes the digest again (AWS KMS API Reference, "Sign": MessageType DIGEST); the bootstraps sign on local-kms`)
			default:
				t.Errorf("the %s signature does not verify with the key's public key", spec)
			}
			_, err = client.Sign(context.Background(), &kms.SignInput{KeyId: aws.String(keyID), Message: make([]byte, 4097),
				MessageType: types.MessageTypeRaw, SigningAlgorithm: signingAlgorithm[spec]})
			if impl == stacktest.Moto && err == nil {
				t.Logf(`moto_server deviates from AWS: Sign takes a RAW message over 4,096 bytes (AWS KMS API Reference, "Sign"); the functions sign digests`)
			} else if err == nil || !strings.Contains(err.Error(), "ValidationException") {
				t.Errorf("Sign of a 4,097-byte RAW message: %v, want ValidationException", err)
			}
			if impl == stacktest.Moto && pub.KeySpec == "" {
				t.Skipf(`moto_server deviates from AWS: GetPublicKey names the key spec only in the deprecated CustomerMasterKeySpec, not in KeySpec (AWS KMS API Reference, "GetPublicKey")`)
			}
			if pub.KeySpec != spec || pub.KeyUsage != types.KeyUsageTypeSignVerify {
				t.Errorf("GetPublicKey: %s/%s, want %s/SIGN_VERIFY", pub.KeySpec, pub.KeyUsage, spec)
			}
		})
	}
}

// verifies reports whether sig is a signature of digest by the DER public key der.
func verifies(t *testing.T, der, digest, sig []byte) bool {
	t.Helper()
	key, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		t.Fatal(err)
	}
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(k, digest, sig)
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig) == nil
	}
	t.Fatalf("public key of type %T", key)
	return false
}
