// Package buildinfo says which build of a command is running, for its --version:
// the module version and the VCS revision Go recorded in the binary
// (runtime/debug.ReadBuildInfo; "go help buildvcs").
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// String is "<name> <version> (<revision>[, modified], <go version>)" for the running
// binary: version is the main module's ("(devel)" for a build from a checkout), the
// revision the first 12 hex digits of the commit, "modified" when the checkout had
// uncommitted changes. Without build information (a test binary) it is "<name> unknown".
func String(name string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " unknown"
	}
	return Of(name, info)
}

// Of is String for the build information info.
func Of(name string, info *debug.BuildInfo) string {
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	details := []string{}
	if revision != "" {
		details = append(details, revision+modified)
	}
	details = append(details, info.GoVersion)
	return name + " " + info.Main.Version + " (" + strings.Join(details, ", ") + ")"
}
