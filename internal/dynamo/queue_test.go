package dynamo

import (
	"slices"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
)

// The largest frontier the admitter keeps encodes in under 4 KB (one read unit,
// strongly consistent) and decodes to itself; one step more is refused.
func TestFrontierSteps_RoundTripWithinFourKilobytes(t *testing.T) {
	start := time.Date(2026, 11, 11, 10, 0, 0, 0, time.UTC)
	var f inventory.Frontier
	for i := range 10 * MaxFrontierSteps {
		f = f.Advance(start.Add(time.Duration(i)*time.Second), inventory.AdmissionDecision{Admit: 200})
	}
	if len(f.Steps) != MaxFrontierSteps {
		t.Fatalf("%d steps, want %d", len(f.Steps), MaxFrontierSteps)
	}
	b, err := encodeSteps(f.Steps)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != MaxFrontierSteps*frontierStepBytes || len(b) > 4096-100 {
		t.Errorf("%d bytes", len(b))
	}
	back, err := decodeSteps(b)
	if err != nil || !slices.Equal(back, f.Steps) {
		t.Fatalf("decoded %v, %v", back[:2], err)
	}
	if _, err := encodeSteps(append(f.Steps, inventory.AdmissionStep{})); err == nil {
		t.Error("one step too many was encoded")
	}
	if _, err := decodeSteps(b[:len(b)-1]); err == nil {
		t.Error("a partial step was decoded")
	}
}
