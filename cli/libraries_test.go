package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestMissingLibraryListedUnsupported: a plugin whose shared library is
// missing is unsupported in dynop list, list --json and doctor, which
// name the soname and a Debian package (issue 25: it was listed
// available, and doctor said all was well).
func TestMissingLibraryListedUnsupported(t *testing.T) {
	healthyEnv(t)
	dir, sys := t.TempDir(), t.TempDir()
	plugin, lib := cbuild.DotPlugin(t, dir, sys, sys, "libgone.so.3")
	if code, _, errOut := runCLI(t, "manifest", plugin); code != 0 {
		t.Fatalf("manifest: exit %d: %s", code, errOut)
	}
	if err := os.Remove(lib); err != nil {
		t.Fatal(err)
	}
	const soname = "libgone.so.3 (Debian package libgone3)"

	code, out, errOut := runCLI(t, "list", plugin)
	if !strings.Contains(out, "test.plugin.dot") || !strings.Contains(out, "unsupported") || !strings.Contains(out+errOut, soname) {
		t.Errorf("list: exit %d:\n%s%s", code, out, errOut)
	}
	_, out, _ = runCLI(t, "list", "--json", plugin)
	var got struct {
		Plugins []struct{ ID, State, Error string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	found := false
	for _, p := range got.Plugins {
		if p.ID == "test.plugin.dot" {
			found = true
			if p.State != "unsupported" || !strings.Contains(p.Error, soname) {
				t.Errorf("list --json: %+v", p)
			}
		}
	}
	if !found {
		t.Errorf("list --json does not list test.plugin.dot: %+v", got.Plugins)
	}

	t.Setenv("DYNOP_PLUGIN_PATH", dir)
	_, checks, _ := doctorJSON(t)
	c := findCheck(t, checks, "search path", dir)
	if c.Status != statusWarn || !strings.Contains(c.Summary, "1 unsupported") || len(c.Details) != 1 ||
		!strings.Contains(c.Details[0], soname) || !strings.Contains(c.Fix, "install the shared libraries") {
		t.Errorf("doctor: %+v", c)
	}
}

// TestManifestListsBundledLibraries: dynop manifest says which libraries
// beside the plugin it found and lists.
func TestManifestListsBundledLibraries(t *testing.T) {
	dir := t.TempDir()
	plugin, _ := cbuild.DotPlugin(t, dir, "$ORIGIN", dir, "libmydot.so.0")
	code, out, errOut := runCLI(t, "manifest", plugin)
	if code != 0 || !strings.Contains(out, "bundles libmydot.so.0 (sha256 ") {
		t.Errorf("manifest: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestListShowsBundledLibraries: list, list --json and inspect name the
// libraries a plugin ships.
func TestListShowsBundledLibraries(t *testing.T) {
	dir := t.TempDir()
	plugin, lib := cbuild.DotPlugin(t, dir, "$ORIGIN", dir, "libmydot.so.0")
	if code, _, errOut := runCLI(t, "manifest", plugin); code != 0 {
		t.Fatalf("manifest: exit %d: %s", code, errOut)
	}
	if _, out, _ := runCLI(t, "list", plugin); !strings.Contains(out, "bundles  "+lib) {
		t.Errorf("list does not name the bundled library:\n%s", out)
	}
	if _, out, _ := runCLI(t, "inspect", "test.plugin.dot", plugin); !strings.Contains(out, lib) || !strings.Contains(out, "bundles") {
		t.Errorf("inspect does not name the bundled library:\n%s", out)
	}
	_, out, _ := runCLI(t, "list", "--json", plugin)
	var got struct {
		Plugins []struct {
			ID      string
			Bundled []string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, p := range got.Plugins {
		if p.ID == "test.plugin.dot" && (len(p.Bundled) != 1 || p.Bundled[0] != lib) {
			t.Errorf("list --json: bundled %v, want [%s]", p.Bundled, lib)
		}
	}
}

// TestSignRefusesAStaleBundledLibrary: dynop sign refuses a manifest
// whose bundled library changed since it was written, instead of signing
// a plugin that every host would then find stale.
func TestSignRefusesAStaleBundledLibrary(t *testing.T) {
	dir := t.TempDir()
	plugin, lib := cbuild.DotPlugin(t, dir, "$ORIGIN", dir, "libmydot.so.0")
	if code, _, errOut := runCLI(t, "manifest", plugin); code != 0 {
		t.Fatalf("manifest: exit %d: %s", code, errOut)
	}
	keys := t.TempDir()
	if code, _, errOut := runCLI(t, "keygen", "--out", filepath.Join(keys, "k")); code != 0 {
		t.Fatalf("keygen: exit %d: %s", code, errOut)
	}
	f, err := os.OpenFile(lib, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	code, _, errOut := runCLI(t, "sign", "--key", filepath.Join(keys, "k.key"), plugin)
	if code == 0 || !strings.Contains(errOut, "does not match bundled file libmydot.so.0") {
		t.Errorf("sign after the library changed: exit %d: %s", code, errOut)
	}
}
