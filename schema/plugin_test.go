package schema_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/schema"
)

func TestGPURequirementsString(t *testing.T) {
	for _, tc := range []struct {
		g    schema.GPURequirements
		want string
	}{
		{schema.GPURequirements{}, "a GPU"},
		{schema.GPURequirements{Vendor: "amd"}, "an amd GPU"},
		{schema.GPURequirements{Vendor: "qualcomm"}, "a qualcomm GPU"},
		{schema.GPURequirements{Vendor: "nvidia", MinArch: iface.V(8, 6, 0)}, "an nvidia GPU with arch 8.6 or newer"},
		{schema.GPURequirements{MinDriver: iface.V(535, 104, 0)}, "a GPU with driver 535.104.0 or newer"},
		{schema.GPURequirements{Vendor: "nvidia", MinArch: iface.V(9, 0, 0), MinDriver: iface.V(550, 0, 0)},
			"an nvidia GPU with arch 9.0 or newer and driver 550.0.0 or newer"},
	} {
		if got := tc.g.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.g, got, tc.want)
		}
	}
}

// TestValidateLibraries: a required library must be a soname; each
// other form is refused with what is wrong.
func TestValidateLibraries(t *testing.T) {
	info := schema.Plugin{ID: "acme.plugin.blas", Requirements: schema.Requirements{Libraries: []string{"libopenblas.so.0"}}}
	if err := info.Validate(); err != nil {
		t.Fatalf("a soname: %v", err)
	}
	for _, bad := range []string{"", "/usr/lib/libopenblas.so.0", "liba.so.1,libb.so.2", "lib a.so"} {
		info.Requirements.Libraries = []string{bad}
		err := info.Validate()
		if !errors.Is(err, schema.ErrPlugin) || !strings.Contains(err.Error(), "is not a soname") || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("library %q: %v", bad, err)
		}
	}
}
