package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/dynop/dynop/loader/wasm"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/internal/scaffold"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/sign"
)

// doctorSchema names the JSON schema of `dynop doctor --json`.
const doctorSchema = "dynop.doctor/v1"

// checkStatus is the outcome of a doctor check.
type checkStatus string

// The outcomes of a check. Only fail makes dynop doctor exit with status 1.
const (
	// statusOK: nothing to do. The summary and details may still say
	// something worth knowing (no GPU, an optional directory missing).
	statusOK checkStatus = "ok"
	// statusWarn: dynop works, but not as the environment seems to
	// intend (a $DYNOP_PLUGIN_PATH directory is missing, a plugin file is
	// broken); the fix says what to do.
	statusWarn checkStatus = "warn"
	// statusFail: commands that open a host fail, or the setting is
	// invalid; the fix says what to do.
	statusFail checkStatus = "fail"
)

// checkResult is one line of the doctor's report and one element of
// "checks" in its JSON (schema dynop.doctor/v1, see docs/cli-json.md).
type checkResult struct {
	// Name says what was checked: "search path", "cache", … A check may
	// give several results of one name (one per search path entry).
	Name   string      `json:"name"`
	Status checkStatus `json:"status"`
	// Summary is the finding in one line.
	Summary string `json:"summary"`
	// Details are more lines worth reading.
	Details []string `json:"details,omitempty"`
	// Fix says what to do; set for every result that is not ok.
	Fix string `json:"fix,omitempty"`
}

// doctorCheck is one check of dynop doctor: it looks at one part of the
// environment and returns one result or more.
type doctorCheck func(ctx context.Context, d *doctor) []checkResult

// doctorChecks are the checks dynop doctor runs, in the order it reports
// them. To add one, write a doctorCheck, append it here and document
// the name of its results in docs/cli-json.md; a check should report a
// missing optional tool as ok or warn, never fail, and give a fix for
// every result that is not ok.
var doctorChecks = []doctorCheck{
	checkSearchPath,
	checkPlugins,
	checkCache,
	checkTrustStore,
	checkSignaturePolicy,
	checkCPUFeatures,
	checkVerifyVariants,
	checkGPU,
	checkSandbox,
	checkToolchains,
}

// doctor is what the checks share: the plugins of a host opened as the
// other commands open one, learned on first use.
type doctor struct {
	opened  bool
	plugins []dynop.PluginStatus // nil if no host could be opened
	hostErr error                // why a host as configured cannot open
	logged  []string             // the warnings the host logged
}

// host opens a host as `dynop list` does, once, and returns its plugins
// and the error opening it as configured. If that fails, the plugins are
// those of a host opened without the trust store and the policies, if one
// opens, so that the search path can still be checked.
func (d *doctor) host(ctx context.Context) ([]dynop.PluginStatus, error) {
	if d.opened {
		return d.plugins, d.hostErr
	}
	d.opened = true
	var logBuf bytes.Buffer
	logger := slog.New(reportedHandler{slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
				return slog.Attr{}
			}
			return a
		}})})
	plugins := func(opts dynop.Options) ([]dynop.PluginStatus, error) {
		h, err := dynop.Open(ctx, opts)
		if err != nil {
			return nil, err
		}
		defer h.Close(ctx)
		return h.Plugins(), nil
	}
	opts, err := hostOptions(nil)
	if err == nil {
		opts.Logger = logger
		d.plugins, err = plugins(opts)
	}
	if err != nil {
		d.hostErr = err
		d.plugins, _ = plugins(dynop.Options{Logger: slog.New(slog.DiscardHandler)})
	}
	for line := range strings.Lines(logBuf.String()) {
		d.logged = append(d.logged, strings.TrimSpace(line))
	}
	return d.plugins, d.hostErr
}

// reportedHandler drops the log records about plugin states and search
// path entries, which the checks report themselves.
type reportedHandler struct{ slog.Handler }

// reported are the messages of the records reportedHandler drops.
var reported = []string{
	"plugin file broken", "plugin file untrusted", "plugin file unsupported", "plugin duplicate; using another", "plugin search path entry unreadable",
	"plugin " + dynop.StateBroken.String(), "plugin " + dynop.StateUnsupported.String(),
	"plugin " + dynop.StateUntrusted.String(), "plugin " + dynop.StateDuplicate.String(),
}

// Handle drops the records whose message is one of reported.
func (h reportedHandler) Handle(ctx context.Context, r slog.Record) error {
	if slices.Contains(reported, r.Message) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs returns a reportedHandler around the handler with attrs.
func (h reportedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return reportedHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup returns a reportedHandler around the handler with group name.
func (h reportedHandler) WithGroup(name string) slog.Handler {
	return reportedHandler{h.Handler.WithGroup(name)}
}

func doctorCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON (schema "+doctorSchema+"; see docs/cli-json.md) instead of a report")
	color := addColorFlag(fs)
	if err := noArgs("doctor", fs, args); err != nil {
		return err
	}
	results := runDoctor(ctx, doctorChecks)
	if *asJSON {
		enc := newJSONEncoder(stdout)
		if err := enc.Encode(struct {
			Schema string        `json:"schema"`
			Checks []checkResult `json:"checks"`
		}{doctorSchema, results}); err != nil {
			return err
		}
	} else if err := writeDoctor(stdout, results, newPalette(stdout, *color)); err != nil {
		return err
	}
	var failed []string
	for _, r := range results {
		if r.Status == statusFail && !slices.Contains(failed, r.Name) {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("doctor: %d failed (%s): do what their fix says", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// runDoctor runs checks in order and returns their results.
func runDoctor(ctx context.Context, checks []doctorCheck) []checkResult {
	d := &doctor{}
	var out []checkResult
	for _, c := range checks {
		out = append(out, c(ctx, d)...)
	}
	return out
}

// statusStyle is the colour of a check's status.
func statusStyle(s checkStatus) style {
	switch s {
	case statusOK:
		return styleGreen
	case statusWarn:
		return styleYellow
	case statusFail:
		return styleRed
	}
	return stylePlain
}

// writeDoctor prints the results as a report, one line per result with
// its details and fix below it, and a count of each status at the end.
func writeDoctor(w io.Writer, results []checkResult, pal palette) error {
	var t table
	count := map[checkStatus]int{}
	for _, r := range results {
		count[r.Status]++
		t.add(cell{text: string(r.Status), style: statusStyle(r.Status)}, cell{text: r.Name, style: styleBold}, cell{text: r.Summary})
		for _, d := range r.Details {
			t.addText("", "", d)
		}
		if r.Fix != "" {
			t.add(cell{}, cell{}, cell{text: "fix: " + r.Fix, style: styleBold})
		}
	}
	if err := t.write(w, pal); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s: %d ok, %s, %s\n", english.Plural(len(results), "check"), count[statusOK],
		english.Plural(count[statusWarn], "warning"), english.Plural(count[statusFail], "failure"))
	return err
}

// plural returns "1 thing" or "n things".
// sourceName says where a search path entry comes from.
func sourceName(s discover.Source) string {
	switch s {
	case discover.SourceEnv:
		return "$" + discover.EnvPath
	case discover.SourceExeDir:
		return "next to the dynop executable"
	case discover.SourcePrefixDir:
		return "installed with dynop, PREFIX/lib/dynop/plugins"
	case discover.SourceUserDir:
		return "per-user, $XDG_DATA_HOME/dynop/plugins"
	}
	return s.String()
}

// checkSearchPath checks each entry of the search path: that it exists
// and can be read, and what became of the plugin files in it.
func checkSearchPath(ctx context.Context, d *doctor) []checkResult {
	plugins, _ := d.host(ctx)
	var out []checkResult
	for _, e := range discover.SearchPath(nil, true) {
		out = append(out, checkSearchEntry(e, plugins))
	}
	return out
}

// checkSearchEntry checks one search path entry; plugins are the host's,
// nil if none opened.
func checkSearchEntry(e discover.Entry, plugins []dynop.PluginStatus) checkResult {
	r := checkResult{Name: "search path", Status: statusOK}
	where := fmt.Sprintf("%s (%s)", e.Path, sourceName(e.Source))
	fi, err := os.Stat(e.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && e.Source == discover.SourceEnv:
		r.Status, r.Summary = statusWarn, where+": does not exist"
		r.Fix = fmt.Sprintf("create %s and put plugin files in it, or remove it from %s (now %q)", e.Path, discover.EnvPath, os.Getenv(discover.EnvPath))
		return r
	case errors.Is(err, fs.ErrNotExist):
		r.Summary = where + ": not there (optional)"
		if e.Source == discover.SourceUserDir {
			r.Details = []string{"to install plugins for your user, create it and put plugin files (*.so, *.dylib, *.wasm) in it"}
		}
		return r
	case err != nil:
		r.Status, r.Summary = statusWarn, fmt.Sprintf("%s: cannot be read, so its plugins are missing: %v", where, err)
		r.Fix = fmt.Sprintf("make %s readable (chmod u+rx on it and its parents) or take it off the search path", e.Path)
		return r
	}
	var files []string
	if fi.IsDir() {
		dirents, err := os.ReadDir(e.Path)
		if err != nil {
			r.Status, r.Summary = statusWarn, fmt.Sprintf("%s: cannot be listed, so its plugins are missing: %v", where, err)
			r.Fix = fmt.Sprintf("make %s readable (chmod u+rx %s) or take it off the search path", e.Path, e.Path)
			return r
		}
		for _, de := range dirents {
			if !de.IsDir() && discover.IsPluginName(de.Name()) {
				files = append(files, filepath.Join(e.Path, de.Name()))
			}
		}
	} else {
		files = []string{e.Path}
	}
	if len(files) == 0 {
		r.Summary = where + ": no plugin files (*.so, *.dylib, *.wasm)"
		return r
	}
	if plugins == nil {
		r.Summary = fmt.Sprintf("%s: %s; their states are unknown: no host opens (see the plugins check)", where, english.Plural(len(files), "plugin file"))
		return r
	}
	count := map[dynop.State]int{}
	var fixes []string
	for _, st := range plugins {
		if st.Path == "" || !slices.ContainsFunc(files, func(f string) bool { return samePath(f, st.Path) }) {
			continue
		}
		count[st.State]++
		why := ""
		if st.Err != nil {
			why = ": " + strings.TrimPrefix(strings.ReplaceAll(st.Err.Error(), "\n", "; "), "plugin file "+st.Path+": ")
		}
		switch st.State {
		case dynop.StateBroken:
			r.Status = statusWarn
			r.Details = append(r.Details, fmt.Sprintf("%s: broken%s", st.Path, why))
			if len(fixes) == 0 || !strings.HasPrefix(fixes[0], "rebuild") {
				fixes = slices.Insert(fixes, 0, "rebuild the broken plugin files listed above for this dynop, or remove them")
			}
		case dynop.StateUntrusted:
			r.Status = statusWarn
			r.Details = append(r.Details, fmt.Sprintf("%s: untrusted%s", st.Path, why))
			if !slices.ContainsFunc(fixes, func(f string) bool { return strings.HasPrefix(f, "sign") }) {
				fixes = append(fixes, "sign the untrusted files with a key whose .pub is in $DYNOP_TRUST_DIR (dynop sign --key KEY FILE), or remove them")
			}
		case dynop.StateUnsupported:
			r.Details = append(r.Details, fmt.Sprintf("%s: unsupported on this machine%s", st.Path, why))
			if errors.Is(st.Err, discover.ErrMissingLibrary) {
				r.Status = statusWarn
				if !slices.ContainsFunc(fixes, func(f string) bool { return strings.HasPrefix(f, "install") }) {
					fixes = append(fixes, "install the shared libraries named above (the Debian package is a guess), or ship them beside the plugin: see docs/authoring.md, Wrapping an existing C library")
				}
			}
		case dynop.StateDuplicate:
			r.Details = append(r.Details, fmt.Sprintf("%s: a duplicate of %s, which is used instead", st.Path, st.DuplicateOf))
		}
	}
	usable := len(files) - count[dynop.StateBroken] - count[dynop.StateUntrusted] - count[dynop.StateUnsupported] - count[dynop.StateDuplicate]
	parts := []string{fmt.Sprintf("%d usable", usable)}
	for _, s := range []dynop.State{dynop.StateBroken, dynop.StateUntrusted, dynop.StateUnsupported, dynop.StateDuplicate} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	r.Summary = fmt.Sprintf("%s: %s: %s", where, english.Plural(len(files), "plugin file"), strings.Join(parts, ", "))
	r.Fix = strings.Join(fixes, "; ")
	return r
}

// checkPlugins opens a host as list does and counts its plugins: it fails
// if the host cannot open, and warns about what the host logged.
func checkPlugins(ctx context.Context, d *doctor) []checkResult {
	plugins, err := d.host(ctx)
	r := checkResult{Name: "plugins", Status: statusOK}
	if err != nil {
		r.Status, r.Summary = statusFail, fmt.Sprintf("no host opens, so every command that loads plugins fails: %v", err)
		r.Fix = "fix the failed checks below; then hosts open"
		return []checkResult{r}
	}
	var compiled []string
	usable := 0
	for _, st := range plugins {
		if st.Path == "" {
			compiled = append(compiled, st.Info.ID)
		}
		if st.State.Usable() {
			usable++
		} else if st.Path == "" {
			r.Details = append(r.Details, fmt.Sprintf("compiled in %s: %s: %v", st.Info.ID, st.State, st.Err))
		}
	}
	r.Summary = fmt.Sprintf("%s (%d compiled in, %d from files): %d usable", english.Plural(len(plugins), "plugin"), len(compiled), len(plugins)-len(compiled), usable)
	if len(compiled) > 0 {
		r.Details = append([]string{"compiled in: " + strings.Join(compiled, ", ")}, r.Details...)
	}
	for _, l := range d.logged {
		r.Details = append(r.Details, "the host warned: "+l)
	}
	if len(d.logged) > 0 {
		r.Status = statusWarn
		r.Fix = "see what the host warned about above; dynop list shows every plugin's state and why"
	}
	return []checkResult{r}
}

// checkCache checks the registry cache directory and the WebAssembly
// compilation cache under it: that it exists or can be made, that it is
// writable, and its size.
func checkCache(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "cache", Status: statusOK}
	dir := discover.DefaultCacheDir()
	const slow = "without one, every plugin file is scanned in a child process and every WebAssembly module compiled each time a host opens"
	if dir == "" {
		r.Status, r.Summary = statusWarn, "no cache directory: neither $XDG_CACHE_HOME nor $HOME is set"
		r.Fix = "set XDG_CACHE_HOME (or HOME) to a writable directory; " + slow
		return []checkResult{r}
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := dir
		for {
			parent = filepath.Dir(parent)
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
		}
		if err := probeWritable(parent); err != nil {
			r.Status, r.Summary = statusWarn, fmt.Sprintf("%s does not exist and cannot be created: %v", dir, err)
			r.Fix = fmt.Sprintf("create %s and make it writable, or set XDG_CACHE_HOME to a writable directory; %s", dir, slow)
			return []checkResult{r}
		}
		r.Summary = dir + ": not there yet; made at first use"
		return []checkResult{r}
	case err != nil:
		r.Status, r.Summary = statusWarn, fmt.Sprintf("%s: %v", dir, err)
		r.Fix = fmt.Sprintf("make %s readable and writable, or set XDG_CACHE_HOME to a writable directory; %s", dir, slow)
		return []checkResult{r}
	case !fi.IsDir():
		r.Status, r.Summary = statusWarn, dir+": not a directory"
		r.Fix = fmt.Sprintf("remove the file %s (the cache is made again), or set XDG_CACHE_HOME elsewhere", dir)
		return []checkResult{r}
	}
	if err := probeWritable(dir); err != nil {
		r.Status, r.Summary = statusWarn, fmt.Sprintf("%s: not writable: %v", dir, err)
		r.Fix = fmt.Sprintf("chmod u+rwx %s, or set XDG_CACHE_HOME to a writable directory; %s", dir, slow)
		return []checkResult{r}
	}
	registry := "no registry cache yet"
	if fi, err := os.Stat(filepath.Join(dir, discover.CacheFile)); err == nil {
		registry = "registry " + byteSize(fi.Size())
	}
	wasm := "no WebAssembly compilation cache yet"
	if n, err := dirSize(filepath.Join(dir, "wasm")); err == nil {
		wasm = "WebAssembly compilation cache " + byteSize(n)
	}
	total, err := dirSize(dir)
	if err != nil {
		r.Status, r.Summary = statusWarn, fmt.Sprintf("%s: writable, but not all of it can be read: %v", dir, err)
		r.Fix = fmt.Sprintf("make everything under %s readable (chmod -R u+rwX %s), or remove it: it is made again", dir, dir)
		return []checkResult{r}
	}
	r.Summary = fmt.Sprintf("%s: writable, %s (%s; %s)", dir, byteSize(total), registry, wasm)
	return []checkResult{r}
}

// probeWritable creates and removes a file in dir.
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".dynop-doctor-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// dirSize adds up the sizes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Type().IsRegular() {
			fi, err := de.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// byteSize writes n bytes for a person: "512 B", "4.1 kB", "12.3 MB".
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, prefix := float64(n)/unit, 0
	for f >= unit && prefix < 4 {
		f /= unit
		prefix++
	}
	return fmt.Sprintf("%.1f %cB", f, "kMGTP"[prefix])
}

// trustSetup says how to set up a trust store.
const trustSetup = "to check signatures: dynop keygen --out KEY, dynop sign --key KEY.key PLUGIN..., copy KEY.pub into a directory and set DYNOP_TRUST_DIR to it"

// checkTrustStore checks $DYNOP_TRUST_DIR: that it is a directory whose
// every .pub file is a public key, as hosts refuse to open otherwise.
func checkTrustStore(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "trust store", Status: statusOK}
	dir := os.Getenv("DYNOP_TRUST_DIR")
	if dir == "" {
		r.Summary = "DYNOP_TRUST_DIR is not set: plugin signatures are not checked"
		r.Details = []string{trustSetup}
		return []checkResult{r}
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Status, r.Summary = statusFail, fmt.Sprintf("DYNOP_TRUST_DIR=%s does not exist, so no host opens", dir)
		r.Fix = fmt.Sprintf("create %s and put the trusted public keys (*.pub) in it, or unset DYNOP_TRUST_DIR", dir)
		return []checkResult{r}
	case err != nil:
		r.Status, r.Summary = statusFail, fmt.Sprintf("DYNOP_TRUST_DIR: %v", err)
		r.Fix = fmt.Sprintf("make %s readable (chmod u+rx %s), or unset DYNOP_TRUST_DIR", dir, dir)
		return []checkResult{r}
	case !fi.IsDir():
		r.Status, r.Summary = statusFail, fmt.Sprintf("DYNOP_TRUST_DIR=%s is not a directory", dir)
		r.Fix = "set DYNOP_TRUST_DIR to a directory of trusted public keys (*.pub), or unset it"
		return []checkResult{r}
	}
	dirents, err := os.ReadDir(dir)
	if err != nil {
		r.Status, r.Summary = statusFail, fmt.Sprintf("DYNOP_TRUST_DIR=%s cannot be listed: %v", dir, err)
		r.Fix = fmt.Sprintf("make %s readable (chmod u+rx %s), or unset DYNOP_TRUST_DIR", dir, dir)
		return []checkResult{r}
	}
	var names []string // as sign.LoadTrustStore reads them
	for _, de := range dirents {
		if strings.HasSuffix(de.Name(), ".pub") && !de.IsDir() {
			names = append(names, filepath.Join(dir, de.Name()))
		}
	}
	var ids, bad []string
	for _, name := range names {
		pub, err := sign.ReadPublicKey(name)
		if err != nil {
			r.Details = append(r.Details, err.Error())
			bad = append(bad, name)
			continue
		}
		ids = append(ids, sign.KeyID(pub))
		r.Details = append(r.Details, fmt.Sprintf("key %s (%s)", sign.KeyID(pub), filepath.Base(name)))
	}
	switch {
	case len(bad) > 0:
		r.Status = statusFail
		r.Summary = fmt.Sprintf("DYNOP_TRUST_DIR=%s: %s cannot be read as a public key, so no host opens", dir, english.Plural(len(bad), "key file"))
		r.Fix = fmt.Sprintf("replace or remove %s: a .pub file holds one PEM ed25519 public key, as dynop keygen writes", strings.Join(bad, ", "))
	case len(ids) == 0:
		r.Status = statusWarn
		r.Summary = fmt.Sprintf("DYNOP_TRUST_DIR=%s holds no keys (*.pub): no signature verifies", dir)
		r.Fix = fmt.Sprintf("copy the public keys (*.pub) of the publishers you trust into %s (%s), or unset DYNOP_TRUST_DIR", dir, trustSetup)
	default:
		r.Summary = fmt.Sprintf("DYNOP_TRUST_DIR=%s: %s", dir, english.Plural(len(ids), "trusted key"))
	}
	return []checkResult{r}
}

// checkSignaturePolicy checks $DYNOP_SIGNATURE_POLICY and says what the
// policy in effect does.
func checkSignaturePolicy(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "signature policy", Status: statusOK}
	v := os.Getenv("DYNOP_SIGNATURE_POLICY")
	p, err := sign.ParsePolicy(v)
	if err != nil {
		r.Status, r.Summary = statusFail, fmt.Sprintf("invalid, so no host opens: DYNOP_SIGNATURE_POLICY: %v", err)
		r.Fix = "set DYNOP_SIGNATURE_POLICY to off, warn or require, or unset it (the default is require with a trust store, off without)"
		return []checkResult{r}
	}
	trust := os.Getenv("DYNOP_TRUST_DIR") != ""
	from := "DYNOP_SIGNATURE_POLICY"
	if p == sign.PolicyDefault {
		from = "the default without a trust store"
		if trust {
			from = "the default with a trust store"
		}
	}
	effective := p.Resolve(trust)
	what := map[sign.Policy]string{
		sign.PolicyOff:     "signatures are not checked",
		sign.PolicyWarn:    "a plugin file whose signature does not verify is loaded, with a warning",
		sign.PolicyRequire: "a plugin file whose signature does not verify is untrusted and never loaded",
	}[effective]
	r.Summary = fmt.Sprintf("%s (%s): %s", effective, from, what)
	if effective != sign.PolicyOff && !trust {
		r.Status = statusWarn
		r.Summary += ", and without a trust store none verifies"
		r.Fix = "set DYNOP_TRUST_DIR to a directory of trusted public keys (" + trustSetup + "), or unset DYNOP_SIGNATURE_POLICY"
	}
	return []checkResult{r}
}

// checkCPUFeatures reports the CPU features variants may use, and checks
// $DYNOP_CPU_FEATURES.
func checkCPUFeatures(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "cpu features", Status: statusOK}
	cpu, err := dispatch.FromEnv()
	if err != nil {
		r.Status, r.Summary = statusFail, fmt.Sprintf("invalid, so no host opens: %v", err)
		r.Fix = fmt.Sprintf("set %s to comma-separated -FEATURE entries naming features known on %s (such as -avx512f,-avx2), or unset it", dispatch.EnvFeatures, runtime.GOARCH)
		return []checkResult{r}
	}
	r.Summary = fmt.Sprintf("%s: variants may use %s", runtime.GOARCH, strings.Join(cpu.Available().Names(), " "))
	if off := cpu.Off & cpu.Has; off != 0 {
		r.Details = append(r.Details, fmt.Sprintf("turned off by %s=%q: %s", dispatch.EnvFeatures, os.Getenv(dispatch.EnvFeatures), strings.Join(off.Names(), " ")))
	}
	if m := machine.Current(); len(m.CPUFeatures) > 0 {
		r.Details = append(r.Details, "the CPU reports "+strings.Join(m.CPUFeatures, " "))
	}
	return []checkResult{r}
}

// checkVerifyVariants checks $DYNOP_VERIFY_VARIANTS.
func checkVerifyVariants(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "verify variants", Status: statusOK}
	on, err := dispatch.VerifyFromEnv()
	switch {
	case err != nil:
		r.Status, r.Summary = statusFail, fmt.Sprintf("invalid, so no host opens: %v", err)
		r.Fix = fmt.Sprintf("set %s to 1 (check every CPU variant against its reference at first use) or 0, or unset it", dispatch.EnvVerify)
	case on:
		r.Summary = fmt.Sprintf("on (%s): every CPU variant is checked against its reference at first use; those that disagree are disabled", dispatch.EnvVerify)
	default:
		r.Summary = fmt.Sprintf("off: %s=1 checks every CPU variant against its reference at first use", dispatch.EnvVerify)
	}
	return []checkResult{r}
}

// checkGPU lists the GPUs package machine finds. None is not a failure:
// only plugins that require a GPU are unsupported then.
func checkGPU(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "gpu", Status: statusOK}
	m := machine.Current()
	if len(m.GPUs) == 0 {
		r.Summary = "none found: plugins that require a GPU are unsupported here"
		if m.GPUErr != nil {
			r.Details = []string{m.GPUErr.Error()}
		}
		return []checkResult{r}
	}
	r.Summary = english.Plural(len(m.GPUs), "GPU") + " found"
	for _, g := range m.GPUs {
		r.Details = append(r.Details, g.String())
	}
	return []checkResult{r}
}

// checkSandbox checks $DYNOP_SANDBOX and says what the policy in effect
// does.
func checkSandbox(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "sandbox", Status: statusOK}
	v := os.Getenv("DYNOP_SANDBOX")
	p, err := dynop.ParseSandboxPolicy(v)
	if v == "" {
		p, err = dynop.SandboxPreferNative, nil
	}
	if err != nil {
		r.Status, r.Summary = statusFail, fmt.Sprintf("invalid, so no host opens: DYNOP_SANDBOX: %v", err)
		r.Fix = "set DYNOP_SANDBOX to prefer-native, unsigned or always, or unset it (prefer-native)"
		return []checkResult{r}
	}
	from := "DYNOP_SANDBOX"
	if v == "" {
		from = "the default"
	}
	what := map[dynop.SandboxPolicy]string{
		dynop.SandboxPreferNative: "a plugin's native build runs when this machine supports it and it is trusted, its WebAssembly build otherwise",
		dynop.SandboxUnsigned:     "native builds run only if their signature verifies; other plugins run as WebAssembly, in the sandbox",
		dynop.SandboxAlways:       "plugin files run only as WebAssembly, in the sandbox",
	}[p]
	r.Summary = fmt.Sprintf("%s (%s): %s", p, from, what)
	engines := wasm.Engines()
	if e := os.Getenv("DYNOP_WASM_ENGINE"); e != "" {
		if err := (wasm.Config{Engine: e}).Validate(); err != nil {
			r.Status, r.Summary = statusFail, fmt.Sprintf("invalid, so no host opens: DYNOP_WASM_ENGINE=%s: %v", e, err)
			r.Fix = "set DYNOP_WASM_ENGINE to one of " + strings.Join(engines, ", ") + ", or unset it (" + engines[0] + ")"
			return []checkResult{r}
		}
		r.Details = append(r.Details, fmt.Sprintf("WebAssembly plugins run on %s (DYNOP_WASM_ENGINE); this build has %s", e, strings.Join(engines, ", ")))
	} else {
		r.Details = append(r.Details, fmt.Sprintf("WebAssembly plugins run on %s, the fastest engine of this build (it has %s; DYNOP_WASM_ENGINE chooses)", engines[0], strings.Join(engines, ", ")))
	}
	if g := os.Getenv("DYNOP_SANDBOX_GRANT"); g != "" {
		if err := (wasm.Config{Grant: strings.Split(g, ",")}).Validate(); err != nil {
			r.Status, r.Summary = statusFail, fmt.Sprintf("invalid, so no host opens: DYNOP_SANDBOX_GRANT=%s: %v", g, err)
			r.Fix = "set DYNOP_SANDBOX_GRANT to a comma-separated list of clock, random, env and stdio, or unset it (none granted)"
			return []checkResult{r}
		}
		r.Details = append(r.Details, "WebAssembly plugins may have what they ask of "+g+" (DYNOP_SANDBOX_GRANT)")
	} else {
		r.Details = append(r.Details, "WebAssembly plugins that ask for the clock, randomness, the environment or stdio are unsupported: DYNOP_SANDBOX_GRANT=clock,... grants them")
	}
	return []checkResult{r}
}

// checkToolchains says which `dynop new` templates this machine can
// build. A missing toolchain is a warning: dynop itself does not need it.
func checkToolchains(_ context.Context, _ *doctor) []checkResult {
	r := checkResult{Name: "toolchains", Status: statusOK}
	var can []string
	var missing []error
	for _, lang := range scaffold.Languages {
		if err := scaffold.CheckToolchain(lang); err != nil {
			missing = append(missing, err)
			continue
		}
		can = append(can, lang)
	}
	switch {
	case len(can) == 0:
		r.Summary = "dynop new: no template's toolchain is on PATH"
	default:
		r.Summary = "dynop new can build " + strings.Join(can, ", ")
	}
	if len(missing) > 0 {
		r.Status = statusWarn
		for _, err := range missing {
			r.Details = append(r.Details, strings.TrimPrefix(err.Error(), scaffold.ErrToolchain.Error()+": "))
		}
		r.Fix = "install what the details name for the languages you write plugins in (dynop new --lang LANG); the others need nothing"
	}
	return []checkResult{r}
}
