package native_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// hiddenEntryLib builds the fixture with its entry point exported only
// under a hidden symbol version (dynop_plugin_get_function@VERS_1) and
// -z nodelete: debug/elf, and so checkFile, sees an exported function
// dynop_plugin_get_function, but dlsym does not find it, and the library
// stays loaded after dlclose.
func hiddenEntryLib(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "hidden.c")
	vs := filepath.Join(t.TempDir(), "vs.map")
	os.WriteFile(src, []byte(`#define NO_ENTRY
#define FIXTURE_ID "dynop.plugin.hidden"
#define MARKER dynop_fixture_marker_hidden
#include "`+cbuild.Path("loader/native/testdata/fixture.c")+`"
__attribute__((visibility("default"))) dynop_function dynop_entry_impl(const char *name);
__attribute__((visibility("default"))) dynop_function dynop_entry_impl(const char *name) { return other_name(name); }
__asm__(".symver dynop_entry_impl, dynop_plugin_get_function@VERS_1");
`), 0o644)
	os.WriteFile(vs, []byte("VERS_1 { };\n"), 0o644)
	out := filepath.Join(dir, "liba-hidden.so")
	cmd := exec.Command(cbuild.Compiler(t, false), "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wno-unused-function",
		"-Wno-unused-const-variable", "-I", cbuild.Path("abi/include"), "-Wl,--version-script="+vs, "-Wl,-z,nodelete", "-o", out, src)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	return out
}

// TestKeptMemfdClosedTwice: when dlsym of the entry point fails on a
// library that stays loaded, dlopen's error path calls lib.close, whose
// closeMemfd puts the memfd in kept (not closed, since the library is
// still loaded under /proc/self/fd/N), and then openChecked closes that
// memfd anyway (lib == nil). The descriptor number is free again, the
// next plugin's memfd gets it, and dlopen("/proc/self/fd/N") hands back
// the old library: a good plugin, verified and unchanged, fails to start.
func TestKeptMemfdClosedTwice(t *testing.T) {
	dir := t.TempDir()
	bad := hiddenEntryLib(t, dir)
	d, size, err := sign.HashFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	info := schema.Plugin{ID: "dynop.plugin.hidden", APIVersion: schema.APIVersion, Version: fixtureDesc.Version, Interfaces: []iface.Desc{fixtureDesc}}
	if _, err := discover.WriteManifest(bad, &discover.Manifest{Schema: discover.ManifestSchema, Format: "native", Size: size, SHA256: d, Info: info}); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "libb-good.so")
	if err := os.Rename(fixture(t, "libb-good.so", `-DFIXTURE_ID="dynop.plugin.good"`, "-DFIXTURE_IFACE_UID=0xF2",
		`-DFIXTURE_IFACE_NAME="dynop.test.Fixture2"`, "-DMARKER=dynop_fixture_marker_good"), good); err != nil {
		t.Fatal(err)
	}
	h := openHost(t, []string{bad, good})
	if st, err := h.Plugin("dynop.plugin.hidden"); err != nil || st.State != dynop.StateAvailable {
		t.Fatalf("setup: the hidden-entry library is not available: %+v %v", st, err)
	}
	if _, _, err := h.Acquire(ctx, "dynop.plugin.hidden", fixtureDesc.UID, fixtureDesc.Version); err == nil {
		t.Fatal("setup: the library whose entry point dlsym cannot find started")
	} else {
		t.Logf("the hidden-entry library: %v", err)
	}
	st, err := h.Plugin("dynop.plugin.good")
	if err != nil || st.State != dynop.StateAvailable {
		t.Fatalf("good plugin: %v %v", st, err)
	}
	desc := st.Info.Interfaces[0]
	_, ref, err := h.Acquire(ctx, "dynop.plugin.good", desc.UID, desc.Version)
	if err != nil {
		t.Fatalf("a good plugin does not start after the failed one: %v", err)
	}
	ref.Release()
}
