// Package discover finds plugin files and learns what they provide
// without running any of their code in the host.
//
// [Enumerate] walks the search path ([SearchPath]): the files and
// directories a host is given, then $DYNOP_PLUGIN_PATH, the directory
// plugins next to the executable, an installation's PREFIX/lib/dynop/plugins
// and the per-user directory. For each
// plugin file it needs the plugin's Info, and gets it, cheapest first,
// from
//
//   - the registry cache ($XDG_CACHE_HOME/dynop/registry.json), whose
//     entry for the file is valid while the file, its manifest and its
//     signature have the stamps (size, mtime, ctime, inode) they had;
//   - the manifest next to the file (libx.so.dynop.json, see [Manifest]),
//     checked against the file's SHA-256;
//   - a scanner: the host's own executable started again as a child
//     process (after GStreamer's gst-plugin-scanner) whose main serves
//     first (dynop.ServeScanner, [ServeScanner]): it loads the file,
//     reads its Info and prints it as a manifest. A plugin that crashes,
//     hangs or answers garbage there is recorded as broken with the
//     reason, and the host carries on; a program that does not serve is
//     reported as such, and nothing is recorded against the plugin.
//
// What it learned goes back to the cache, written atomically, so hosts
// opening at the same time never see half a cache; a corrupt cache is
// rebuilt with a warning.
//
// # Signatures
//
// With a trust store and a policy other than off, each plugin's detached
// signature (libx.so.dynop.sig, see package sign) must verify over the
// digests of the binary and its manifest. The verdict is cached with the
// trust store's fingerprint, for listing; before a plugin's code runs,
// its loader calls [File.CheckLoaded] with the digest of the bytes it is
// about to load, which verifies the signature again from the files, so a
// tampered cache cannot vouch for a plugin.
//
// The bytes verified must be the bytes loaded. The native loader copies
// the file into a sealed memfd, hashing as it copies, and loads the
// memfd: once sealed, nothing can change those bytes, whereas an open
// descriptor of the file itself still sees writes to the file (dlopen maps
// it MAP_PRIVATE, which does not copy pages until they are written).
package discover

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynop/dynop/internal/regfile"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// errUnscanned: a plugin without a manifest under policy require.
var errUnscanned = errors.New("not scanned")

// staleUnderRequire is a manifest that does not describe the files
// under policy require: the plugin is untrusted, not scanned.
type staleUnderRequire struct{ err error }

func (s *staleUnderRequire) Error() string { return s.err.Error() }

// Sentinel errors; test for them with [errors.Is].
var (
	// ErrFormat: a file that is not a plugin this host can load.
	ErrFormat = errors.New("not a loadable plugin file")
	// ErrManifest: a manifest that cannot be used.
	ErrManifest = errors.New("bad manifest")
	// ErrScan: the scanner child process could not read the plugin's info.
	ErrScan = errors.New("plugin scan failed")
	// ErrLink: a symbolic link in a plugin directory pointing outside it.
	ErrLink = errors.New("symbolic link leaves its plugin directory")
	// ErrChanged: the file is not the one enumerated.
	ErrChanged = errors.New("plugin file changed since it was enumerated")
	// ErrMissingLibrary: a shared library the plugin needs cannot be
	// found on this machine. It is no verdict on the plugin (installing
	// the library changes the answer), so it is never cached; errors
	// wrapping it wrap dynop.ErrUnsupported too.
	ErrMissingLibrary = errors.New("a shared library it needs cannot be found")
)

// Options configure [Enumerate].
type Options struct {
	// Paths are plugin files and directories searched first.
	Paths []string
	// NoDefaultPaths searches Paths only: not $DYNOP_PLUGIN_PATH, the
	// executable's plugins directory or the per-user directory.
	NoDefaultPaths bool
	// Formats are the loaders' formats, by magic.
	Formats []Format
	// CacheDir holds the registry cache; "" means [DefaultCacheDir].
	CacheDir string
	// NoCache neither reads nor writes the registry cache.
	NoCache bool
	// Scanner is the program started to read a plugin's info; "" means
	// this program ([os.Executable]). Its main must call
	// dynop.ServeScanner first; see [ServeScanner].
	Scanner string
	// ScanTimeout bounds one scan; 0 means 10 s.
	ScanTimeout time.Duration
	// Trust holds the keys whose signatures are trusted.
	Trust *sign.TrustStore
	// Policy says what to do about signatures; the default is require if
	// Trust is set, off otherwise.
	Policy sign.Policy
	// Logger receives warnings (unreadable directories, a corrupt cache)
	// and debug lines. Nil means slog.Default().
	Logger *slog.Logger
}

// File is a plugin file found on the search path and what enumeration
// learned of it. A File with Err set is broken; otherwise Info is the
// plugin's info.
type File struct {
	// Path is the file's absolute path, as found (links not resolved).
	Path string
	// Entry is the search path entry it was found through.
	Entry Entry
	// Format names the loader for it; "" if none.
	Format string
	// Size and SHA256 describe the bytes enumerated.
	Size   int64
	SHA256 sign.Digest
	// Manifest is the manifest file the info came from; "" if a scanner
	// read it. ManifestSHA256 is that file's digest.
	Manifest       string
	ManifestSHA256 sign.Digest
	// Info is the plugin's info, valid when Err is nil.
	Info schema.Plugin
	// Loader is the loader's own data from the manifest.
	Loader []byte
	// Bundled are the files the plugin ships and loads with it, from its
	// manifest or its scan, in load order; see [File.CheckBundled].
	Bundled []BundledFile
	// Stale says why the plugin's manifest was not used: it does not
	// match the binary or a bundled file (the plugin was rebuilt), so
	// its info was read by a scan instead. Nil if the manifest was used
	// or there is none. Under policy require a stale manifest makes the
	// plugin untrusted instead.
	Stale error
	// Cached says the registry cache supplied all of this.
	Cached bool
	// Signer is the id of the key whose signature verified; "" if none
	// did or none was checked.
	Signer string
	// Err says why the file cannot be used (broken).
	Err error
	// Untrusted says why its signature did not verify, when the policy
	// checks signatures. Under policy require, a file without a manifest
	// is not scanned: it is untrusted, and its Info is empty.
	Untrusted error

	v *verifier
}

// Result is the outcome of [Enumerate].
type Result struct {
	// Files are the plugin files in search order.
	Files []*File
	// Problems are search path entries that could not be read; they are
	// also logged as warnings.
	Problems []error
	// Policy is the signature policy in force, resolved.
	Policy sign.Policy
}

// verifier checks signatures for one enumeration.
type verifier struct {
	trust  *sign.TrustStore
	policy sign.Policy // resolved
	key    string      // policy and trust store fingerprint, for the cache
}

// Enumerate finds the plugin files on the search path of opts and learns
// each one's info, without running plugin code in this process. Only a
// cancelled ctx fails it: problems with files are in each [File], and
// problems with the search path in [Result.Problems].
func Enumerate(ctx context.Context, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	v := &verifier{trust: opts.Trust, policy: opts.Policy.Resolve(opts.Trust != nil)}
	v.key = v.policy.String() + ":" + v.trust.Fingerprint()
	res := &Result{Policy: v.policy}
	cands, problems := scan(SearchPath(opts.Paths, !opts.NoDefaultPaths))
	for _, p := range problems {
		err := fmt.Errorf("plugin search path entry %s (%v): %w", p.entry.Path, p.entry.Source, p.err)
		log.Warn("plugin search path entry unreadable", "path", p.entry.Path, "source", p.entry.Source, "err", p.err)
		res.Problems = append(res.Problems, err)
	}
	dir := ""
	if !opts.NoCache {
		dir = cmp.Or(opts.CacheDir, DefaultCacheDir())
	}
	c := loadCache(dir, log)
	e := &enumeration{opts: opts, log: log, v: v, cache: c, known: sentinelsOf(opts.Formats),
		scanner: &scanner{exe: opts.Scanner, timeout: cmp.Or(opts.ScanTimeout, defaultScanTimeout)}}
	files := make([]*File, len(cands))
	if err := e.parallel(ctx, len(cands), runtime.NumCPU(), func(i int) {
		c := &cands[i]
		files[i] = &File{Path: c.path, Entry: c.entry, Err: c.err, v: v}
		if c.err == nil && c.fi == nil {
			c.fi, files[i].Err = os.Stat(c.path)
		}
	}); err != nil {
		return nil, err
	}
	cands, res.Files = dedupe(cands, files)
	known := make([]bool, len(cands))
	if err := e.parallel(ctx, len(cands), runtime.NumCPU(), func(i int) {
		f := res.Files[i]
		known[i] = f.Err != nil || e.fromCache(f, cands[i])
	}); err != nil {
		return nil, err
	}
	var cold []int
	for i := range cands {
		if !known[i] {
			cold = append(cold, i)
		}
	}
	// Cold work waits on disks and child processes: more workers than CPUs.
	if err := e.parallel(ctx, len(cold), max(4, runtime.NumCPU()), func(k int) {
		e.enumerate(ctx, res.Files[cold[k]], cands[cold[k]])
	}); err != nil {
		return nil, err
	}
	c.save()
	return res, nil
}

// enumeration is the state of one Enumerate.
type enumeration struct {
	opts    Options
	log     *slog.Logger
	v       *verifier
	cache   *cache
	scanner *scanner
	known   []sentinel // the errors saved errors may wrap
}

// parallel calls fn(0..n-1) on up to workers goroutines.
func (e *enumeration) parallel(ctx context.Context, n, workers int, fn func(int)) error {
	workers = min(n, workers)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= n {
					return
				}
				fn(k)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// stamps returns the stamps of the file c (from the scan) and of its
// manifest and signature, nil for those that do not exist; the directory
// listing says which may, so that only those are looked at.
func stamps(c candidate) (bin stamp, manifest, sig *stamp, err error) {
	fi := c.fi
	if fi == nil {
		if fi, err = os.Stat(c.path); err != nil {
			return stamp{}, nil, nil, err
		}
	}
	bin = stampOf(fi)
	side := func(path string) *stamp {
		if !c.names.has(filepath.Base(path)) {
			return nil
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil
		}
		s := stampOf(fi)
		return &s
	}
	return bin, side(ManifestPath(c.path)), side(sign.SignaturePath(c.path)), nil
}

// fromCache fills f from the registry cache and reports whether it could.
func (e *enumeration) fromCache(f *File, c candidate) bool {
	bin, manifest, sig, err := stamps(c)
	if err != nil {
		f.Err = err
		return true
	}
	ce := e.cache.lookup(f.Path, bin, manifest, sig)
	if ce == nil || ce.Err == nil && !slices.ContainsFunc(e.opts.Formats, func(ft Format) bool { return ft.Name == ce.Format }) {
		return false
	}
	if !bundledUnchanged(f.Path, ce.Bundled) {
		return false
	}
	f.Cached = true
	f.Format, f.Size, f.Loader, f.Stale = ce.Format, ce.Binary.Size, ce.Loader, ce.Stale.error(e.known)
	if f.Stale != nil {
		e.log.Warn("plugin manifest is stale; using what a scan read instead", "path", f.Path, "err", f.Stale)
	}
	f.Bundled = make([]BundledFile, len(ce.Bundled))
	for i, b := range ce.Bundled {
		f.Bundled[i] = BundledFile{Path: b.Path, Size: b.Stamp.Size}
		copy(f.Bundled[i].SHA256[:], b.SHA256)
	}
	copy(f.SHA256[:], ce.SHA256)
	copy(f.ManifestSHA256[:], ce.ManifestSHA256)
	if ce.Manifest != nil && ce.Err == nil && ce.Stale == nil {
		f.Manifest = ManifestPath(f.Path)
	}
	if ce.Err != nil {
		f.Err = ce.Err.error(e.known)
		return true
	}
	info, err := ce.Info.info()
	if err != nil {
		return false // read it again
	}
	f.Info = info
	if ce.Trust != e.v.key {
		e.verify(f)
		updated := *ce
		updated.Trust, updated.Signer, updated.TrustErr = e.v.key, f.Signer, saveError(f.Untrusted, e.known)
		e.cache.store(f.Path, &updated)
		return true
	}
	f.Signer, f.Untrusted = ce.Signer, ce.TrustErr.error(e.known)
	return true
}

// enumerate fills f from its manifest or a scanner, and caches the result.
func (e *enumeration) enumerate(ctx context.Context, f *File, c candidate) {
	bin, manifest, sig, err := stamps(c)
	if err != nil {
		f.Err = err
		return
	}
	err = e.learn(ctx, f)
	var stale *staleUnderRequire
	switch {
	case err == errUnscanned:
		f.Untrusted = fmt.Errorf("%w: %s has no manifest %s, so no signature can cover it; under policy require it is not scanned, since that runs its code (write the manifest with dynop manifest, and sign it)",
			sign.ErrUnsigned, f.Path, ManifestPath(f.Path))
		return // depends on the policy: not cached
	case errors.As(err, &stale):
		f.Untrusted = fmt.Errorf("%w: %w; under policy require it is not scanned, since only a signed manifest vouches for it (sign the manifest you write)",
			sign.ErrSignature, stale.err)
		f.Manifest, f.ManifestSHA256 = "", sign.Digest{}
		return // depends on the policy: not cached
	case err != nil:
		f.Err = fmt.Errorf("plugin file %s: %w", f.Path, err)
	}
	if ctx.Err() != nil || !isVerdict(f.Err) || f.Err != nil && e.shipsFiles(f) {
		return // not a verdict on the plugin: not cached
	}
	if f.Err == nil {
		e.verify(f)
	}
	// The entry is for the files as they were before they were read: if
	// one changed meanwhile, the next enumeration reads it again.
	ce := &cacheEntry{Binary: bin, Manifest: manifest, Sig: sig, Format: f.Format, SHA256: f.SHA256[:],
		ManifestSHA256: f.ManifestSHA256[:], Loader: f.Loader, Err: saveError(f.Err, e.known),
		Stale: saveError(f.Stale, e.known)}
	if ce.Bundled, err = bundledStamps(f.Path, f.Bundled); err != nil {
		return // a bundled file is gone already: read it all again next time
	}
	if f.Err == nil {
		if ce.Info, err = newCachedInfo(f.Info); err != nil {
			return // cannot happen: info came from JSON
		}
		ce.Trust, ce.Signer, ce.TrustErr = e.v.key, f.Signer, saveError(f.Untrusted, e.known)
	}
	e.cache.store(f.Path, ce)
}

// shipsFiles reports whether the plugin of f ships files beside it, or
// may: then a failure to read it may be theirs (a library with the wrong
// soname, without a symbol), and fixing them must change the verdict, so
// it is not cached.
func (e *enumeration) shipsFiles(f *File) bool {
	i := slices.IndexFunc(e.opts.Formats, func(ft Format) bool { return ft.Name == f.Format })
	if i < 0 || e.opts.Formats[i].Bundled == nil {
		return false
	}
	rels, err := e.opts.Formats[i].Bundled(f.Path)
	return err != nil || len(rels) > 0
}

// learn reads f's format, digest and info.
func (e *enumeration) learn(ctx context.Context, f *File) error {
	ft, err := formatOf(f.Path, e.opts.Formats)
	if err != nil {
		return err
	}
	f.Format = ft.Name
	if ft.Check != nil {
		if err := ft.Check(f.Path); err != nil {
			return err
		}
	}
	if f.SHA256, f.Size, err = sign.HashFile(f.Path); err != nil {
		return formatError(err)
	}
	var m *Manifest
	if mpath := ManifestPath(f.Path); exists(mpath) {
		if m, f.ManifestSHA256, err = ReadManifest(mpath); err != nil {
			return err
		}
		f.Manifest = mpath
		if m.Format != ft.Name {
			return fmt.Errorf("manifest %s: %w: it is for a %s plugin, the file is %s", mpath, ErrManifest, m.Format, ft.Name)
		}
		err := m.matches(f.SHA256, f.Size)
		if err == nil {
			err = matchBundled(f.Path, m.Bundled)
		}
		if err != nil {
			// A rebuilt plugin whose manifest was not written again.
			err = fmt.Errorf("manifest %s is stale: %w", mpath, err)
			if e.v.policy == sign.PolicyRequire {
				return &staleUnderRequire{err}
			}
			e.log.Warn("plugin manifest is stale; reading the plugin with a scan instead", "path", f.Path, "err", err)
			f.Stale, f.Manifest, f.ManifestSHA256, m = err, "", sign.Digest{}, nil
		}
	} else if e.v.policy == sign.PolicyRequire {
		// No signature can cover a plugin without a manifest, and a
		// scan runs its code: it is not scanned.
		return errUnscanned
	}
	if m == nil {
		if m, err = e.scanner.scan(ctx, ft, f.Path); err != nil {
			return err
		}
		if m.SHA256 != f.SHA256 {
			return fmt.Errorf("%w: it changed while the scanner read it (sha256 %s, then %s)", ErrChanged, short(f.SHA256), short(m.SHA256))
		}
	}
	f.Info, f.Loader, f.Bundled = m.Info, m.Loader, m.Bundled
	return nil
}

// matches checks that m describes the binary with digest d and size.
func (m *Manifest) matches(d sign.Digest, size int64) error {
	if m.SHA256 != d || m.Size != size {
		return fmt.Errorf("%w: it does not match the binary: it says sha256 %s (%d bytes), the file has %s (%d bytes); write it again with dynop manifest",
			ErrManifest, short(m.SHA256), m.Size, short(d), size)
	}
	return nil
}

// short abbreviates a digest for messages.
func short(d sign.Digest) string { return d.String()[:16] + "…" }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// verify checks f's signature when the policy says so.
func (e *enumeration) verify(f *File) {
	f.Signer, f.Untrusted = "", nil
	if e.v.policy == sign.PolicyOff {
		return
	}
	if f.Stale != nil {
		f.Untrusted = fmt.Errorf("%w: %w", sign.ErrSignature, f.Stale)
		return
	}
	f.Signer, f.Untrusted = e.v.check(f.Path, f.SHA256, f.ManifestSHA256, f.Manifest != "")
}

// check verifies the signature of the plugin file path over the given
// digests and returns the signer's key id.
func (v *verifier) check(path string, binary, manifest sign.Digest, haveManifest bool) (string, error) {
	s, err := sign.ReadSignature(sign.SignaturePath(path))
	if err != nil {
		return "", err
	}
	if !haveManifest {
		return "", fmt.Errorf("%w: %s has a signature but no manifest %s for it to cover", sign.ErrSignature, path, ManifestPath(path))
	}
	if v.trust == nil {
		return "", fmt.Errorf("%w: signed by key %s, but no trust store is configured", sign.ErrUnknownKey, s.KeyID)
	}
	if err := v.trust.Verify(s, binary, manifest); err != nil {
		return "", err
	}
	return s.KeyID, nil
}

// CheckLoaded is what a loader calls with the SHA-256 of the bytes it is
// about to load (and run), before it runs any of them. It fails, wrapping
// [ErrChanged], if they are not the bytes enumerated; and when the policy
// requires signatures, it verifies the signature again, from the
// signature and manifest files as they are now, over those bytes
// (wrapping [sign.ErrSignature] if it does not verify). A File not made by
// [Enumerate] checks the digest only.
func (f *File) CheckLoaded(d sign.Digest) error {
	if d != f.SHA256 {
		err := fmt.Errorf("plugin file %s: %w: sha256 %s when enumerated, %s now", f.Path, ErrChanged, short(f.SHA256), short(d))
		if f.v != nil && f.v.policy == sign.PolicyRequire {
			err = fmt.Errorf("%w: %w", sign.ErrSignature, err)
		}
		return err
	}
	if f.v == nil || f.v.policy != sign.PolicyRequire {
		return nil
	}
	var md sign.Digest
	var m *Manifest
	if f.Manifest != "" {
		data, err := readLimited(f.Manifest, maxManifest)
		if err == nil {
			m, err = parseManifest(data)
		}
		if err != nil {
			return fmt.Errorf("plugin file %s: %w: manifest %w", f.Path, sign.ErrSignature, err)
		}
		md, _, _ = sign.HashReader(bytes.NewReader(data))
	}
	if _, err := f.v.check(f.Path, d, md, f.Manifest != ""); err != nil {
		return fmt.Errorf("plugin file %s: %w", f.Path, err)
	}
	// The bundled files' digests that CheckBundled compares with must be
	// the signed manifest's, not what a cache says.
	if m != nil && !slices.Equal(m.Bundled, f.Bundled) {
		return fmt.Errorf("plugin file %s: %w: %w: the bundled files listed in manifest %s are not those enumerated",
			f.Path, sign.ErrSignature, ErrChanged, f.Manifest)
	}
	return nil
}

// CheckBundled is what a loader calls with the SHA-256 of the bytes of
// bundled file i (f.Bundled[i]) that it is about to load, before it runs
// any of them, and after [File.CheckLoaded] of the plugin's own bytes.
// It fails, wrapping [ErrChanged] (and under policy require
// [sign.ErrSignature]: the signature covers the digests), if they are
// not the bytes listed.
func (f *File) CheckBundled(i int, d sign.Digest) error {
	if i < 0 || i >= len(f.Bundled) {
		return fmt.Errorf("plugin file %s: bundled file %d: out of range (it has %d)", f.Path, i, len(f.Bundled))
	}
	b := f.Bundled[i]
	if d == b.SHA256 {
		return nil
	}
	err := fmt.Errorf("plugin file %s: bundled file %s: %w: sha256 %s listed, %s now", f.Path, b.Path, ErrChanged, short(b.SHA256), short(d))
	if f.v != nil && f.v.policy == sign.PolicyRequire {
		err = fmt.Errorf("%w: %w", sign.ErrSignature, err)
	}
	return err
}

// BundledPath returns the absolute path of f's bundled file b.
func (f *File) BundledPath(b BundledFile) string { return bundledPath(f.Path, b) }

// formatOf picks the format whose magic the file at path starts with.
func formatOf(path string, formats []Format) (Format, error) {
	n := 16 // enough to show in an error
	for _, f := range formats {
		n = max(n, len(f.Magic))
	}
	head, err := fileHead(path, n)
	if err != nil {
		return Format{}, err
	}
	for _, f := range formats {
		if strings.HasPrefix(string(head), f.Magic) {
			return f, nil
		}
	}
	// Another program, with other loaders, may read the file: these are
	// no verdicts on it.
	for _, k := range knownFormats {
		if strings.HasPrefix(string(head), k.magic) {
			return Format{}, noVerdict(fmt.Errorf("%w: it is %s, but the program has no loader for it (import _ %q)", ErrFormat, k.what, k.pkg))
		}
	}
	return Format{}, noVerdict(fmt.Errorf("%w: it starts with %q, which is no plugin format this program loads", ErrFormat, head[:min(len(head), 16)]))
}

// knownFormats names the formats dynop has loaders for, so that a file of
// a format whose loader the program did not import gets a useful error.
var knownFormats = []knownFormat{
	{"native", "\x7fELF", "an ELF file", "github.com/dynop/dynop/loader/native"},
	{"wasm", "\x00asm", "a WebAssembly module", "github.com/dynop/dynop/loader/wasm"},
}

type knownFormat struct{ name, magic, what, pkg string }

// fileHead returns the first n bytes of the file at path (fewer if it is
// shorter).
func fileHead(path string, n int) ([]byte, error) {
	f, err := regfile.Open(path) // never a named pipe, which would block
	if err != nil {
		return nil, formatError(err)
	}
	defer f.Close()
	head := make([]byte, n)
	k, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if k == 0 {
		return nil, fmt.Errorf("%w: it is empty", ErrFormat)
	}
	return head[:k], nil
}

// Inspect reads the manifest of the plugin file path as [Enumerate] would
// without one: in a scanner child process (or here, for a sandboxed
// format). `dynop manifest` writes the result next to the plugin.
func Inspect(ctx context.Context, path string, opts Options) (*Manifest, error) {
	ft, err := formatOf(path, opts.Formats)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ft.Check != nil {
		if err := ft.Check(path); err != nil {
			return nil, err
		}
	}
	s := &scanner{exe: opts.Scanner, timeout: cmp.Or(opts.ScanTimeout, defaultScanTimeout)}
	m, err := s.scan(ctx, ft, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// VerifyFile checks the plugin file at path as a host with the trust store
// trust and the policy require does: its manifest must match the binary
// and its signature must verify over both. It returns the signer's key
// id. `dynop verify` calls it.
func VerifyFile(path string, trust *sign.TrustStore) (string, error) {
	d, size, err := sign.HashFile(path)
	if err != nil {
		return "", formatError(err)
	}
	mpath := ManifestPath(path)
	m, md, err := ReadManifest(mpath)
	if err != nil {
		return "", fmt.Errorf("%w: %w", sign.ErrSignature, err)
	}
	if err := m.matches(d, size); err != nil {
		return "", fmt.Errorf("%w: manifest %s: %w", sign.ErrSignature, mpath, err)
	}
	if err := matchBundled(path, m.Bundled); err != nil {
		return "", fmt.Errorf("%w: manifest %s: %w", sign.ErrSignature, mpath, err)
	}
	v := &verifier{trust: trust, policy: sign.PolicyRequire}
	return v.check(path, d, md, true)
}
