// Package kmstest runs github.com/nsmithuk/local-kms, an AWS KMS API emulator that
// nobody here wrote, in process for a test, as net/http/httptest runs a server: the
// code under test talks to it through the real aws-sdk-go-v2 KMS client.
package kmstest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	localkms "github.com/nsmithuk/local-kms/src"
	kmsconfig "github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
)

// Region and AccountID are what the emulator puts in key ARNs.
const (
	Region    = "us-east-1"
	AccountID = "111122223333"
)

// configure sets local-kms's process-wide region and account once.
var configure = sync.OnceFunc(func() { kmsconfig.AWSRegion, kmsconfig.AWSAccountId = Region, AccountID })

// Server is a running emulator and a client of it.
type Server struct {
	URL    string      // the endpoint, http://127.0.0.1:<port>
	Client *kms.Client // signed with static test credentials, no retries
	mu     sync.Mutex
	calls  map[string]int // operation (Sign, GetPublicKey, …) → requests received
}

// New starts an emulator on a free loopback port, its keys in a directory of t's, and
// stops it when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	configure()
	db := data.NewDatabase(filepath.Join(t.TempDir(), "kms"))
	s := &Server{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		s.mu.Lock()
		s.calls[op]++
		s.mu.Unlock()
		localkms.HandleRequest(w, r, db)
	}))
	t.Cleanup(func() { srv.Close(); db.Close() })
	s.URL = srv.URL
	s.Client = kms.New(kms.Options{
		Region: Region, BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDKMSTEST", "kms-test-secret", ""),
	})
	return s
}

// CreateSigningKey creates a SIGN_VERIFY key of spec (RSA_2048, ECC_NIST_P256, …) and
// returns its key id; it fails t on an error.
func (s *Server) CreateSigningKey(t testing.TB, spec types.KeySpec) string {
	t.Helper()
	out, err := s.Client.CreateKey(context.Background(), &kms.CreateKeyInput{KeySpec: spec, KeyUsage: types.KeyUsageTypeSignVerify})
	if err != nil {
		t.Fatalf("create a %s key in local KMS: %v", spec, err)
	}
	return aws.ToString(out.KeyMetadata.KeyId)
}

// Calls is how many requests of operation op (the X-Amz-Target's part after
// "TrentService.") the emulator received.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}
