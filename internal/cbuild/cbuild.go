// Package cbuild compiles native plugins for tests with the machine's C and
// C++ compilers ($CC and $CXX, else cc and c++), with the flags the
// Makefile's plugins target uses: warnings are errors, symbols hidden but
// the entry point.
package cbuild

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Flags common to C and C++ plugin builds. Keep them in step with
// PLUGIN_FLAGS in the Makefile.
var commonFlags = []string{"-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra", "-pedantic", "-Werror"}

// CFlags and CXXFlags are the language-specific flags: C99, and C++17
// without GNU unique symbols, which would keep a library from unloading.
var (
	CFlags   = []string{"-std=c99"}
	CXXFlags = []string{"-std=c++17", "-fno-gnu-unique"}
)

// Root returns the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Path returns the repository-relative path rel as an absolute path.
func Path(rel string) string { return filepath.Join(Root(), filepath.FromSlash(rel)) }

// Compiler returns the C or C++ compiler command, skipping the test if
// there is none.
func Compiler(t testing.TB, cxx bool) string {
	t.Helper()
	cc, err := CompilerCommand(cxx)
	if err != nil {
		t.Skip(err)
	}
	return cc
}

// CompilerCommand returns the C or C++ compiler command ($CC or $CXX, else
// cc or c++), or an error saying there is none: [Compiler] for programs.
func CompilerCommand(cxx bool) (string, error) {
	env, def := "CC", "cc"
	if cxx {
		env, def = "CXX", "c++"
	}
	cc := os.Getenv(env)
	if cc == "" {
		cc = def
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("no %s compiler (%s): %v", env, cc, err)
	}
	return cc, nil
}

// Plugin compiles the repository-relative source src (C, or C++ if it
// ends in .cpp) into a shared library named name in a temporary directory
// of t, with extra flags such as -DNAME=value, and returns its path.
func Plugin(t testing.TB, name, src string, extra ...string) string {
	t.Helper()
	return plugin(t, name, src, extra, nil)
}

// plugin is Plugin with libraries to link, given after the source.
func plugin(t testing.TB, name, src string, extra, libs []string) string {
	t.Helper()
	cc := Compiler(t, strings.HasSuffix(src, ".cpp"))
	out, err := Build(cc, t.TempDir(), name, src, extra, libs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Build compiles the repository-relative source src (C, or C++ if it ends
// in .cpp) with the compiler cc into a shared library named name in dir,
// with the plugin flags, extra flags such as -DNAME=value and the
// libraries libs to link, and returns its path; an error has the
// command and the compiler's output. It is [Plugin] for programs.
func Build(cc, dir, name, src string, extra, libs []string) (string, error) {
	cxx := strings.HasSuffix(src, ".cpp")
	out := filepath.Join(dir, name)
	args := append([]string{}, commonFlags...)
	if cxx {
		args = append(args, CXXFlags...)
	} else {
		args = append(args, CFlags...)
	}
	args = append(args, "-I", Path("abi/include"))
	args = append(args, extra...)
	args = append(args, "-o", out, Path(src))
	args = append(args, libs...)
	cmd := exec.Command(cc, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s\n%s", name, err, cmd, msg)
	}
	return out, nil
}

// VecMath builds the example C plugin dynop.plugin.vecmath.
func VecMath(t testing.TB) string {
	return Plugin(t, "libdynop_vecmath.so", "plugins/vecmath/c/vecmath.c")
}

// Stats builds the example C++ plugin dynop.plugin.stats, with extra
// flags (to choose its VecMath provider).
func Stats(t testing.TB, extra ...string) string {
	return Plugin(t, "libdynop_stats.so", "plugins/stats/cpp/stats.cpp", extra...)
}

// Imgproc builds the example C plugin dynop.plugin.imgproc, with the
// extra flags of IMGPROC_CFLAGS in the Makefile: no fused multiply-adds
// (its SIMD variants must compute the scalar reference's floats bit for
// bit) and no errno from math functions (sqrtf is an instruction, and
// the library needs no libm).
func Imgproc(t testing.TB) string {
	return Plugin(t, "libdynop_imgproc.so", ImgprocSource, ImgprocFlags...)
}

// ImgprocSource is the imgproc plugin's source, and ImgprocFlags the
// flags [Imgproc] adds for it.
const ImgprocSource = "plugins/imgproc/c/imgproc.c"

// ImgprocFlags are IMGPROC_CFLAGS of the Makefile (see [Imgproc]).
var ImgprocFlags = []string{"-ffp-contract=off", "-fno-math-errno"}

// CodecHeaders are the headers the codec plugin includes; CodecFlags
// probes for them.
var CodecHeaders = []string{"turbojpeg.h", "png.h", "webp/decode.h", "webp/encode.h"}

// CodecFlags returns the compiler and linker flags of the libraries the
// codec plugin links (libturbojpeg, libpng, libwebp), from pkg-config
// ($PKG_CONFIG) if it knows them, else -lturbojpeg -lpng -lwebp; and an
// error saying what is missing if cc cannot find their headers (the
// Makefile makes the same check before it builds the plugin).
func CodecFlags(cc string) (cflags, libs []string, err error) {
	return libraryFlags(cc, []string{"libturbojpeg", "libpng", "libwebp"}, CodecHeaders,
		[]string{"-lturbojpeg", "-lpng", "-lwebp"}, "the codec libraries'", "libturbojpeg0-dev libpng-dev libwebp-dev")
}

// libraryFlags returns the compiler and linker flags of the pkg-config
// packages pkgs ($PKG_CONFIG, else pkg-config), or libs where pkg-config
// does not know them; and an error naming the headers and the Debian
// packages to install (what, in "what headers (…) are missing") if cc
// cannot find headers with those flags.
func libraryFlags(cc string, pkgs, headers, libs []string, what, install string) (cflags, linkFlags []string, err error) {
	pc := os.Getenv("PKG_CONFIG")
	if pc == "" {
		pc = "pkg-config"
	}
	linkFlags = libs
	if out, err := exec.Command(pc, append([]string{"--cflags"}, pkgs...)...).Output(); err == nil {
		cflags = strings.Fields(string(out))
		if out, err := exec.Command(pc, append([]string{"--libs"}, pkgs...)...).Output(); err == nil {
			linkFlags = strings.Fields(string(out))
		}
	}
	var src strings.Builder
	for _, h := range headers {
		fmt.Fprintf(&src, "#include <%s>\n", h)
	}
	cmd := exec.Command(cc, append(append([]string{"-E", "-x", "c"}, cflags...), "-o", os.DevNull, "-")...)
	cmd.Stdin = strings.NewReader(src.String())
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("%s headers (%s) are missing (apt-get install %s): %v\n%s",
			what, strings.Join(headers, ", "), install, err, msg)
	}
	return cflags, linkFlags, nil
}

// Codec builds the native codec plugin dynop.plugin.codec, linked with
// libturbojpeg, libpng and libwebp; it skips the test, saying why, where
// their headers are missing.
func Codec(t testing.TB) string {
	t.Helper()
	cflags, libs, err := CodecFlags(Compiler(t, false))
	if err != nil {
		t.Skipf("codec plugin not built: %v", err)
	}
	return plugin(t, "libdynop_codec.so", CodecSource, cflags, libs)
}

// CodecSource is the codec plugin's source.
const CodecSource = "plugins/codec/c/codec.c"

// BuildCodec builds the codec plugin into dir with the compiler cc, as
// [Codec] does for tests; its error says what is missing where the
// libraries' headers are ([CodecFlags]).
func BuildCodec(cc, dir string) (string, error) {
	cflags, libs, err := CodecFlags(cc)
	if err != nil {
		return "", err
	}
	return Build(cc, dir, "libdynop_codec.so", CodecSource, cflags, libs)
}

// BLASHeaders are the headers the blas plugin includes; BLASFlags probes
// for them.
var BLASHeaders = []string{"cblas.h"}

// BLASFlags returns the compiler and linker flags of OpenBLAS, which the
// blas plugin links, from pkg-config ($PKG_CONFIG) if it knows openblas,
// else -lopenblas; and an error saying what is missing if cc cannot find
// cblas.h (the Makefile makes the same check before it builds the
// plugin).
func BLASFlags(cc string) (cflags, libs []string, err error) {
	return libraryFlags(cc, []string{"openblas"}, BLASHeaders, []string{"-lopenblas"}, "OpenBLAS's", "libopenblas-dev")
}

// BLAS builds the native plugin dynop.plugin.blas, linked with OpenBLAS;
// it skips the test, saying why, where OpenBLAS's headers are missing.
func BLAS(t testing.TB) string {
	t.Helper()
	cflags, libs, err := BLASFlags(Compiler(t, false))
	if err != nil {
		t.Skipf("blas plugin not built: %v", err)
	}
	return plugin(t, "libdynop_blas.so", BLASSource, cflags, libs)
}

// BLASSource is the blas plugin's source.
const BLASSource = "plugins/blas/c/blas.c"

// BuildBLAS builds the blas plugin into dir with the compiler cc, as
// [BLAS] does for tests; its error says what is missing where OpenBLAS's
// headers are ([BLASFlags]).
func BuildBLAS(cc, dir string) (string, error) {
	cflags, libs, err := BLASFlags(cc)
	if err != nil {
		return "", err
	}
	return Build(cc, dir, "libdynop_blas.so", BLASSource, cflags, libs)
}

// DotPlugin builds the test plugin loader/native/testdata/bundled/dotplugin.c
// as dir/libdot.so, linked against libmydot.so.0 (testdata's mydot.c,
// built with the soname soname into libDir) with the RUNPATH runpath, such
// as "$ORIGIN" for a library shipped beside the plugin. It returns the
// plugin's and the library's paths.
func DotPlugin(t testing.TB, dir, runpath, libDir, soname string) (plugin, lib string) {
	t.Helper()
	cc := Compiler(t, false)
	lib, err := Build(cc, libDir, soname, "loader/native/testdata/bundled/mydot.c", []string{"-Wl,-soname," + soname}, nil)
	if err == nil {
		plugin, err = Build(cc, dir, "libdot.so", "loader/native/testdata/bundled/dotplugin.c",
			[]string{"-Wl,--enable-new-dtags", "-Wl,-rpath," + runpath}, []string{"-L" + libDir, "-l:" + soname})
	}
	if err != nil {
		t.Fatal(err)
	}
	return plugin, lib
}

// Mapped reports whether the file at path is mapped into this process,
// from /proc/self/maps; it skips the test where there is no such file.
func Mapped(t testing.TB, path string) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	return bytes.Contains(maps, []byte(path))
}
