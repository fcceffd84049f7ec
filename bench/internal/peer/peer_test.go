package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// goBogus is the go command's complaint about GOFLAGS=-mod=bogus, which
// makes every build fail.
const goBogus = "-mod=bogus not supported"

func TestStdPlugin(t *testing.T) {
	dir := t.TempDir()
	nop, err := StdPlugin(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	nop()
	if _, err := os.Stat(filepath.Join(dir, stdPluginFile)); err != nil {
		t.Errorf("the plugin is not in dir: %v", err)
	}

	// The plugin loaded (by this call or, with -count, an earlier one) is
	// the peer's, and nop is its Nop.
	std.Lock()
	p := std.plugin
	std.Unlock()
	answer, err := p.Lookup("Answer")
	if err != nil {
		t.Fatal(err)
	}
	if got := answer.(func() int)(); got != 42 {
		t.Errorf("the plugin's Answer() = %d, want 42", got)
	}
	sym, err := p.Lookup("Nop")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := funcPC(nop), funcPC(sym.(func())); got != want {
		t.Errorf("nop is at %#x, the plugin's Nop at %#x", got, want)
	}

	// A process loads a plugin once: a second call builds it again and
	// returns the same Nop.
	dir2 := t.TempDir()
	nop2, err := StdPlugin(t.Context(), dir2)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if funcPC(nop2) != funcPC(nop) {
		t.Error("a second call returned another Nop")
	}
	if _, err := os.Stat(filepath.Join(dir2, stdPluginFile)); err != nil {
		t.Errorf("the second call built nothing into its dir: %v", err)
	}
}

func TestStdPluginDifferentBuild(t *testing.T) {
	if _, err := StdPlugin(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// Stripped of its symbols, the plugin is another file, which this
	// process, having loaded one, cannot load.
	t.Setenv("GOFLAGS", "-ldflags=-s")
	_, err := StdPlugin(t.Context(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "different build") {
		t.Errorf("StdPlugin of another build: err = %v, want one about a different build", err)
	}
}

func TestGoPlugin(t *testing.T) {
	dir := t.TempDir()
	call, stop, err := GoPlugin(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	for i := range 100 {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if runtime.GOOS == "linux" {
		if n := children(t, rpcNopFile); n != 1 {
			t.Errorf("%d %s processes run, want 1", n, rpcNopFile)
		}
	}

	stop()
	stopped = true
	if err := call(); err == nil {
		t.Error("a call after stop succeeded")
	}
	if runtime.GOOS == "linux" {
		if n := children(t, rpcNopFile); n != 0 {
			t.Errorf("after stop, %d %s processes are left", n, rpcNopFile)
		}
	}
	stop() // a second stop does nothing
}

func TestGoPluginCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	call, stop, err := GoPlugin(ctx, t.TempDir())
	if stop == nil {
		t.Fatal("stop is nil")
	}
	stop()
	if !errors.Is(err, context.Canceled) || call != nil {
		t.Errorf("GoPlugin with a canceled context: err = %v, want context.Canceled, and no call", err)
	}
}

func TestBuildFails(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=bogus")
	t.Run("stdplugin", func(t *testing.T) {
		nop, err := StdPlugin(t.Context(), t.TempDir())
		checkBuildError(t, err, "building the standard-library plugin peer", "./peers/stdplugin")
		if nop != nil {
			t.Error("a failed StdPlugin returned a Nop")
		}
	})
	t.Run("rpcnop", func(t *testing.T) {
		call, stop, err := GoPlugin(t.Context(), t.TempDir())
		checkBuildError(t, err, "building the go-plugin peer", "./peers/rpcnop/cmd/rpcnop-plugin")
		if call != nil {
			t.Error("a failed GoPlugin returned a call")
		}
		if stop == nil {
			t.Error("a failed GoPlugin returned no stop")
		} else {
			stop()
		}
	})
}

// checkBuildError checks that err says what failed to build, how, and why,
// quoting go, and wraps the go command's exit.
func checkBuildError(t *testing.T, err error, peer, pkg string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{peer, pkg, "exit status", goBogus} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) {
		t.Errorf("the error wraps no *exec.ExitError: %v", err)
	}
}

func TestTail(t *testing.T) {
	var long []string
	for i := range 30 {
		long = append(long, fmt.Sprint("line ", i))
	}
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{" \n", ""},
		{"go: oops\n", ": go: oops"},
		{"a\nb\n", ":\na\nb"},
		{strings.Join(long, "\n"), ": (last 20 of 30 lines)\n" + strings.Join(long[10:], "\n")},
	} {
		if got := tail(c.in, 20); got != c.want {
			t.Errorf("tail(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd() // this package's directory
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "..", ".."); filepath.Clean(root) != filepath.Clean(want) {
		t.Errorf("moduleRoot() = %s, want %s", root, want)
	}
}

// funcPC returns the address of f's code.
func funcPC(f func()) uintptr { return reflect.ValueOf(f).Pointer() }

// children counts this process's child processes named name, by /proc.
func children(t *testing.T, name string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || s[open+1:end] != name {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == self {
			n++
		}
	}
	return n
}
