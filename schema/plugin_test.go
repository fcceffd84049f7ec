package schema_test

import (
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
