package plugin_test

import (
	"testing"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/plugin"
)

// A requirement spelled "neon" (another name of asimd) is reported as
// turned off, like "asimd", once asimd is turned off; it was reported as
// an unknown feature.
func TestRegressAliasTurnedOff(t *testing.T) {
	m := &machine.Machine{OS: "linux", Arch: "arm64", CPUFeatures: []string{"fp"}, CPUFeaturesOff: []string{"asimd"}}
	for _, name := range []string{"neon", "asimd"} {
		err := plugin.Requirements{CPUFeatures: []string{name}}.Check(m)
		testutil.WantErr(t, err, errdefs.ErrUnsupported, "needs CPU feature "+name+" (turned off for this host")
	}
}
