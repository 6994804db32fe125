package stockctl_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/stockctl"
)

// The bash script, sourced by bash and asked as bash's programmable completion asks
// (COMP_WORDS, COMP_CWORD), offers the commands, each command's flags, and the values
// of -o, --type, --status and completion's shell; a global flag's value is not taken
// for the command.
func TestCompletion_BashCompletesCommandsFlagsAndValues(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	code, script, _ := run([]string{"completion", "bash"}, nil, new([]stockctl.ConfigOptions))
	if code != stockctl.ExitOK {
		t.Fatalf("exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "stockctl.bash")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"stockctl res":     "reshard",
		"stockctl refund-": "refund-retry refund-settled",
		"stockctl --endpoint http://127.0.0.1:3000 r": "reshard refund refund-retry refund-settled reconcile",
		"stockctl --stack shop ship --t":              "--tracking --type",
		"stockctl ship o-1 --type ":                   "express same-city virtual self-pickup",
		"stockctl orders --status ":                   "PENDING_OVERDUE REFUND_PENDING REFUNDING",
		"stockctl -o ":                                "table json",
		"stockctl completion ":                        "bash zsh fish",
		"stockctl create --of":                        "--off-sale",
		"stockctl aftersales ":                        "approve reject received",
	} {
		words := strings.Split(line, " ")
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _stockctl; echo "${COMPREPLY[*]}"`, "_", file)
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("%q: got %q (%v), want %q", line, got, err, want)
		}
	}
}
