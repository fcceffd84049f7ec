package discover_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/sign"
)

// TestStaleManifestFallsBackToScan: a plugin rebuilt after its manifest
// was written is read by a scan instead, with a warning that says the
// manifest is stale and why; the verdict is cached with the warning.
// Issue 25's fourth failure: the plugin was broken outright.
func TestStaleManifestFallsBackToScan(t *testing.T) {
	dir := t.TempDir()
	path := writePlugin(t, dir, "p.so", "id=test.plugin.stale", "version=1.0.0")
	writeManifest(t, path)
	writePlugin(t, dir, "p.so", "id=test.plugin.stale", "version=1.1.0") // rebuilt
	opts := options(t, path)
	var log logBuffer
	opts.Logger = log.Logger()
	f := only(t, enumerate(t, opts))
	if f.Err != nil || f.Info.Version.String() != "1.1.0" || f.Manifest != "" {
		t.Fatalf("a rebuilt plugin with a stale manifest: err %v, version %v, manifest %q; want the scan's 1.1.0", f.Err, f.Info.Version, f.Manifest)
	}
	wantErr(t, f.Stale, discover.ErrManifest, discover.ManifestPath(path), "is stale", "does not match the binary", "dynop manifest")
	if !strings.Contains(log.String(), "plugin manifest is stale") {
		t.Errorf("no warning logged:\n%s", log.String())
	}
	again := only(t, enumerate(t, opts))
	if !again.Cached || again.Info.Version.String() != "1.1.0" || again.Manifest != "" {
		t.Errorf("second enumeration: cached %v, version %v, manifest %q (want none: the info came from a scan)", again.Cached, again.Info.Version, again.Manifest)
	}
	wantErr(t, again.Stale, discover.ErrManifest, "is stale")

	// Writing the manifest again makes it current.
	writeManifest(t, path)
	f = only(t, enumerate(t, opts))
	if f.Stale != nil || f.Manifest == "" {
		t.Errorf("after dynop manifest: stale %v, manifest %q", f.Stale, f.Manifest)
	}
}

// TestStaleManifestUnderRequire: under policy require a stale manifest
// makes the plugin untrusted, with the reason, and nothing is scanned.
func TestStaleManifestUnderRequire(t *testing.T) {
	pub, key := newKey(t)
	path := signedPlugin(t, t.TempDir(), key)
	writePlugin(t, filepath.Dir(path), "p.so", "id=test.plugin.signed", "rebuilt")
	opts := options(t, path)
	opts.Trust, opts.Scanner = sign.NewTrustStore(pub), failingScanner(t)
	f := only(t, enumerate(t, opts))
	if f.Err != nil || f.Info.ID != "" {
		t.Fatalf("err %v, info %q: want no error and no info (not scanned)", f.Err, f.Info.ID)
	}
	wantErr(t, f.Untrusted, sign.ErrSignature, "is stale", "does not match the binary", "policy require", "not scanned", "sign the manifest")

	// Under policy warn it is scanned, and untrusted for the same reason.
	opts.Policy, opts.Scanner = sign.PolicyWarn, ""
	f = only(t, enumerate(t, opts))
	if f.Err != nil || f.Info.ID != "test.plugin.signed" {
		t.Fatalf("policy warn: err %v, id %q", f.Err, f.Info.ID)
	}
	wantErr(t, f.Untrusted, sign.ErrSignature, "is stale")
}

// TestBundledFiles: the files a plugin ships are listed in its manifest
// with their digests, checked at enumeration (a changed one makes the
// manifest stale) and again by CheckBundled before they load; under
// require a tampered one is refused.
func TestBundledFiles(t *testing.T) {
	dir := t.TempDir()
	lib := writeFile(t, filepath.Join(dir, "lib", "libdep.so.1"), "the dependency")
	path := writePlugin(t, dir, "p.so", "id=test.plugin.bundles", "bundle=lib/libdep.so.1")
	m := writeManifest(t, path)
	if len(m.Bundled) != 1 || m.Bundled[0].Path != "lib/libdep.so.1" || m.Bundled[0].Size != int64(len("the dependency")) {
		t.Fatalf("manifest bundled = %+v", m.Bundled)
	}
	d, _, _ := sign.HashFile(lib)
	if m.Bundled[0].SHA256 != d {
		t.Errorf("bundled digest %v, file %v", m.Bundled[0].SHA256, d)
	}
	pub, key := newKey(t)
	signFile(t, path, key)
	opts := options(t, path)
	opts.Trust, opts.Scanner = sign.NewTrustStore(pub), failingScanner(t)
	f := only(t, enumerate(t, opts))
	if f.Err != nil || f.Untrusted != nil || len(f.Bundled) != 1 || f.BundledPath(f.Bundled[0]) != lib {
		t.Fatalf("err %v, untrusted %v, bundled %+v", f.Err, f.Untrusted, f.Bundled)
	}
	if err := f.CheckLoaded(f.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := f.CheckBundled(0, d); err != nil {
		t.Errorf("the listed bytes: %v", err)
	}
	var other sign.Digest
	other[0] = 1
	wantErr(t, f.CheckBundled(0, other), sign.ErrSignature, "lib/libdep.so.1", "sha256 "+d.String()[:16])
	wantErr(t, f.CheckBundled(1, d), nil, "bundled file 1: out of range")
	if f := only(t, enumerate(t, opts)); !f.Cached || len(f.Bundled) != 1 || f.Bundled[0] != m.Bundled[0] {
		t.Errorf("from the cache: cached %v, bundled %+v", f.Cached, f.Bundled)
	}

	// Tampered after signing: the cache entry is stale (the file's
	// stamp changed), and the manifest does not match it.
	writeFile(t, lib, "a tampered dependency")
	f = only(t, enumerate(t, opts))
	if f.Cached {
		t.Error("a changed bundled file left the cache entry valid")
	}
	wantErr(t, f.Untrusted, sign.ErrSignature, "bundled file lib/libdep.so.1", "is stale")
	_, err := discover.VerifyFile(path, sign.NewTrustStore(pub))
	wantErr(t, err, sign.ErrSignature, "does not match bundled file lib/libdep.so.1")

	// Gone: the same.
	os.Remove(lib)
	f = only(t, enumerate(t, opts))
	wantErr(t, f.Untrusted, sign.ErrSignature, "lib/libdep.so.1")
}

// TestBundledListFromCacheCannotVouch: under require, CheckLoaded takes
// the bundled digests from the signed manifest, not from what
// enumeration (or a tampered cache) said.
func TestBundledListFromCacheCannotVouch(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "libdep.so.1"), "the dependency")
	path := writePlugin(t, dir, "p.so", "id=test.plugin.bundles", "bundle=libdep.so.1")
	writeManifest(t, path)
	pub, key := newKey(t)
	signFile(t, path, key)
	opts := options(t, path)
	opts.Trust = sign.NewTrustStore(pub)
	f := only(t, enumerate(t, opts))
	f.Bundled[0].SHA256[0] ^= 1 // as a tampered cache would say
	wantErr(t, f.CheckLoaded(f.SHA256), sign.ErrSignature, "bundled files listed in manifest", "are not those enumerated")
}
