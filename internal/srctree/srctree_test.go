package srctree

import (
	"os"
	"path/filepath"
	"testing"
)

// The test binary was compiled from this tree, whose root declares the
// module; other go.mod files, or none, are not dynop's.
func TestBuiltIsRoot(t *testing.T) {
	root := Built()
	if root == "" || !IsRoot(root) {
		t.Fatalf("Built() = %q, not a root of %s", root, Module)
	}
	if _, err := os.Stat(filepath.Join(root, "abi", "include", "dynop", "dynop.h")); err != nil {
		t.Errorf("Built() = %q has no abi/include/dynop/dynop.h: %v", root, err)
	}
	dir := t.TempDir()
	if IsRoot(dir) {
		t.Error("a directory without go.mod is a root")
	}
	for mod, want := range map[string]bool{
		"module github.com/dynop/dynop\n\ngo 1.26\n": true,
		"// x\nmodule \"github.com/dynop/dynop\"\n":  true,
		"module github.com/dynop/dynop/bench\n":      false,
		"module example.com/acme\n":                  false,
		"modulegithub.com/dynop/dynop\n":             false,
	} {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := IsRoot(dir); got != want {
			t.Errorf("IsRoot(go.mod %q) = %v, want %v", mod, got, want)
		}
	}
}
