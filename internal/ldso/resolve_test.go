package ldso

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
)

const libSource = "int f(void) { return 1; }\n"

func TestReadObjectFixtures(t *testing.T) {
	dir := t.TempDir()
	cLibrary(t, dir, "libone.so.1", libSource, "-Wl,-soname,libone.so.1")
	cLibrary(t, dir, "libtwo.so.2", libSource, "-Wl,-soname,libtwo.so.2")
	one, two := filepath.Join(dir, "libone.so.1"), filepath.Join(dir, "libtwo.so.2")
	for _, c := range []struct {
		name  string
		flags []string
		want  Object
	}{
		{"runpath", []string{"-Wl,-soname,libp.so", "-Wl,-rpath,$ORIGIN/lib:${ORIGIN}/../x:/opt/$LIB/$PLATFORM", "-Wl,--enable-new-dtags", two, one},
			Object{Soname: "libp.so", Needed: []string{"libtwo.so.2", "libone.so.1"}, RunPath: []string{"$ORIGIN/lib", "${ORIGIN}/../x", "/opt/$LIB/$PLATFORM"}}},
		{"rpath", []string{"-Wl,-rpath,$ORIGIN/lib", "-Wl,--disable-new-dtags", one, two},
			Object{Needed: []string{"libone.so.1", "libtwo.so.2"}, RPath: []string{"$ORIGIN/lib"}}},
		{"nodefaultlib", []string{"-Wl,-z,nodefaultlib", "-nostdlib"}, Object{NoDefaultLib: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := cLibrary(t, dir, "libp-"+c.name+".so", libSource, c.flags...)
			got, err := ReadObject(path)
			if err != nil {
				t.Fatal(err)
			}
			// gcc adds libc.so.6 (and nothing else in this C) to Needed.
			got.Needed = slicesDelete(got.Needed, "libc.so.6")
			want := c.want
			want.Path, want.Class, want.Machine, want.Data = path, hostObject(t, path, nil, nil).Class, hostObject(t, path, nil, nil).Machine, elf.ELFDATA2LSB
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

// slicesDelete returns s without the elements equal to v.
func slicesDelete(s []string, v string) []string {
	var out []string
	for _, e := range s {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}

func TestReadObjectSystemLibrary(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the library's path is amd64 Debian's")
	}
	const path = "/usr/lib/x86_64-linux-gnu/libpng16.so.16"
	obj, err := ReadObject(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if obj.Soname != "libpng16.so.16" || obj.Class != elf.ELFCLASS64 || obj.Machine != elf.EM_X86_64 || !contains(obj.Needed, "libz.so.1") || !contains(obj.Needed, "libc.so.6") {
		t.Errorf("%s: %+v", path, obj)
	}
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

func TestReadObjectErrors(t *testing.T) {
	dir := t.TempDir()
	text := writeFile(t, filepath.Join(dir, "libc.so"), "/* GNU ld script */\nGROUP ( libc.so.6 )\n")
	src := writeFile(t, filepath.Join(dir, "start.c"), "void _start(void) { for (;;); }\n")
	cc := cbuild.Compiler(t, false)
	static, object := filepath.Join(dir, "static"), filepath.Join(dir, "start.o")
	for _, args := range [][]string{{"-nostdlib", "-static", "-o", static, src}, {"-c", "-o", object, src}} {
		if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", cc, args, err, msg)
		}
	}
	for _, c := range []struct {
		name, path string
		target     error
		want       []string
	}{
		{"missing", filepath.Join(dir, "nothing.so"), os.ErrNotExist, []string{"ldso: ", "nothing.so"}},
		{"directory", dir, nil, []string{"ldso: ", "not a regular file (a directory)"}},
		{"linker script", text, ErrNotELF, []string{"ldso: " + text + ": not an ELF shared object: bad magic number"}},
		{"static executable", static, ErrNoDynamicSection, []string{"ldso: " + static + ": no dynamic section"}},
		{"object file", object, ErrNotELF, []string{"ldso: " + object + ": not an ELF shared object: ELF type ET_REL"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadObject(c.path)
			testutil.WantErr(t, err, c.target, c.want...)
		})
	}
}

// TestFindAgreesWithLdd: for each DT_NEEDED of a few system libraries,
// Find names the file that the dynamic linker loads (ldd runs it with
// LD_TRACE_LOADED_OBJECTS=1).
func TestFindAgreesWithLdd(t *testing.T) {
	ldd, err := exec.LookPath("ldd")
	if err != nil {
		t.Skip(err)
	}
	r := NewResolver()
	compared := 0
	for _, name := range []string{"libpng16.so.16", "libturbojpeg.so.0", "libwebp.so.7", "libstdc++.so.6", "libgfortran.so.5", "libopenblas.so.0", "libtiff.so.6"} {
		self := hostObject(t, "/", nil, nil)
		path, err := r.Find(name, self)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, err := ReadObject(path)
		if err != nil {
			t.Fatal(err)
		}
		loaded := lddLoads(t, ldd, path)
		for _, needed := range obj.Needed {
			want, ok := loaded[needed]
			if !ok {
				continue // the interpreter: ldd prints no "=>"
			}
			got, err := r.Find(needed, obj)
			if err != nil {
				t.Errorf("%s needs %s: %v; ldd says %s", path, needed, err, want)
				continue
			}
			if realPath(t, got) != realPath(t, want) {
				t.Errorf("%s needs %s: Find says %s, ldd %s", path, needed, got, want)
			}
			compared++
		}
	}
	if compared == 0 {
		t.Skip("none of the libraries is installed")
	}
	t.Logf("%d DT_NEEDED names resolved as ldd resolves them", compared)
}

// lddLoads returns what ldd says the dynamic linker loads for the
// shared object at path: soname to path, or to "not found".
func lddLoads(t *testing.T, ldd, path string) map[string]string {
	t.Helper()
	out, err := exec.Command(ldd, path).Output()
	if err != nil && !bytes.Contains(out, []byte("not found")) {
		t.Fatalf("ldd %s: %v\n%s", path, err, out)
	}
	loaded := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or
		// "\tlibfoo.so.1 => not found"
		soname, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), " => ")
		if ok {
			loaded[soname], _, _ = strings.Cut(rest, " (")
		}
	}
	return loaded
}

func realPath(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// searchTree builds libx.so.1 (this machine's class) in each of the
// directories dirs under a new temporary directory, and returns that
// directory.
func searchTree(t *testing.T, dirs ...string) string {
	t.Helper()
	root := t.TempDir()
	lib := cLibrary(t, t.TempDir(), "libx.so.1", libSource, "-Wl,-soname,libx.so.1")
	for _, d := range dirs {
		copyFile(t, lib, filepath.Join(root, d, "libx.so.1"))
	}
	return root
}

func TestFindSearchOrder(t *testing.T) {
	root := searchTree(t, "rpath", "llp", "runpath", "origin/lib", "hw", "hw/glibc-hwcaps/x86-64-v2", "hw4/glibc-hwcaps/x86-64-v4", "hw4")
	p := func(d string) string { return filepath.Join(root, d) }
	plugin := p("origin/plugin.so")
	for _, c := range []struct {
		name           string
		llp            string
		runPath, rPath []string
		want           string
	}{
		{"RPATH before LD_LIBRARY_PATH", p("llp"), nil, []string{p("none"), p("rpath")}, "rpath"},
		{"LD_LIBRARY_PATH before RUNPATH", p("none") + ";" + p("llp"), []string{p("runpath")}, nil, "llp"},
		{"RUNPATH", p("none"), []string{p("none"), p("runpath")}, nil, "runpath"},
		{"RPATH ignored beside RUNPATH", "", []string{p("runpath")}, []string{p("rpath")}, "runpath"},
		{"$ORIGIN", "", []string{"$ORIGIN/lib"}, nil, "origin/lib"},
		{"${ORIGIN}", "", []string{"${ORIGIN}/lib"}, nil, "origin/lib"},
		{"$ORIGIN/.. (not cleaned)", "", []string{"$ORIGIN/../rpath"}, nil, "origin/../rpath"},
		{"$ORIGIN in RPATH", "", nil, []string{"$ORIGIN/lib"}, "origin/lib"},
		{"not a token", "", []string{"$ORIGINAL", "$ORIGIN/lib"}, nil, "origin/lib"},
		{"glibc-hwcaps first", "", []string{p("hw")}, nil, "hw/glibc-hwcaps/x86-64-v2"},
		{"unsupported glibc-hwcaps level", "", []string{p("hw4")}, nil, "hw4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("LD_LIBRARY_PATH", c.llp)
			r := NewResolver()
			r.hwcaps = []string{"x86-64-v3", "x86-64-v2"}
			got, err := r.Find("libx.so.1", hostObject(t, plugin, c.runPath, c.rPath))
			if err != nil {
				t.Fatal(err)
			}
			if want := root + "/" + c.want + "/libx.so.1"; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// ld.so searches the DT_RPATH of the objects that loaded the one asking
// (find's chain), unless the one asking has a DT_RUNPATH; an object's
// DT_RPATH beside its own DT_RUNPATH does not count.
func TestFindLoaderRPath(t *testing.T) {
	root := searchTree(t, "a")
	a := filepath.Join(root, "a")
	for _, c := range []struct {
		name           string
		asking, loader *Object
		found          bool
	}{
		{"loader's RPATH", hostObject(t, "/lib.so", nil, nil), hostObject(t, "/p.so", nil, []string{a}), true},
		{"asking has RUNPATH", hostObject(t, "/lib.so", []string{"/none"}, nil), hostObject(t, "/p.so", nil, []string{a}), false},
		{"loader has RUNPATH", hostObject(t, "/lib.so", nil, nil), hostObject(t, "/p.so", []string{"/none"}, []string{a}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("LD_LIBRARY_PATH", "")
			got, err := NewResolver().find("libx.so.1", []*Object{c.asking, c.loader})
			if !c.found {
				testutil.WantErr(t, err, ErrNotFound, "libx.so.1 (needed by /lib.so)")
				return
			}
			if want := filepath.Join(a, "libx.so.1"); err != nil || got != want {
				t.Errorf("got %q, %v; want %s", got, err, want)
			}
		})
	}
}

func TestFindLibraryPathEntries(t *testing.T) {
	root := searchTree(t, "cwd")
	t.Chdir(filepath.Join(root, "cwd"))
	// An empty entry is the working directory, for ld.so too.
	t.Setenv("LD_LIBRARY_PATH", "/nonexistent:")
	got, err := NewResolver().Find("libx.so.1", hostObject(t, "/p.so", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "cwd", "libx.so.1"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// A name with a slash is a path.
	got, err = NewResolver().Find("./libx.so.1", hostObject(t, "/p.so", nil, nil))
	if err != nil || got != filepath.Join(root, "cwd", "libx.so.1") {
		t.Errorf("./libx.so.1: %q, %v", got, err)
	}
	_, err = NewResolver().Find("./liby.so.1", hostObject(t, "/p.so", nil, nil))
	testutil.WantErr(t, err, ErrNotFound, "ldso: ./liby.so.1: shared library not found")
}

func TestFindSkipsOtherClass(t *testing.T) {
	root := searchTree(t, "b")
	cLibrary32(t, filepath.Join(root, "a"), "libx.so.1")
	from := hostObject(t, filepath.Join(root, "p.so"), []string{filepath.Join(root, "a"), filepath.Join(root, "b")}, nil)
	got, err := NewResolver().Find("libx.so.1", from)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "b", "libx.so.1"); got != want {
		t.Errorf("got %s, want %s (past the 32-bit one)", got, want)
	}
	from.RunPath = from.RunPath[:1]
	_, err = NewResolver().Find("libx.so.1", from)
	testutil.WantErr(t, err, ErrNotFound, "ldso: libx.so.1 (needed by "+from.Path+"): shared library not found")
}

func TestFindBadCandidates(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "libtext.so.1"), "INPUT ( libc.so.6 )\n")
	writeFile(t, filepath.Join(root, "libshort.so.1"), "\x7fELF")
	// A big-endian 64-bit ELF header.
	writeFile(t, filepath.Join(root, "libbig.so.1"), "\x7fELF\x02\x02\x01"+strings.Repeat("\x00", 64))
	from := hostObject(t, filepath.Join(root, "p.so"), []string{root}, nil)
	for _, c := range []struct{ name, want string }{
		{"libtext.so.1", "ldso: " + root + "/libtext.so.1: not an ELF shared object: invalid ELF header"},
		{"libshort.so.1", "ldso: " + root + "/libshort.so.1: not an ELF shared object: invalid ELF header"},
		{"libbig.so.1", "ldso: " + root + "/libbig.so.1: not an ELF shared object: byte order ELFDATA2MSB, want ELFDATA2LSB"},
	} {
		_, err := NewResolver().Find(c.name, from)
		testutil.WantErr(t, err, ErrNotELF, c.want)
	}
	_, err := NewResolver().Find("", from)
	testutil.WantErr(t, err, ErrNotFound, "ldso: empty library name")
}

func TestFindCacheAndDefaults(t *testing.T) {
	root := searchTree(t, "v3", "v3-again", "v2", "plain", "i386")
	lib := func(d string) string { return filepath.Join(root, d, "libx.so.1") }
	cache := filepath.Join(root, "ld.so.cache")
	writeFile(t, cache, string(newFormatCache([]cacheEntry{
		{"libx.so.1", lib("v4"), x8664, hwcapExtension | 2},
		{"libx.so.1", lib("v2"), x8664, hwcapExtension | 0},
		{"libx.so.1", lib("v3"), x8664, hwcapExtension | 1},
		{"libx.so.1", lib("v3-again"), x8664, hwcapExtension | 1}, // the first of a level wins
		{"libx.so.1", lib("i386"), CacheFlagELFLibc6, 0},
		{"libx.so.1", lib("plain"), x8664, 0},
		{"libx.so.1", lib("after"), x8664, 0},
		{"libgone.so.1", lib("gone"), x8664, 0},
		{"libc.so.6", lib("plain"), x8664, 0},
	}, []string{"x86-64-v2", "x86-64-v3", "x86-64-v4"})))
	if runtime.GOARCH != "amd64" {
		t.Skip("the test cache is x86-64's")
	}
	for _, c := range []struct {
		name   string
		hwcaps []string
		soname string
		want   string
	}{
		{"the most preferred level", []string{"x86-64-v3", "x86-64-v2"}, "libx.so.1", lib("v3")},
		{"a supported level", []string{"x86-64-v2"}, "libx.so.1", lib("v2")},
		{"no levels", nil, "libx.so.1", lib("plain")},
		{"cached file gone: default directories", nil, "libgone.so.1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("LD_LIBRARY_PATH", "")
			r := NewResolver()
			r.cachePath, r.hwcaps = cache, c.hwcaps
			got, err := r.Find(c.soname, hostObject(t, filepath.Join(root, "p.so"), nil, nil))
			if c.want == "" {
				testutil.WantErr(t, err, ErrNotFound, c.soname)
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %s", got, err, c.want)
			}
		})
	}
	t.Run("DF_1_NODEFLIB", func(t *testing.T) {
		r := NewResolver()
		r.cachePath = cache
		from := hostObject(t, filepath.Join(root, "p.so"), nil, nil)
		from.NoDefaultLib = true
		_, err := r.Find("libx.so.1", from)
		testutil.WantErr(t, err, ErrNotFound, "libx.so.1")
		_, err = r.Find("libc.so.6", from)
		testutil.WantErr(t, err, ErrNotFound, "libc.so.6")
	})
	t.Run("bad cache", func(t *testing.T) {
		bad := filepath.Join(root, "bad.cache")
		writeFile(t, bad, "junk")
		r := NewResolver()
		r.cachePath = bad
		// ld.so goes on to the default directories, which have libc.
		if _, err := r.Find("libc.so.6", hostObject(t, "/p.so", nil, nil)); err != nil {
			t.Error(err)
		}
		testutil.WantErr(t, r.CacheError(), ErrBadCache, "ldso: "+bad+`: bad ld.so.cache: bad magic "junk"`)
		r = NewResolver()
		r.cachePath = filepath.Join(root, "none")
		if err := r.CacheError(); err != nil {
			t.Errorf("a missing cache: %v", err)
		}
	})
}

func TestFindConcurrently(t *testing.T) {
	r := NewResolver()
	from := hostObject(t, "/p.so", nil, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := r.Find("libc.so.6", from); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestExpand(t *testing.T) {
	owner := &Object{Path: "/opt/p/plugin.so", Class: elf.ELFCLASS64, Machine: elf.EM_X86_64}
	arm := &Object{Path: "/p.so", Class: elf.ELFCLASS64, Machine: elf.EM_AARCH64}
	for _, c := range []struct {
		entry  string
		owner  *Object
		want   string
		origin bool
	}{
		{"$ORIGIN", owner, "/opt/p", true},
		{"${ORIGIN}/../lib", owner, "/opt/p/../lib", true},
		{"/x/$ORIGIN", owner, "/x//opt/p", false},
		{"/usr/$LIB", owner, "/usr/lib/x86_64-linux-gnu", false},
		{"/usr/${LIB}/$PLATFORM", owner, "/usr/lib/x86_64-linux-gnu/x86_64", false},
		{"/usr/$LIB/$PLATFORM", arm, "/usr/lib/aarch64-linux-gnu/aarch64", false},
		{"$ORIGINAL/$HOME/$", owner, "$ORIGINAL/$HOME/$", false},
		{"${ORIGIN", owner, "${ORIGIN", false},
	} {
		got, origin := expand(c.entry, c.owner)
		if got != c.want || origin != c.origin {
			t.Errorf("expand(%q) = %q, %v; want %q, %v", c.entry, got, origin, c.want, c.origin)
		}
	}
}

func TestX86HWCaps(t *testing.T) {
	v2 := "fpu cx16 lahf_lm popcnt pni sse4_1 sse4_2 ssse3"
	v3 := v2 + " avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"
	v4 := v3 + " avx512f avx512bw avx512cd avx512dq avx512vl"
	for _, c := range []struct {
		flags string
		want  []string
	}{
		{"fpu sse2", nil},
		{v2, []string{"x86-64-v2"}},
		{v3, []string{"x86-64-v3", "x86-64-v2"}},
		{v4, []string{"x86-64-v4", "x86-64-v3", "x86-64-v2"}},
		{strings.Replace(v4, "popcnt", "", 1), nil},
	} {
		info := "processor\t: 0\nflags\t\t: " + c.flags + "\nbugs\t\t: none\n\nprocessor\t: 1\nflags\t\t: fpu\n"
		if got := x86HWCaps([]byte(info)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("flags %q: %v, want %v", c.flags, got, c.want)
		}
	}
}
