package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/dynop/dynop/internal/suggest"
)

// commandDoc describes one command for the help: what dynop help CMD,
// dynop CMD --help and the global usage print. The flags are not here:
// the help reads them from the command's own flag set (see commandFlags),
// so a flag a command defines is always in its help.
type commandDoc struct {
	name string
	// required are flags the command cannot do without: the synopsis
	// shows them outside brackets, in this order.
	required []string
	args     string // the positional arguments, as the synopsis shows them
	summary  string // one line, for the global usage
	doc      string // a paragraph, for the command's help
	example  string // command lines, one per line; "" for none
}

// commands are the commands in the order the global usage lists them.
// The hidden command __complete is not among them.
var commands = []commandDoc{
	{name: "version", summary: "print the dynop build, the plugin API version and the Go toolchain",
		doc: "Print the dynop module's version, the VCS revision, commit time and modified flag it was built from (unknown for go run and go test builds), the plugin API version and the Go toolchain. With --json, the schema dynop.version/v1 of docs/cli-json.md."},
	{name: "list", args: "[PATH...]", summary: "list every plugin found, with its state and why; with --ops, the operators; with --interfaces, the interfaces",
		doc:     "List every plugin the host finds — compiled in, in the PATH arguments (plugin files or directories) and on the search path — with its state (available, unsupported, broken, untrusted, duplicate) and why. With --ops, list the operators they provide instead; with --interfaces, the interfaces: who provides which versions, who needs them. Exits 1 if a plugin file is broken, after the listing.",
		example: "dynop list --ops\ndynop list --interfaces\ndynop list --json ./build"},
	{name: "inspect", args: "PATH|ID|OPERATOR|INTERFACE [PATH...]", summary: "show one plugin (a plugin file or ID), one operator (its schema and CPU variants) or one interface",
		doc:     "Show everything about one plugin — a plugin file by path, or a plugin's ID — or one operator: its schema, and its CPU variants with the one this CPU runs and why; or one interface, by name or UID: the plugins that provide it, with their versions, and those that need it. Further PATH arguments are plugin files or directories to search.",
		example: "dynop inspect image.Resize\ndynop inspect ./build/libblur.so"},
	{name: "doctor", summary: "check the environment and say what to fix (exit 1 if a check fails)",
		doc: "Check the environment a host opens in: the search path and its plugin files, the cache, the trust store, the signature and sandbox policies, CPU features, GPUs and the toolchains of dynop new. Every check that is not ok says what to fix; a failed check makes the exit status 1."},
	{name: "bench", args: "OPERATOR [PATH...]", summary: "time every variant of an operator this CPU runs",
		doc:     "Time every CPU variant of an operator that this CPU runs, on generated inputs of the given shape and dtype. PATH arguments are plugin files or directories to search.",
		example: "dynop bench --shape 1080x1920x3 --dtype uint8 --arg sigma=2 imgproc.GaussianBlur"},
	{name: "run", args: "PIPELINE.yaml", summary: "run a pipeline file over its inputs and write its outputs",
		doc:     "Run a pipeline file over its inputs and write its outputs. --in replaces an input's files, --out the outputs' directory; a run that stopped can be finished with --resume. Progress goes to stderr; the summary to stdout (--json for the schema dynop.run/v2).",
		example: "dynop run examples/pipelines/thumbnails.yaml\ndynop run --in photos=~/pictures --out /tmp/thumbs --workers 4 thumbnails.yaml"},
	{name: "graph", args: "PIPELINE.yaml", summary: "print a pipeline's graph after passes, or as Graphviz DOT",
		doc:     "Compile a pipeline file as run would and print its graph after the graph passes, one node a line, or as Graphviz DOT.",
		example: "dynop graph --dot pipeline.yaml | dot -Tsvg > graph.svg"},
	{name: "manifest", args: "PLUGIN...", summary: "write each plugin's manifest (PLUGIN.dynop.json), read in a child process",
		doc: "Write each plugin file's manifest, PLUGIN.dynop.json beside it, from its info read in a child process, so that finding the plugin later runs none of its code."},
	{name: "keygen", summary: "write a new ed25519 signing key pair, PREFIX.key and PREFIX.pub",
		doc: "Write a new ed25519 key pair for signing plugins: the private key PREFIX.key and the public key PREFIX.pub, which goes into a trust store ($DYNOP_TRUST_DIR)."},
	{name: "sign", required: []string{"key"}, args: "PLUGIN...", summary: "sign plugin files and their manifests (PLUGIN.dynop.sig)",
		doc:     "Sign plugin files and their manifests with a private key from dynop keygen, writing PLUGIN.dynop.sig (and the manifest if it is missing).",
		example: "dynop sign --key dynop-signing.key build/libblur.so"},
	{name: "verify", args: "PLUGIN...", summary: "check plugin files' signatures against a trust store",
		doc: "Check plugin files' signatures against a trust store: --trust, --key or $DYNOP_TRUST_DIR."},
	{name: "new", required: []string{"lang"}, args: "NAME", summary: "write a new plugin project: sources, build file, test, README",
		doc:     "Write a new plugin project in ./NAME (or --dir): sources, a build file, a test, a one-operator pipeline and a README with the commands that build, test and run it. LANG is c, cpp, go, go-wasm or rust.",
		example: "dynop new --lang c blur"},
	{name: "include-dir", summary: "print the directory holding dynop/dynop.h, for cgo and C builds",
		doc:     "Print the directory that holds dynop/dynop.h: the include directory of an installed dynop ($PREFIX/include beside $PREFIX/bin/dynop), else abi/include in the source tree this dynop was built from ($DYNOP_ROOT, a checkout above the executable, or the tree it was compiled in). Exits 1, naming every place it looked, if none has the header.",
		example: "CGO_CFLAGS=-I$(dynop include-dir) go build ./..."},
	{name: "completion", args: "bash|zsh|fish", summary: "print a shell completion script",
		doc:     "Print a script that completes dynop's commands, flags, operator names, plugin IDs and files in bash, zsh or fish.",
		example: "source <(dynop completion bash)          # in ~/.bashrc\nsource <(dynop completion zsh)           # in ~/.zshrc, after compinit\ndynop completion fish | source           # in ~/.config/fish/config.fish"},
	{name: "help", args: "[COMMAND]", summary: "print this help, or a command's",
		doc: "Print the commands, or one command's usage, flags and an example; dynop COMMAND --help does the same."},
}

// commandNames returns the names of the commands the global usage lists.
func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// lookupCommand returns the description of the command name.
func lookupCommand(name string) (commandDoc, bool) {
	i := slices.IndexFunc(commands, func(c commandDoc) bool { return c.name == name })
	if i < 0 {
		return commandDoc{}, false
	}
	return commands[i], true
}

// unknownCommand is the usage error for a command name that is not one,
// with the nearest command if the name looks like a typo of it.
func unknownCommand(name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if near := suggest.Nearest(name, commandNames()); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return fmt.Errorf("%w: %s", errUsage, msg)
}

// helpRequest is what parsing a command's flags returns for -h, -help or
// --help: the command and its flags, whose help run prints on stdout.
type helpRequest struct {
	cmd string
	fs  *flag.FlagSet
}

func (h *helpRequest) Error() string { return h.cmd + ": help requested" }

// Unwrap makes a helpRequest flag.ErrHelp.
func (h *helpRequest) Unwrap() error { return flag.ErrHelp }

// commandFlags returns the flags of the command cmd, by running it with
// --help: every command parses its flags before it does anything else,
// and parse answers --help with a helpRequest carrying them. nil if cmd
// is not a command that parses flags.
func commandFlags(cmd string) *flag.FlagSet {
	if _, ok := lookupCommand(cmd); !ok {
		return nil
	}
	err := command(context.Background(), []string{cmd, "--help"}, io.Discard, io.Discard)
	var h *helpRequest
	if errors.As(err, &h) {
		return h.fs
	}
	return nil
}

// flagPlaceholders name the value of each flag that takes one, for the
// help: "cmd.flag" for one command's flag, else "flag" for every
// command's. A test checks that every flag that takes a value has one.
var flagPlaceholders = map[string]string{
	"in": "[NAME=]PATH", "out": "DIR", "keygen.out": "PREFIX",
	"workers": "N", "prefetch": "N", "shard": "I/N", "shards": "N",
	"journal": "FILE", "trace": "FILE", "plugin": "PATH", "skip-pass": "NAME",
	"color": "WHEN", "sandbox": "POLICY",
	"shape": "HxWxC", "dtype": "DTYPE", "batch": "N", "time": "DURATION", "arg": "NAME=VALUE",
	"lang": "LANG", "dir": "DIR", "vendor": "VENDOR", "module": "PATH", "dynop": "DIR", "dynop-crate": "DIR",
	"key": "FILE", "trust": "DIR",
}

// boolFlag is what package flag asks of a flag that stands alone.
type boolFlag interface{ IsBoolFlag() bool }

// flagKind tells how a flag takes its value: not at all (a boolean),
// optionally (--sandbox[=POLICY]), or always.
func flagKind(f *flag.Flag) (takesValue, optional bool) {
	b, ok := f.Value.(boolFlag)
	if !ok || !b.IsBoolFlag() {
		return true, false
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isBool := g.Get().(bool); isBool {
			return false, false
		}
	}
	return false, true
}

// placeholder returns the name of the value of cmd's flag f.
func placeholder(cmd string, f *flag.Flag) string {
	if p, ok := flagPlaceholders[cmd+"."+f.Name]; ok {
		return p
	}
	if p, ok := flagPlaceholders[f.Name]; ok {
		return p
	}
	name, _ := flag.UnquoteUsage(f)
	if name == "" || name == "value" {
		return "VALUE"
	}
	return strings.ToUpper(name)
}

// flagSpec is a flag as help shows it: --json, --workers N,
// --sandbox[=POLICY].
func flagSpec(cmd string, f *flag.Flag) string {
	switch value, optional := flagKind(f); {
	case optional:
		return "--" + f.Name + "[=" + placeholder(cmd, f) + "]"
	case value:
		return "--" + f.Name + " " + placeholder(cmd, f)
	}
	return "--" + f.Name
}

// repeatable reports whether a flag may be given more than once.
func repeatable(f *flag.Flag) bool {
	_, ok := f.Value.(*listFlag)
	return ok
}

// synopsis returns the words of cmd's synopsis: the required flags, the
// others in brackets, then the arguments.
func synopsis(c commandDoc, fs *flag.FlagSet) []string {
	words := []string{c.name}
	for _, name := range c.required {
		if f := fs.Lookup(name); f != nil {
			words = append(words, flagSpec(c.name, f))
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(c.required, f.Name) {
			return
		}
		w := "[" + flagSpec(c.name, f) + "]"
		if repeatable(f) {
			w += "..."
		}
		words = append(words, w)
	})
	if c.args != "" {
		words = append(words, c.args)
	}
	return words
}

// wrap joins words with spaces into lines of at most width columns (a
// longer word has a line of its own), the first line starting with first
// and the others with indent.
func wrap(words []string, first, indent string, width int) string {
	var b strings.Builder
	line := first
	empty := true
	for _, w := range words {
		if !empty && len([]rune(line))+1+len([]rune(w)) > width {
			b.WriteString(line + "\n")
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

const helpWidth = 80

// shortUsage is what a usage error of cmd prints after the error: its
// synopsis and where to read more.
func shortUsage(c commandDoc) string {
	fs := commandFlags(c.name)
	if fs == nil {
		fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	}
	return wrap(synopsis(c, fs), "usage: dynop ", "         ", helpWidth) +
		fmt.Sprintf("Run 'dynop help %s' for what it does and its flags.\n", c.name)
}

// commandHelp is cmd's help: its usage, what it does, its flags and an
// example.
func commandHelp(c commandDoc, fs *flag.FlagSet) string {
	var b strings.Builder
	words := []string{c.name}
	for _, name := range c.required {
		if f := fs.Lookup(name); f != nil {
			words = append(words, flagSpec(c.name, f))
		}
	}
	if hasOptionalFlags(c, fs) {
		words = append(words, "[flags]")
	}
	if c.args != "" {
		words = append(words, c.args)
	}
	b.WriteString("Usage: dynop " + strings.Join(words, " ") + "\n\n")
	b.WriteString(wrap(strings.Fields(c.doc), "", "", helpWidth))
	if flagCount(fs) > 0 {
		b.WriteString("\nFlags:\n")
		b.WriteString(flagTable(c.name, fs))
	}
	if c.example != "" {
		b.WriteString("\nExample:\n")
		for _, l := range strings.Split(c.example, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// hasOptionalFlags reports whether fs has flags that c does not require.
func hasOptionalFlags(c commandDoc, fs *flag.FlagSet) bool {
	found := false
	fs.VisitAll(func(f *flag.Flag) { found = found || !slices.Contains(c.required, f.Name) })
	return found
}

// flagCount is the number of flags fs defines.
func flagCount(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// backQuote matches a back-quoted word in a flag's usage (package flag's
// placeholder convention), which the help prints without its quotes.
var backQuote = regexp.MustCompile("`([^`]*)`")

// flagTable lists the flags of fs, double-dashed with their placeholders,
// aligned, each followed by its usage and its default if it has one
// worth saying that the usage does not.
func flagTable(cmd string, fs *flag.FlagSet) string {
	const maxSpec = 26
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n := len([]rune(flagSpec(cmd, f))); n <= maxSpec {
			width = max(width, n)
		}
	})
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		spec := flagSpec(cmd, f)
		text := backQuote.ReplaceAllString(f.Usage, "$1")
		if repeatable(f) && !strings.Contains(text, "repeatable") {
			text += " (repeatable)"
		}
		if value, _ := flagKind(f); value && f.DefValue != "" && f.DefValue != "0" && !strings.Contains(text, "default") {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		indent := strings.Repeat(" ", 2+width+2)
		first := "  " + spec + strings.Repeat(" ", max(0, width-len([]rune(spec)))) + "  "
		if len([]rune(spec)) > width {
			b.WriteString("  " + spec + "\n")
			first = indent
		}
		b.WriteString(wrap(strings.Fields(text), first, indent, helpWidth))
	})
	return b.String()
}

// globalUsage is dynop help: every command with what it takes and does,
// and the environment.
func globalUsage() string {
	var b strings.Builder
	b.WriteString("Usage: dynop <command> [flags] [arguments]\n\nCommands:\n")
	for _, c := range commands {
		fs := commandFlags(c.name)
		if fs == nil {
			fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
		}
		b.WriteString(wrap(synopsis(c, fs), "  ", "      ", helpWidth))
		b.WriteString(wrap(strings.Fields(c.summary), "      ", "      ", helpWidth))
	}
	b.WriteString(usageTail)
	return b.String()
}

const usageTail = `
'dynop help COMMAND' or 'dynop COMMAND --help' prints a command's flags and
an example. Flags may come before or after the arguments, with one dash or
two (-json is --json); after -- everything is an argument.

Plugins are searched in the PATH arguments (files or directories) or --plugin,
then $DYNOP_PLUGIN_PATH (colon-separated), the directory plugins next to this
program, PREFIX/lib/dynop/plugins for a program installed as PREFIX/bin/dynop
(make install), and $XDG_DATA_HOME/dynop/plugins. $DYNOP_TRUST_DIR names a directory
of trusted public keys; then unsigned plugins are untrusted unless
$DYNOP_SIGNATURE_POLICY is warn or off. --sandbox (or $DYNOP_SANDBOX=always)
runs plugin files only as WebAssembly, in the sandbox; --sandbox=unsigned runs
native builds only if signed, and the others sandboxed. $DYNOP_SANDBOX_GRANT
grants WebAssembly plugins what they ask for beyond computing
(clock,random,env,stdio). $DYNOP_CPU_FEATURES turns CPU features off
(-avx512f,-avx2) and $DYNOP_VERIFY_VARIANTS=1 checks every CPU variant against
its reference at first use.

--color WHEN colours the states and headers of list, inspect and doctor: auto
(the default) on a terminal unless $NO_COLOR is set or $TERM is dumb, always or
never. --json output follows the schemas of docs/cli-json.md.

Exit status: 0 on success, 1 on failure, 2 on a usage error.
`

// helpCommand is dynop help [COMMAND].
func helpCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	if err := parse("help", fs, args); err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
		_, err := io.WriteString(stdout, globalUsage())
		return err
	case 1:
	default:
		return fmt.Errorf("%w: help takes one command, got %d (%q)", errUsage, fs.NArg(), fs.Args())
	}
	name := fs.Arg(0)
	c, ok := lookupCommand(name)
	if !ok {
		return unknownCommand(name)
	}
	_, err := io.WriteString(stdout, commandHelp(c, commandFlags(name)))
	return err
}

// flagMessage matches the flag names in package flag's errors, which it
// writes with one dash, for parse to write with two.
var flagMessage = regexp.MustCompile(`(for (?:flag )?|argument: )-(\w)`)

// parseError turns an error of package flag parsing cmd's flags fs into
// a usage error: flags written with two dashes, and an unknown flag with
// the nearest known one.
func parseError(cmd string, fs *flag.FlagSet, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		msg := "flag provided but not defined: --" + name
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if near := suggest.Nearest(name, known); near != "" {
			msg += " (did you mean --" + near + "?)"
		} else if len(known) == 0 {
			msg += " (" + cmd + " takes no flags)"
		}
		return fmt.Errorf("%w: %s: %s", errUsage, cmd, msg)
	}
	return fmt.Errorf("%w: %s: %s", errUsage, cmd, flagMessage.ReplaceAllString(err.Error(), "${1}--$2"))
}
