package sam_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// deployParameters is an environment's [<env>.deploy.parameters] of samconfig.toml (AWS
// SAM developer guide, "AWS SAM CLI configuration file").
type deployParameters struct {
	StackName          string   `toml:"stack_name"`
	Capabilities       string   `toml:"capabilities"`
	ConfirmChangeset   bool     `toml:"confirm_changeset"`
	ResolveS3          bool     `toml:"resolve_s3"`
	ParameterOverrides []string `toml:"parameter_overrides"`
}

// samconfig.toml has a dev and a prod environment: distinct stacks, the IAM capability
// the stack's roles need, a change set to confirm before prod changes, and parameter
// overrides naming only template parameters. The required parameters without a
// default are given as <placeholders> that the parameters' own patterns refuse, so a
// forgotten one stops the deploy in CloudFormation.
func TestSamconfig_HasDevAndProdEnvironmentsOfTheTemplate(t *testing.T) {
	var cfg struct {
		Version float64
		Dev     struct {
			Deploy struct{ Parameters deployParameters }
		}
		Prod struct {
			Deploy struct{ Parameters deployParameters }
		}
	}
	if _, err := toml.DecodeFile(filepath.Join(testkit.ModuleRoot(t), "samconfig.toml"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 0.1 {
		t.Errorf("version %v, want 0.1", cfg.Version)
	}
	params := loadRealTemplate(t).Parameters()
	dev, prod := cfg.Dev.Deploy.Parameters, cfg.Prod.Deploy.Parameters
	if dev.StackName == "" || dev.StackName == prod.StackName {
		t.Errorf("stack names dev %q, prod %q: want two distinct stacks", dev.StackName, prod.StackName)
	}
	if !prod.ConfirmChangeset {
		t.Error("prod: confirm_changeset is not true")
	}
	for env, p := range map[string]deployParameters{"dev": dev, "prod": prod} {
		if !strings.Contains(p.Capabilities, "CAPABILITY_IAM") || !p.ResolveS3 {
			t.Errorf("%s: capabilities %q resolve_s3 %v; want CAPABILITY_IAM and a managed bucket", env, p.Capabilities, p.ResolveS3)
		}
		given := map[string]string{}
		for _, o := range p.ParameterOverrides {
			name, value, _ := strings.Cut(o, "=")
			if _, ok := params[name]; !ok {
				t.Errorf("%s: parameter_overrides names %q, not a template parameter", env, name)
			}
			given[name] = value
		}
		for name, param := range params {
			if param.Default != nil {
				continue
			}
			value, ok := given[name]
			if !ok {
				t.Errorf("%s: no value for %s, which has no default", env, name)
				continue
			}
			if !strings.HasPrefix(value, "<") || param.AllowedPattern == nil || regexp.MustCompile(*param.AllowedPattern).MatchString(value) {
				t.Errorf("%s: %s=%s: want a <placeholder> the parameter's pattern refuses", env, name, value)
			}
		}
	}
}

// Every function is `CodeUri: .` with `BuildMethod: makefile`
// (TestWiring_FunctionsAreBuiltByTheMakefileForProvidedAL2023OnArm64), so a build that
// copies the code location copies the whole repository once per function. samconfig.toml
// builds in source instead (`sam build --build-in-source`, which the SAM CLI supports for
// the Makefile workflow), cached and in parallel.
func TestSamconfig_BuildsInSource(t *testing.T) {
	var cfg struct {
		Default struct {
			Build struct {
				Parameters struct {
					BuildInSource *bool `toml:"build_in_source"`
					Cached        bool  `toml:"cached"`
					Parallel      bool  `toml:"parallel"`
				}
			}
		}
	}
	if _, err := toml.DecodeFile(filepath.Join(testkit.ModuleRoot(t), "samconfig.toml"), &cfg); err != nil {
		t.Fatal(err)
	}
	p := cfg.Default.Build.Parameters
	if p.BuildInSource == nil || !*p.BuildInSource || !p.Cached || !p.Parallel {
		t.Errorf("[default.build.parameters] build_in_source %v, cached %v, parallel %v; want all true", p.BuildInSource, p.Cached, p.Parallel)
	}
}
