package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/internal/opfmt"
	"github.com/dynop/dynop/internal/suggest"
	_ "github.com/dynop/dynop/loader/native" // native plugin files
	"github.com/dynop/dynop/loader/wasm"     // WebAssembly plugin files, sandboxed
	_ "github.com/dynop/dynop/machine/nvml"  // NVIDIA GPUs, for plugins that require one
	"github.com/dynop/dynop/op"
	_ "github.com/dynop/dynop/plugins/image" // image.Decode and image.Encode: pipelines read and write images
	_ "github.com/dynop/dynop/plugins/npy"   // npy.Encode: pipelines write tensors as NumPy .npy files
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// Main runs the command line in os.Args and returns the exit status: 0
// on success, 1 on failure, 2 on a usage error. A first SIGINT or
// SIGTERM stops the command gracefully (it cancels its context), and a
// command so stopped that fails returns 128 + the signal's number (130,
// 143); a second signal ends the process at once with that status, for
// plugin code may block for ever.
//
// Main first serves as a scanner child when the process was started as
// one ([dynop.ServeScanner]): it then inspects one plugin file for the
// host that started it and exits. So a program whose main calls Main
// before anything else reads plugin files like cmd/dynop.
func Main() int {
	dynop.ServeScanner()
	ctx, in := catchInterrupts(context.Background(), os.Stderr, os.Exit)
	defer in.stop()
	return in.status(Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Run executes the command line args (without the program name), writing
// to stdout and stderr, and returns the exit status: 0 on success, 1 on
// failure, 2 on a usage error. Cancelling ctx stops the command; unlike
// [Main], Run does not handle signals.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, stdout, stderr)
}

// errUsage marks errors after which the usage is worth reading.
var errUsage = errors.New("usage")

// run executes the command line args and returns the exit status: 0 on
// success, 1 on failure, 2 on a usage error. A command's --help prints its
// help on stdout; a usage error prints what is wrong and the command's
// usage (the global usage if no command was given) on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := command(ctx, args, stdout, stderr)
	var help *helpRequest
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		c, _ := lookupCommand(help.cmd)
		fmt.Fprint(stdout, commandHelp(c, help.fs))
		return 0
	case errors.Is(err, errUsage):
		msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
		fmt.Fprintf(stderr, "dynop: %s\n", escapeText(msg))
		if len(args) == 0 {
			fmt.Fprintf(stderr, "\n%s", globalUsage())
		} else if c, ok := lookupCommand(args[0]); ok {
			fmt.Fprintf(stderr, "\n%s", shortUsage(c))
		} else {
			fmt.Fprintln(stderr, "Run 'dynop help' for the commands.")
		}
		return 2
	default:
		// Errors may carry what a plugin said (set_error): escaped.
		fmt.Fprintf(stderr, "dynop: %s\n", escapeText(err.Error()))
		return 1
	}
}

func command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command given", errUsage)
	}
	cmd, args := args[0], args[1:]
	sandbox = sandboxFlag{}
	switch cmd {
	case "version":
		return versionCommand(args, stdout)
	case "list":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		addSandboxFlag(fs)
		asJSON := fs.Bool("json", false, "print JSON (schema dynop.list/v2, dynop.ops/v2 with --ops, dynop.interfaces/v1 with --interfaces; see docs/cli-json.md) instead of a table")
		ops := fs.Bool("ops", false, "list operators instead of plugins")
		fs.BoolVar(&listInterfaces, "interfaces", false, "list interfaces instead of plugins: who provides which versions, who needs them (JSON schema dynop.interfaces/v1)")
		color := addColorFlag(fs)
		paths, err := parseInterleaved(cmd, fs, args)
		if err != nil {
			return err
		}
		pal := newPalette(stdout, *color)
		if *ops {
			return listOps(ctx, stdout, paths, *asJSON, pal)
		}
		return list(ctx, stdout, paths, *asJSON, pal)
	case "inspect":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		addSandboxFlag(fs)
		asJSON := fs.Bool("json", false, "print JSON (schema dynop.inspect/v1 for a plugin, dynop.operator/v2 for an operator, dynop.interface/v1 for an interface; see docs/cli-json.md)")
		color := addColorFlag(fs)
		pos, err := parseInterleaved(cmd, fs, args)
		if err != nil {
			return err
		}
		if len(pos) < 1 {
			return fmt.Errorf("%w: inspect takes a plugin file, a plugin ID, an operator name or an interface name or UID", errUsage)
		}
		return inspect(ctx, stdout, stderr, pos[0], pos[1:], *asJSON, newPalette(stdout, *color))
	case "doctor":
		return doctorCommand(ctx, args, stdout)
	case "run":
		return runCommand(ctx, args, stdout, stderr)
	case "graph":
		return graphCommand(ctx, args, stdout, stderr)
	case "bench":
		return benchCommand(ctx, args, stdout, stderr)
	case "manifest":
		return manifestCommand(ctx, args, stdout)
	case "keygen":
		return keygenCommand(args, stdout)
	case "sign":
		return signCommand(ctx, args, stdout)
	case "verify":
		return verifyCommand(args, stdout)
	case "new":
		return newCommand(args, stdout)
	case "include-dir":
		return includeDirCommand(args, stdout)
	case "completion":
		return completionCommand(args, stdout)
	case hiddenComplete:
		return completeCommand(ctx, args, stdout)
	case "help", "-h", "-help", "--help":
		return helpCommand(args, stdout)
	default:
		return unknownCommand(cmd)
	}
}

// parse parses flags: -h, -help and --help ask for the command's help
// (a helpRequest), and other errors are usage errors (parseError).
func parse(cmd string, fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpRequest{cmd: cmd, fs: fs}
		}
		return parseError(cmd, fs, err)
	}
	return nil
}

// noArgs parses flags and rejects positional arguments.
func noArgs(cmd string, fs *flag.FlagSet, args []string) error {
	if err := parse(cmd, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s takes no arguments, got %q", errUsage, cmd, fs.Args())
	}
	return nil
}

// listEntry is one plugin in `dynop list --json` and `dynop inspect --json`.
type listEntry struct {
	schema.Plugin
	Path        string      `json:"path,omitempty"`
	State       dynop.State `json:"state"`
	Error       string      `json:"error,omitempty"`
	DuplicateOf string      `json:"duplicate_of,omitempty"`
	Signer      string      `json:"signer,omitempty"`
	Bundled     []string    `json:"bundled,omitempty"`
	Engine      string      `json:"engine,omitempty"`
}

func newListEntry(st dynop.PluginStatus) listEntry {
	e := listEntry{Plugin: st.Info, Path: st.Path, State: st.State, DuplicateOf: st.DuplicateOf, Signer: st.Signer, Bundled: st.Bundled, Engine: st.Engine}
	if !st.State.Usable() && st.Err != nil {
		e.Error = st.Err.Error()
	}
	return e
}

// errBroken is returned, after the listing is printed, when plugin files
// could not be used; its text follows their count ("2 plugin files could
// not be used").
var errBroken = errors.New("could not be used")

// wasmConfig returns the WebAssembly loader's configuration that
// $DYNOP_SANDBOX_GRANT and $DYNOP_WASM_ENGINE make, and whether either is
// set; the error names the variable at fault.
func wasmConfig() (wasm.Config, bool, error) {
	var cfg wasm.Config
	g, e := os.Getenv("DYNOP_SANDBOX_GRANT"), os.Getenv("DYNOP_WASM_ENGINE")
	if g != "" {
		cfg.Grant = strings.Split(g, ",")
		if err := cfg.Validate(); err != nil {
			return cfg, true, fmt.Errorf("DYNOP_SANDBOX_GRANT: %w", err)
		}
	}
	if e != "" {
		cfg.Engine = e
		if err := cfg.Validate(); err != nil {
			return cfg, true, fmt.Errorf("DYNOP_WASM_ENGINE: %w", err)
		}
	}
	return cfg, g != "" || e != "", nil
}

// hostOptions returns the options the commands open a host with: the
// plugin files and directories paths searched first, the trust store and
// signature policy of $DYNOP_TRUST_DIR and $DYNOP_SIGNATURE_POLICY, and
// the sandbox policy of --sandbox or $DYNOP_SANDBOX.
func hostOptions(paths []string) (dynop.Options, error) {
	opts := dynop.Options{Paths: paths, Logger: quietLogger(), TrustDir: os.Getenv("DYNOP_TRUST_DIR")}
	policy, err := sandboxPolicy()
	if err != nil {
		return opts, err
	}
	opts.Sandbox = policy
	if cfg, set, err := wasmConfig(); err != nil {
		return opts, err
	} else if set {
		opts.Loaders = append(opts.Loaders, cfg)
	}
	if p := os.Getenv("DYNOP_SIGNATURE_POLICY"); p != "" {
		policy, err := sign.ParsePolicy(p)
		if err != nil {
			return opts, fmt.Errorf("DYNOP_SIGNATURE_POLICY: %w", err)
		}
		opts.SignaturePolicy = policy
	}
	return opts, nil
}

// openHost opens a host with hostOptions(paths).
func openHost(ctx context.Context, paths []string) (*dynop.Host, error) {
	opts, err := hostOptions(paths)
	if err != nil {
		return nil, err
	}
	return dynop.Open(ctx, opts)
}

// list lists the plugins the host finds, searching the plugin files and
// directories paths first, as a table painted with pal or as JSON (schema
// dynop.list/v2); with --interfaces (listInterfaces), their interfaces
// (dynop.interfaces/v1).
func list(ctx context.Context, w io.Writer, paths []string, asJSON bool, pal palette) error {
	h, err := openHost(ctx, paths)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	plugins := h.Plugins()
	if listInterfaces {
		err = writeInterfaces(w, interfacesOf(plugins), asJSON, pal)
	} else {
		err = writePlugins(w, plugins, asJSON, pal)
	}
	if err != nil {
		return err
	}
	return brokenError(plugins, nil)
}

// brokenError returns an error listing the broken plugin files among
// plugins, or only those given in paths if paths is not nil.
func brokenError(plugins []dynop.PluginStatus, paths []string) error {
	var errs []error
	for _, st := range plugins {
		if st.State != dynop.StateBroken || paths != nil && !slices.ContainsFunc(paths, func(p string) bool { return samePath(p, st.Path) }) {
			continue
		}
		errs = append(errs, st.Err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s %w:\n%w", english.Plural(len(errs), "plugin file"), errBroken, errors.Join(errs...))
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// quietLogger logs only errors: the commands report problems themselves.
// Plugins log through it; its text handler quotes any value or message
// with a control character, a C1 or bidirectional formatting character or
// a byte that is not UTF-8 (strconv.Quote), so their lines reach the
// terminal escaped, as escapeText would have them.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// writeList prints plugins as a table, coloured as --color=auto would, or
// as JSON (schema dynop.list/v2).
func writeList(w io.Writer, plugins []dynop.PluginStatus, asJSON bool) error {
	return writePlugins(w, plugins, asJSON, newPalette(w, colorAuto))
}

// writePlugins prints plugins as a table painted with pal, or as JSON
// (schema dynop.list/v2).
func writePlugins(w io.Writer, plugins []dynop.PluginStatus, asJSON bool, pal palette) error {
	if asJSON {
		out := struct {
			Schema  string      `json:"schema"`
			Plugins []listEntry `json:"plugins"`
		}{Schema: "dynop.list/v2", Plugins: make([]listEntry, len(plugins))}
		for i, st := range plugins {
			out.Plugins[i] = newListEntry(st)
		}
		enc := newJSONEncoder(w)
		return enc.Encode(out)
	}

	var t table
	t.add(headerCells("PLUGIN", "VERSION", "STATE", "DETAILS")...)
	for _, st := range plugins {
		var lines []string
		if st.Path != "" {
			lines = append(lines, "path     "+st.Path)
		}
		switch {
		case st.State == dynop.StateDuplicate:
			lines = append(lines, "using    "+st.DuplicateOf)
		case !st.State.Usable() && st.Err != nil:
			lines = append(lines, "why      "+strings.ReplaceAll(st.Err.Error(), "\n", "; "))
		}
		if st.Signer != "" {
			lines = append(lines, "signed   by key "+st.Signer)
		}
		for _, b := range st.Bundled {
			lines = append(lines, "bundles  "+b)
		}
		for _, d := range st.Info.Interfaces {
			lines = append(lines, fmt.Sprintf("provides %s %s {%s}", d.Name, d.Version, d.UID))
		}
		for _, n := range st.Info.Needs {
			lines = append(lines, fmt.Sprintf("needs    %s from %s, %s or newer", n.Interface.Name, n.Plugin, n.Interface.Version))
		}
		if len(lines) == 0 {
			lines = append(lines, "")
		}
		id, version := st.Info.ID, st.Info.Version.String()
		if id == "" {
			id, version = "?", "?"
		}
		t.add(cell{text: id}, cell{text: version}, cell{text: st.State.String(), style: stateStyle(st.State)}, cell{text: lines[0]})
		for _, l := range lines[1:] {
			t.addText("", "", "", l)
		}
	}
	return t.write(w, pal)
}

// inspect shows one plugin: the plugin file at target, or else the
// plugin with ID target, or else the operator called target; the plugin
// files paths are known too.
func inspect(ctx context.Context, w, stderr io.Writer, target string, paths []string, asJSON bool, pal palette) error {
	opts, err := hostOptions(paths)
	if err != nil {
		return err
	}
	var st dynop.PluginStatus
	isFile := false
	if _, err := os.Stat(target); err == nil || strings.ContainsRune(target, os.PathSeparator) {
		if err != nil {
			return err
		}
		opts.Paths, opts.NoRegistered, isFile = append([]string{target}, paths...), true, true
	}
	h, err := dynop.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer closeAll(stderr, h) // inspecting an operator's variants starts its plugin
	if isFile {
		// The file itself, by path: another file may have its ID.
		plugins := h.Plugins()
		i := slices.IndexFunc(plugins, func(st dynop.PluginStatus) bool { return samePath(st.Path, target) })
		if i < 0 {
			return fmt.Errorf("%s: not a plugin file (a directory?); give one plugin file", target)
		}
		if err := brokenError(plugins[i:i+1], nil); err != nil {
			return err
		}
		st = plugins[i]
	} else if st, err = h.Plugin(target); err != nil {
		if e, err := h.Operators().Lookup(target); err == nil {
			return inspectOperator(ctx, w, h, e, asJSON, pal)
		}
		switch found := findInterface(interfacesOf(h.Plugins()), target); len(found) {
		case 0:
			return notFound(h, target)
		case 1:
			return writeInterface(w, found[0], asJSON, pal)
		default:
			uids := make([]string, len(found))
			for i, e := range found {
				uids[i] = e.UID.String()
			}
			return fmt.Errorf("inspect %q: %d interfaces have that name (UIDs %s): give the UID of one", target, len(found), strings.Join(uids, ", "))
		}
	}
	e := newListEntry(st)
	if asJSON {
		enc := newJSONEncoder(w)
		return enc.Encode(struct {
			Schema string    `json:"schema"`
			Plugin listEntry `json:"plugin"`
		}{"dynop.inspect/v1", e})
	}
	return writeInspect(w, e, pal)
}

// notFound is inspect's error for a target that is no plugin file, plugin
// ID, operator or interface: it says what was tried and suggests the
// nearest known name.
func notFound(h *dynop.Host, target string) error {
	type known struct{ kind, name string }
	var names []known
	for _, st := range h.Plugins() {
		if st.Info.ID != "" {
			names = append(names, known{"the plugin", st.Info.ID})
		}
	}
	for _, e := range h.Operators().List() {
		names = append(names, known{"the operator", e.Schema.Name})
	}
	for _, e := range interfacesOf(h.Plugins()) {
		names = append(names, known{"the interface", e.Name})
	}
	hint := ""
	all := make([]string, len(names))
	for i, n := range names {
		all[i] = n.name
	}
	var nf *op.NotFoundError
	if near := suggest.Nearest(target, all); near != "" {
		n := names[slices.Index(all, near)]
		hint = fmt.Sprintf(" (did you mean %s %q?)", n.kind, n.name)
	} else if _, err := h.Operators().Lookup(target); errors.As(err, &nf) && len(nf.Suggestions) > 0 {
		// An operator's name without its prefix: Resize is image.Resize
		// and imgproc.Resize.
		hint = fmt.Sprintf(" (did you mean the operator %s?)", english.Quoted(nf.Suggestions, "or"))
	}
	return fmt.Errorf("inspect %q: %w: tried a plugin file (no such file), a plugin ID, an operator name, and an interface name or UID%s; dynop list, dynop list --ops and dynop list --interfaces show what there is", target, dynop.ErrNotFound, hint)
}

// writeInspect prints one plugin as aligned "field  value" lines painted
// with pal.
func writeInspect(w io.Writer, e listEntry, pal palette) error {
	var t fieldTable
	row := t.row
	row("plugin", e.ID)
	row("version", e.Version.String())
	row("api", e.APIVersion.String())
	row("path", e.Path)
	row("description", e.Description)
	row("author", e.Author)
	row("build", e.Build)
	if e.Engine != "" {
		row("sandbox", "WebAssembly, run by "+e.Engine)
	}
	t.styledRow("state", e.State.String(), stateStyle(e.State))
	row("why", strings.ReplaceAll(e.Error, "\n", "; "))
	row("using", e.DuplicateOf)
	if e.Signer != "" {
		row("signed", "by key "+e.Signer)
	}
	for _, b := range e.Bundled {
		row("bundles", b)
	}
	for _, d := range e.Interfaces {
		row("provides", fmt.Sprintf("%s %s {%s}", d.Name, d.Version, d.UID))
	}
	for _, n := range e.Needs {
		row("needs", fmt.Sprintf("%s %s or newer {%s} from %s", n.Interface.Name, n.Interface.Version, n.Interface.UID, n.Plugin))
	}
	row("requires", requirements(e.Requirements))
	for _, s := range e.Operators {
		row("operator", fmt.Sprintf("%s (%s)", s.Name, opfmt.Devices(s.Devices)))
	}
	return t.write(w, pal)
}

// opEntry is one operator in the JSON of list --ops (dynop.ops/v2) and
// inspect OPERATOR (dynop.operator/v2): its schema's fields, and the
// plugin that provides it. In v1 the schema was an object of its own,
// "schema", which the top level's "schema" (the JSON schema's id) made
// ambiguous.
type opEntry struct {
	schema.Op
	Plugin string `json:"plugin,omitempty"`
}

func newOpEntry(e op.Entry) opEntry { return opEntry{e.Schema, e.Plugin} }

// listOps lists the operators of the compiled-in plugins and the plugin
// files paths, as a table painted with pal or as JSON (schema
// dynop.ops/v2).
func listOps(ctx context.Context, w io.Writer, paths []string, asJSON bool, pal palette) error {
	if listInterfaces {
		return fmt.Errorf("%w: list: --ops and --interfaces: give one", errUsage)
	}
	h, err := openHost(ctx, paths)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	list := h.Operators().List()
	if asJSON {
		out := struct {
			Schema    string    `json:"schema"`
			Operators []opEntry `json:"operators"`
		}{"dynop.ops/v2", make([]opEntry, len(list))}
		for i, e := range list {
			out.Operators[i] = newOpEntry(e)
		}
		if err := newJSONEncoder(w).Encode(out); err != nil {
			return err
		}
	} else {
		var t table
		t.add(headerCells("OPERATOR", "DEVICES", "PLUGIN", "DOC")...)
		for _, e := range list {
			t.addText(e.Schema.Name, opfmt.Devices(e.Schema.Devices), e.Plugin, firstSentence(e.Schema.Doc))
		}
		if err := t.write(w, pal); err != nil {
			return err
		}
	}
	return brokenError(h.Plugins(), nil)
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// writeOperator prints one operator's schema as text painted with pal.
func writeOperator(w io.Writer, e op.Entry, pal palette) error {
	s := e.Schema
	var t fieldTable
	row := t.row
	row("operator", s.Name)
	row("plugin", cmp.Or(e.Plugin, "(registered directly)"))
	row("devices", opfmt.Devices(s.Devices))
	row("doc", s.Doc)
	for i, in := range s.Inputs {
		row(fmt.Sprintf("input %d", i), joinDoc(in.Name+" "+opfmt.Input(&s, i), in.Doc))
	}
	for i, out := range s.Outputs {
		row(fmt.Sprintf("output %d", i), joinDoc(out.Name+" "+opfmt.Output(out), out.Doc))
	}
	for _, a := range s.Args {
		row("arg", joinDoc(opfmt.Arg(a), a.Doc))
	}
	return t.write(w, pal)
}

func joinDoc(what, doc string) string {
	what = strings.TrimSpace(what)
	if doc == "" {
		return what
	}
	return what + " — " + doc
}

// requirements spells out what a plugin needs of the machine, or "" for
// nothing.
func requirements(r schema.Requirements) string {
	var parts []string
	if len(r.OS) > 0 {
		os := "os " + strings.Join(r.OS, ", ")
		if !r.MinOSVersion.IsZero() {
			os += " " + r.MinOSVersion.String() + " or newer"
		}
		parts = append(parts, os)
	}
	if len(r.Arch) > 0 {
		parts = append(parts, "arch "+strings.Join(r.Arch, ", "))
	}
	if len(r.CPUFeatures) > 0 {
		parts = append(parts, "cpu "+strings.Join(r.CPUFeatures, ", "))
	}
	if g := r.GPU; g != nil {
		gpu := "gpu " + cmp.Or(g.Vendor, "any vendor")
		if !g.MinArch.IsZero() {
			gpu += ", arch " + g.MinArch.String() + " or newer"
		}
		if !g.MinDriver.IsZero() {
			gpu += ", driver " + g.MinDriver.String() + " or newer"
		}
		parts = append(parts, gpu)
	}
	return strings.Join(parts, "; ")
}
