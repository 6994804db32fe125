package admission_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/inventory"
)

var at = time.Date(2026, 11, 11, 10, 0, 0, 0, time.UTC)

func keys(t *testing.T, current, previous byte) *admission.Keys {
	t.Helper()
	var prev []byte
	if previous != 0 {
		prev = bytes.Repeat([]byte{previous}, admission.KeySize)
	}
	k, err := admission.NewKeys(bytes.Repeat([]byte{current}, admission.KeySize), prev)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKeys_MintThenCheck(t *testing.T) {
	k := keys(t, 1, 0)
	a := inventory.Admission{User: "alice", SKU: "drop", Ticket: "t1", Position: 7, Expires: at.Add(3 * time.Minute)}
	token, err := k.Mint(a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Check(token, at)
	if err != nil || got != a {
		t.Fatalf("Check = %+v, %v; want %+v", got, err, a)
	}
	header, _, _ := strings.Cut(token, ".")
	if h, _ := base64.RawURLEncoding.DecodeString(header); !strings.Contains(string(h), `"HS256"`) {
		t.Errorf("header %s is not HS256", h)
	}
}

// After a rotation, tokens signed with the previous key are still taken; tokens of a
// key never configured, expired ones, tampered ones and unsigned ones are not.
func TestKeys_CheckRefusesWhatTheyDidNotSign(t *testing.T) {
	a := inventory.Admission{User: "alice", SKU: "drop", Ticket: "t1", Position: 1, Expires: at.Add(time.Minute)}
	old, _ := keys(t, 1, 0).Mint(a)
	rotated := keys(t, 2, 1)
	if _, err := rotated.Check(old, at); err != nil {
		t.Errorf("a token of the previous key: %v", err)
	}
	stranger, _ := keys(t, 3, 0).Mint(a)
	expired, _ := keys(t, 2, 0).Mint(inventory.Admission{User: "alice", SKU: "drop", Expires: at})
	parts := strings.Split(old, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"bob","sku":"drop","tkt":"t1","pos":1,"exp":1900000000}`)) + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	for name, token := range map[string]string{"another key": stranger, "expired": expired, "tampered": tampered, "alg none": none, "empty": ""} {
		if _, err := rotated.Check(token, at); !errors.Is(err, admission.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if got := rotated.FromHeader(map[string]string{admission.Header: stranger}, at); got != nil {
		t.Errorf("FromHeader of another key's token = %+v", got)
	}
	if got := rotated.FromHeader(map[string]string{admission.Header: old}, at); got == nil || got.User != "alice" {
		t.Errorf("FromHeader of a good token = %+v", got)
	}
}

func TestNewKeys_RefusesShortKeys(t *testing.T) {
	if _, err := admission.NewKeys(make([]byte, 16), nil); err == nil {
		t.Error("a 16-byte key was taken")
	}
	if _, err := admission.KeyFromSecret([]byte("short")); err == nil {
		t.Error("a 5-byte secret was taken")
	}
}
