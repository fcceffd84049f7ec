package dynop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/dynop/dynop/plugin"
)

// ErrFormat reports a file that is not a plugin this host can load: not a
// regular file, a format no registered loader reads, or a file its loader
// rejects (a truncated library, one built for another machine).
var ErrFormat = errors.New("not a loadable plugin file")

// LoadFunc reads the plugin in the file at path without starting it: it
// returns a [plugin.Plugin] whose Info is known and whose Register loads
// the code. Plugins loaded from files should have a method Path() string
// returning the file they came from; [PluginStatus.Path] shows it.
type LoadFunc func(ctx context.Context, path string) (plugin.Plugin, error)

type loaderEntry struct {
	name, magic string
	load        LoadFunc
}

var (
	loadersMu sync.RWMutex
	loaders   []loaderEntry
)

// RegisterLoader makes a loader for plugin files available to
// [Options.Paths], the way image.RegisterFormat makes decoders available
// to image.Decode. name names the format ("native", "wasm"); magic is the
// prefix every file of the format starts with. Loader packages call it
// from init, so a program opts in by importing them:
//
//	import _ "github.com/dynop/dynop/loader/native"
//
// It panics if name or magic is empty, or name is registered twice.
func RegisterLoader(name, magic string, load LoadFunc) {
	if name == "" || magic == "" || load == nil {
		panic("dynop: RegisterLoader: empty name or magic, or nil LoadFunc")
	}
	loadersMu.Lock()
	defer loadersMu.Unlock()
	for _, l := range loaders {
		if l.name == name {
			panic("dynop: RegisterLoader called twice for loader " + name)
		}
	}
	loaders = append(loaders, loaderEntry{name, magic, load})
}

// knownFormats names the formats dynop has loaders for, so that a file of
// a format whose loader the program did not import gets a useful error.
var knownFormats = []struct{ magic, what, pkg string }{
	{"\x7fELF", "an ELF file", "github.com/dynop/dynop/loader/native"},
	{"\x00asm", "a WebAssembly module", "github.com/dynop/dynop/loader/wasm"},
}

// LoadFile loads the plugin in the file at path with the registered loader
// whose magic the file starts with. It starts nothing. Errors name the file
// and wrap [ErrFormat] or the [io/fs] error behind them.
func LoadFile(ctx context.Context, path string) (plugin.Plugin, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	loadersMu.RLock()
	regs := slices.Clone(loaders)
	loadersMu.RUnlock()
	n := 16 // enough to show in an error
	for _, l := range regs {
		n = max(n, len(l.magic))
	}
	head, err := fileHead(path, n)
	if err != nil {
		return nil, err
	}
	var load LoadFunc
	for _, l := range regs {
		if bytes.HasPrefix(head, []byte(l.magic)) {
			load = l.load
			break
		}
	}
	if load != nil {
		return load(ctx, path)
	}
	for _, f := range knownFormats {
		if bytes.HasPrefix(head, []byte(f.magic)) {
			return nil, fmt.Errorf("dynop: plugin file %s: %w: it is %s, but the program has no loader for it (import _ %q)", path, ErrFormat, f.what, f.pkg)
		}
	}
	return nil, fmt.Errorf("dynop: plugin file %s: %w: it starts with %q, which is no plugin format this program loads", path, ErrFormat, head[:min(len(head), 16)])
}

// fileHead returns the first n bytes of the regular file at path (fewer if
// it is shorter), with errors that say what the path is instead.
func fileHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dynop: plugin file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("dynop: plugin file: %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("dynop: plugin file %s: %w: it is a directory; give the plugin files in it", path, ErrFormat)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("dynop: plugin file %s: %w: it is not a regular file (%v)", path, ErrFormat, fi.Mode().Type())
	}
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("dynop: plugin file %s: %w", path, err)
	}
	if k == 0 {
		return nil, fmt.Errorf("dynop: plugin file %s: %w: it is empty", path, ErrFormat)
	}
	return head[:k], nil
}

// Broken is a plugin file that could not be used: [Host.Broken] lists them.
type Broken struct {
	Path string
	Err  error
}

// pathOf returns the file a plugin was loaded from, if it says.
func pathOf(p plugin.Plugin) string {
	if f, ok := p.(interface{ Path() string }); ok {
		return f.Path()
	}
	return ""
}
