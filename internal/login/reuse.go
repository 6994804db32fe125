package login

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stockguard/stockguard/internal/idtoken"
)

// Sessions keeps each buyer's last token, sealed, so that a buyer who signs in again
// while it has at least half its life left gets it again instead of a new signature
// (one KMS Sign request fewer; AWS KMS pricing charges every request). dynamo.Store
// implements it on the orders table.
type Sessions interface {
	// LoadSession returns what SaveSession kept under key, or nil when nothing is.
	LoadSession(ctx context.Context, key string) ([]byte, error)
	// SaveSession keeps sealed under key until expires.
	SaveSession(ctx context.Context, key string, sealed []byte, expires time.Time) error
}

// SealKeySize is the length of the key that seals kept tokens (AES-256-GCM): 32 bytes.
const SealKeySize = 32

// SealKey derives the key that seals kept tokens from the mini-program's AppSecret
// (HKDF-SHA256, RFC 5869, info "stockguard login token reuse v1"): reading the table
// alone does not give anyone a buyer's token, and a new AppSecret makes every kept
// token unreadable (each buyer's next login signs a new one). Errors: an empty secret.
func SealKey(appSecret string) ([]byte, error) {
	if appSecret == "" {
		return nil, errors.New("login: an AppSecret is needed to derive the seal key")
	}
	return hkdf.Key(sha256.New, []byte(appSecret), nil, "stockguard login token reuse v1", SealKeySize)
}

// keeper keeps tokens sealed in Sessions and opens them again.
type keeper struct {
	store Sessions
	aead  cipher.AEAD
	log   *slog.Logger
}

// newKeeper returns a keeper sealing with key (SealKeySize bytes), or nil (no reuse)
// when store or key is missing.
func newKeeper(store Sessions, key []byte, log *slog.Logger) (*keeper, error) {
	if store == nil || key == nil {
		return nil, nil
	}
	if len(key) != SealKeySize {
		return nil, fmt.Errorf("login: the seal key is %d bytes, want %d", len(key), SealKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("login: seal key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("login: seal key: %w", err)
	}
	return &keeper{store: store, aead: aead, log: log}, nil
}

// sessionKey is the item key of openid's kept token: the openid is not stored in clear.
func sessionKey(openid string) string {
	sum := sha256.Sum256([]byte("session\x00" + openid))
	return hex.EncodeToString(sum[:16])
}

// reuse returns openid's kept token when tokens may answer it again
// (idtoken.Issuer.Reusable). A store error, a seal that does not open (another
// AppSecret, another openid) or a token past reuse is a miss.
func (k *keeper) reuse(ctx context.Context, openid string, tokens *idtoken.Issuer) (idtoken.Token, bool) {
	if k == nil {
		return idtoken.Token{}, false
	}
	sealed, err := k.store.LoadSession(ctx, sessionKey(openid))
	if err != nil {
		k.log.WarnContext(ctx, "kept token not read; signing a new one", "error", err.Error())
		return idtoken.Token{}, false
	}
	n := k.aead.NonceSize()
	if len(sealed) <= n {
		return idtoken.Token{}, false
	}
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], []byte(openid))
	if err != nil {
		return idtoken.Token{}, false
	}
	return tokens.Reusable(string(plain), openid)
}

// keep seals token under openid until it expires (at). A failure is logged: the
// buyer has the token; the next login signs another.
func (k *keeper) keep(ctx context.Context, openid string, token idtoken.Token, at time.Time) {
	if k == nil {
		return
	}
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	sealed := k.aead.Seal(nonce, nonce, []byte(token.Token), []byte(openid))
	expires := at.Add(time.Duration(token.ExpiresIn) * time.Second)
	if err := k.store.SaveSession(ctx, sessionKey(openid), sealed, expires); err != nil {
		k.log.WarnContext(ctx, "token not kept for reuse", "error", err.Error())
	}
}
