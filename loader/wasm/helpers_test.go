package wasm_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// shared is a directory for the whole test run: the fixtures, built once,
// and the compilation cache, so that each module compiles once.
var shared string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dynop-wasm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = dir
	if err := os.Mkdir(filepath.Join(dir, "wasm-cache"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var fixtureMu sync.Mutex

// fixture returns the module name, built by build the first time (in the
// calling test's temporary directory) and kept in shared.
func fixture(t testing.TB, name string, build func(t testing.TB) string) string {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	dst := filepath.Join(shared, name)
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	b, err := os.ReadFile(build(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// cacheDir is the hosts' cache directory: the run's shared compilation
// cache, and a registry cache of the test's own.
func cacheDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(shared, "wasm-cache"), filepath.Join(dir, "wasm")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// nopLogger discards the log, for benchmarks.
func nopLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
