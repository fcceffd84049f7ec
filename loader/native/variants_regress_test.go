package native_test

import (
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
)

// DYNOP_CPU_FEATURES=-avx2 (here through Options.CPUFeatures) is to
// turn off "every feature that builds on" avx2, and requirements are to
// "see them as off". Features that machine knows but dispatch does not
// ("avx512", "avx512vaes", "avx512gfni", "avxifma", ...) stay on, so a
// plugin requiring "avx512" is still supported and its code runs.
func TestRegressUmbrellaFeatureNotTurnedOff(t *testing.T) {
	lib := variantsPlugin(t, `-DREQUIRE_FEATURES="avx512"`)
	m := cpuMachine(dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW, dispatch.AVX512CD, dispatch.AVX512DQ, dispatch.AVX512VL))
	m.CPUFeatures = append(m.CPUFeatures, "avx512") // as machine.Detect lists it on such a CPU
	h := openVariants(t, lib, m, "-avx2", false)
	if got := h.CPU().Available(); got.Has(dispatch.AVX512F) {
		t.Fatalf("avx512f still available: %v", got)
	}
	st, err := h.Plugin("dynop.plugin.variants")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != dynop.StateUnsupported {
		t.Errorf("plugin requiring \"avx512\" is %s with -avx2 (AVX-512F off: %v); want unsupported", st.State, h.CPU())
	}
}

// the reason names DYNOP_CPU_FEATURES when it was Options.CPUFeatures
// that turned the feature off (DYNOP_CPU_FEATURES is unset here).
func TestRegressTurnedOffMessageNamesWrongSource(t *testing.T) {
	t.Setenv(dispatch.EnvFeatures, "")
	lib := variantsPlugin(t, "-DREQUIRE_AVX2")
	h := openVariants(t, lib, avx512Machine, "-avx2", false)
	st, err := h.Plugin("dynop.plugin.variants")
	if err != nil {
		t.Fatal(err)
	}
	if st.Err != nil && strings.Contains(st.Err.Error(), "turned off by DYNOP_CPU_FEATURES") {
		t.Errorf("reason %q blames DYNOP_CPU_FEATURES, which is unset; Options.CPUFeatures turned avx2 off", st.Err)
	}
}
