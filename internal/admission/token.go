// Package admission mints and checks the waiting room's admission tokens
// (docs/design.md, "Admission tokens"): the token an ADMITTED poll of a ticket
// carries (package waitroom), which POST /orders for the SKU then needs in its
// Admission-Token header (package orders).
package admission

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/stockguard/stockguard/internal/inventory"
)

// KeySize is the length of an admission signing key: 32 bytes (HS256's HMAC-SHA256
// key, as long as its output: RFC 7518, 3.2 "A key of the same size as the hash
// output ... MUST be used").
const KeySize = 32

// Header is the request header POST /orders reads the token from (API Gateway
// delivers header names in lower case).
const Header = "admission-token"

// Keys signs admission tokens with the current key and checks them with the current
// or the previous one, so that a key can rotate while admissions signed with the old
// one are still valid (at most inventory.AdmissionSeconds). Safe for concurrent use.
type Keys struct {
	current, previous []byte
}

// NewKeys returns Keys signing with current and also accepting previous (nil: none).
// Errors: a key that is not KeySize bytes.
func NewKeys(current, previous []byte) (*Keys, error) {
	if len(current) != KeySize || previous != nil && len(previous) != KeySize {
		return nil, fmt.Errorf("admission: keys are %d bytes", KeySize)
	}
	return &Keys{current: current, previous: previous}, nil
}

// KeyFromSecret derives a KeySize key from a secret's value (HKDF-SHA256, RFC 5869,
// info "stockguard admission v1"): the Secrets Manager secret holds random text
// (GenerateSecretString), the key is fixed by it. Errors: a value under KeySize
// bytes.
func KeyFromSecret(value []byte) ([]byte, error) {
	if len(value) < KeySize {
		return nil, fmt.Errorf("admission: the secret is %d bytes, want at least %d", len(value), KeySize)
	}
	return hkdf.Key(sha256.New, value, nil, "stockguard admission v1", KeySize)
}

// claims are an admission token's claims (docs/design.md, "Admission tokens").
type claims struct {
	jwt.RegisteredClaims        // sub, exp
	SKU                  string `json:"sku"`
	Ticket               string `json:"tkt"`
	Position             int    `json:"pos"`
}

// Mint returns a's token: a compact JWT (RFC 7519), HS256, claims sub, sku, tkt, pos
// and exp (a.Expires, whole seconds, rounded down so it never outlives the step).
// Errors: k is nil (no keys configured).
func (k *Keys) Mint(a inventory.Admission) (string, error) {
	if k == nil {
		return "", errors.New("admission: no signing key")
	}
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: a.User, ExpiresAt: jwt.NewNumericDate(a.Expires.Truncate(time.Second))},
		SKU:              a.SKU, Ticket: a.Ticket, Position: a.Position,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(k.current)
}

// ErrInvalid: the token is not one these keys signed, or has expired at the time
// it is checked.
var ErrInvalid = errors.New("admission token is not valid")

// Check returns the admission token says when its signature is the current or
// previous key's (HS256 only: any other alg is refused) and it has not expired at
// now. Whose and which SKU's it is, the reservation checks
// (inventory.Admission.Admits). Errors: ErrInvalid.
func (k *Keys) Check(token string, now time.Time) (inventory.Admission, error) {
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }))
	for _, key := range [][]byte{k.current, k.previous} {
		if key == nil {
			continue
		}
		var c claims
		if _, err := p.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
			continue
		}
		return inventory.Admission{User: c.Subject, SKU: c.SKU, Ticket: c.Ticket, Position: c.Position, Expires: c.ExpiresAt.UTC()}, nil
	}
	return inventory.Admission{}, ErrInvalid
}

// FromHeader reads the optional Admission-Token header of headers (lower-case names)
// and checks it at now: nil when there is none or it is not valid (an order of a
// queued SKU is then refused ADMISSION_REQUIRED by the reservation, an order of
// other SKUs goes on). k nil checks nothing.
func (k *Keys) FromHeader(headers map[string]string, now time.Time) *inventory.Admission {
	token, ok := headers[Header]
	if !ok {
		return nil
	}
	a, err := k.Check(token, now)
	if err != nil {
		return nil
	}
	return &a
}
