package native_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/plugin"
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
		{"-DBAD_ARG_TYPE", plugin.ErrInvalid, `invalid info: invalid plugin info: plugin "dynop.plugin.ops": provides invalid operator schema: operator "test.Args": argument "f": unknown type 99`},
		{"-DBIG_NDIM", plugin.ErrInvalid, `input "in": ndim 1000 is not between 0 (any) and 16 (DYNOP_MAX_NDIM)`},
		{"-DLONG_ID", plugin.ErrInvalid, "is 10016 bytes long, more than 128"},
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
