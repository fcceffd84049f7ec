package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(data) != "two" || fi.Mode().Perm() != 0o644 {
		t.Errorf("content %q, mode %v, err %v; want two, 0644", data, fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "sub")
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "x"), nil, 0o644) // a non-empty directory cannot be renamed over
	err := Write(target, []byte("data"), 0o644)
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("err %v, want one naming %s", err, target)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	err = Write(filepath.Join(dir, "missing", "f"), nil, 0o644)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("err %v, want one naming the missing directory", err)
	}
}
