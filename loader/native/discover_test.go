package native_test

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/plugins/vecmath"
	"github.com/dynop/dynop/sign"
)

// TestScannerIsolatesCPlugins: C plugins that crash or hang while
// reporting their info are broken, with the reason, and the host (which
// ran none of their code) serves the plugin next to them. One that prints
// on stdout is fine.
func TestScannerIsolatesCPlugins(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, defines ...string) string {
		p := fixture(t, name, defines...)
		dst := filepath.Join(dir, name)
		if err := os.Rename(p, dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	crash := build("libcrash.so", "-DINFO_CRASH", `-DFIXTURE_ID="dynop.plugin.crash"`)
	hang := build("libhang.so", "-DINFO_HANG", `-DFIXTURE_ID="dynop.plugin.hang"`)
	chatty := build("libchatty.so", "-DINFO_PRINT", `-DFIXTURE_ID="dynop.plugin.chatty"`)
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{dir, cbuild.VecMath(t)}, NoRegistered: true, NoDefaultPaths: true,
		CacheDir: t.TempDir(), ScanTimeout: 3 * time.Second, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	bad := broken(h)
	if len(bad) != 2 {
		t.Fatalf("broken %v, want the crashing and the hanging plugin", bad)
	}
	for _, st := range bad {
		switch st.Path {
		case crash:
			wantErr(t, st.Err, discover.ErrScan, "crashed", "SIGSEGV", crash)
		case hang:
			wantErr(t, st.Err, discover.ErrScan, "timed out after 3s", hang)
		default:
			t.Errorf("unexpected broken plugin %s: %v", st.Path, st.Err)
		}
	}
	if st, err := h.Plugin("dynop.plugin.chatty"); err != nil || st.State != dynop.StateAvailable || st.Path != chatty {
		t.Errorf("the chatty plugin: %+v, %v", st, err)
	}
	m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Release()
	if got := m.Dot([]float32{1, 2}, []float32{3, 4}); got != 11 {
		t.Errorf("Dot = %v", got)
	}
	for _, p := range []string{crash, hang} {
		if cbuild.Mapped(t, p) {
			t.Errorf("%s is mapped in the host", p)
		}
	}
}

// signedLib builds the fixture into dir with a manifest and a signature by
// key.
func signedLib(t *testing.T, dir, name string, key ed25519.PrivateKey, defines ...string) string {
	t.Helper()
	src := fixture(t, name, defines...)
	lib := filepath.Join(dir, name)
	if err := os.Rename(src, lib); err != nil {
		t.Fatal(err)
	}
	m, err := dynop.ScanFile(ctx, lib, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discover.WriteManifest(lib, m); err != nil {
		t.Fatal(err)
	}
	md, _, err := sign.HashFile(discover.ManifestPath(lib))
	if err != nil {
		t.Fatal(err)
	}
	if err := sign.WriteSignature(sign.SignaturePath(lib), sign.Sign(key, m.SHA256, md)); err != nil {
		t.Fatal(err)
	}
	return lib
}

func signedHost(t *testing.T, pub ed25519.PublicKey, paths ...string) *dynop.Host {
	t.Helper()
	h, err := dynop.Open(ctx, dynop.Options{Paths: paths, NoRegistered: true, NoDefaultPaths: true, CacheDir: t.TempDir(),
		TrustedKeys: []ed25519.PublicKey{pub}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

var fixtureDesc = iface.Desc{UID: iface.MustParseUID("7E57F1C5-0000-4000-8000-0000000000F1"), Name: "dynop.test.Fixture", Version: iface.V(1, 0, 0)}

// TestSignedNativePlugin: a signed plugin under policy require starts,
// and its code is mapped from a sealed memfd named after it, not from the
// file; after it unloads the memfd is gone too.
func TestSignedNativePlugin(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	lib := signedLib(t, t.TempDir(), "libsigned.so", key)
	h := signedHost(t, pub, lib)
	st, _ := h.Plugin("dynop.plugin.fixture")
	if st.State != dynop.StateAvailable || st.Signer != sign.KeyID(pub) {
		t.Fatalf("status %v signed by %q (%v), want available, signed by %s", st.State, st.Signer, st.Err, sign.KeyID(pub))
	}
	_, ref, err := h.Acquire(ctx, st.Info.ID, fixtureDesc.UID, fixtureDesc.Version)
	if err != nil {
		t.Fatal(err)
	}
	maps, _ := os.ReadFile("/proc/self/maps")
	if !strings.Contains(string(maps), "/memfd:dynop:"+lib) {
		t.Errorf("the plugin is not mapped from a memfd named after %s", lib)
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if strings.HasSuffix(line, " "+lib) {
			t.Errorf("the plugin file itself is mapped: %s", line)
		}
	}
	// Writing to the file now changes nothing that runs.
	if err := os.WriteFile(lib, []byte("overwritten"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ref.Release(); err != nil {
		t.Fatal(err)
	}
	if cbuild.Mapped(t, lib) {
		t.Errorf("the memfd of %s is still mapped after the plugin stopped", lib)
	}
}

// TestReplacedBetweenVerificationAndLoad: the file is replaced after the
// host verified it (by another plugin, validly built, even validly
// signed): starting fails, nothing of the new file runs, and the old
// signature does not vouch for it.
func TestReplacedBetweenVerificationAndLoad(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	dir := t.TempDir()
	lib := signedLib(t, dir, "libswap.so", key)
	other := signedLib(t, t.TempDir(), "libswap.so", key, `-DFIXTURE_IFACE_NAME="dynop.test.Evil"`, "-DFIXTURE_IFACE_UID=0xF1")
	h := signedHost(t, pub, lib)
	if st, _ := h.Plugin("dynop.plugin.fixture"); st.State != dynop.StateAvailable {
		t.Fatalf("before the swap: %v %v", st.State, st.Err)
	}
	if err := os.Rename(other, lib); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.Acquire(ctx, "dynop.plugin.fixture", fixtureDesc.UID, fixtureDesc.Version)
	wantErr(t, err, dynop.ErrSignature, lib, "changed since it was enumerated")
	if cbuild.Mapped(t, lib) {
		t.Errorf("%s was mapped", lib)
	}
}

// TestUntrustedNativePlugins: unsigned, tampered and foreign-signed
// plugins are untrusted under require and never loaded; each says why.
func TestUntrustedNativePlugins(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	_, foreign, _ := ed25519.GenerateKey(nil)
	dir := t.TempDir()
	unsigned := fixture(t, "libunsigned.so", `-DFIXTURE_ID="dynop.plugin.unsigned"`)
	if m, err := dynop.ScanFile(ctx, unsigned, dynop.Options{}); err != nil {
		t.Fatal(err)
	} else if _, err := discover.WriteManifest(unsigned, m); err != nil {
		t.Fatal(err)
	}
	bare := fixture(t, "libbare.so", `-DFIXTURE_ID="dynop.plugin.bare"`, "-DINFO_CRASH") // never scanned, so never crashes
	tampered := signedLib(t, dir, "libtampered.so", key, `-DFIXTURE_ID="dynop.plugin.tampered"`)
	f, err := os.OpenFile(tampered, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("appended"))
	f.Close()
	m, err := dynop.ScanFile(ctx, tampered, dynop.Options{}) // the attacker remakes the manifest too
	if err != nil {
		t.Fatal(err)
	}
	discover.WriteManifest(tampered, m)
	stranger := signedLib(t, dir, "libstranger.so", foreign, `-DFIXTURE_ID="dynop.plugin.stranger"`)
	h := signedHost(t, pub, unsigned, tampered, stranger, bare)
	for _, st := range h.Plugins() {
		if st.Path == bare && (st.State != dynop.StateUntrusted || !strings.Contains(fmt.Sprint(st.Err), "not scanned")) {
			t.Errorf("a plugin without a manifest under require: %v, %v; want untrusted, not scanned", st.State, st.Err)
		}
	}
	for _, c := range []struct {
		id     string
		target error
		want   string
	}{
		{"dynop.plugin.unsigned", sign.ErrUnsigned, "not signed"},
		{"dynop.plugin.tampered", sign.ErrSignature, "binary changed since it was signed"},
		{"dynop.plugin.stranger", sign.ErrUnknownKey, sign.KeyID(foreign.Public().(ed25519.PublicKey))},
	} {
		st, _ := h.Plugin(c.id)
		if st.State != dynop.StateUntrusted {
			t.Errorf("%s: %v, want untrusted", c.id, st.State)
		}
		wantErr(t, st.Err, c.target, c.want)
		_, _, err := h.Acquire(ctx, c.id, fixtureDesc.UID, fixtureDesc.Version)
		wantErr(t, err, dynop.ErrSignature, "plugin is untrusted")
	}
	for _, p := range []string{unsigned, tampered, stranger, bare} {
		if cbuild.Mapped(t, p) {
			t.Errorf("%s was loaded", p)
		}
	}
}
