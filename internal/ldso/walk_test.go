package ldso

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dynop/dynop/internal/testutil"
)

// A plugin whose RUNPATH is $ORIGIN/lib needs liba.so.1 and libb.so.1
// (bundled there; liba needs libb), libm.so.6 from the system and
// libmissing.so.7, which is nowhere.
func TestWalk(t *testing.T) {
	stubs, dir := t.TempDir(), t.TempDir()
	libDir := filepath.Join(dir, "lib")
	cLibrary(t, stubs, "libmissing.so.7", libSource, "-Wl,-soname,libmissing.so.7")
	libb := cLibrary(t, libDir, "libb.so.1", libSource, "-Wl,-soname,libb.so.1")
	liba := cLibrary(t, libDir, "liba.so.1", libSource, "-Wl,-soname,liba.so.1", libb, "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags")
	plugin := cLibrary(t, dir, "plugin.so", libSource, liba, libb, "-lm", filepath.Join(stubs, "libmissing.so.7"),
		"-Wl,-rpath,$ORIGIN/lib", "-Wl,--enable-new-dtags")

	t.Setenv("LD_LIBRARY_PATH", "")
	deps, err := Walk(plugin, NewResolver())
	if err != nil {
		t.Fatal(err)
	}
	want := &Dependencies{
		Bundled: []string{"lib/libb.so.1", "lib/liba.so.1"},
		System:  []string{"libc.so.6", "libm.so.6", "libmissing.so.7"},
		Missing: []string{"libmissing.so.7"},
	}
	if !reflect.DeepEqual(deps, want) {
		t.Errorf("got  %+v\nwant %+v", deps, want)
	}
	agreesWithLdd(t, plugin, deps)
	if got := WithHints(deps.Missing); got != "libmissing.so.7 (Debian package libmissing7)" {
		t.Errorf("WithHints(%v) = %q", deps.Missing, got)
	}
	if got := WithHints([]string{"libc.so.6", "x"}); got != "libc.so.6 (Debian package libc6), x" {
		t.Errorf("WithHints = %q", got)
	}

	// With the stub's directory on LD_LIBRARY_PATH, nothing is missing.
	t.Setenv("LD_LIBRARY_PATH", stubs)
	deps, err = Walk(plugin, NewResolver())
	if err != nil {
		t.Fatal(err)
	}
	if len(deps.Missing) != 0 || !reflect.DeepEqual(deps.Bundled, want.Bundled) {
		t.Errorf("with LD_LIBRARY_PATH=%s: %+v", stubs, deps)
	}
}

// A plugin in plugins/ with DT_RPATH $ORIGIN/../lib: its libraries are
// in ../lib, and libouter's own need of libinner (libouter has no path
// of its own) is found through the plugin's DT_RPATH, as ld.so finds it.
// libinner and libouter need each other: the walk breaks the cycle where
// it meets it.
func TestWalkParentLibDirAndCycle(t *testing.T) {
	root, stubs := t.TempDir(), t.TempDir()
	libDir := filepath.Join(root, "lib")
	stubOuter := cLibrary(t, stubs, "libouter.so.1", libSource, "-Wl,-soname,libouter.so.1")
	inner := cLibrary(t, libDir, "libinner.so.2", libSource, "-Wl,-soname,libinner.so.2", stubOuter)
	outer := cLibrary(t, libDir, "libouter.so.1", libSource, "-Wl,-soname,libouter.so.1", inner)
	plugin := cLibrary(t, filepath.Join(root, "plugins"), "plugin.so", libSource, outer,
		"-Wl,-rpath,$ORIGIN/../lib", "-Wl,--disable-new-dtags")

	t.Setenv("LD_LIBRARY_PATH", "")
	deps, err := Walk(plugin, NewResolver())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"../lib/libinner.so.2", "../lib/libouter.so.1"}; !reflect.DeepEqual(deps.Bundled, want) {
		t.Errorf("bundled %q, want %q", deps.Bundled, want)
	}
	if want := []string{"libc.so.6"}; !reflect.DeepEqual(deps.System, want) || len(deps.Missing) != 0 {
		t.Errorf("system %q, missing %q; want %q and none", deps.System, deps.Missing, want)
	}
	agreesWithLdd(t, plugin, deps)
}

// agreesWithLdd checks Walk's answer for plugin against the dynamic
// linker's (ldd's): it loads the bundled libraries from where Walk found
// them, and cannot find the missing ones.
func agreesWithLdd(t *testing.T, plugin string, deps *Dependencies) {
	t.Helper()
	ldd, err := exec.LookPath("ldd")
	if err != nil {
		t.Log(err)
		return
	}
	loaded := lddLoads(t, ldd, plugin)
	for _, rel := range deps.Bundled {
		want := filepath.Join(filepath.Dir(plugin), rel)
		if got := loaded[filepath.Base(rel)]; got == "" || realPath(t, got) != realPath(t, want) {
			t.Errorf("ldd loads %s from %q, Walk found it at %s", filepath.Base(rel), got, want)
		}
	}
	for _, soname := range deps.Missing {
		if got := loaded[soname]; got != "not found" {
			t.Errorf("ldd loads missing %s from %q", soname, got)
		}
	}
	if len(loaded) == 0 {
		t.Errorf("ldd %s loads nothing", plugin)
	}
}

func TestWalkSonameMismatch(t *testing.T) {
	for _, c := range []struct {
		name, soname, says string
	}{
		{"other soname", "-Wl,-soname,libfoo.so", `it has DT_SONAME "libfoo.so"`},
		{"no soname", "", "it has no DT_SONAME"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			libDir := filepath.Join(dir, "lib")
			foo := cLibrary(t, libDir, "libfoo.so.1", libSource, "-Wl,-soname,libfoo.so.1")
			plugin := cLibrary(t, dir, "plugin.so", libSource, foo, "-Wl,-rpath,$ORIGIN/lib")
			var flags []string
			if c.soname != "" {
				flags = append(flags, c.soname)
			}
			cLibrary(t, libDir, "libfoo.so.1", libSource, flags...) // rebuilt in its place
			_, err := Walk(plugin, NewResolver())
			testutil.WantErr(t, err, ErrSonameMismatch, "ldso: "+foo+": bundled library's DT_SONAME differs from the DT_NEEDED name: ",
				c.says, `but `+plugin+` needs it as "libfoo.so.1"`, "anonymous memory files", "link the library with -Wl,-soname,libfoo.so.1")
		})
	}
}

// A bundled library of another class is skipped as ld.so skips it: the
// name is then missing (or found in the system).
func TestWalkSkipsOtherClass(t *testing.T) {
	dir, stubs := t.TempDir(), t.TempDir()
	stub := cLibrary(t, stubs, "libx32.so.1", libSource, "-Wl,-soname,libx32.so.1")
	plugin := cLibrary(t, dir, "plugin.so", libSource, stub, "-Wl,-rpath,$ORIGIN/lib")
	cLibrary32(t, filepath.Join(dir, "lib"), "libx32.so.1")
	t.Setenv("LD_LIBRARY_PATH", "")
	deps, err := Walk(plugin, NewResolver())
	if err != nil {
		t.Fatal(err)
	}
	if len(deps.Bundled) != 0 || !reflect.DeepEqual(deps.Missing, []string{"libx32.so.1"}) {
		t.Errorf("got %+v, want libx32.so.1 missing and nothing bundled", deps)
	}
	agreesWithLdd(t, plugin, deps)
}

func TestWalkErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Walk(filepath.Join(dir, "none.so"), NewResolver())
	testutil.WantErr(t, err, os.ErrNotExist, "none.so")
	// A bundled file that is not ELF stops ld.so, and Walk.
	stub := cLibrary(t, t.TempDir(), "libbad.so.1", libSource, "-Wl,-soname,libbad.so.1")
	plugin := cLibrary(t, dir, "plugin.so", libSource, stub, "-Wl,-rpath,$ORIGIN")
	writeFile(t, filepath.Join(dir, "libbad.so.1"), "not ELF")
	_, err = Walk(plugin, NewResolver())
	testutil.WantErr(t, err, ErrNotELF, "ldso: "+dir+"/libbad.so.1: not an ELF shared object: invalid ELF header")
}

func TestPackageHint(t *testing.T) {
	for soname, want := range map[string]string{
		"libc.so.6":              "libc6",
		"libm.so.6":              "libc6",
		"libstdc++.so.6":         "libstdc++6",
		"libgcc_s.so.1":          "libgcc-s1",
		"libjpeg.so.62":          "libjpeg62-turbo",
		"libturbojpeg.so.0":      "libturbojpeg0",
		"libpng16.so.16":         "libpng16-16",
		"libz.so.1":              "zlib1g",
		"libopenblas.so.0":       "libopenblas0",
		"libblas.so.3":           "libblas3",
		"libgfortran.so.5":       "libgfortran5",
		"libgomp.so.1":           "libgomp1",
		"libfftw3.so.3":          "libfftw3-double3",
		"libfftw3f.so.3":         "libfftw3-single3",
		"libwebp.so.7":           "libwebp7",
		"libtiff.so.6":           "libtiff6",
		"libfoo2.so.4":           "libfoo2-4",
		"libgdk_pixbuf-2.0.so.0": "libgdk-pixbuf-2.0-0",
		"libFLAC.so.12":          "libflac12",
		"libfoo.so":              "",
		"libfoo.so.":             "",
		".so.1":                  "",
		"foo/libbar.so.1":        "",
		"lib@x.so.1":             "",
	} {
		if got := PackageHint(soname); got != want {
			t.Errorf("PackageHint(%q) = %q, want %q", soname, got, want)
		}
	}
}
