package cbuild

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// GoCommand returns the go command: the one of the toolchain that built
// the test (runtime.GOROOT()/bin/go) if it is there, else "go" from
// $PATH; it skips the test if there is neither.
func GoCommand(t testing.TB) string {
	t.Helper()
	if root := runtime.GOROOT(); root != "" {
		gocmd := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(gocmd); err == nil {
			return gocmd
		}
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	return gocmd
}

// GoWasm builds the repository-relative Go main package pkg (such as
// "plugins/tone") as a WebAssembly plugin — a WASI reactor, as
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared makes it — into a
// temporary directory of t, and returns the module's path.
func GoWasm(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg)+".wasm")
	cmd := exec.Command(GoCommand(t), "build", "-buildmode=c-shared", "-o", out, "./"+filepath.ToSlash(filepath.Clean(pkg)))
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Skipf("running %s: %v", cmd, err)
		}
		t.Fatalf("building %s: %v\n%s\n%s", pkg, err, cmd, msg)
	}
	return out
}
