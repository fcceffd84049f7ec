package machine_test

import (
	"testing"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/schema"
)

// A requirement spelled "neon" (another name of asimd) is reported as
// turned off, like "asimd", once asimd is turned off; it was reported as
// an unknown feature.
func TestRegressAliasTurnedOff(t *testing.T) {
	m := &machine.Machine{OS: "linux", Arch: "arm64", CPUFeatures: []string{"fp"}, CPUFeaturesOff: []string{"asimd"}}
	for _, name := range []string{"neon", "asimd"} {
		err := m.Check(schema.Requirements{CPUFeatures: []string{name}})
		testutil.WantErr(t, err, errdefs.ErrUnsupported, "needs CPU feature "+name+" (turned off for this host")
	}
	// The message names the variable that turned it off, which package
	// dispatch reads.
	err := m.Check(schema.Requirements{CPUFeatures: []string{"asimd"}})
	testutil.WantErr(t, err, errdefs.ErrUnsupported, "turned off for this host: "+dispatch.EnvFeatures+" or Options.CPUFeatures)")
}
