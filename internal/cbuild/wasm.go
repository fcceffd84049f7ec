package cbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// WasmFlags are the flags of every WebAssembly build: a wasm32-wasi
// reactor (a module whose exports the host calls after _initialize),
// C99, warnings are errors. Keep them in step with abi/wasm/README.md.
var WasmFlags = []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"}

// WasmShim is the repository-relative path of the C shim that turns a C
// plugin into a WebAssembly plugin.
const WasmShim = "abi/wasm/dynop_wasm.c"

// wasmProbe remembers whether the WebAssembly compiler works.
var wasmProbe struct {
	once sync.Once
	cc   string // the compiler, if it works
	skip string // why not, if it does not
}

// WasmCompiler returns the C compiler for WebAssembly ($WASM_CC, else
// clang), skipping the test if there is none or it cannot build a
// wasm32-wasi reactor (no wasm32 target, no wasm-ld, no wasi-libc). The
// first call finds out by compiling a trivial module.
func WasmCompiler(t testing.TB) string {
	t.Helper()
	wasmProbe.once.Do(func() {
		cc := os.Getenv("WASM_CC")
		if cc == "" {
			cc = "clang"
		}
		if _, err := exec.LookPath(cc); err != nil {
			wasmProbe.skip = "no C compiler for WebAssembly ($WASM_CC, else clang): " + err.Error()
			return
		}
		dir, err := os.MkdirTemp("", "cbuild-wasm-probe")
		if err != nil {
			wasmProbe.skip = "probing the WebAssembly compiler: " + err.Error()
			return
		}
		defer os.RemoveAll(dir)
		src := filepath.Join(dir, "probe.c")
		prog := "#include <stdlib.h>\n__attribute__((export_name(\"probe\"))) void *probe(void) { return malloc(1); }\n"
		if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
			wasmProbe.skip = "probing the WebAssembly compiler: " + err.Error()
			return
		}
		args := append(append([]string{}, WasmFlags...), "-o", filepath.Join(dir, "probe.wasm"), src)
		if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			wasmProbe.skip = cc + " cannot build wasm32-wasi modules: " + err.Error() + "\n" + string(msg)
			return
		}
		wasmProbe.cc = cc
	})
	if wasmProbe.cc == "" {
		t.Skip(wasmProbe.skip)
	}
	return wasmProbe.cc
}

// Wasm compiles the repository-relative C sources srcs, linked with the
// shim [WasmShim], into the WebAssembly plugin name in a temporary
// directory of t, with [WasmFlags], the dynop headers and extra flags
// such as -DNAME=value (-DDYNOP_WASM_CAPABILITIES='"clock"' asks for
// capabilities), and returns its path. It skips the test where there is
// no WebAssembly compiler ([WasmCompiler]) and fails it with the
// compiler's output if the build fails.
func Wasm(t testing.TB, name string, srcs []string, extra ...string) string {
	t.Helper()
	return buildWasm(t, name, append(append([]string{}, srcs...), WasmShim), extra)
}

// WasmRaw is [Wasm] without the shim: the sources define whatever the
// module exports themselves, as modules that are no dynop plugin or break
// its ABI on purpose do.
func WasmRaw(t testing.TB, name string, srcs []string, extra ...string) string {
	t.Helper()
	return buildWasm(t, name, srcs, extra)
}

func buildWasm(t testing.TB, name string, srcs, extra []string) string {
	t.Helper()
	cc := WasmCompiler(t)
	out := filepath.Join(t.TempDir(), name)
	args := append([]string{}, WasmFlags...)
	args = append(args, "-I", Path("abi/include"))
	args = append(args, extra...)
	args = append(args, "-o", out)
	for _, src := range srcs {
		args = append(args, Path(src))
	}
	cmd := exec.Command(cc, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s\n%s", name, err, cmd, msg)
	}
	return out
}

// ImgprocWasm builds the example C plugin dynop.plugin.imgproc as a
// WebAssembly plugin with SIMD (-msimd128): its scalar variants and its
// simd128 ones, with the extra flags of [Imgproc]. It declares no graph
// passes, which WebAssembly plugins cannot provide.
func ImgprocWasm(t testing.TB) string {
	return Wasm(t, "imgproc.wasm", []string{"plugins/imgproc/c/imgproc.c"}, "-ffp-contract=off", "-fno-math-errno", "-msimd128", "-O3")
}
