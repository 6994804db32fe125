package idtoken_test

import (
	"crypto/elliptic"
	"encoding/asn1"
	"math/big"
	"testing"

	"github.com/stockguard/stockguard/internal/idtoken"
)

// TestJOSESignature_LeftPadsShortIntegers: r and s take 32 bytes each whatever their DER
// length (a DER INTEGER drops leading zero bytes, and adds one when the top bit is set).
func TestJOSESignature_LeftPadsShortIntegers(t *testing.T) {
	n := elliptic.P256().Params().N
	top := new(big.Int).Sub(n, big.NewInt(1)) // 32 bytes with the top bit set: DER adds a 0x00
	tests := []struct {
		name string
		r, s *big.Int
	}{
		{"OneByteEach", big.NewInt(1), big.NewInt(2)},
		{"TopBitSet", top, big.NewInt(0x7f)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			der, err := asn1.Marshal(struct{ R, S *big.Int }{tt.r, tt.s})
			if err != nil {
				t.Fatal(err)
			}
			sig, err := idtoken.JOSESignature(der)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, 64)
			tt.r.FillBytes(want[:32])
			tt.s.FillBytes(want[32:])
			if string(sig) != string(want) {
				t.Errorf("r||s = %x, want %x", sig, want)
			}
		})
	}
}
