package deploytest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	localkms "github.com/nsmithuk/local-kms/src"
	kmsconfig "github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"

	"github.com/stockguard/stockguard/tools/internal/sam"
)

// Credentials every bootstrap runs with, as Lambda passes the execution role's.
const (
	accessKeyID     = "AKIDBOOTSTRAPTEST"
	secretAccessKey = "bootstrap-test-secret"
	sessionToken    = "bootstrap-test-session"
)

// startKMS starts github.com/nsmithuk/local-kms (an AWS KMS API emulator) in-process
// on a free port and returns its endpoint.
func startKMS(t *testing.T) string {
	t.Helper()
	kmsconfig.AWSRegion, kmsconfig.AWSAccountId = sam.Region, sam.AccountID
	db := data.NewDatabase(filepath.Join(t.TempDir(), "kms"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		localkms.HandleRequest(w, r, db)
	}))
	t.Cleanup(func() { srv.Close(); db.Close() })
	return srv.URL
}

// kmsClient is a KMS client of the endpoint, signing as the functions' role.
func kmsClient(endpoint string) *kms.Client {
	return kms.New(kms.Options{
		Region: sam.Region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, ""),
	})
}

// createSigningKey creates the login tokens' signing key at the KMS endpoint: a
// SIGN_VERIFY key of keySpec (template.yaml's SigningKey's KeySpec), and returns its id.
func createSigningKey(t *testing.T, endpoint string, keySpec types.KeySpec) string {
	t.Helper()
	out, err := kmsClient(endpoint).CreateKey(context.Background(), &kms.CreateKeyInput{KeySpec: keySpec, KeyUsage: types.KeyUsageTypeSignVerify})
	if err != nil {
		t.Fatalf("create the signing key (%s) at %s: %v", keySpec, endpoint, err)
	}
	return aws.ToString(out.KeyMetadata.KeyId)
}

// answersKeySpec reports whether GetPublicKey at the KMS endpoint names the KeySpec of
// a key of keySpec, as the AWS KMS API Reference ("GetPublicKey": KeySpec, with
// CustomerMasterKeySpec its deprecated copy) documents and the functions check at
// cold start. moto_server 5.2.1 answers only CustomerMasterKeySpec.
func answersKeySpec(t *testing.T, endpoint string, keySpec types.KeySpec) bool {
	t.Helper()
	out, err := kmsClient(endpoint).GetPublicKey(context.Background(), &kms.GetPublicKeyInput{KeyId: aws.String(createSigningKey(t, endpoint, keySpec))})
	if err != nil {
		t.Fatalf("GetPublicKey at %s: %v", endpoint, err)
	}
	return out.KeySpec == keySpec
}

// signingKeySpec is the KeySpec of template.yaml's SigningKeyA.
func signingKeySpec(t *testing.T, tpl *sam.Template) types.KeySpec {
	t.Helper()
	keys, err := tpl.KMSKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "SigningKeyA" {
			return types.KeySpec(k.KeySpec)
		}
	}
	t.Fatal("no SigningKeyA in template.yaml")
	return ""
}

// secretReads is the Secrets Manager endpoint the bootstraps are given: a front of a
// moto_server's Secrets Manager (AWS's API, not ours) that counts, by SecretId, the
// GetSecretValue requests signed with the functions' role credentials and records
// every other request, so the test can check who read what how often.
type secretReads struct {
	next    http.Handler
	mu      sync.Mutex
	reads   map[string]int
	unknown []string // requests other than GetSecretValue signed by the role
}

// newSecretReads creates each secret of values (name → SecretString) at the moto_server
// at endpoint and returns the front and each secret's ARN by name.
func newSecretReads(t *testing.T, endpoint string, values map[string][]byte) (*secretReads, map[string]string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	client := secretsmanager.New(secretsmanager.Options{
		Region: sam.Region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, ""),
	})
	arns := map[string]string{}
	for name, value := range values {
		out, err := client.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(string(value))})
		if err != nil {
			t.Fatalf("create secret %s: %v", name, err)
		}
		arns[name] = aws.ToString(out.ARN)
	}
	return &secretReads{next: httputil.NewSingleHostReverseProxy(u), reads: map[string]int{}}, arns
}

func (s *secretReads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in struct{ SecretId string }
	json.Unmarshal(body, &in)
	s.mu.Lock()
	if r.Header.Get("X-Amz-Target") == "secretsmanager.GetSecretValue" && strings.Contains(r.Header.Get("Authorization"), "Credential="+accessKeyID+"/") {
		s.reads[in.SecretId]++
	} else {
		s.unknown = append(s.unknown, r.Header.Get("X-Amz-Target")+" "+in.SecretId+" "+r.Header.Get("Authorization"))
	}
	s.mu.Unlock()
	s.next.ServeHTTP(w, r)
}

// strayCalls is the catch-all AWS endpoint (AWS_ENDPOINT_URL): any AWS call that no
// embedded server serves lands here, is recorded and refused, so the test can assert
// that the functions called nothing else.
type strayCalls struct {
	mu    sync.Mutex
	calls []string
}

func (s *strayCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Amz-Target")+" "+r.Header.Get("Authorization"))
	s.mu.Unlock()
	http.Error(w, "no AWS service here", http.StatusNotImplemented)
}

func (s *strayCalls) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// wechatProxy is the HTTPS proxy (HTTPS_PROXY) the bootstraps reach WeChat through:
// it accepts CONNECT to the WeChat hosts the functions call at their real names,
// terminates TLS with a certificate for that host from a test CA (trusted by the
// bootstraps through SSL_CERT_FILE), and forwards each request to the stand-in that
// plays the host. So the binaries run unchanged, with their built-in WeChat hosts.
// CONNECT to any other host is refused and recorded.
type wechatProxy struct {
	upstream map[string]*url.URL // host → stand-in base URL
	cert     tls.Certificate
	mu       sync.Mutex
	refused  []string
}

// newWeChatProxy makes the test CA and a certificate for the hosts of upstream, writes
// the CA to a PEM file for SSL_CERT_FILE and returns the proxy and that file.
func newWeChatProxy(t *testing.T, upstream map[string]string) (*wechatProxy, string) {
	t.Helper()
	p := &wechatProxy{upstream: map[string]*url.URL{}}
	var hosts []string
	for host, base := range upstream {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		p.upstream[host] = u
		hosts = append(hosts, host)
	}
	caPEM, cert := testCertificate(t, hosts)
	p.cert = cert
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, file
}

// testCertificate returns a fresh CA (PEM) and a server certificate it signed for hosts.
func testCertificate(t *testing.T, hosts []string) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stockguard bootstrap test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return caPEM, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}
}

func (p *wechatProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target, ok := p.upstream[r.URL.Hostname()]
	if r.Method != http.MethodConnect || !ok || r.URL.Port() != "443" {
		p.mu.Lock()
		p.refused = append(p.refused, r.Method+" "+r.Host)
		p.mu.Unlock()
		http.Error(w, "this proxy reaches the WeChat stand-ins only", http.StatusForbidden)
		return
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		conn.Close()
		return
	}
	go p.forward(tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{p.cert}}), target)
}

// forward reads HTTP/1.1 requests from the client's TLS connection and relays each
// to target, until the client closes the connection.
func (p *wechatProxy) forward(conn net.Conn, target *url.URL) {
	defer conn.Close()
	in := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(in)
		if err != nil {
			return
		}
		req.URL.Scheme, req.URL.Host, req.RequestURI = target.Scheme, target.Host, ""
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return
		}
		err = resp.Write(conn)
		resp.Body.Close()
		if err != nil {
			return
		}
	}
}

func (p *wechatProxy) refusedHosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}
