package capi_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/internal/cbuild"
)

// The library and the scanner are built once per test binary, into one
// directory, as `make libdynop` lays them out in bin/. Under
// GOEXPERIMENT=cgocheck2 the library is built with it too (go build
// inherits the environment), so its pointer checks run in the C tests.
var (
	libOnce sync.Once
	libDir  string
	libErr  error
)

// TestMain removes the library's directory after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if libDir != "" {
		os.RemoveAll(libDir)
	}
	os.Exit(code)
}

// library builds libdynop.so, libdynop.a and dynop-scanner beside them and returns their
// directory.
func library(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("building libdynop.so takes about 40 s; not with -short")
	}
	cbuild.Compiler(t, false)
	gocmd := cbuild.GoCommand(t)
	libOnce.Do(func() {
		libDir, libErr = os.MkdirTemp("", "libdynop-test-")
		if libErr != nil {
			return
		}
		start := time.Now()
		for _, args := range [][]string{
			{"build", "-buildmode=c-shared", "-ldflags=-extldflags=-Wl,--version-script=" + cbuild.Path("capi/libdynop.map"), "-o", filepath.Join(libDir, "libdynop.so"), "./capi"},
			{"build", "-buildmode=c-archive", "-o", filepath.Join(libDir, "libdynop.a"), "./capi"},
			{"build", "-o", filepath.Join(libDir, "dynop-scanner"), "./cmd/dynop-scanner"},
		} {
			cmd := exec.Command(gocmd, args...)
			cmd.Dir = cbuild.Root()
			if out, err := cmd.CombinedOutput(); err != nil {
				libErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
		// libdynop.a leaves Wasmtime's static library to the program's
		// link, as make libdynop does: copy it beside.
		cmd := exec.Command(gocmd, "list", "-m", "-f", "{{.Dir}}", "github.com/bytecodealliance/wasmtime-go/v37")
		cmd.Dir = cbuild.Root()
		out, err := cmd.Output()
		if err != nil {
			libErr = fmt.Errorf("%s: %v", cmd, err)
			return
		}
		arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
		wt, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "build", "linux-"+arch, "libwasmtime.a"))
		if err == nil {
			err = os.WriteFile(filepath.Join(libDir, "libwasmtime.a"), wt, 0o644)
		}
		if err != nil {
			libErr = err
			return
		}
		fmt.Fprintf(os.Stderr, "capi tests: built libdynop.so and dynop-scanner in %v\n", time.Since(start).Round(time.Second))
	})
	if libErr != nil {
		t.Fatal(libErr)
	}
	return libDir
}

// program compiles a C or C++ test program (by src's extension) against
// the library and returns its path.
func program(t *testing.T, lib, src string, extra ...string) string {
	t.Helper()
	cxx := strings.HasSuffix(src, ".cpp")
	cc := cbuild.Compiler(t, cxx)
	std := "-std=c11"
	if cxx {
		std = "-std=c++17"
	}
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{std, "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", cbuild.Path("abi/include")}, extra...)
	args = append(args, "-o", exe, cbuild.Path(src), "-L", lib, "-ldynop", "-Wl,-rpath,"+lib, "-lpthread")
	cmd := exec.Command(cc, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return exe
}

// run runs exe with args and returns what it printed; it fails the test
// if exe fails.
func run(t *testing.T, exe string, args ...string) string {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir(), "DYNOP_PLUGIN_PATH=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// plugins builds the example C plugins vecmath and imgproc into one
// directory, without manifests, and returns it.
func plugins(t *testing.T) string {
	dir := t.TempDir()
	for _, p := range []string{cbuild.VecMath(t), cbuild.Imgproc(t)} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// thumbsPipeline writes a pipeline file that decodes the demo's images,
// turns them gray with the C plugin and writes PNGs.
func thumbsPipeline(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "gray.yaml")
	spec := fmt.Sprintf(`name: gray
batch_size: 4
inputs:
  photos: {files: [%q]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos], args: {channels: 3}}
  - {name: gray, op: imgproc.Grayscale, inputs: [decode]}
outputs:
  thumbs: {from: gray, dir: out, format: png}
`, cbuild.Path("examples/pipelines/images")+"/")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestC runs testdata/host_test.c: the lifecycle over the example plugins
// (scanned by dynop-scanner: they have no manifests and the cache is off),
// an operator on DLPack tensors, a pipeline, threads, and every bad input
// with its result and message.
func TestC(t *testing.T) {
	lib := library(t)
	exe := program(t, lib, "internal/capi/testdata/host_test.c", "-I", cbuild.Path("plugins/vecmath"))
	out := t.TempDir()
	got := run(t, exe, plugins(t), thumbsPipeline(t), out, plugins(t))
	t.Logf("host_test:\n%s", got)
	if !strings.HasSuffix(got, "ok\n") {
		t.Fatalf("host_test did not finish:\n%s", got)
	}
	pngs, _ := filepath.Glob(filepath.Join(out, "*.png"))
	if len(pngs) != 6 {
		t.Errorf("the pipeline wrote %d PNGs, want 6: %v", len(pngs), pngs)
	}
}

// TestExports checks that libdynop.so exports dynop_host.h's functions
// and nothing else of dynop's (capi/libdynop.map).
func TestExports(t *testing.T) {
	lib := library(t)
	out, err := exec.Command("nm", "-D", "--defined-only", filepath.Join(lib, "libdynop.so")).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && strings.Contains(f[2], "dynop") {
			got = append(got, f[2])
		}
	}
	header, err := os.ReadFile(cbuild.Path("abi/include/dynop/dynop_host.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range got {
		if !strings.Contains(string(header), " "+name+"(") && !strings.Contains(string(header), "*"+name+"(") {
			t.Errorf("libdynop.so exports %s, which dynop_host.h does not declare", name)
		}
	}
	if len(got) != 18 {
		t.Errorf("libdynop.so exports %d dynop symbols, want the 18 of dynop_host.h: %v", len(got), got)
	}
}

// TestCXX runs testdata/host_test.cpp, which uses the RAII wrappers of
// dynop_host.hpp.
func TestCXX(t *testing.T) {
	lib := library(t)
	exe := program(t, lib, "internal/capi/testdata/host_test.cpp", "-I", cbuild.Path("plugins/vecmath"))
	got := run(t, exe, plugins(t), thumbsPipeline(t))
	if !strings.HasSuffix(got, "ok\n") {
		t.Fatalf("host_test_cpp did not finish:\n%s", got)
	}
}

// TestLifecycleExample builds and runs examples/c/lifecycle.c, the
// README's lifecycle in C, as docs/c-api.md shows it.
func TestLifecycleExample(t *testing.T) {
	lib := library(t)
	exe := program(t, lib, "examples/c/lifecycle.c", "-I", cbuild.Path("plugins/vecmath"))
	got := run(t, exe, cbuild.VecMath(t), cbuild.Imgproc(t))
	for _, want := range []string{
		"dynop.plugin.vecmath   v1.0.0  available ",
		"dynop.plugin.image     v1.2.0  available compiled in",
		"dot = 70\n",
		"saxpy = 7 10 13 16\n",
		"closed\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lifecycle printed no %q:\n%s", want, got)
		}
	}
}

// TestLifecycleCXXExample builds and runs examples/c/lifecycle.cpp, the
// lifecycle with dynop_host.hpp's RAII owners, as docs/c-api.md shows it.
func TestLifecycleCXXExample(t *testing.T) {
	lib := library(t)
	exe := program(t, lib, "examples/c/lifecycle.cpp", "-I", cbuild.Path("plugins/vecmath"))
	got := run(t, exe, cbuild.VecMath(t), cbuild.Imgproc(t))
	if got != "dot = 32\nsaxpy = 3 3 3\n" {
		t.Errorf("lifecycle.cpp printed:\n%s", got)
	}
}

// TestTrainingLoopExample builds and runs examples/c/training_loop.c over
// docs/python/gray.yaml: six images in batches of 4 and 2, each 64x48
// gray, then the end.
func TestTrainingLoopExample(t *testing.T) {
	lib := library(t)
	exe := program(t, lib, "examples/c/training_loop.c")
	got := run(t, exe, cbuild.Path("docs/python/gray.yaml"), cbuild.Imgproc(t))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], `"batch_size":4`) || !strings.Contains(lines[0], `"samples":6`) {
		t.Fatalf("training_loop printed:\n%s", got)
	}
	for k, line := range lines[1:] {
		b, s := 1+k/4, k%4
		if want := fmt.Sprintf("batch %d sample %d: 48x64x1", b, s); line != want {
			t.Errorf("line %d: %q, want %q", k+2, line, want)
		}
	}
}

// TestStaticArchive links examples/c/lifecycle.c with libdynop.a: the
// program is the library, so its scanner is the dynop-scanner beside the
// program.
func TestStaticArchive(t *testing.T) {
	lib := library(t)
	cc := cbuild.Compiler(t, false)
	dir := t.TempDir()
	exe := filepath.Join(dir, "lifecycle-static")
	cmd := exec.Command(cc, "-std=c11", "-I", cbuild.Path("abi/include"), "-I", cbuild.Path("plugins/vecmath"),
		"-o", exe, cbuild.Path("examples/c/lifecycle.c"), filepath.Join(lib, "libdynop.a"), filepath.Join(lib, "libwasmtime.a"), "-lpthread", "-ldl", "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if err := os.Symlink(filepath.Join(lib, "dynop-scanner"), filepath.Join(dir, "dynop-scanner")); err != nil {
		t.Fatal(err)
	}
	got := run(t, exe, cbuild.VecMath(t), cbuild.Imgproc(t))
	if !strings.Contains(got, "dot = 70\n") || !strings.Contains(got, "closed\n") {
		t.Errorf("lifecycle (static) printed:\n%s", got)
	}
}

// staticTLSBudget bounds libdynop.so's thread-local storage. A c-shared
// Go library has static TLS only, which dlopen takes from glibc's small
// reserve shared by every library a process loads; at 2.3 KB (a 1 KiB
// thread-local error buffer beside Wasmtime's thread-locals) Python's
// ctypes could not load it: "cannot allocate memory in static TLS block".
const staticTLSBudget = 1536

// TestStaticTLSBudget: libdynop.so's TLS segment fits the budget, so that
// programs can dlopen it (Python's ctypes does).
func TestStaticTLSBudget(t *testing.T) {
	f, err := elf.Open(filepath.Join(library(t), "libdynop.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_TLS && p.Memsz > staticTLSBudget {
			t.Errorf("libdynop.so has %d bytes of thread-local storage, more than %d: dlopen may fail with \"cannot allocate memory in static TLS block\" (keep large per-thread buffers on the heap)", p.Memsz, staticTLSBudget)
		}
	}
}
