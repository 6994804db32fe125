// Package admission mints and checks the waiting room's signed tokens
// (docs/design.md, "Admission tokens" and "Polling costs no write"): the admission
// token an ADMITTED poll of a ticket carries (package waitroom), which POST /orders
// for the SKU then needs in its Admission-Token header (package orders), and the
// ticket token a poll of a placed ticket carries, which later polls send back in
// their Ticket-Token header instead of having the ticket read.
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

// TicketHeader is the request header GET /queue/{ticket} reads a ticket token from
// (lower case, as API Gateway delivers it).
const TicketHeader = "ticket-token"

// TicketTokenSeconds is how long a ticket token is valid: a day, the ticket item's
// own lifetime after the sale's start (package dynamo's ticket TTL). A position is
// written once and never changes, so the token stays true while it is valid.
const TicketTokenSeconds = 24 * 60 * 60

// ticketAudience is a ticket token's aud claim; admission tokens carry none.
const ticketAudience = "stockguard-ticket"

// Keys signs admission tokens with the current key and checks them with the current
// or the previous one, so that a key can rotate while admissions signed with the old
// one are still valid (at most inventory.AdmissionSeconds). Ticket tokens are signed
// and checked the same way with keys of their own derived from those (ticketKey), so
// neither kind of token verifies as the other. Safe for concurrent use.
type Keys struct {
	current, previous []byte
	// ticketCurrent and ticketPrevious sign and check ticket tokens.
	ticketCurrent, ticketPrevious []byte
}

// NewKeys returns Keys signing with current and also accepting previous (nil: none).
// Errors: a key that is not KeySize bytes.
func NewKeys(current, previous []byte) (*Keys, error) {
	if len(current) != KeySize || previous != nil && len(previous) != KeySize {
		return nil, fmt.Errorf("admission: keys are %d bytes", KeySize)
	}
	k := &Keys{current: current, previous: previous, ticketCurrent: ticketKey(current)}
	if previous != nil {
		k.ticketPrevious = ticketKey(previous)
	}
	return k, nil
}

// ticketKey is the ticket-token key of an admission key: HKDF-SHA256 (RFC 5869) of
// it, info "stockguard ticket v1". A KeySize output never fails.
func ticketKey(key []byte) []byte {
	k, err := hkdf.Key(sha256.New, key, nil, "stockguard ticket v1", KeySize)
	if err != nil {
		panic(err) // unreachable: KeySize is far below HKDF-SHA256's 255 × 32 bytes
	}
	return k
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

// claims are an admission token's claims (docs/design.md, "Admission tokens"), and a
// ticket token's.
type claims struct {
	jwt.RegisteredClaims        // sub, exp; aud of a ticket token
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
	c, err := verify(token, now, [][]byte{k.current, k.previous})
	if err != nil {
		return inventory.Admission{}, err
	}
	return inventory.Admission{User: c.Subject, SKU: c.SKU, Ticket: c.Ticket, Position: c.Position, Expires: c.ExpiresAt.UTC()}, nil
}

// verify returns the claims of token when it is HS256, signed by one of keys (nil
// ones skipped), unexpired at now and, with the options' audience, for it. Errors:
// ErrInvalid.
func verify(token string, now time.Time, keys [][]byte, opts ...jwt.ParserOption) (claims, error) {
	opts = append(opts, jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }))
	p := jwt.NewParser(opts...)
	for _, key := range keys {
		if key == nil {
			continue
		}
		var c claims
		if _, err := p.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
			continue
		}
		return c, nil
	}
	return claims{}, ErrInvalid
}

// MintTicket returns t's ticket token at now: a compact JWT, HS256 with the ticket
// key, claims sub (t.User), aud "stockguard-ticket", sku, tkt, pos and exp
// (TicketTokenSeconds after now). Errors: k is nil, t is not placed (Position 0).
func (k *Keys) MintTicket(t inventory.Ticket, now time.Time) (string, error) {
	if k == nil {
		return "", errors.New("admission: no signing key")
	}
	if t.Position <= 0 {
		return "", fmt.Errorf("admission: ticket %s has no position", t.ID)
	}
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: t.User, Audience: jwt.ClaimStrings{ticketAudience},
			ExpiresAt: jwt.NewNumericDate(now.Add(TicketTokenSeconds * time.Second).Truncate(time.Second))},
		SKU: t.SKU, Ticket: t.ID, Position: t.Position,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(k.ticketCurrent)
}

// CheckTicket returns the ticket a ticket token says (ID, SKU, User, Position) when
// it is signed with the current or previous ticket key (HS256 only), is for the
// audience "stockguard-ticket", has not expired at now, and names user as its buyer
// and id as its ticket. Errors: ErrInvalid (an admission token among them), also
// when k is nil.
func (k *Keys) CheckTicket(token, user, id string, now time.Time) (inventory.Ticket, error) {
	if k == nil {
		return inventory.Ticket{}, ErrInvalid
	}
	c, err := verify(token, now, [][]byte{k.ticketCurrent, k.ticketPrevious}, jwt.WithAudience(ticketAudience))
	if err != nil || c.Subject != user || c.Ticket != id || c.Position <= 0 || c.SKU == "" {
		return inventory.Ticket{}, ErrInvalid
	}
	return inventory.Ticket{ID: c.Ticket, SKU: c.SKU, User: c.Subject, Position: c.Position}, nil
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
