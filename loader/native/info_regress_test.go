package native_test

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/schema"
)

// TestLoadRefusesHostileInfo: native.Load reads a plugin's info in the
// calling process. A struct size used as an array's stride sent the
// reader 1 GiB away ("fatal error: fault" killed the host); a string
// without its NUL was read until it faulted; an argument of type 99 was
// accepted and then panicked whoever marshalled the info. Each is now an
// error that names the field.
func TestLoadRefusesHostileInfo(t *testing.T) {
	for _, c := range []struct {
		define   string
		sentinel error
		want     string
	}{
		{"-DHUGE_STRIDE", native.ErrABI, `operator "test.Nop" outputs[0] says it is 1073741824 bytes, more than the 4096 any ABI struct may be: the size is broken`},
		{"-DUNTERMINATED", native.ErrABI, "plugin info: description is longer than 65536 bytes, or not NUL-terminated"},
		{"-DBAD_ARG_TYPE", schema.ErrPlugin, `invalid info: invalid plugin info: plugin "dynop.plugin.ops": provides invalid operator schema: operator "test.Args": argument "f": unknown type 99`},
		{"-DBIG_NDIM", schema.ErrPlugin, `input "in": ndim 1000 is not between 0 (any) and 16 (DYNOP_MAX_NDIM)`},
		{"-DLONG_ID", schema.ErrPlugin, "is 10016 bytes long, more than 128"},
	} {
		t.Run(c.define, func(t *testing.T) {
			lib := opsPlugin(t, c.define)
			p, err := native.Load(ctx, lib, native.Options{})
			if p != nil || !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), lib) {
				t.Errorf("Load = %v, %v; want an error wrapping %v naming the file and saying %q", p, err, c.sentinel, c.want)
			}
		})
	}
}

// TestLoadRefusesNamedPipe: native.Load of a named pipe blocked in its
// open for ever; now it is refused at once (issue 21, item 3).
func TestLoadRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "libp.so")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := native.Load(ctx, fifo, native.Options{}); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, dynop.ErrFormat) || !strings.Contains(err.Error(), fifo+": ") || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
			t.Errorf("Load of a named pipe = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load of a named pipe blocks")
	}
}
