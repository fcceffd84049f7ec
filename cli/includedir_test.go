package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTestFile writes data to path, making its directory.
func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindIncludeDir(t *testing.T) {
	// An install: PREFIX/bin/dynop and PREFIX/include/dynop/dynop.h, run
	// through a symbolic link elsewhere.
	prefix := t.TempDir()
	exe := filepath.Join(prefix, "bin", "dynop")
	writeTestFile(t, exe, "#!/bin/sh\n")
	writeTestFile(t, filepath.Join(prefix, "include", "dynop", "dynop.h"), "/* dynop.h */\n")
	link := filepath.Join(t.TempDir(), "dynop")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(prefix, "include"))
	for _, e := range []string{exe, link} {
		if got, err := findIncludeDir(e, "", ""); err != nil || got != want {
			t.Errorf("findIncludeDir(%s) = %q, %v; want %q", e, got, err, want)
		}
	}

	// A checkout: bin/dynop below the module's go.mod (in a nested
	// directory, to go up more than one), abi/include/dynop/dynop.h.
	tree := t.TempDir()
	writeTestFile(t, filepath.Join(tree, "go.mod"), "// dynop\nmodule github.com/dynop/dynop\n\ngo 1.24\n")
	writeTestFile(t, filepath.Join(tree, "abi", "include", "dynop", "dynop.h"), "")
	treeExe := filepath.Join(tree, "bin", "tools", "dynop")
	writeTestFile(t, treeExe, "")
	want, _ = filepath.EvalSymlinks(filepath.Join(tree, "abi", "include"))
	if got, err := findIncludeDir(treeExe, "", ""); err != nil || got != want {
		t.Errorf("in a checkout: %q, %v; want %q", got, err, want)
	}
	// $DYNOP_ROOT, and the tree it was built from, for an executable
	// elsewhere (go install puts it in $GOBIN).
	gobin := filepath.Join(t.TempDir(), "dynop")
	writeTestFile(t, gobin, "")
	if got, err := findIncludeDir(gobin, tree, ""); err != nil || got != filepath.Join(tree, "abi", "include") {
		t.Errorf("with $DYNOP_ROOT: %q, %v", got, err)
	}
	if got, err := findIncludeDir(gobin, "", tree); err != nil || got != filepath.Join(tree, "abi", "include") {
		t.Errorf("built from the tree: %q, %v", got, err)
	}
	// The install comes first.
	installed, _ := filepath.EvalSymlinks(filepath.Join(prefix, "include"))
	if got, err := findIncludeDir(exe, tree, tree); err != nil || got != installed {
		t.Errorf("install and tree: %q, %v; want the install's", got, err)
	}

	// Nowhere: the error names every place.
	other := t.TempDir()
	writeTestFile(t, filepath.Join(other, "go.mod"), "module example.com/other\n")
	gone := filepath.Join(t.TempDir(), "gone")
	_, err := findIncludeDir(gobin, filepath.Join(other, "root"), gone)
	if !errors.Is(err, errNoHeader) {
		t.Fatalf("nowhere: %v, want errNoHeader", err)
	}
	for _, want := range []string{filepath.Join(filepath.Dir(gobin), "..", "include") /* cleaned below */, filepath.Join(other, "root", "abi", "include", "dynop", "dynop.h"), "$DYNOP_ROOT", gone, "DYNOP_ROOT"} {
		if !strings.Contains(err.Error(), filepath.Clean(want)) {
			t.Errorf("the error lacks %q:\n%v", filepath.Clean(want), err)
		}
	}
	_, err = findIncludeDir(gobin, "", "")
	if err == nil || !strings.Contains(err.Error(), "a go.mod of module github.com/dynop/dynop above") {
		t.Errorf("nowhere, without $DYNOP_ROOT: %v", err)
	}
}

func TestIncludeDirCommand(t *testing.T) {
	// The test binary is built from this checkout, which has the header.
	t.Setenv("DYNOP_ROOT", "")
	code, out, errOut := runCLI(t, "include-dir")
	dir := strings.TrimSpace(out)
	if code != 0 || errOut != "" {
		t.Fatalf("include-dir: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "dynop", "dynop.h")); err != nil {
		t.Errorf("include-dir printed %q: %v", dir, err)
	}
	t.Setenv("DYNOP_ROOT", t.TempDir())
	if code, out, errOut := runCLI(t, "include-dir"); code != 0 || strings.TrimSpace(out) != dir {
		// The checkout the binary was built in is still found.
		t.Errorf("include-dir with an empty $DYNOP_ROOT: exit %d, %q, %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "include-dir", "extra"); code != 2 || !strings.Contains(errOut, "include-dir takes no arguments") {
		t.Errorf("include-dir extra: exit %d, %s", code, errOut)
	}
}
