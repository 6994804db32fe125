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

// A ticket token checks back to the ticket it was minted for, for its buyer and
// ticket id only, with the current or the previous key, until it expires; one of
// another key, another buyer or another ticket, expired or tampered does not. An
// unplaced ticket gets none.
func TestKeys_TicketTokenChecksOnlyForItsBuyerAndTicket(t *testing.T) {
	tk := inventory.Ticket{ID: "t1", SKU: "drop", User: "alice", Position: 42}
	token, err := keys(t, 1, 0).MintTicket(tk, at)
	if err != nil {
		t.Fatal(err)
	}
	rotated := keys(t, 2, 1)
	if got, err := rotated.CheckTicket(token, "alice", "t1", at.Add(time.Hour)); err != nil || got != tk {
		t.Fatalf("CheckTicket = %+v, %v; want %+v", got, err, tk)
	}
	stranger, _ := keys(t, 3, 0).MintTicket(tk, at)
	parts := strings.Split(token, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice","aud":["stockguard-ticket"],"sku":"drop","tkt":"t1","pos":1,"exp":1900000000}`)) + "." + parts[2]
	for _, c := range []struct {
		name, token, user, id string
		at                    time.Time
	}{
		{"another key", stranger, "alice", "t1", at},
		{"another buyer", token, "bob", "t1", at},
		{"another ticket", token, "alice", "t2", at},
		{"expired", token, "alice", "t1", at.Add(admission.TicketTokenSeconds * time.Second)},
		{"tampered", tampered, "alice", "t1", at},
		{"empty", "", "alice", "t1", at},
	} {
		if got, err := rotated.CheckTicket(c.token, c.user, c.id, c.at); !errors.Is(err, admission.ErrInvalid) {
			t.Errorf("%s: %+v, %v; want ErrInvalid", c.name, got, err)
		}
	}
	if _, err := rotated.MintTicket(inventory.Ticket{ID: "t2", SKU: "drop", User: "alice"}, at); err == nil {
		t.Error("an unplaced ticket got a token")
	}
}

// A ticket token is never an admission and an admission never a ticket token, though
// both come from the same keys: each kind is signed with a key of its own.
func TestKeys_TicketAndAdmissionTokensDoNotCross(t *testing.T) {
	k := keys(t, 1, 0)
	ticket, _ := k.MintTicket(inventory.Ticket{ID: "t1", SKU: "drop", User: "alice", Position: 1}, at)
	if a, err := k.Check(ticket, at); !errors.Is(err, admission.ErrInvalid) {
		t.Errorf("a ticket token checked as an admission: %+v, %v", a, err)
	}
	if got := k.FromHeader(map[string]string{admission.Header: ticket}, at); got != nil {
		t.Errorf("FromHeader took a ticket token: %+v", got)
	}
	adm, _ := k.Mint(inventory.Admission{User: "alice", SKU: "drop", Ticket: "t1", Position: 1, Expires: at.Add(time.Minute)})
	if tk, err := k.CheckTicket(adm, "alice", "t1", at); !errors.Is(err, admission.ErrInvalid) {
		t.Errorf("an admission checked as a ticket token: %+v, %v", tk, err)
	}
}
