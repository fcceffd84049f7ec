package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/scaffold"
)

// hiddenComplete is the command the completion scripts run for the
// candidates of a word; it is not in the help.
const hiddenComplete = "__complete"

// shells are the shells dynop completion writes scripts for.
var shells = []string{"bash", "zsh", "fish"}

// completionCommand is dynop completion SHELL.
func completionCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	if err := parse("completion", fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: completion takes one shell: %s", errUsage, strings.Join(shells, ", "))
	}
	var script string
	switch fs.Arg(0) {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "fish":
		script = fishCompletion
	default:
		return fmt.Errorf("%w: completion: unknown shell %q: want %s", errUsage, fs.Arg(0), strings.Join(shells, ", "))
	}
	_, err := io.WriteString(stdout, script)
	return err
}

// completeTimeout bounds the host a completion opens: a shell waits for
// it.
const completeTimeout = 5 * time.Second

// completeCommand is the hidden dynop __complete WHAT [CMD [FLAG]]: it
// prints the candidates for a word, one a line, and nothing on stderr,
// whatever plugin files it meets:
//
//	commands            the commands
//	flags CMD           CMD's flags, --name
//	valueflags CMD      those of CMD's flags whose value is the next word
//	values CMD FLAG     the values FLAG of CMD takes, if they are a list
//	args CMD            candidates for CMD's arguments (operators, plugin
//	                    IDs, commands, shells); none means files
//	ops                 the operators of the plugins found
//	plugins             the IDs of the plugins found
//
// An unknown command or flag has no candidates.
func completeCommand(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s takes commands, flags CMD, valueflags CMD, values CMD FLAG, args CMD, ops or plugins", errUsage, hiddenComplete)
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	var out []string
	switch args[0] {
	case "commands":
		out = commandNames()
	case "flags", "valueflags":
		if fs := commandFlags(arg(1)); fs != nil {
			fs.VisitAll(func(f *flag.Flag) {
				if value, optional := flagKind(f); args[0] == "flags" || value && !optional {
					out = append(out, "--"+f.Name)
				}
			})
		}
	case "values":
		out = flagValues(arg(1), strings.TrimLeft(arg(2), "-"))
	case "args":
		switch arg(1) {
		case "inspect":
			out = append(completeOps(ctx), completePlugins(ctx)...)
		case "bench":
			out = completeOps(ctx)
		case "help":
			out = commandNames()
		case "completion":
			out = shells
		}
	case "ops":
		out = completeOps(ctx)
	case "plugins":
		out = completePlugins(ctx)
	default:
		return fmt.Errorf("%w: %s: unknown %q", errUsage, hiddenComplete, args[0])
	}
	for _, s := range out {
		if !shellSafe(s) {
			continue // a name a shell could expand ($(…), `…`, globs): never offered
		}
		if _, err := fmt.Fprintln(stdout, s); err != nil {
			return err
		}
	}
	return nil
}

// shellSafe reports whether s may be handed to a completion script as a
// candidate word: letters, digits and . _ = - + / : , only (the
// characters of commands, flags, operator names and plugin IDs), none
// that bash's compgen -W would expand.
func shellSafe(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._=-+/:,", r):
		default:
			return false
		}
	}
	return true
}

// flagValues returns the values flag of cmd takes when they are a fixed
// list, else nil.
func flagValues(cmd, flagName string) []string {
	fs := commandFlags(cmd)
	if fs == nil || fs.Lookup(flagName) == nil {
		return nil
	}
	switch flagName {
	case "color":
		return slices.Clone(colorModeNames[:])
	case "sandbox":
		return []string{"prefer-native", "unsigned", "always"}
	case "lang":
		return slices.Clone(scaffold.Languages)
	}
	return nil
}

// completionHost opens the host the other commands would, with nothing
// logged (a broken plugin file must not print into the shell), or nil.
func completionHost(ctx context.Context) (*dynop.Host, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	opts, err := hostOptions(nil)
	if err != nil {
		return nil, cancel
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := dynop.Open(ctx, opts)
	if err != nil {
		return nil, cancel
	}
	return h, func() { h.Close(ctx); cancel() }
}

// completeOps returns the names of the operators the host knows.
func completeOps(ctx context.Context) []string {
	h, done := completionHost(ctx)
	defer done()
	if h == nil {
		return nil
	}
	var names []string
	for _, e := range h.Operators().List() {
		names = append(names, e.Schema.Name)
	}
	return names
}

// completePlugins returns the IDs of the plugins the host knows.
func completePlugins(ctx context.Context) []string {
	h, done := completionHost(ctx)
	defer done()
	if h == nil {
		return nil
	}
	var ids []string
	for _, st := range h.Plugins() {
		if st.Info.ID != "" && !slices.Contains(ids, st.Info.ID) {
			ids = append(ids, st.Info.ID)
		}
	}
	return ids
}

// The completion scripts ask the dynop they complete for (the command
// word as typed) for every candidate through dynop __complete, so that
// they know the commands, flags, operators and plugins of that build and
// its search path.

const bashCompletion = `# bash completion for dynop: source <(dynop completion bash)
_dynop() {
    local dynop=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmd flag p values
    COMPREPLY=()
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$("$dynop" __complete commands 2>/dev/null)" -- "$cur"))
        return 0
    fi
    cmd=${COMP_WORDS[1]}
    # A flag's value: --flag=VALUE (bash splits the word at =) or --flag VALUE.
    if [[ $cur == "=" ]]; then
        flag=$prev
        cur=
    elif [[ $prev == "=" && $COMP_CWORD -ge 3 ]]; then
        flag=${COMP_WORDS[COMP_CWORD-2]}
    elif [[ $prev == -?* ]]; then
        p=${prev#--}
        p=${p#-}
        if "$dynop" __complete valueflags "$cmd" 2>/dev/null | grep -qx -- "--$p"; then
            flag=--$p
        fi
    fi
    if [[ -n $flag ]]; then
        values=$("$dynop" __complete values "$cmd" "$flag" 2>/dev/null)
        if [[ -n $values ]]; then
            COMPREPLY=($(compgen -W "$values" -- "$cur"))
        fi
        return 0 # no candidates: files (complete -o default)
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("$dynop" __complete flags "$cmd" 2>/dev/null)" -- "$cur"))
        return 0
    fi
    values=$("$dynop" __complete args "$cmd" 2>/dev/null)
    if [[ -n $values ]]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
    fi
    return 0 # no candidates: files (complete -o default)
}
complete -o default -F _dynop dynop
`

const zshCompletion = `#compdef dynop
# zsh completion for dynop: source <(dynop completion zsh) after compinit,
# or save it as _dynop in a directory of $fpath.
_dynop() {
    local dynop=${words[1]} cur=${words[CURRENT]} prev=${words[CURRENT-1]}
    local cmd flag p
    local -a cands valueflags
    if (( CURRENT == 2 )); then
        cands=(${(f)"$($dynop __complete commands 2>/dev/null)"})
        compadd -a cands
        return
    fi
    cmd=${words[2]}
    if [[ $cur == -*=* ]]; then
        flag=${cur%%=*}
        compset -P '*='
        cands=(${(f)"$($dynop __complete values $cmd $flag 2>/dev/null)"})
        if (( ${#cands} )); then
            compadd -a cands
        else
            _files
        fi
        return
    fi
    if [[ $prev == -?* ]]; then
        p=${prev#--}
        p=${p#-}
        valueflags=(${(f)"$($dynop __complete valueflags $cmd 2>/dev/null)"})
        if (( ${valueflags[(Ie)--$p]} )); then
            cands=(${(f)"$($dynop __complete values $cmd --$p 2>/dev/null)"})
            if (( ${#cands} )); then
                compadd -a cands
            else
                _files
            fi
            return
        fi
    fi
    if [[ $cur == -* ]]; then
        cands=(${(f)"$($dynop __complete flags $cmd 2>/dev/null)"})
        compadd -a cands
        return
    fi
    # The argument's candidates that fit, else files.
    cands=(${(f)"$($dynop __complete args $cmd 2>/dev/null)"})
    compadd -a cands || _files
}
if [[ $funcstack[1] == _dynop ]]; then
    _dynop "$@"
else
    compdef _dynop dynop
fi
`

const fishCompletion = `# fish completion for dynop: dynop completion fish | source
function __dynop_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l dynop $words[1]
    if test (count $words) -eq 1
        $dynop __complete commands 2>/dev/null
        return
    end
    set -l cmd $words[2]
    if string match -q -- '-*=*' $cur
        set -l parts (string split -m 1 = -- $cur)
        set -l values ($dynop __complete values $cmd $parts[1] 2>/dev/null)
        if test (count $values) -gt 0
            printf '%s\n' $parts[1]=$values
        else
            __fish_complete_path $parts[2] | string replace -r '^' -- "$parts[1]="
        end
        return
    end
    set -l prev $words[-1]
    if string match -q -- '-?*' $prev
        set -l p (string replace -r -- '^--?' '' $prev)
        if contains -- --$p ($dynop __complete valueflags $cmd 2>/dev/null)
            set -l values ($dynop __complete values $cmd --$p 2>/dev/null)
            if test (count $values) -gt 0
                printf '%s\n' $values
            else
                __fish_complete_path $cur
            end
            return
        end
    end
    if string match -q -- '-*' $cur
        $dynop __complete flags $cmd 2>/dev/null
        return
    end
    # The argument's candidates that fit, else files.
    set -l fits (string match -- "$cur*" ($dynop __complete args $cmd 2>/dev/null))
    if test (count $fits) -gt 0
        printf '%s\n' $fits
    else
        __fish_complete_path $cur
    end
end
complete -c dynop -f -a '(__dynop_complete)'
`
