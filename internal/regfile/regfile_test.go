package regfile_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop/internal/regfile"
)

func TestRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("data"), 0o644)
	link := path + ".link"
	os.Symlink(path, link)
	for _, p := range []string{path, link} {
		b, err := regfile.ReadFile(p)
		if err != nil || string(b) != "data" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
		if err := regfile.Check(p); err != nil {
			t.Errorf("Check(%s) = %v", p, err)
		}
	}
	if err := regfile.Check(filepath.Join(t.TempDir(), "missing")); err != nil {
		t.Errorf("Check of a missing file = %v, want nil", err)
	}
	if _, err := regfile.ReadFile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file = %v", err)
	}
}

// TestIrregularFiles: a named pipe, a socket, a device and a directory
// are refused at once, naming what they are; a pipe is never opened in a
// way that blocks.
func TestIrregularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	os.Symlink(fifo, link)
	for path, kind := range map[string]string{fifo: "a named pipe", link: "a named pipe", sock: "a socket", "/dev/null": "a character device", dir: "a directory"} {
		done := make(chan error, 1)
		go func() { _, err := regfile.ReadFile(path); done <- err }()
		select {
		case err := <-done:
			if !regfile.Is(err) || !strings.Contains(err.Error(), "not a regular file ("+kind+")") {
				t.Errorf("ReadFile(%s) = %v, want it refused as %s", path, err, kind)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocks", path)
		}
		if err := regfile.Check(path); !regfile.Is(err) {
			t.Errorf("Check(%s) = %v", path, err)
		}
	}
}
