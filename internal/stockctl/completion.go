package stockctl

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// globalFlags are the flags every command takes; valued are those that take a value
// (the word after them is not a command).
var (
	globalFlags  = []string{"--endpoint", "--region", "--profile", "--stack", "-o", "--version", "--help"}
	valuedFlags  = []string{"--endpoint", "--region", "--profile", "--stack", "-o"}
	flagPattern  = regexp.MustCompile(`--[a-z][a-z-]*`)
	valuePattern = regexp.MustCompile(`(--[a-z][a-z-]*|^) ?([A-Za-z][A-Za-z_-]*(?:\|[A-Za-z][A-Za-z_-]*)+)`)
)

// completionWords is what the completion scripts offer: per command its flags, and
// per flag (or command, for its first argument) the values it takes, both read from
// the command's usage line (command.args), so that a flag added to a command's usage
// is completed too.
func completionWords() (flags, values map[string][]string) {
	flags, values = map[string][]string{}, map[string][]string{"-o": {"table", "json"}}
	for _, c := range commands {
		flags[c.name] = slices.Compact(slices.Sorted(slices.Values(flagPattern.FindAllString(c.args, -1))))
		for _, m := range valuePattern.FindAllStringSubmatch(c.args, -1) {
			key := m[1]
			if key == "" {
				key = c.name
			}
			values[key] = strings.Split(m[2], "|")
		}
	}
	return flags, values
}

// writeCompletion writes the completion script of shell (bash, zsh or fish): the
// commands, the global flags, each command's own flags, and the values of the flags
// that take one of a few (-o, --type, --status) and of the first argument of the
// commands that take one of a few (completion's shell, aftersales' step). Errors:
// another shell.
func writeCompletion(w io.Writer, shell string) error {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	flags, values := completionWords()
	switch shell {
	case "bash", "zsh":
		_, err := io.WriteString(w, bashCompletion(shell, names, flags, values))
		return err
	case "fish":
		var b strings.Builder
		fmt.Fprintf(&b, "# stockctl completion for fish: stockctl completion fish > ~/.config/fish/completions/stockctl.fish\n"+
			"complete -c stockctl -f -n __fish_use_subcommand -a %q\n", strings.Join(names, " "))
		for _, f := range globalFlags {
			if strings.HasPrefix(f, "--") {
				fmt.Fprintf(&b, "complete -c stockctl -l %s\n", strings.TrimPrefix(f, "--"))
			}
		}
		fmt.Fprintf(&b, "complete -c stockctl -s o -x -a %q\n", strings.Join(values["-o"], " "))
		for _, n := range names {
			for _, f := range flags[n] {
				line := fmt.Sprintf("complete -c stockctl -n '__fish_seen_subcommand_from %s' -l %s", n, strings.TrimPrefix(f, "--"))
				if v, ok := values[f]; ok {
					line += fmt.Sprintf(" -x -a %q", strings.Join(v, " "))
				}
				b.WriteString(line + "\n")
			}
		}
		for _, n := range names {
			if v, ok := values[n]; ok {
				fmt.Fprintf(&b, "complete -c stockctl -n '__fish_seen_subcommand_from %s' -x -a %q\n", n, strings.Join(v, " "))
			}
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	return usageError("completion: shell must be bash, zsh or fish, got %q", shell)
}

// bashCompletion is the bash script (zsh: the same through bashcompinit) of
// writeCompletion.
func bashCompletion(shell string, names []string, flags, values map[string][]string) string {
	var b strings.Builder
	if shell == "zsh" {
		b.WriteString("#compdef stockctl\n# stockctl completion for zsh: stockctl completion zsh > \"${fpath[1]}/_stockctl\"\n" +
			"autoload -U +X bashcompinit && bashcompinit\n")
	} else {
		b.WriteString("# stockctl completion for bash: source <(stockctl completion bash)\n")
	}
	b.WriteString("_stockctl() {\n  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"\" skip=\"\" w opts\n")
	fmt.Fprintf(&b, "  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n    if [[ -n $skip ]]; then skip=\"\"; continue; fi\n"+
		"    case $w in %s) skip=1 ;; -*) ;; *) cmd=$w; break ;; esac\n  done\n", strings.Join(valuedFlags, "|"))
	b.WriteString("  case $prev in\n")
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	}) {
		if strings.HasPrefix(k, "-") {
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", k, strings.Join(values[k], " "))
		}
	}
	b.WriteString("  esac\n  case $cmd in\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    %s) opts=%q ;;\n", n, strings.Join(flags[n], " "))
	}
	fmt.Fprintf(&b, "  esac\n  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"%s $opts\" -- \"$cur\")); return; fi\n", strings.Join(globalFlags, " "))
	fmt.Fprintf(&b, "  if [[ -z $cmd ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(names, " "))
	// A command's first argument, when its usage names the few it takes
	// (completion's shell, aftersales' step).
	b.WriteString("  if [[ $prev == \"$cmd\" ]]; then case $cmd in\n")
	for _, n := range names {
		if v, ok := values[n]; ok {
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", n, strings.Join(v, " "))
		}
	}
	b.WriteString("  esac; fi\n}\n")
	b.WriteString("complete -F _stockctl stockctl\n")
	return b.String()
}
