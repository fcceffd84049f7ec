package native_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/tensor"
)

// variantsPlugin builds testdata/variants.c with the given -D switches.
func variantsPlugin(t testing.TB, defines ...string) string {
	t.Helper()
	return cbuild.Plugin(t, "libvariants.so", "loader/native/testdata/variants.c", append([]string{"-Wno-unused-const-variable", "-Wno-unused-function"}, defines...)...)
}

// cpuMachine is this machine with a CPU that has features (and what they
// imply): the fixture's variants are plain C, so any CPU can run them.
func cpuMachine(features dispatch.Features) *machine.Machine {
	m := *machine.Current()
	m.CPUFeatures = features.Closure().Names()
	return &m
}

var avx512Machine = cpuMachine(dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW))

// fixtureVariants are the fixture's variants.
var fixtureVariants = []dispatch.Variant{{Name: "avx512", Needs: dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW)}, {Name: "avx2", Needs: dispatch.AVX2.Set()}, {Name: "scalar"}}

// expected returns the fixture variant a host with machine m and features
// off turned off runs: the best of those both m and this CPU have (the
// host never trusts a machine description over the CPU).
func expected(t *testing.T, m *machine.Machine, off string) string {
	t.Helper()
	cpu, err := dispatch.CPU{Has: dispatch.Detect() & dispatch.FromNames(m.CPUFeatures)}.TurnOff(off)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := dispatch.Choose(fixtureVariants, cpu, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ch.Chosen()
	return s.Name
}

var fixtureAdds = map[string]int{"scalar": 1, "avx2": 2, "avx512": 3}

func requireAVX512(t *testing.T) {
	if !dispatch.Host().Available().Contains(fixtureVariants[0].Needs.Closure()) {
		t.Skip("this CPU has no AVX-512")
	}
}

func openVariants(t *testing.T, path string, m *machine.Machine, off string, verify bool) *dynop.Host {
	t.Helper()
	h, err := dynop.Open(ctx, dynop.Options{Paths: []string{path}, NoRegistered: true, NoDefaultPaths: true,
		CacheDir: t.TempDir(), Logger: testLogger(t), Machine: m, CPUFeatures: off, VerifyVariants: verify})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h
}

// addOne runs test.AddOne on 0..n-1 and returns the instance's variant
// and the output.
func addOne(t *testing.T, h *dynop.Host, n int, opts ...op.Option) (string, []uint8) {
	t.Helper()
	in, err := h.NewOperator(ctx, "test.AddOne", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	data := make([]uint8, n)
	for i := range data {
		data[i] = uint8(i)
	}
	x, _ := tensor.FromSlice(data, int64(n))
	b, _ := tensor.NewBatch(x)
	outs, err := in.Exec(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tensor.Values[uint8](outs[0].Sample(0))
	if err != nil {
		t.Fatal(err)
	}
	return in.Variant(), got
}

// added returns what out adds to 0..n-1 if it adds the same everywhere,
// else -1.
func added(out []uint8) int {
	for i, v := range out {
		if int(v)-i != int(out[0]) {
			return -1
		}
	}
	return int(out[0])
}

func TestNativeVariantChosenForTheCPU(t *testing.T) {
	lib := variantsPlugin(t, "-DMARK")
	seen := map[string]bool{}
	for _, c := range []struct {
		m   *machine.Machine
		off string
	}{
		{avx512Machine, ""},
		{avx512Machine, "-avx512bw"},
		{avx512Machine, "-avx2"},
		{cpuMachine(dispatch.Of(dispatch.AVX2)), ""},
		{cpuMachine(dispatch.Of(dispatch.SSE2)), ""},
	} {
		want := expected(t, c.m, c.off)
		seen[want] = true
		h := openVariants(t, lib, c.m, c.off, false)
		variant, out := addOne(t, h, 70)
		if variant != want || added(out) != fixtureAdds[want] {
			t.Errorf("CPU %v, off %q: ran %q adding %d; want %q adding %d", c.m.CPUFeatures, c.off, variant, added(out), want, fixtureAdds[want])
		}
		forced, out := addOne(t, h, 5, op.WithVariant("scalar"))
		if forced != "scalar" || added(out) != 1 {
			t.Errorf("forced scalar: ran %q adding %d", forced, added(out))
		}
	}
	t.Logf("variants run: %v", seen)
}

// TestMachineCannotAddFeatures: a Machine that claims features this CPU
// lacks changes requirements, never which code runs.
func TestMachineCannotAddFeatures(t *testing.T) {
	if dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Skip("this CPU has AVX2: nothing to claim")
	}
	h := openVariants(t, variantsPlugin(t, "-DMARK"), avx512Machine, "", false)
	if v, _ := addOne(t, h, 3); v != "scalar" {
		t.Errorf("a machine claiming AVX-512 made %q run on a CPU without AVX2", v)
	}
}

func TestNativeVariantOnThisCPU(t *testing.T) {
	h := openHost(t, []string{variantsPlugin(t, "-DMARK")})
	want := "scalar"
	switch cpu := dispatch.Host().Available(); {
	case cpu.Contains(dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW).Closure()):
		want = "avx512"
	case cpu.Contains(dispatch.AVX2.Set().Closure()):
		want = "avx2"
	}
	if variant, _ := addOne(t, h, 3); variant != want {
		t.Errorf("this CPU (%v) runs %q, want %q", dispatch.Host(), variant, want)
	}
	ch, err := h.Operators().Variants(ctx, "test.AddOne")
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := ch.Chosen(); !ok || s.Name != want || len(ch.Variants) != 3 || !ch.Variants[2].Reference {
		t.Errorf("Variants = %+v", ch)
	}
	if h.CPU() != dispatch.Host() && runtime.GOARCH == "amd64" {
		t.Errorf("host CPU %v, this CPU %v", h.CPU(), dispatch.Host())
	}
}

func TestNativeVariantVerify(t *testing.T) {
	requireAVX512(t)
	lib := variantsPlugin(t, "-DBROKEN_AVX512")
	h := openVariants(t, lib, avx512Machine, "", true)
	variant, out := addOne(t, h, 16)
	if variant != "avx2" || added(out) != 1 {
		t.Errorf("after verification: ran %q adding %d, want avx2 adding 1 everywhere (%v)", variant, added(out), out)
	}
	ch, _ := h.Operators().Variants(ctx, "test.AddOne")
	testutil.WantErr(t, errorOf(ch.Variants[0].Disabled), nil, `disagrees with the reference "scalar" on random input`, "element [3]")

	// DYNOP_VERIFY_VARIANTS=1 does the same.
	t.Setenv(dispatch.EnvVerify, "1")
	h = openVariants(t, lib, avx512Machine, "", false)
	if variant, out := addOne(t, h, 16); variant != "avx2" || added(out) != 1 {
		t.Errorf("DYNOP_VERIFY_VARIANTS=1: ran %q adding %d", variant, added(out))
	}
	// Without verification the broken variant runs: the check is what
	// caught it.
	t.Setenv(dispatch.EnvVerify, "")
	h = openVariants(t, lib, avx512Machine, "", false)
	if variant, out := addOne(t, h, 16); variant != "avx512" || added(out) != -1 {
		t.Errorf("unverified: ran %q adding %d", variant, added(out))
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func errorOf(s string) error {
	if s == "" {
		return nil
	}
	return errorString(s)
}

func TestNativeVariantListErrors(t *testing.T) {
	for _, c := range []struct {
		define string
		want   string
	}{
		{"-DBAD_NAME", `name "avx-512"`},
		{"-DDUP_NAME", `"avx2" used twice`},
		{"-DNULL_FN", "variants[0]: name or fn is NULL"},
		{"-DUNKNOWN_BIT", "unknown feature bits 0x8000000000000000"},
		{"-DRUN_TOO", "both run and variants are set"},
	} {
		h := openVariants(t, variantsPlugin(t, c.define), avx512Machine, "", false)
		_, err := h.NewOperator(ctx, "test.AddOne", nil)
		testutil.WantErr(t, err, native.ErrABI, `register_operator "test.AddOne"`, c.want)
		// A malformed list is the plugin's mistake, not this CPU's lack.
		if strings.Contains(err.Error(), "no runnable variant") {
			t.Errorf("%s: %v: says no variant runs here; the list is malformed", c.define, err)
		}
		if c.define != "-DNULL_FN" && c.define != "-DRUN_TOO" && !strings.Contains(err.Error(), "variants: malformed list of variants: ") {
			t.Errorf("%s: %v: does not say the list is malformed", c.define, err)
		}
	}
}

func TestBaselineMissingIsUnsupported(t *testing.T) {
	lib := variantsPlugin(t, "-DREQUIRE_AVX2")
	for _, c := range []struct {
		m    *machine.Machine
		off  string
		want string
	}{
		{avx512Machine, "-avx2", "needs CPU feature avx2 (turned off for this host: DYNOP_CPU_FEATURES or Options.CPUFeatures)"},
		{cpuMachine(dispatch.SSE42.Set()), "", "needs CPU feature avx2 (this CPU lacks it)"},
	} {
		h := openVariants(t, lib, c.m, c.off, false)
		st, err := h.Plugin("dynop.plugin.variants")
		if err != nil {
			t.Fatal(err)
		}
		if st.State != dynop.StateUnsupported {
			t.Errorf("state %s, want unsupported", st.State)
		}
		_, err = h.NewOperator(ctx, "test.AddOne", nil)
		testutil.WantErr(t, err, dynop.ErrUnsupported, c.want)
		if cbuild.Mapped(t, lib) {
			t.Errorf("an unsupported plugin was mapped")
		}
	}
	if !dispatch.Host().Available().Has(dispatch.AVX2) {
		return
	}
	h := openVariants(t, lib, avx512Machine, "", false)
	if v, _ := addOne(t, h, 3); v != expected(t, avx512Machine, "") {
		t.Errorf("with avx2 the plugin runs %q", v)
	}
}

func TestHostSelectVariant(t *testing.T) {
	lib := variantsPlugin(t, "-DSELECT")
	for _, off := range []string{"", "-avx512f", "-avx2"} {
		h := openVariants(t, lib, avx512Machine, off, false)
		in, err := h.NewOperator(ctx, "test.AddOne", nil)
		if err != nil {
			t.Errorf("off %q: %v", off, err)
			continue
		}
		in.Close() // the plugin stops: the next host may start it
	}
	h := openVariants(t, variantsPlugin(t, "-DSELECT_NONE"), cpuMachine(dispatch.SSE2.Set()), "", false)
	_, err := h.NewOperator(ctx, "test.AddOne", nil)
	testutil.WantErr(t, err, nil, "select_variant test.fn", `"avx512" needs`, `"avx2" needs avx,avx2,sse3,sse41,sse42,ssse3 (this CPU lacks them)`)
}

func TestBadCPUFeaturesSetting(t *testing.T) {
	_, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, NoDefaultPaths: true, NoCache: true, CPUFeatures: "-avx3"})
	testutil.WantErr(t, err, dispatch.ErrUnknownFeature, "Options.CPUFeatures", `"avx3"`)
	t.Setenv(dispatch.EnvFeatures, "avx2")
	_, err = dynop.Open(ctx, dynop.Options{NoRegistered: true, NoDefaultPaths: true, NoCache: true})
	testutil.WantErr(t, err, nil, "DYNOP_CPU_FEATURES", "want -NAME")
	t.Setenv(dispatch.EnvFeatures, "")
	t.Setenv(dispatch.EnvVerify, "maybe")
	_, err = dynop.Open(ctx, dynop.Options{NoRegistered: true, NoDefaultPaths: true, NoCache: true})
	testutil.WantErr(t, err, nil, "DYNOP_VERIFY_VARIANTS")
}

func TestCPUFeaturesOffOnTheMachine(t *testing.T) {
	if !dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Skip("this CPU has no AVX2 to turn off")
	}
	h := openVariants(t, variantsPlugin(t), avx512Machine, "-avx2", false)
	if h.CPU().Available().Has(dispatch.AVX2) || !h.CPU().Has.Has(dispatch.AVX2) {
		t.Errorf("host CPU %v", h.CPU())
	}
	if !slices.Contains(avx512Machine.CPUFeatures, "avx2") {
		t.Errorf("the caller's machine was changed: %v", avx512Machine.CPUFeatures)
	}
}
