package sign_test

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop/sign"
)

// TestNamedPipesRefused: a named pipe in place of a plugin, a signature
// or a key file is refused at once, naming it, instead of blocking the
// read for ever (issue 21, item 3).
func TestNamedPipesRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p.so")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct {
		what     string
		call     func() error
		sentinel error
	}{
		{"HashFile", func() error { _, _, err := sign.HashFile(fifo); return err }, nil},
		{"ReadSignature", func() error { _, err := sign.ReadSignature(fifo); return err }, sign.ErrSignature},
		{"ReadPrivateKey", func() error { _, err := sign.ReadPrivateKey(fifo); return err }, sign.ErrKey},
		{"ReadPublicKey", func() error { _, err := sign.ReadPublicKey(fifo); return err }, sign.ErrKey},
	} {
		done := make(chan error, 1)
		go func() { done <- c.call() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file (a named pipe)") ||
				c.sentinel != nil && !errors.Is(err, c.sentinel) {
				t.Errorf("%s of a named pipe = %v; want it refused, naming the file (wrapping %v)", c.what, err, c.sentinel)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s of a named pipe blocks", c.what)
		}
	}
}
