package buildinfo_test

import (
	"runtime/debug"
	"testing"

	"github.com/stockguard/stockguard/internal/buildinfo"
)

func TestOf_NamesVersionRevisionAndGo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := buildinfo.Of("stockctl", info), "stockctl v1.4.0 (0123456789ab, modified, go1.26.0)"; got != want {
		t.Errorf("Of = %q, want %q", got, want)
	}
	info.Settings = nil
	if got, want := buildinfo.Of("stockctl", info), "stockctl v1.4.0 (go1.26.0)"; got != want {
		t.Errorf("Of without VCS = %q, want %q", got, want)
	}
}
