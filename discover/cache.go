package discover

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/atomicfile"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/regfile"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// cacheMagic starts the registry cache file and names its format. A
// cache of another format, or written for another plugin API, is ignored
// and rebuilt.
const cacheMagic = "dynop.registry/v3\n"

// CacheFile is the name of the registry cache in its directory.
const CacheFile = "registry.gob"

// DefaultCacheDir returns $XDG_CACHE_HOME/dynop (by default ~/.cache/dynop),
// or "" if the machine has no cache directory.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "dynop")
}

// cacheFile is the registry cache: what enumeration learned of each plugin
// file, by absolute path, valid while the file's stamp (and its
// manifest's and signature's) are unchanged. It is stored as cacheMagic
// followed by a gob: a host opening over a thousand cached plugins spends
// most of its time decoding it, and gob decodes this about three times
// faster than JSON.
type cacheFile struct {
	API     string
	Entries map[string]*cacheEntry
}

type cacheEntry struct {
	Binary         stamp
	Manifest       *stamp
	Sig            *stamp
	Format         string
	SHA256         []byte // gob decodes a byte slice at once, an array byte by byte
	ManifestSHA256 []byte
	Info           *cachedInfo
	Loader         []byte
	Err            *savedError
	Stale          *savedError    // File.Stale
	Bundled        []bundledStamp // File.Bundled, with the stamps the files had
	// The signature check, valid for the policy and trust store in Trust.
	Trust    string
	Signer   string
	TrustErr *savedError
}

// bundledStamp is a bundled file as the cache keeps it: its entry in the
// manifest, and the stamp that keeps the entry valid.
type bundledStamp struct {
	Path   string
	SHA256 []byte
	Stamp  stamp
}

// bundledStamps returns the stamps of the bundled files of the plugin
// file at path.
func bundledStamps(path string, list []BundledFile) ([]bundledStamp, error) {
	var out []bundledStamp
	for _, b := range list {
		fi, err := os.Stat(bundledPath(path, b))
		if err != nil {
			return nil, err
		}
		out = append(out, bundledStamp{Path: b.Path, SHA256: b.SHA256[:], Stamp: stampOf(fi)})
	}
	return out, nil
}

// bundledUnchanged reports whether the bundled files of the plugin file
// at path still have the stamps in list.
func bundledUnchanged(path string, list []bundledStamp) bool {
	for _, b := range list {
		fi, err := os.Stat(bundledPath(path, BundledFile{Path: b.Path}))
		if err != nil || stampOf(fi) != b.Stamp || len(b.SHA256) != len(sign.Digest{}) {
			return false
		}
	}
	return true
}

// cachedInfo is a schema.Plugin as gob can encode it: operator schemas,
// whose defaults are of any type, travel as their JSON.
type cachedInfo struct {
	ID, Description, Author, Build string
	Version, APIVersion            iface.Version
	Interfaces                     []iface.Desc
	Operators                      []byte // JSON
	Passes                         []schema.Pass
	Needs                          []schema.Need
	Requirements                   schema.Requirements
}

func newCachedInfo(info schema.Plugin) (*cachedInfo, error) {
	c := &cachedInfo{ID: info.ID, Description: info.Description, Author: info.Author, Build: info.Build,
		Version: info.Version, APIVersion: info.APIVersion, Interfaces: info.Interfaces, Passes: info.Passes,
		Needs: info.Needs, Requirements: info.Requirements}
	if len(info.Operators) > 0 {
		var err error
		if c.Operators, err = json.Marshal(info.Operators); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cachedInfo) info() (schema.Plugin, error) {
	info := schema.Plugin{ID: c.ID, Description: c.Description, Author: c.Author, Build: c.Build,
		Version: c.Version, APIVersion: c.APIVersion, Interfaces: c.Interfaces, Passes: c.Passes,
		Needs: c.Needs, Requirements: c.Requirements}
	if len(c.Operators) > 0 {
		if err := json.Unmarshal(c.Operators, &info.Operators); err != nil {
			return schema.Plugin{}, err
		}
	}
	return info, nil
}

// savedError is an error as the cache and the scanner's answer keep it:
// its message and the sentinels it wrapped, by name.
type savedError struct {
	Kinds []string `json:"kinds,omitempty"`
	Msg   string   `json:"msg"`
}

// sentinel is an error a saved error can wrap, by name.
type sentinel struct {
	name string
	err  error
}

// sentinels are the errors any saved error can wrap; formats add their
// own ([Format.Errors]).
var sentinels = []sentinel{
	{"link", ErrLink},
	{"missing-library", ErrMissingLibrary},
	{"unsupported", errdefs.ErrUnsupported},
	{"changed", ErrChanged},
	{"format", ErrFormat},
	{"manifest", ErrManifest},
	{"scan", ErrScan},
	{"unsigned", sign.ErrUnsigned},
	{"unknown-key", sign.ErrUnknownKey},
	{"signature", sign.ErrSignature},
	{"invalid", schema.ErrPlugin},
	{"not-exist", fs.ErrNotExist},
	{"permission", fs.ErrPermission},
}

// sentinelsOf returns the sentinels and those of formats.
func sentinelsOf(formats []Format) []sentinel {
	out := slices.Clone(sentinels)
	for _, f := range formats {
		for _, name := range slices.Sorted(maps.Keys(f.Errors)) {
			out = append(out, sentinel{f.Name + "." + name, f.Errors[name]})
		}
	}
	return out
}

func saveError(err error, known []sentinel) *savedError {
	if err == nil {
		return nil
	}
	e := &savedError{Msg: err.Error()}
	for _, s := range known {
		if errors.Is(err, s.err) {
			e.Kinds = append(e.Kinds, s.name)
		}
	}
	return e
}

func (e *savedError) error(known []sentinel) error {
	if e == nil {
		return nil
	}
	out := &answerError{msg: e.Msg}
	for _, k := range e.Kinds {
		if i := slices.IndexFunc(known, func(s sentinel) bool { return s.name == k }); i >= 0 {
			out.kinds = append(out.kinds, known[i].err)
		}
	}
	return out
}

// answerError is an error from the cache or a scanner child, with the
// sentinels it wrapped.
type answerError struct {
	kinds []error
	msg   string
}

func (e *answerError) Error() string        { return e.msg }
func (e *answerError) Is(target error) bool { return slices.Contains(e.kinds, target) }

// cache is the registry cache of one enumeration. Its methods are safe
// for concurrent use.
type cache struct {
	path string // "" when caching is off
	log  *slog.Logger

	mu      sync.RWMutex
	file    cacheFile
	dirty   bool
	touched map[string]bool // entries this enumeration stored
}

// loadCache reads the registry cache in dir. A missing cache is empty; a
// corrupt or unreadable one is empty too, with a warning, and is
// rewritten after the enumeration.
func loadCache(dir string, log *slog.Logger) *cache {
	c := &cache{log: log, file: cacheFile{API: schema.APIVersion.String(), Entries: map[string]*cacheEntry{}}, touched: map[string]bool{}}
	if dir == "" {
		return c
	}
	c.path = filepath.Join(dir, CacheFile)
	data, err := regfile.ReadFile(c.path) // a named pipe would block the read
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c
	case err != nil:
		log.Warn("registry cache unreadable; rebuilding it", "path", c.path, "err", err)
		c.dirty = true
		return c
	}
	f, err := decodeCache(data)
	switch {
	case errors.Is(err, errOtherVersion):
		log.Debug("registry cache of another dynop; rebuilding it", "path", c.path, "err", err)
		c.dirty = true
	case err != nil:
		log.Warn("registry cache corrupt; rebuilding it", "path", c.path, "err", err)
		c.dirty = true
	case f.API != c.file.API:
		log.Debug("registry cache of another plugin API; rebuilding it", "path", c.path, "api", f.API)
		c.dirty = true
	default:
		c.file = *f
	}
	return c
}

// errOtherVersion: a cache that another version of dynop wrote.
var errOtherVersion = errors.New("registry cache of another version")

// decodeCache reads a cache file's bytes, refusing anything that is not
// a whole cache.
func decodeCache(data []byte) (f *cacheFile, err error) {
	rest, ok := bytes.CutPrefix(data, []byte(cacheMagic))
	if !ok {
		if i := bytes.IndexByte(data, '\n'); i > 0 && i < 64 && bytes.HasPrefix(data, []byte("dynop.registry/")) {
			return nil, fmt.Errorf("%w: it is a %q cache, this host reads %q", errOtherVersion, data[:i], strings.TrimSpace(cacheMagic))
		}
		return nil, fmt.Errorf("it does not start with %q", strings.TrimSpace(cacheMagic))
	}
	defer func() {
		if r := recover(); r != nil { // gob does not panic on bad input, but a cache must never take a host down
			f, err = nil, fmt.Errorf("decoding it panicked: %v", r)
		}
	}()
	f = new(cacheFile)
	dec := gob.NewDecoder(bytes.NewReader(rest))
	if err := dec.Decode(f); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("truncated after %d bytes", len(data))
		}
		return nil, err
	}
	for path, e := range f.Entries {
		if e == nil || (e.Err == nil && e.Info == nil) {
			return nil, fmt.Errorf("entry %s has neither info nor error", path)
		}
	}
	return f, nil
}

// lookup returns the entry for path if it is still valid for files
// stamped so.
func (c *cache) lookup(path string, bin stamp, manifest, sig *stamp) *cacheEntry {
	c.mu.RLock()
	e := c.file.Entries[path]
	c.mu.RUnlock()
	if e == nil || e.Binary != bin || !sameStamp(e.Manifest, manifest) || !sameStamp(e.Sig, sig) {
		return nil
	}
	return e
}

func sameStamp(a, b *stamp) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func (c *cache) store(path string, e *cacheEntry) {
	c.mu.Lock()
	c.file.Entries[path] = e
	c.touched[path] = true
	c.dirty = true
	c.mu.Unlock()
}

// save writes the cache if it changed, atomically. Under a lock on the
// cache directory it first reads the cache again and keeps what other
// hosts stored meanwhile for files this one did not read, so hosts over
// different plugins sharing one cache do not drop each other's entries;
// entries whose files are gone are dropped. A failure is a warning.
func (c *cache) save() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty {
		return
	}
	err := os.MkdirAll(filepath.Dir(c.path), 0o755)
	if err == nil {
		unlock := lockFile(c.path + ".lock")
		defer unlock()
		if data, err := regfile.ReadFile(c.path); err == nil {
			if disk, err := decodeCache(data); err == nil && disk.API == c.file.API {
				for path, e := range disk.Entries {
					if !c.touched[path] {
						c.file.Entries[path] = e
					}
				}
			}
		}
		for path := range c.file.Entries {
			if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
				delete(c.file.Entries, path)
			}
		}
		var buf bytes.Buffer
		buf.WriteString(cacheMagic)
		if err = gob.NewEncoder(&buf).Encode(&c.file); err == nil {
			err = atomicfile.Write(c.path, buf.Bytes(), 0o644)
		}
	}
	if err != nil {
		c.log.Warn("registry cache not saved", "path", c.path, "err", err)
	}
}
