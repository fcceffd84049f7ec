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

// TestWriteUnsyncedThenSyncAll: files written unsynced hold their content
// and no temporary is left; SyncAll makes them durable in one go, and
// names what it cannot sync.
func TestWriteUnsyncedThenSyncAll(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	paths := []string{filepath.Join(a, "x"), filepath.Join(a, "y"), filepath.Join(b, "z")}
	for i, p := range paths {
		if err := WriteUnsynced(p, []byte{byte(i)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := SyncAll(paths); err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		got, err := os.ReadFile(p)
		if err != nil || len(got) != 1 || got[0] != byte(i) {
			t.Errorf("%s holds %v, %v", p, got, err)
		}
	}
	if entries, _ := os.ReadDir(a); len(entries) != 2 {
		t.Errorf("%s holds %d entries, want x and y only", a, len(entries))
	}
	missing := filepath.Join(a, "gone", "w")
	if err := SyncAll([]string{missing}); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("SyncAll of a file in a missing directory: %v", err)
	}
}
