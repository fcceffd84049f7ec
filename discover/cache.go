package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/sign"
)

// cacheSchema names the registry cache's format. A cache of another
// schema, or written for another plugin API, is ignored and rebuilt.
const cacheSchema = "dynop.registry/v1"

// CacheFile is the name of the registry cache in its directory.
const CacheFile = "registry.json"

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
// manifest's and signature's) are unchanged.
type cacheFile struct {
	Schema  string                 `json:"schema"`
	API     string                 `json:"api"`
	Entries map[string]*cacheEntry `json:"entries"`
}

type cacheEntry struct {
	Binary         stamp           `json:"binary"`
	Manifest       *stamp          `json:"manifest,omitempty"`
	Sig            *stamp          `json:"sig,omitempty"`
	Format         string          `json:"format,omitempty"`
	SHA256         sign.Digest     `json:"sha256,omitzero"`
	ManifestSHA256 sign.Digest     `json:"manifest_sha256,omitzero"`
	Info           *plugin.Info    `json:"info,omitempty"`
	Loader         json.RawMessage `json:"loader,omitempty"`
	Err            *savedError     `json:"err,omitempty"`
	// The signature check, valid for the policy and trust store in Trust.
	Trust    string      `json:"trust,omitempty"`
	Signer   string      `json:"signer,omitempty"`
	TrustErr *savedError `json:"trust_err,omitempty"`
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
	{"changed", ErrChanged},
	{"format", ErrFormat},
	{"manifest", ErrManifest},
	{"scan", ErrScan},
	{"unsigned", sign.ErrUnsigned},
	{"unknown-key", sign.ErrUnknownKey},
	{"signature", sign.ErrSignature},
	{"invalid", plugin.ErrInvalid},
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

// cache is the registry cache of one enumeration.
type cache struct {
	path  string // "" when caching is off
	log   *slog.Logger
	file  cacheFile
	dirty bool
}

// loadCache reads the registry cache in dir. A missing cache is empty; a
// corrupt or unreadable one is empty too, with a warning, and is
// rewritten after the enumeration.
func loadCache(dir string, log *slog.Logger) *cache {
	c := &cache{log: log, file: cacheFile{Schema: cacheSchema, API: plugin.APIVersion.String(), Entries: map[string]*cacheEntry{}}}
	if dir == "" {
		return c
	}
	c.path = filepath.Join(dir, CacheFile)
	data, err := os.ReadFile(c.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c
	case err != nil:
		log.Warn("registry cache unreadable; rebuilding it", "path", c.path, "err", err)
		c.dirty = true
		return c
	}
	var f cacheFile
	if err := json.Unmarshal(data, &f); err != nil {
		why := err.Error()
		if isTruncated(data, err) {
			why = fmt.Sprintf("truncated after %d bytes", len(data))
		}
		log.Warn("registry cache corrupt; rebuilding it", "path", c.path, "err", why)
		c.dirty = true
		return c
	}
	if f.Schema != cacheSchema || f.API != c.file.API || f.Entries == nil {
		log.Debug("registry cache of another version; rebuilding it", "path", c.path, "schema", f.Schema, "api", f.API)
		c.dirty = true
		return c
	}
	for path, e := range f.Entries {
		if e == nil || (e.Err == nil && e.Info == nil) {
			log.Warn("registry cache corrupt; rebuilding it", "path", c.path, "err", "entry "+path+" has neither info nor error")
			c.dirty = true
			return c
		}
	}
	c.file = f
	return c
}

// lookup returns the entry for path if it is still valid for files
// stamped so.
func (c *cache) lookup(path string, bin stamp, manifest, sig *stamp) *cacheEntry {
	e := c.file.Entries[path]
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
	c.file.Entries[path] = e
	c.dirty = true
}

// save writes the cache if it changed, atomically, dropping entries whose
// files are gone. A failure is a warning.
func (c *cache) save() {
	if c.path == "" || !c.dirty {
		return
	}
	for path := range c.file.Entries {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			delete(c.file.Entries, path)
		}
	}
	data, err := json.Marshal(&c.file)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(c.path), 0o755); err == nil {
			err = writeAtomic(c.path, data, 0o644)
		}
	}
	if err != nil {
		c.log.Warn("registry cache not saved", "path", c.path, "err", err)
	}
}
