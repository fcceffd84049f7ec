package machine

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
)

// FuzzParseDriverVersion checks the GPU driver versions NVML reports, and
// plugins' min_driver, on any text: no panic; an error wraps
// iface.ErrSyntax and quotes the text; a version that parses reads back
// from its own String.
func FuzzParseDriverVersion(f *testing.F) {
	for _, s := range []string{"550.54.15", "535.104", "470.57.02", "560", "1.2.3.4", "", "550.", "4294967296", "+1", "5a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDriverVersion(s)
		if err != nil {
			if !errors.Is(err, iface.ErrSyntax) || !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Errorf("ParseDriverVersion(%q): error %q does not wrap ErrSyntax and quote the text", s, err)
			}
			return
		}
		back, err := ParseDriverVersion(v.String())
		if err != nil || back != v {
			t.Errorf("ParseDriverVersion(%q) = %v; ParseDriverVersion(%q) = %v, %v", s, v, v.String(), back, err)
		}
	})
}
