package native_test

import (
	"crypto/ed25519"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/sign"
)

// dotUID is the interface of testdata/bundled/dotplugin.c.
var dotUID = iface.MustParseUID("5E7A11D0-0D07-4B1A-9C25-00000000D070")

// bundledPlugin builds, in a new directory, libmydot.so.0 (in lib/ if
// sub) and the plugin libdot.so that links against it with RUNPATH
// $ORIGIN (or $ORIGIN/lib), and writes the data file dotplugin.txt beside
// the plugin. It returns the plugin's and the library's paths.
func bundledPlugin(t *testing.T, sub bool) (plugin, lib string) {
	t.Helper()
	dir := t.TempDir()
	libDir, runpath := dir, "$ORIGIN"
	if sub {
		libDir, runpath = filepath.Join(dir, "lib"), "$ORIGIN/lib"
		if err := os.Mkdir(libDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plugin, lib = cbuild.DotPlugin(t, dir, runpath, libDir, "libmydot.so.0")
	if err := os.WriteFile(filepath.Join(dir, "dotplugin.txt"), []byte("beside the plugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return plugin, lib
}

// writeManifest writes the manifest of the plugin file path, as dynop
// manifest does, and returns it.
func writeManifest(t *testing.T, path string) *discover.Manifest {
	t.Helper()
	m, err := dynop.ScanFile(ctx, path, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discover.WriteManifest(path, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// openLogged opens a host over paths whose log the test reads.
func openLogged(t *testing.T, log *testutil.LogBuffer, paths []string, opts ...func(*dynop.Options)) *dynop.Host {
	t.Helper()
	o := dynop.Options{Paths: paths, NoRegistered: true, NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: log.Logger()}
	for _, f := range opts {
		f(&o)
	}
	h, err := dynop.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

// TestBundledDependency: a plugin that ships its library beside it, found
// through RUNPATH $ORIGIN, loads (the host loads the library first, from
// a sealed copy it checked) and unloads with it, leaving
// /proc/self/maps; the plugin learns its own path and reads a data file
// beside it. Issue 25's first failure: the plugin could not load at all.
func TestBundledDependency(t *testing.T) {
	for _, sub := range []bool{false, true} {
		name := "$ORIGIN"
		if sub {
			name = "$ORIGIN/lib"
		}
		t.Run(name, func(t *testing.T) {
			plugin, lib := bundledPlugin(t, sub)
			for _, manifest := range []bool{false, true} {
				if manifest {
					m := writeManifest(t, plugin)
					rel, _ := filepath.Rel(filepath.Dir(plugin), lib)
					if len(m.Bundled) != 1 || m.Bundled[0].Path != filepath.ToSlash(rel) {
						t.Fatalf("dynop manifest's bundled list = %+v, want %s", m.Bundled, rel)
					}
				}
				var log testutil.LogBuffer
				h := openLogged(t, &log, []string{plugin})
				memfdOf := "memfd:dynop:" + lib
				if cbuild.Mapped(t, memfdOf) {
					t.Fatal("the bundled library is mapped before the plugin starts")
				}
				_, ref, err := h.Acquire(ctx, "test.plugin.dot", dotUID, iface.V(1, 0, 0))
				if err != nil {
					t.Fatalf("manifest %v: %v", manifest, err)
				}
				for _, want := range []string{"sdot=32", "path=" + plugin, "data=beside the plugin"} {
					if !strings.Contains(log.String(), want) {
						t.Errorf("manifest %v: the plugin's log lacks %q:\n%s", manifest, want, log.String())
					}
				}
				if !cbuild.Mapped(t, memfdOf) {
					t.Errorf("manifest %v: %s is not mapped while the plugin runs", manifest, memfdOf)
				}
				if err := ref.Release(); err != nil {
					t.Fatal(err)
				}
				if cbuild.Mapped(t, memfdOf) || cbuild.Mapped(t, lib) {
					t.Errorf("manifest %v: the bundled library is still mapped after the plugin unloaded", manifest)
				}
			}
		})
	}
}

// TestBundledDependencyTampered: under signature policy require, a
// bundled library changed after signing makes the plugin untrusted at
// enumeration, and one changed after enumeration is refused when the
// plugin starts, before any of it runs.
func TestBundledDependencyTampered(t *testing.T) {
	plugin, lib := bundledPlugin(t, false)
	writeManifest(t, plugin)
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := sign.HashFile(plugin)
	md, _, _ := sign.HashFile(discover.ManifestPath(plugin))
	if err := sign.WriteSignature(sign.SignaturePath(plugin), sign.Sign(key, d, md)); err != nil {
		t.Fatal(err)
	}
	trusted := func(o *dynop.Options) { o.TrustedKeys = []ed25519.PublicKey{pub} }
	var log testutil.LogBuffer
	h := openLogged(t, &log, []string{plugin}, trusted)
	if st, err := h.Plugin("test.plugin.dot"); err != nil || st.State != dynop.StateAvailable {
		t.Fatalf("signed: %v, %v", st.State, err)
	}

	original, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	tampered := append(append([]byte{}, original...), 0)
	if err := os.WriteFile(lib, tampered, 0o755); err != nil {
		t.Fatal(err)
	}
	// The host that enumerated it refuses to load it.
	_, _, err = h.Acquire(ctx, "test.plugin.dot", dotUID, iface.V(1, 0, 0))
	testutil.WantErr(t, err, dynop.ErrSignature, "bundled file libmydot.so.0", discover.ErrChanged.Error())
	if cbuild.Mapped(t, "memfd:dynop:"+lib) {
		t.Error("the tampered library was loaded")
	}
	// A new host lists it untrusted, with the reason.
	h2 := openLogged(t, &log, []string{plugin}, trusted)
	ps := h2.Plugins()
	if len(ps) != 1 || ps[0].State != dynop.StateUntrusted || !errors.Is(ps[0].Err, dynop.ErrSignature) ||
		!strings.Contains(ps[0].Err.Error(), "does not match bundled file libmydot.so.0") {
		t.Errorf("tampered bundled library: %+v", ps)
	}
}

// TestInterposition: a host process whose global scope has another
// cblas_sdot (here a plugin loaded with RTLD_GLOBAL, as a host that links
// another BLAS would have) takes the plugin's calls into its own library
// unless the plugin is deep-bound: 42 instead of 32, silently (issue 25's
// second failure, documented in docs/symbols.md). Deep binding, the
// default where it is safe, gives 32.
func TestInterposition(t *testing.T) {
	plugin, _ := bundledPlugin(t, false)
	hostLib, err := cbuild.Build(cbuild.Compiler(t, false), t.TempDir(), "libhostdot.so", "loader/native/testdata/bundled/dotplugin.c",
		[]string{"-DDOTPLUGIN_HOST", `-DDOTPLUGIN_ID="test.plugin.hostdot"`, "-DDOTPLUGIN_FLAGS=DYNOP_PLUGIN_GLOBAL_SYMBOLS"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		deep native.DeepBind
		want string
	}{
		{native.DeepBindNever, "sdot=42"}, // the failure, as it is without deep binding
		{native.DeepBindAuto, "sdot=32"},
		{native.DeepBindAlways, "sdot=32"},
	} {
		t.Run(c.deep.String(), func(t *testing.T) {
			var log testutil.LogBuffer
			h := openLogged(t, &log, []string{hostLib, plugin}, func(o *dynop.Options) {
				o.Loaders = []dynop.LoaderConfig{native.Config{DeepBind: c.deep}}
			})
			_, hostRef, err := h.Acquire(ctx, "test.plugin.hostdot", dotUID, iface.V(1, 0, 0))
			if err != nil {
				t.Fatal(err)
			}
			defer hostRef.Release()
			if !strings.Contains(log.String(), "sdot=42") {
				t.Fatalf("the host's library does not compute 42:\n%s", log.String())
			}
			log.Reset()
			_, ref, err := h.Acquire(ctx, "test.plugin.dot", dotUID, iface.V(1, 0, 0))
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Release()
			if !strings.Contains(log.String(), c.want) {
				t.Errorf("DeepBind %v: want %s from the plugin:\n%s", c.deep, c.want, log.String())
			}
		})
	}
}

// TestMissingSystemLibrary: a plugin that needs a library the dynamic
// linker cannot find is unsupported, naming the soname and a Debian
// package, whether the host reads it from a manifest (issue 25's third
// failure: it was listed available) or a scan; the answer follows the
// library when it comes back, cache or not.
func TestMissingSystemLibrary(t *testing.T) {
	sys := t.TempDir()
	plugin, lib := cbuild.DotPlugin(t, t.TempDir(), sys, sys, "libgone.so.3")
	saved, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cached := func(o *dynop.Options) { o.CacheDir = cache }
	wantMissing := func(t *testing.T, h *dynop.Host) {
		t.Helper()
		ps := h.Plugins()
		if len(ps) != 1 || ps[0].State != dynop.StateUnsupported {
			t.Fatalf("plugins %+v, want one unsupported", ps)
		}
		testutil.WantErr(t, ps[0].Err, discover.ErrMissingLibrary, "libgone.so.3 (Debian package libgone3)", "cannot be found", plugin)
		if !errors.Is(ps[0].Err, dynop.ErrUnsupported) {
			t.Errorf("%v does not wrap dynop.ErrUnsupported", ps[0].Err)
		}
	}
	for _, manifest := range []bool{false, true} {
		if manifest {
			writeManifest(t, plugin)
		}
		os.Remove(lib)
		var log testutil.LogBuffer
		wantMissing(t, openLogged(t, &log, []string{plugin}, cached))
		wantMissing(t, openLogged(t, &log, []string{plugin}, cached)) // from the cache
		if err := os.WriteFile(lib, saved, 0o755); err != nil {
			t.Fatal(err)
		}
		h := openLogged(t, &log, []string{plugin}, cached)
		if st, err := h.Plugin("test.plugin.dot"); err != nil || st.State != dynop.StateAvailable {
			t.Fatalf("manifest %v: with the library back: %v (%v), %v", manifest, st.State, st.Err, err)
		}
		_, ref, err := h.Acquire(ctx, "test.plugin.dot", dotUID, iface.V(1, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		ref.Release()
	}
}

// TestStaleManifestStillLoads: a plugin rebuilt after its manifest was
// written loads, with a warning (issue 25's fourth failure: it was
// broken, and through the Go API not found).
func TestStaleManifestStillLoads(t *testing.T) {
	plugin, _ := bundledPlugin(t, false)
	writeManifest(t, plugin)
	f, err := os.OpenFile(plugin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0}) // rebuilt: other bytes
	f.Close()
	var log testutil.LogBuffer
	h := openLogged(t, &log, []string{plugin})
	if !strings.Contains(log.String(), "plugin manifest is stale") {
		t.Errorf("no warning:\n%s", log.String())
	}
	_, ref, err := h.Acquire(ctx, "test.plugin.dot", dotUID, iface.V(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ref.Release()
	_, err = h.Plugin("test.plugin.nothere")
	testutil.WantErr(t, err, dynop.ErrNotFound, `"test.plugin.nothere"`)
}

// deepBindEnv names the plugin for the child process of
// TestDeepBindUnsafeWithAnotherAllocator.
const deepBindEnv = "DYNOP_TEST_DEEP_BIND_PLUGIN"

// TestDeepBindUnsafeWithAnotherAllocator: in a process whose malloc is
// not libc's (an allocator preloaded), deep binding is unsafe — the
// plugin would allocate with libc's — so by default the plugin is loaded
// without it, and Plugin.DeepBind says why; a plugin can still ask.
func TestDeepBindUnsafeWithAnotherAllocator(t *testing.T) {
	plugin, _ := bundledPlugin(t, false)
	if deep, why := loadDeepBind(t, plugin); !deep || why != "" {
		t.Errorf("in this process: deep bind %v (%s), want on", deep, why)
	}
	if os.Getenv(deepBindEnv) != "" {
		return // the child's verdict is checked below
	}
	malloc, err := cbuild.Build(cbuild.Compiler(t, false), t.TempDir(), "libmymalloc.so", "loader/native/testdata/bundled/mymalloc.c", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeepBindUnsafeWithAnotherAllocator$", "-test.v")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+malloc, deepBindEnv+"="+plugin)
	out, _ := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if !strings.Contains(string(out), "deep bind false") || !strings.Contains(string(out), "replaces libc's malloc") || !strings.Contains(string(out), malloc) {
		t.Errorf("with another allocator preloaded, the child says:\n%s", out)
	}
}

// loadDeepBind loads the plugin at path and returns what Plugin.DeepBind
// says; in the child process it logs it for the parent to read.
func loadDeepBind(t *testing.T, path string) (bool, string) {
	p, err := native.Load(ctx, path, native.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deep, why := p.DeepBind()
	if os.Getenv(deepBindEnv) != "" {
		t.Logf("deep bind %v: %s", deep, why)
		if p2, err := native.Load(ctx, path, native.Options{DeepBind: native.DeepBindAlways}); err != nil {
			t.Error(err)
		} else if deep, _ := p2.DeepBind(); !deep {
			t.Error("DeepBindAlways did not deep-bind")
		}
		return true, ""
	}
	return deep, why
}

// TestBundledDependencyThatStaysLoaded: a bundled library that the
// dynamic linker keeps when the plugin unloads (-z nodelete) is used
// again by the next start, not refused as another library of its soname.
func TestBundledDependencyThatStaysLoaded(t *testing.T) {
	cc := cbuild.Compiler(t, false)
	dir := t.TempDir()
	if _, err := cbuild.Build(cc, dir, "libstays.so.1", "loader/native/testdata/bundled/mydot.c",
		[]string{"-Wl,-soname,libstays.so.1", "-Wl,-z,nodelete"}, nil); err != nil {
		t.Fatal(err)
	}
	plugin, err := cbuild.Build(cc, dir, "libdot.so", "loader/native/testdata/bundled/dotplugin.c",
		[]string{"-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"}, []string{"-L" + dir, "-l:libstays.so.1"})
	if err != nil {
		t.Fatal(err)
	}
	var log testutil.LogBuffer
	h := openLogged(t, &log, []string{plugin})
	for i := 1; i <= 3; i++ {
		log.Reset()
		_, ref, err := h.Acquire(ctx, "test.plugin.dot", dotUID, iface.V(1, 0, 0))
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if !strings.Contains(log.String(), "sdot=32") {
			t.Errorf("start %d: %s", i, log.String())
		}
		if err := ref.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrokenByABundledLibraryNotCached: a plugin that cannot be read
// because of a library beside it (here one with the wrong soname) is
// broken, and works once the library is fixed: the verdict is not
// cached, since it is not the plugin's alone.
func TestBrokenByABundledLibraryNotCached(t *testing.T) {
	dir := t.TempDir()
	plugin, lib := cbuild.DotPlugin(t, dir, "$ORIGIN", dir, "libmydot.so.0")
	good, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := cbuild.Build(cbuild.Compiler(t, false), t.TempDir(), "libmydot.so.0", "loader/native/testdata/bundled/mydot.c",
		[]string{"-Wl,-soname,libother.so.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(wrong)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(lib)
	if err := os.WriteFile(lib, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cached := func(o *dynop.Options) { o.CacheDir = cache }
	var log testutil.LogBuffer
	for range 2 {
		ps := openLogged(t, &log, []string{plugin}, cached).Plugins()
		if len(ps) != 1 || ps[0].State != dynop.StateBroken || !strings.Contains(ps[0].Err.Error(), "-Wl,-soname") {
			t.Fatalf("with the wrong soname: %+v", ps)
		}
	}
	os.Remove(lib)
	if err := os.WriteFile(lib, good, 0o755); err != nil {
		t.Fatal(err)
	}
	if st, err := openLogged(t, &log, []string{plugin}, cached).Plugin("test.plugin.dot"); err != nil || st.State != dynop.StateAvailable {
		t.Errorf("with the library fixed: %v (%v), %v", st.State, st.Err, err)
	}
}
