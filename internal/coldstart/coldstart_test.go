package coldstart_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stockguard/stockguard/internal/coldstart"
	"github.com/stockguard/stockguard/internal/envvar"
)

// parseTable reads TABLE, refusing an empty one as the functions' parsers do.
func parseTable(get envvar.Lookup) (string, error) {
	if get("TABLE") == "" {
		return "", errors.New("TABLE is empty")
	}
	return get("TABLE"), nil
}

func TestLoad_ReturnsTheParsedConfiguration(t *testing.T) {
	log, cfg, _ := coldstart.Load("test", envvar.Map(map[string]string{"TABLE": "Orders"}), parseTable)
	if cfg != "Orders" || log == nil {
		t.Errorf("config %q, logger %v; want Orders and a logger", cfg, log)
	}
}

// A bad setting ends the process with status 1 and an error-level line naming the
// function and the setting (run in a child process, since Load exits).
func TestLoad_ExitsOnABadSettingNamingIt(t *testing.T) {
	if os.Getenv("COLDSTART_CHILD") == "1" {
		coldstart.Load("orderTaker", envvar.Map(nil), parseTable)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLoad_ExitsOnABadSettingNamingIt$")
	cmd.Env = append(os.Environ(), "COLDSTART_CHILD=1")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child ended with %v, want exit status 1", err)
	}
	if line := string(out); !strings.Contains(line, `"level":"ERROR"`) || !strings.Contains(line, "orderTaker cannot start") || !strings.Contains(line, "TABLE is empty") {
		t.Errorf("log %q does not name the function and the setting", line)
	}
}
