package blas_test

import (
	"bytes"
	"context"
	"io"
	"os"
	execpkg "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/blas"
)

// shipEnv names the directory of a plugin that ships OpenBLAS, for the
// child process of TestShipOpenBLAS.
const shipEnv = "DYNOP_TEST_SHIP_DIR"

// TestShipOpenBLAS walks through docs/authoring.md's "Shipping the library
// beside the plugin": the plugin built with RUNPATH $ORIGIN, Debian's
// libopenblas.so.0 copied beside it, its manifest written. The manifest
// lists the library with its digest; a host loads that copy (from a
// sealed memfd, /memfd:dynop:…/libopenblas.so.0 in /proc/self/maps) before
// the plugin, computes with it, and unloads it after the plugin. It runs
// in a child process: the other tests here load the system's OpenBLAS,
// and a process binds a soname to the library loaded first.
func TestShipOpenBLAS(t *testing.T) {
	if dir := os.Getenv(shipEnv); dir != "" {
		shipChild(t, dir)
		return
	}
	cc := cbuild.Compiler(t, false)
	cflags, libs, err := cbuild.BLASFlags(cc)
	if err != nil {
		t.Skipf("blas plugin not built: %v", err)
	}
	dir := t.TempDir()
	plugin, err := cbuild.Build(cc, dir, "libdynop_blas.so", cbuild.BLASSource,
		append(cflags, "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"), libs)
	if err != nil {
		t.Fatal(err)
	}
	system, err := execpkg.Command(cc, append(libs, "-print-file-name=libopenblas.so.0")...).Output()
	if err != nil {
		t.Fatal(err)
	}
	src := strings.TrimSpace(string(system))
	for _, d := range []string{"/usr/lib/x86_64-linux-gnu/openblas-pthread", "/usr/lib/aarch64-linux-gnu/openblas-pthread"} {
		if !filepath.IsAbs(src) {
			src = filepath.Join(d, "libopenblas.so.0")
		}
	}
	copyFile(t, src, filepath.Join(dir, "libopenblas.so.0"))
	m, err := dynop.ScanFile(context.Background(), plugin, dynop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Bundled) != 1 || m.Bundled[0].Path != "libopenblas.so.0" {
		t.Fatalf("the manifest's bundled files: %+v, want libopenblas.so.0", m.Bundled)
	}
	if _, err := discover.WriteManifest(plugin, m); err != nil {
		t.Fatal(err)
	}
	cmd := execpkg.Command(os.Args[0], "-test.run=^TestShipOpenBLAS$", "-test.v")
	cmd.Env = append(os.Environ(), shipEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestShipOpenBLAS")) {
		t.Fatalf("child: %v", err)
	}
}

// shipChild is TestShipOpenBLAS in the child process.
func shipChild(t *testing.T, dir string) {
	ctx := context.Background()
	shipped := filepath.Join(dir, "libopenblas.so.0")
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{dir}, NoDefaultPaths: true,
		CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	b, ref, err := dynop.Acquire(ctx, h, blas.PluginID, blas.Interface)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Sdot([]float32{1, 2, 3}, []float32{4, 5, 6}); err != nil || got != 32 {
		t.Errorf("Sdot = %v, %v; want 32", got, err)
	}
	maps, _ := os.ReadFile("/proc/self/maps")
	if !bytes.Contains(maps, []byte("memfd:dynop:"+shipped)) {
		t.Errorf("the shipped OpenBLAS is not what was loaded:\n%s", grepLines(maps, "openblas"))
	}
	if system := grepLines(maps, "openblas"); strings.Contains(system, " /usr/") || strings.Contains(system, " /lib/") {
		t.Errorf("the system's OpenBLAS was loaded too:\n%s", grepLines(maps, "openblas"))
	}
	if err := ref.Release(); err != nil {
		t.Fatal(err)
	}
	if maps, _ := os.ReadFile("/proc/self/maps"); bytes.Contains(maps, []byte(shipped)) {
		t.Errorf("the shipped OpenBLAS is still mapped after the plugin unloaded:\n%s", grepLines(maps, "openblas"))
	}
}

func grepLines(data []byte, sub string) string {
	var out []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(strings.ToLower(line), sub) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
