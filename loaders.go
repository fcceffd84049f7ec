package dynop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// ErrFormat reports a file that is not a plugin this host can load: a
// format no registered loader reads, or a file its loader rejects (a
// truncated library, one built for another machine).
var ErrFormat = discover.ErrFormat

// Loader reads plugin files of one format. Register it with
// [RegisterLoader].
type Loader struct {
	// Name names the format ("native", "wasm").
	Name string
	// Magic is the prefix every file of the format starts with.
	Magic string
	// Check looks at a file without running any of its code and says why
	// it cannot be loaded on this machine. Optional; it runs in the host.
	Check func(path string) error
	// Inspect reads the plugin in the file at path, running its code if
	// it must, and returns its Info and the loader's own data (JSON, kept
	// in the plugin's manifest). The host never calls it in its own
	// process, unless Sandboxed: it runs in a scanner child process (see
	// package discover), where opts is nil. A sandboxed loader's Inspect
	// runs in the host with the host's options, not to be changed.
	Inspect func(ctx context.Context, path string, opts *Options) (schema.Plugin, json.RawMessage, error)
	// Plugin returns the plugin enumerated as f without loading it or
	// running any of its code: the plugin loads its file when it starts.
	// Before any of the file's code runs, the plugin must pass the digest
	// of the bytes it loads to f.CheckLoaded, and must load exactly those
	// bytes. opts are the host's options (CacheDir, Logger, the loader's
	// own settings in Loaders), not to be changed. An error makes the
	// file broken, unless Plugin returns a plugin with it and the error
	// wraps [ErrUnsupported]: then the plugin is listed as unsupported on
	// this host, with the error as the reason.
	Plugin func(f *discover.File, opts *Options) (plugin.Plugin, error)
	// Bundled lists the files the plugin in the file at path ships and
	// loads with it, such as shared libraries it links against from its
	// own directory: paths relative to the file's directory, in the
	// order they load. It reads the file without running its code.
	// Optional. The manifest lists the files with their digests, and the
	// plugin loads each only after passing the digest of its bytes to
	// f.CheckBundled.
	Bundled func(path string) ([]string, error)
	// Sandboxed says Inspect runs the plugin's code in a sandbox that
	// cannot harm the host, so the host may call it in its own process.
	Sandboxed bool
	// Errors are the loader's sentinel errors, by name: an error that
	// Inspect returns in a scanner child process, or that the registry
	// cache keeps, still wraps those of them it wrapped.
	Errors map[string]error
}

var (
	loadersMu sync.RWMutex
	loaders   []Loader
)

// RegisterLoader makes a loader for plugin files available to hosts, the
// way image.RegisterFormat makes decoders available to image.Decode.
// Loader packages call it from init, so a program opts in by importing
// them:
//
//	import _ "github.com/dynop/dynop/loader/native"
//
// It only registers the loader. A host reads plugins it has no manifest
// for by running its own program again as a scanner child process, which
// inspects the file with the loader in [ServeScanner]: a program that
// opens hosts calls that first in main.
//
// It panics if the name, magic, Inspect or Plugin is missing, or the name
// is registered twice.
func RegisterLoader(l Loader) {
	if l.Name == "" || l.Magic == "" || l.Inspect == nil || l.Plugin == nil {
		panic("dynop: RegisterLoader: a Loader needs Name, Magic, Inspect and Plugin")
	}
	loadersMu.Lock()
	if slices.ContainsFunc(loaders, func(o Loader) bool { return o.Name == l.Name }) {
		loadersMu.Unlock()
		panic("dynop: RegisterLoader called twice for loader " + l.Name)
	}
	loaders = append(loaders, l)
	loadersMu.Unlock()
}

// ServeScanner serves as a scanner child process, if this process was
// started as one, and returns at once otherwise. A program that opens
// hosts must call it first in its main, before it parses flags, prints
// or opens anything, the way a hashicorp/go-plugin plugin calls
// plugin.Serve:
//
//	func main() {
//		dynop.ServeScanner()
//		…
//	}
//
// A host reads the info of a plugin file that has no manifest (and no
// entry in the registry cache) by running its own program again (or
// [Options.Scanner]) with the environment variable DYNOP_SCANNER=1 and
// the file and its format in others. In that process ServeScanner
// inspects the file with the registered loader of that format, writes
// the answer on a pipe to the host and exits; so a plugin that crashes or
// hangs there takes down only the child. If the program has no loader of
// that format, the answer is an error saying which package to import. A
// program whose main does not call ServeScanner runs its normal main as
// the scanner child instead; the host then lists the plugin file as
// broken with a reason that says so. See package discover for the
// protocol.
//
// Nothing serves from an init: importing a loader package only registers
// the loader. [github.com/dynop/dynop/cli.Main] calls ServeScanner first.
// The scanner child of a test's host is the test binary, so a package
// whose tests open hosts over plugin files without manifests calls it
// from TestMain, before m.Run.
func ServeScanner() {
	if !discover.IsScanner() {
		return
	}
	discover.ServeScanner(formats(registeredLoaders(), nil))
}

// format returns l as package discover sees it, inspecting files for a
// host opened with opts (nil in a scanner child).
func (l Loader) format(opts *Options) discover.Format {
	inspect := l.Inspect
	return discover.Format{Name: l.Name, Magic: l.Magic, Check: l.Check, Bundled: l.Bundled, Sandboxed: l.Sandboxed, Errors: l.Errors,
		Inspect: func(ctx context.Context, path string) (schema.Plugin, json.RawMessage, error) {
			return inspect(ctx, path, opts)
		}}
}

// registeredLoaders returns the loaders registered so far.
func registeredLoaders() []Loader {
	loadersMu.RLock()
	defer loadersMu.RUnlock()
	return slices.Clone(loaders)
}

// formats returns the formats of loaders, for a host opened with opts.
func formats(loaders []Loader, opts *Options) []discover.Format {
	out := make([]discover.Format, len(loaders))
	for i, l := range loaders {
		out[i] = l.format(opts)
	}
	return out
}

// pathOf returns the file a plugin was loaded from, if it says.
func pathOf(p plugin.Plugin) string {
	if f, ok := p.(interface{ Path() string }); ok {
		return f.Path()
	}
	return ""
}

// LoaderConfig is one loader's settings for a host, such as
// [github.com/dynop/dynop/loader/wasm.Config]; [Options.Loaders] holds
// them, and the loader finds its own with [Options.LoaderConfig].
type LoaderConfig interface {
	// LoaderName names the loader the settings are for, as registered
	// ("wasm").
	LoaderName() string
	// Validate reports what is wrong with the settings; Open fails with
	// it.
	Validate() error
}

// LoaderConfig returns the settings in o.Loaders for the loader called
// name, or nil: the loader then uses its defaults.
func (o *Options) LoaderConfig(name string) LoaderConfig {
	if o == nil {
		return nil
	}
	for _, c := range o.Loaders {
		if c != nil && c.LoaderName() == name {
			return c
		}
	}
	return nil
}

// validateLoaders reports a sandbox policy out of range, and loader
// settings that are nil, invalid, for a loader this program has not
// registered, or a second for one loader.
func (o *Options) validateLoaders() error {
	if err := o.Sandbox.validate(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, c := range o.Loaders {
		if c == nil {
			return fmt.Errorf("Options.Loaders[%d] is nil", i)
		}
		name := c.LoaderName()
		if !slices.ContainsFunc(registeredLoaders(), func(l Loader) bool { return l.Name == name }) {
			return fmt.Errorf("Options.Loaders[%d]: %w: settings (%T) for loader %q, which this program has not registered (import its package)", i, ErrNotFound, c, name)
		}
		if seen[name] {
			return fmt.Errorf("Options.Loaders[%d]: %w: a second %T for loader %q", i, ErrDuplicate, c, name)
		}
		seen[name] = true
		if err := c.Validate(); err != nil {
			return fmt.Errorf("Options.Loaders[%d] (%s): %w", i, name, err)
		}
	}
	return nil
}

// ScanFile reads the manifest of the plugin file at path the way [Open]
// reads a file that has none: with the registered loader for its format,
// in a scanner child process (opts.Scanner and opts.ScanTimeout apply).
// `dynop manifest` writes the result next to the plugin.
func ScanFile(ctx context.Context, path string, opts Options) (*discover.Manifest, error) {
	if err := opts.validateLoaders(); err != nil {
		return nil, fmt.Errorf("dynop: scan: %w", err)
	}
	return discover.Inspect(ctx, path, discover.Options{Formats: formats(registeredLoaders(), &opts), Scanner: opts.Scanner, ScanTimeout: opts.ScanTimeout})
}
