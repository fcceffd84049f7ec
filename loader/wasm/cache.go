package wasm

// The compilation cache, authenticated.
//
// wazero's own file cache (wazero.NewCompilationCacheWithDir) trusts the
// files in its directory: an entry is machine code checked by a CRC32
// only, so whoever can write the cache directory could run native code in
// a plugin whose module verified. wazero v1.12 offers no hook for a
// cache of one's own, so dynop keeps its own store and hands wazero only
// a private directory, fresh for each compile:
//
//   - The store is <cacheDir>/dynop-v1 (cacheDir is Options.CacheDir/wasm,
//     default $XDG_CACHE_HOME/dynop/wasm), one file per module and wazero
//     build, named <sha256 of the module>-wazero-<version>-<arch>-<os>.
//     An entry holds a header (format, the module's SHA-256, wazero's
//     directory name and the name of wazero's file for the module, the
//     payload's length), the payload (wazero's file), and an
//     HMAC-SHA256 over the format, the module's SHA-256, wazero's
//     directory name, wazero's key and the payload (see entryMAC).
//   - The HMAC key is 32 random bytes in $XDG_CONFIG_HOME/dynop/
//     wasm-cache.key (os.UserConfigDir), outside the cache directory,
//     mode 0600, made on first use. A key file that is not a regular file
//     of 32 bytes, or that others may read or write, is refused; with no
//     usable key file the process uses a random key of its own and keeps
//     its entries in memory (logged once): the cache then helps within the
//     process only, and the store on disk is neither read nor written.
//   - Before a compile, an entry whose MAC verifies (over the bytes read
//     into memory once) is written into the private directory under
//     wazero's name for it; an entry that does not verify is logged,
//     removed, and the module compiled from scratch. After a compile that
//     made wazero write a file, the file is read, MACed and stored
//     (atomically). The private directory is removed after the compile.
//   - The wazero-* directories that earlier versions of dynop let wazero
//     keep in cacheDir are removed (once per process): nothing reads them,
//     and what they hold is unauthenticated.

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/dynop/dynop/internal/atomicfile"
	"github.com/dynop/dynop/internal/regfile"
)

const (
	// storeDir is the store's directory under the cache directory.
	storeDir = "dynop-v1"
	// entryFormat is an entry's first line.
	entryFormat = "dynop-wasm-cache 1"
	// keyFileName is the HMAC key's file, in dynop's configuration
	// directory.
	keyFileName = "wasm-cache.key"
	keySize     = 32
	macSize     = sha256.Size
	// maxEntrySize bounds what is read of an entry.
	maxEntrySize = 1 << 30
	// wazeroDirPrefix starts the name of the directory wazero keeps its
	// files in (wazero-<version>-<arch>-<os>).
	wazeroDirPrefix = "wazero-"
)

// keyFilePath returns where the cache's HMAC key is kept. Tests replace
// it.
var keyFilePath = defaultKeyFilePath

// defaultKeyFilePath is $XDG_CONFIG_HOME/dynop/wasm-cache.key, or where
// os.UserConfigDir says.
func defaultKeyFilePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory for the cache key: %w", err)
	}
	return filepath.Join(dir, "dynop", keyFileName), nil
}

// cacheKey is the HMAC key of the cache's entries.
type cacheKey struct {
	secret []byte
	// persistent: read from (or written to) the key file. Otherwise the
	// key is this process's own and entries are kept in memory.
	persistent bool
}

var (
	keyMu sync.Mutex
	// keys memoizes the key of each key file path ("": none could be
	// named), so that the file is read, and a failure logged, once.
	keys       = map[string]*cacheKey{}
	processKey *cacheKey // the fallback, made once
)

// loadCacheKey returns the cache's HMAC key: the key file's, made if
// missing, or else this process's own (logged once per key file).
func loadCacheKey(log *slog.Logger) *cacheKey {
	keyMu.Lock()
	defer keyMu.Unlock()
	path, err := keyFilePath()
	if k := keys[path]; k != nil {
		return k
	}
	var secret []byte
	if err == nil {
		secret, err = readOrCreateKey(path)
	}
	if err == nil {
		k := &cacheKey{secret: secret, persistent: true}
		keys[path] = k
		return k
	}
	if processKey == nil {
		processKey = &cacheKey{secret: make([]byte, keySize)}
		rand.Read(processKey.secret)
	}
	keys[path] = processKey
	log.Warn("wasm: compilation cache: no usable key file, so compiled modules are cached for this process only", "err", err.Error())
	return processKey
}

// readOrCreateKey reads the key file at path, making it if it is
// missing. A new key is written in full to a temporary file, which is
// then linked to path: if another process made path first, its key is
// read instead.
func readOrCreateKey(path string) ([]byte, error) {
	k, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	secret := make([]byte, keySize)
	rand.Read(secret)
	var suffix [8]byte
	rand.Read(suffix[:])
	tmp := path + ".new-" + hex.EncodeToString(suffix[:])
	if err := atomicfile.Write(tmp, secret, 0o600); err != nil {
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	return secret, nil
}

// readKey reads the key file at path, refusing one that is not a regular
// file of keySize bytes or that others may read or write. A missing file
// gives an error wrapping fs.ErrNotExist.
func readKey(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	const fix = "remove it, and dynop makes a new one"
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cache key %s is not a regular file (%s); %s", path, regfile.Kind(fi.Mode()), fix)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("cache key %s has mode %#o: others may read or change it; want 0600 (chmod 600 %s)", path, perm, path)
	}
	f, err := regfile.Open(path) // swapped for a named pipe since Lstat, it would block
	if err != nil {
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return nil, fmt.Errorf("cache key %s changed while it was read", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, keySize+1))
	if err != nil {
		return nil, fmt.Errorf("cache key %s: %w", path, err)
	}
	if len(b) != keySize {
		return nil, fmt.Errorf("cache key %s has %s bytes, want %d; %s", path, atMost(len(b), keySize), keySize, fix)
	}
	return b, nil
}

func atMost(n, limit int) string {
	if n > limit {
		return fmt.Sprintf("more than %d", limit)
	}
	return strconv.Itoa(n)
}

// cacheStats counts what the compilation cache did in this process; tests
// read it.
var cacheStats struct {
	hits     atomic.Int64 // compiles that loaded a verified entry
	compiles atomic.Int64 // compiles from scratch, with the cache on
	refused  atomic.Int64 // entries that did not verify
	stored   atomic.Int64 // entries written
}

// memEntries holds the entries of processes with a key of their own, by
// the path they would have in the store.
var memEntries sync.Map // string → []byte

// legacyDone records the cache directories whose old wazero directories
// were removed.
var legacyDone sync.Map // string → struct{}

// moduleCache is the cache around one compile of one module.
type moduleCache struct {
	log     *slog.Logger
	key     *cacheKey
	sum     [sha256.Size]byte // the module's
	entry   string            // the store entry's path
	private string            // wazero's directory, this compile's only
	wzDir   string            // where in private wazero keeps its files
	tag     string            // wazero-<version>-<arch>-<os>
	wz      wazero.CompilationCache

	placed     string      // the file given to wazero; "" if none
	placedInfo fs.FileInfo // and what it was
}

// openModuleCache prepares the cache for a compile of the module whose
// SHA-256 is sum, for a host whose cache directory is cacheDir: a
// private directory for wazero holding the module's verified entry, if
// the store has one. The cache's troubles are logged, never fatal: with
// an error the module compiles without a cache.
func openModuleCache(log *slog.Logger, cacheDir string, sum [sha256.Size]byte) (*moduleCache, error) {
	removeLegacy(log, cacheDir)
	c := &moduleCache{log: log, key: loadCacheKey(log), sum: sum}
	var err error
	if c.private, err = os.MkdirTemp("", "dynop-wazero-"); err != nil {
		return nil, fmt.Errorf("wasm: compilation cache: %w", err)
	}
	if c.wz, err = wazero.NewCompilationCacheWithDir(c.private); err != nil {
		c.close()
		return nil, fmt.Errorf("wasm: compilation cache %s: %w", c.private, err)
	}
	if c.tag, err = wazeroDir(c.private); err != nil {
		c.close()
		return nil, err
	}
	c.wzDir = filepath.Join(c.private, c.tag)
	store := filepath.Join(cacheDir, storeDir)
	c.entry = filepath.Join(store, hex.EncodeToString(sum[:])+"-"+c.tag)
	if c.key.persistent {
		if err := os.MkdirAll(store, 0o700); err != nil {
			c.close()
			return nil, fmt.Errorf("wasm: compilation cache: %w", err)
		}
	}
	c.place()
	return c, nil
}

// wazeroDir returns the name of the one directory wazero made in dir.
func wazeroDir(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("wasm: compilation cache: %w", err)
	}
	if len(ents) != 1 || !ents[0].IsDir() || !strings.HasPrefix(ents[0].Name(), wazeroDirPrefix) {
		return "", fmt.Errorf("wasm: compilation cache %s: wazero did not make one %s* directory there", dir, wazeroDirPrefix)
	}
	return ents[0].Name(), nil
}

// removeLegacy removes, once per process, the wazero directories that
// earlier versions of dynop let wazero keep in cacheDir: their entries
// are unauthenticated, and nothing reads them any more.
func removeLegacy(log *slog.Logger, cacheDir string) {
	if _, done := legacyDone.LoadOrStore(cacheDir, struct{}{}); done {
		return
	}
	old, _ := filepath.Glob(filepath.Join(cacheDir, wazeroDirPrefix+"*"))
	for _, dir := range old {
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("wasm: compilation cache: could not remove an earlier version's unauthenticated cache (it is not used)", "dir", dir, "err", err.Error())
			continue
		}
		log.Debug("wasm: compilation cache: removed an earlier version's unauthenticated cache", "dir", dir)
	}
}

// place writes the payload of the module's store entry, if it verifies,
// where wazero looks for it; an entry that does not is logged and
// removed.
func (c *moduleCache) place() {
	data, err := c.read()
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var wkey string
	var payload []byte
	if err == nil {
		wkey, payload, err = decodeEntry(data, c.key.secret, c.sum, c.tag)
	}
	if err != nil {
		cacheStats.refused.Add(1)
		c.log.Warn("wasm: compilation cache: refused an entry; compiling the module again", "file", c.entry, "reason", err.Error())
		c.remove()
		return
	}
	p := filepath.Join(c.wzDir, wkey)
	if err := os.WriteFile(p, payload, 0o600); err != nil {
		c.log.Warn("wasm: compilation cache: could not hand an entry to wazero; compiling the module again", "file", p, "err", err.Error())
		return
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return
	}
	c.placed, c.placedInfo = p, fi
}

// read returns the bytes of the module's store entry; an error wraps
// fs.ErrNotExist if there is none.
func (c *moduleCache) read() ([]byte, error) {
	if !c.key.persistent {
		if b, ok := memEntries.Load(c.entry); ok {
			return b.([]byte), nil
		}
		return nil, fs.ErrNotExist
	}
	return readEntry(c.entry)
}

// remove removes the module's store entry.
func (c *moduleCache) remove() {
	if !c.key.persistent {
		memEntries.Delete(c.entry)
		return
	}
	if err := os.RemoveAll(c.entry); err != nil {
		c.log.Warn("wasm: compilation cache: could not remove a refused entry", "file", c.entry, "err", err.Error())
	}
}

// readEntry reads the entry file at path, which must be a regular file of
// at most maxEntrySize bytes.
func readEntry(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", regfile.Kind(fi.Mode()))
	}
	if fi.Size() > maxEntrySize {
		return nil, fmt.Errorf("%d bytes, more than an entry may have (%d)", fi.Size(), maxEntrySize)
	}
	f, err := regfile.Open(path) // swapped for a named pipe since Lstat, it would block
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return nil, errors.New("it changed while it was read")
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("it changed while it was read: %w", err)
	}
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return nil, errors.New("it changed while it was read: it grew")
	}
	return b, nil
}

// finish stores the file wazero wrote for the module, if it wrote one
// (compiled says the compile succeeded), and removes the private
// directory.
func (c *moduleCache) finish(compiled bool) {
	defer c.close()
	if !compiled {
		return
	}
	ents, err := os.ReadDir(c.wzDir)
	if err != nil {
		c.log.Warn("wasm: compilation cache: could not read wazero's directory", "dir", c.wzDir, "err", err.Error())
		return
	}
	wrote := false
	for _, ent := range ents {
		p := filepath.Join(c.wzDir, ent.Name())
		if !isWazeroKey(ent.Name()) || !ent.Type().IsRegular() {
			continue // wazero's temporary files
		}
		if p == c.placed {
			if fi, err := os.Lstat(p); err == nil && os.SameFile(fi, c.placedInfo) {
				continue // what was placed, unchanged: wazero used it
			}
		}
		wrote = true
		payload, err := regfile.ReadFile(p)
		if err != nil {
			c.log.Warn("wasm: compilation cache: could not read what wazero wrote", "file", p, "err", err.Error())
			continue
		}
		c.store(ent.Name(), payload)
	}
	if wrote || c.placed == "" {
		cacheStats.compiles.Add(1)
	} else {
		cacheStats.hits.Add(1)
	}
}

// store writes the store entry of the module: wazero's file wkey, holding
// payload.
func (c *moduleCache) store(wkey string, payload []byte) {
	data := encodeEntry(c.key.secret, c.sum, c.tag, wkey, payload)
	if !c.key.persistent {
		memEntries.Store(c.entry, data)
	} else if err := atomicfile.Write(c.entry, data, 0o600); err != nil {
		c.log.Warn("wasm: compilation cache: could not store a compiled module", "file", c.entry, "err", err.Error())
		return
	}
	cacheStats.stored.Add(1)
}

// close removes the private directory. wazero's cache stays open: the
// runtime compiled with it uses its engine until the runtime closes.
func (c *moduleCache) close() {
	if c.private != "" {
		if err := os.RemoveAll(c.private); err != nil {
			c.log.Warn("wasm: compilation cache: could not remove a temporary directory", "dir", c.private, "err", err.Error())
		}
		c.private = ""
	}
}

// isWazeroKey reports whether name is a name wazero gives its files: a
// SHA-256 in lower-case hex.
func isWazeroKey(name string) bool {
	if len(name) != 2*sha256.Size {
		return false
	}
	for _, r := range name {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// encodeEntry makes a store entry:
//
//	dynop-wasm-cache 1
//	module <the module's SHA-256, hex>
//	wazero <wazero's directory name> <wazero's file name>
//	payload <the payload's length>
//	<the payload><entryMAC, 32 bytes>
func encodeEntry(secret []byte, sum [sha256.Size]byte, tag, wkey string, payload []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nmodule %x\nwazero %s %s\npayload %d\n", entryFormat, sum, tag, wkey, len(payload))
	b.Write(payload)
	b.Write(entryMAC(secret, sum, tag, wkey, payload))
	return b.Bytes()
}

// entryMAC is the HMAC-SHA256, keyed with secret, of the entry format,
// the module's SHA-256, wazero's directory name (NUL-terminated),
// wazero's key (32 bytes) and the payload.
func entryMAC(secret []byte, sum [sha256.Size]byte, tag, wkey string, payload []byte) []byte {
	k, _ := hex.DecodeString(wkey)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(entryFormat + "\n"))
	m.Write(sum[:])
	m.Write([]byte(tag))
	m.Write([]byte{0})
	m.Write(k)
	m.Write(payload)
	return m.Sum(nil)
}

// decodeEntry checks a store entry against the module whose SHA-256 is
// sum, compiled by the wazero whose directory name is tag, and returns
// wazero's file name and the payload; the error says what is wrong. The
// MAC is computed over the expected module and wazero, not over what the
// header says.
func decodeEntry(data, secret []byte, sum [sha256.Size]byte, tag string) (wkey string, payload []byte, err error) {
	if !bytes.HasPrefix(data, []byte(entryFormat+"\n")) {
		first, _, _ := bytes.Cut(data[:min(len(data), 64)], []byte{'\n'})
		if !bytes.HasPrefix(data, []byte("dynop-wasm-cache ")) {
			return "", nil, fmt.Errorf("not a dynop compilation cache entry: it starts %q", first)
		}
		return "", nil, fmt.Errorf("not a dynop compilation cache entry of this version: it starts %q, want %q", first, entryFormat)
	}
	var lines [4]string
	rest := data
	for i := range lines {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok || len(line) > 256 {
			return "", nil, fmt.Errorf("truncated or malformed header (%d bytes; line %d is missing or too long)", len(data), i+1)
		}
		lines[i], rest = string(line), after
	}
	if got, want := strings.TrimPrefix(lines[1], "module "), hex.EncodeToString(sum[:]); got != want {
		return "", nil, fmt.Errorf("it is for module sha256 %s, not this module (sha256 %s)", trunc(got), want)
	}
	f := strings.Fields(strings.TrimPrefix(lines[2], "wazero "))
	if !strings.HasPrefix(lines[2], "wazero ") || len(f) != 2 {
		return "", nil, fmt.Errorf("malformed header line 3 %q, want \"wazero DIR KEY\"", trunc(lines[2]))
	}
	if f[0] != tag {
		return "", nil, fmt.Errorf("it is for %s, not %s", trunc(f[0]), tag)
	}
	if wkey = f[1]; !isWazeroKey(wkey) {
		return "", nil, fmt.Errorf("wazero's file name %q is not 64 lower-case hex digits", trunc(wkey))
	}
	n, err := strconv.Atoi(strings.TrimPrefix(lines[3], "payload "))
	if !strings.HasPrefix(lines[3], "payload ") || err != nil || n < 0 {
		return "", nil, fmt.Errorf("malformed header line 4 %q, want \"payload LENGTH\"", trunc(lines[3]))
	}
	if len(rest) != n+macSize {
		return "", nil, fmt.Errorf("truncated or padded: the header says %d payload bytes and a %d-byte MAC follow, and %d bytes do", n, macSize, len(rest))
	}
	payload, mac := rest[:n], rest[n:]
	if !hmac.Equal(mac, entryMAC(secret, sum, tag, wkey, payload)) {
		return "", nil, errors.New("its MAC does not verify: it was changed, or written with another key")
	}
	return wkey, payload, nil
}

// trunc shortens s for a message.
func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
