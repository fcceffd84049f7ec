package discover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dynop/dynop/internal/regfile"
)

// EnvPath names the environment variable that adds plugin files and
// directories to the search path, separated by colons (the
// [os.PathListSeparator]), after [Options.Paths].
const EnvPath = "DYNOP_PLUGIN_PATH"

// Source says how an entry came onto the search path.
type Source uint8

// The sources of search path entries, in search order.
const (
	// SourceOptions: [Options.Paths].
	SourceOptions Source = iota
	// SourceEnv: the environment variable DYNOP_PLUGIN_PATH.
	SourceEnv
	// SourceExeDir: the directory plugins next to the executable.
	SourceExeDir
	// SourcePrefixDir: PREFIX/lib/dynop/plugins for an executable
	// installed as PREFIX/bin/NAME (make install's layout).
	SourcePrefixDir
	// SourceUserDir: $XDG_DATA_HOME/dynop/plugins (by default
	// ~/.local/share/dynop/plugins).
	SourceUserDir
)

var sourceNames = [...]string{"options", "env", "exe-dir", "prefix-dir", "user-dir"}

// String names the source.
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// Entry is one file or directory on the search path.
type Entry struct {
	Path   string // absolute and clean
	Source Source
}

// SearchPath returns the search path, in the order plugins are looked for:
//
//  1. paths (from [Options.Paths]), in order;
//  2. the entries of $DYNOP_PLUGIN_PATH, in order;
//  3. the directory "plugins" next to the running executable (symbolic
//     links to the executable resolved);
//  4. PREFIX/lib/dynop/plugins where the executable is PREFIX/bin/NAME,
//     the layout of make install (and of /usr/local, /usr, /opt/dynop);
//  5. $XDG_DATA_HOME/dynop/plugins, or ~/.local/share/dynop/plugins when
//     XDG_DATA_HOME is unset or relative (the XDG base directory rule).
//
// With defaults false, only paths are used. Empty entries are dropped,
// relative ones are made absolute, and an entry given twice is kept where
// it first appears.
func SearchPath(paths []string, defaults bool) []Entry {
	var out []Entry
	seen := make(map[string]bool)
	add := func(p string, src Source) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, Entry{p, src})
		}
	}
	for _, p := range paths {
		add(p, SourceOptions)
	}
	if !defaults {
		return out
	}
	for _, p := range filepath.SplitList(os.Getenv(EnvPath)) {
		add(p, SourceEnv)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		for _, e := range exeDirs(exe) {
			add(e.Path, e.Source)
		}
	}
	if dir := userDir(); dir != "" {
		add(dir, SourceUserDir)
	}
	return out
}

// exeDirs returns the search path's entries for the executable exe
// (symbolic links resolved): its plugins directory, and an
// installation's when it is PREFIX/bin/NAME.
func exeDirs(exe string) []Entry {
	dir := filepath.Dir(exe)
	out := []Entry{{filepath.Join(dir, "plugins"), SourceExeDir}}
	if filepath.Base(dir) == "bin" {
		out = append(out, Entry{PrefixPluginDir(filepath.Dir(dir)), SourcePrefixDir})
	}
	return out
}

// PrefixPluginDir returns where an installation under prefix keeps its
// plugins, and where the search path looks for them when the executable
// is prefix/bin/NAME: prefix/lib/dynop/plugins.
func PrefixPluginDir(prefix string) string {
	return filepath.Join(prefix, "lib", "dynop", "plugins")
}

// userDir returns the per-user plugin directory,
// $XDG_DATA_HOME/dynop/plugins, or "" if there is no home directory.
func userDir() string {
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" || !filepath.IsAbs(data) {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "dynop", "plugins")
}

// pluginSuffixes are the file names a directory scan picks up.
var pluginSuffixes = []string{".so", ".dylib", ".wasm"}

// IsPluginName reports whether a directory scan picks up a file called
// name: one ending in .so, .dylib or .wasm that is not hidden (does not
// start with a dot).
func IsPluginName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	return slices.ContainsFunc(pluginSuffixes, func(s string) bool {
		return strings.HasSuffix(name, s) && len(name) > len(s)
	})
}

// candidate is a file found on the search path, or a problem with an
// entry.
type candidate struct {
	path  string // absolute; as found (a symbolic link is not resolved)
	entry Entry
	err   error       // the file cannot be used (a link that escapes its directory)
	fi    fs.FileInfo // the file's (the link target's) stat; nil until taken
	names nameSet     // the names in its directory, or nil if not listed
}

// nameSet is the names in a directory.
type nameSet map[string]struct{}

// has reports whether the directory may hold name: true if it was not
// listed.
func (s nameSet) has(name string) bool {
	if s == nil {
		return true
	}
	_, ok := s[name]
	return ok
}

// problem is a search path entry that could not be read.
type problem struct {
	entry Entry
	err   error
}

// scan lists the plugin files on the search path, in order: a file entry
// as itself, a directory's plugin files (see [IsPluginName]) sorted by
// name. Directories are not searched recursively.
//
// A symbolic link in a directory is followed only if its target lies
// inside that same directory (after resolving every link), so a plugin
// directory cannot be made to load a file from elsewhere by planting a
// link; a link that escapes is a candidate with an error. Entries given
// as files are the caller's choice and are followed wherever they point.
// The same file reached twice (a link next to its target) is listed once,
// by [dedupe].
//
// A file that is not a regular file (links followed) — a named pipe, a
// device, a socket, given as an entry or with a plugin's name in a
// directory — is a candidate with an error wrapping [ErrFormat], never
// opened: reading it could block for ever. A directory with a plugin's
// name is skipped.
//
// An entry that does not exist is a problem unless it is a default
// directory (those usually do not exist); an entry that cannot be read is
// always a problem. Problems are not fatal.
func scan(entries []Entry) ([]candidate, []problem) {
	var out []candidate
	var problems []problem
	addFile := func(path string, e Entry, fi fs.FileInfo, names nameSet) {
		out = append(out, candidate{path: path, entry: e, fi: fi, names: names})
	}
	for _, e := range entries {
		fi, err := os.Stat(e.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && e.Source >= SourceExeDir {
				continue
			}
			problems = append(problems, problem{e, err})
			continue
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				// A named pipe, a device, a socket: opening or reading it
				// could block for ever.
				out = append(out, candidate{path: e.Path, entry: e, err: irregular(e.Path, fi.Mode())})
				continue
			}
			addFile(e.Path, e, fi, nil)
			continue
		}
		dirents, err := os.ReadDir(e.Path)
		if err != nil {
			problems = append(problems, problem{e, err})
			continue
		}
		names := make(nameSet, len(dirents))
		for _, d := range dirents {
			names[d.Name()] = struct{}{}
		}
		var realDir string
		for _, d := range dirents { // sorted by name
			if !IsPluginName(d.Name()) {
				continue
			}
			path := filepath.Join(e.Path, d.Name())
			if d.Type()&fs.ModeSymlink != 0 {
				if realDir == "" {
					if realDir, err = filepath.EvalSymlinks(e.Path); err != nil {
						problems = append(problems, problem{e, err})
						break
					}
				}
				target, err := filepath.EvalSymlinks(path)
				if err != nil {
					out = append(out, candidate{path: path, entry: e, err: fmt.Errorf("%w: %v", ErrFormat, err)})
					continue
				}
				if filepath.Dir(target) != realDir {
					out = append(out, candidate{path: path, entry: e, err: fmt.Errorf(
						"%w: it is a symbolic link to %s, outside its plugin directory %s; links in a plugin directory must point into it (give the target on the search path instead)",
						ErrLink, target, e.Path)})
					continue
				}
			}
			if d.Type().IsRegular() {
				addFile(path, e, nil, names) // stat in parallel later
				continue
			}
			fi, err := os.Stat(path)
			if err != nil {
				out = append(out, candidate{path: path, entry: e, err: err})
				continue
			}
			if fi.IsDir() {
				continue // a directory called x.so
			}
			if !fi.Mode().IsRegular() {
				out = append(out, candidate{path: path, entry: e, err: irregular(path, fi.Mode())})
				continue
			}
			addFile(path, e, fi, names)
		}
	}
	return out, problems
}

// irregular is the error of a candidate path of mode m that is not a
// regular file (links followed).
func irregular(path string, m fs.FileMode) error {
	return fmt.Errorf("plugin file %s: %w", path, formatError(&regfile.Error{Mode: m}))
}

// dedupe drops the candidates that are a file listed before (by device
// and inode), keeping the first.
func dedupe(cands []candidate, files []*File) ([]candidate, []*File) {
	seen := make(map[fileKey]bool, len(cands))
	n := 0
	for i, c := range cands {
		if c.fi != nil {
			if k, ok := keyOf(c.fi); ok {
				if seen[k] {
					continue
				}
				seen[k] = true
			}
		}
		cands[n], files[n] = c, files[i]
		n++
	}
	return cands[:n], files[:n]
}
