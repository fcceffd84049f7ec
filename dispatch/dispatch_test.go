package dispatch_test

import (
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/machine"
)

func TestNamesRoundTrip(t *testing.T) {
	for _, name := range dispatch.Known() {
		f, ok := dispatch.Lookup(name)
		if !ok || f.String() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, f, ok)
		}
		s, err := dispatch.Parse(name)
		if err != nil || s != f.Set() {
			t.Errorf("Parse(%q) = %v, %v", name, s, err)
		}
	}
	if f, ok := dispatch.Lookup("neon"); !ok || f != dispatch.ASIMD {
		t.Errorf(`Lookup("neon") = %v, %v; want asimd`, f, ok)
	}
	// Every name dispatch knows is a name machine reports for its arch.
	for _, name := range dispatch.Known() {
		if !slices.Contains(machine.KnownCPUFeatures("amd64"), name) && !slices.Contains(machine.KnownCPUFeatures("arm64"), name) {
			t.Errorf("dispatch knows %q, which machine never reports", name)
		}
	}
}

func TestParse(t *testing.T) {
	s, err := dispatch.Parse(" avx2, FMA ,,sse42")
	if err != nil {
		t.Fatal(err)
	}
	if want := dispatch.Of(dispatch.AVX2, dispatch.FMA, dispatch.SSE42); s != want {
		t.Errorf("Parse = %v, want %v", s, want)
	}
	if s.String() != "avx2,fma,sse42" {
		t.Errorf("String = %q", s)
	}
	if got := dispatch.Features(0).String(); got != "none" {
		t.Errorf("empty set String = %q, want none", got)
	}
	_, err = dispatch.Parse("avx2,avx22")
	testutil.WantErr(t, err, dispatch.ErrUnknownFeature, `"avx22"`, `did you mean "avx2"?`, "known on "+runtime.GOARCH+": ")
	if got := dispatch.KnownFor("arm64"); !slices.Contains(got, "sve") || slices.Contains(got, "avx2") {
		t.Errorf("KnownFor(arm64) = %v", got)
	}
	if got := dispatch.KnownFor("amd64"); !slices.Contains(got, "avx512bw") || slices.Contains(got, "asimd") {
		t.Errorf("KnownFor(amd64) = %v", got)
	}
}

func TestClosureAndDependents(t *testing.T) {
	c := dispatch.AVX512BW.Set().Closure()
	for _, f := range []dispatch.Feature{dispatch.AVX512BW, dispatch.AVX512F, dispatch.AVX2, dispatch.AVX, dispatch.FMA, dispatch.F16C, dispatch.SSE42, dispatch.SSE2} {
		if !c.Has(f) {
			t.Errorf("closure of avx512bw lacks %v: %v", f, c)
		}
	}
	if c.Has(dispatch.AVX512VL) || c.Has(dispatch.ASIMD) {
		t.Errorf("closure of avx512bw has too much: %v", c)
	}
	d := dispatch.AVX2.Set().Dependents()
	for _, f := range []dispatch.Feature{dispatch.AVX2, dispatch.AVX512F, dispatch.AVX512BW, dispatch.AVX512VL, dispatch.AVXVNNI} {
		if !d.Has(f) {
			t.Errorf("dependents of avx2 lack %v: %v", f, d)
		}
	}
	if d.Has(dispatch.AVX) || d.Has(dispatch.FMA) {
		t.Errorf("dependents of avx2 include what avx2 builds on: %v", d)
	}
	if u := (dispatch.AVX2.Set() | 1<<60).Unknown(); u != 1<<60 {
		t.Errorf("Unknown = %#x", uint64(u))
	}
}

func TestTurnOff(t *testing.T) {
	all := dispatch.Of(dispatch.SSE2, dispatch.SSE42, dispatch.AVX, dispatch.AVX2, dispatch.FMA, dispatch.AVX512F, dispatch.AVX512BW)
	c, err := dispatch.CPU{Has: all}.TurnOff("-avx2")
	if err != nil {
		t.Fatal(err)
	}
	if want := dispatch.Of(dispatch.SSE2, dispatch.SSE42, dispatch.AVX, dispatch.FMA); c.Available() != want {
		t.Errorf("-avx2 leaves %v, want %v (avx512 builds on avx2)", c.Available(), want)
	}
	if got := c.String(); got != "avx,fma,sse2,sse42 (turned off: avx2,avx512bw,avx512f)" {
		t.Errorf("String = %q", got)
	}
	c, err = dispatch.CPU{Has: all}.TurnOff("-avx512f, -AVX512BW")
	if err != nil || c.Available().Has(dispatch.AVX512F) || !c.Available().Has(dispatch.AVX2) {
		t.Errorf("-avx512f: %v, %v", c.Available(), err)
	}
	for _, c := range []struct {
		spec   string
		target error
		wants  []string
	}{
		{"avx2", nil, []string{`"avx2": want -NAME`, "cannot be turned on"}},
		{"+avx2", nil, []string{`"+avx2"`}},
		{"-avx512", dispatch.ErrUnknownFeature, []string{`"avx512"`, "did you mean"}},
		{"-avx2,-bogus", dispatch.ErrUnknownFeature, []string{`"bogus"`}},
	} {
		_, err := dispatch.CPU{Has: all}.TurnOff(c.spec)
		testutil.WantErr(t, err, c.target, c.wants...)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(dispatch.EnvFeatures, "-avx2")
	c, err := dispatch.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Available().Has(dispatch.AVX2) || c.Available().Has(dispatch.AVX512F) {
		t.Errorf("DYNOP_CPU_FEATURES=-avx2 left %v", c.Available())
	}
	t.Setenv(dispatch.EnvFeatures, "-avx9")
	_, err = dispatch.FromEnv()
	testutil.WantErr(t, err, dispatch.ErrUnknownFeature, "DYNOP_CPU_FEATURES", `"avx9"`)

	for v, want := range map[string]bool{"": false, "0": false, "1": true, "true": true} {
		t.Setenv(dispatch.EnvVerify, v)
		if got, err := dispatch.VerifyFromEnv(); got != want || err != nil {
			t.Errorf("%s=%q: %v, %v", dispatch.EnvVerify, v, got, err)
		}
	}
	t.Setenv(dispatch.EnvVerify, "yes please")
	_, err = dispatch.VerifyFromEnv()
	testutil.WantErr(t, err, nil, "DYNOP_VERIFY_VARIANTS", "want 1 or 0")
}

func TestDetect(t *testing.T) {
	has := dispatch.Detect()
	switch runtime.GOARCH {
	case "amd64":
		if !has.Has(dispatch.SSE2) {
			t.Errorf("an amd64 CPU without sse2: %v", has)
		}
	case "arm64":
		if !has.Has(dispatch.ASIMD) {
			t.Errorf("an arm64 CPU without asimd: %v", has)
		}
	}
	if has != dispatch.FromNames(machine.Current().CPUFeatures) {
		t.Errorf("Detect %v disagrees with machine %v", has, machine.Current().CPUFeatures)
	}
	if dispatch.Host().Available() != has {
		t.Errorf("Host turns something off")
	}
}

var blurVariants = []dispatch.Variant{
	{"avx512", dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW)},
	{"avx2", dispatch.Of(dispatch.AVX2, dispatch.FMA)},
	{"scalar", 0},
}

func TestChoose(t *testing.T) {
	full := dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW).Closure()
	cases := []struct {
		cpu      dispatch.CPU
		disabled map[string]string
		want     string
		whys     []string
	}{
		{dispatch.CPU{Has: full}, nil, "avx512", []string{"chosen: the best runnable variant", "runnable; a better variant runs", "runnable; a better variant runs"}},
		{dispatch.CPU{Has: dispatch.AVX2.Set().Closure() | dispatch.FMA.Set()}, nil, "avx2", []string{"needs avx512bw,avx512f,f16c (this CPU lacks them)", "chosen: the best runnable variant", "runnable; a better variant runs"}},
		{must(dispatch.CPU{Has: full}.TurnOff("-avx2")), nil, "scalar", []string{"needs avx2,avx512bw,avx512f (turned off for this host: DYNOP_CPU_FEATURES or Options.CPUFeatures)", "needs avx2 (turned off for this host: DYNOP_CPU_FEATURES or Options.CPUFeatures)", "chosen: the reference, the only runnable variant"}},
		{dispatch.CPU{Has: full}, map[string]string{"avx512": "disagrees with scalar", "scalar": "ignored"}, "avx2", []string{"disabled: disagrees with scalar", "chosen: the best runnable variant", "runnable; a better variant runs"}},
		{dispatch.CPU{}, nil, "scalar", []string{"needs avx,avx2,avx512bw,avx512f,f16c,fma,sse2,sse3,sse41,sse42,ssse3 (this CPU lacks them)", "needs avx,avx2,fma,sse2,sse3,sse41,sse42,ssse3 (this CPU lacks them)", "chosen: the reference, the only runnable variant"}},
	}
	for _, c := range cases {
		ch, err := dispatch.Choose(blurVariants, c.cpu, c.disabled)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := ch.Chosen()
		if !ok || s.Name != c.want {
			t.Errorf("%v: chose %q, want %q", c.cpu, s.Name, c.want)
		}
		for i, st := range ch.Variants {
			if st.Why() != c.whys[i] {
				t.Errorf("%v: %s: Why = %q, want %q", c.cpu, st.Name, st.Why(), c.whys[i])
			}
		}
	}
}

func TestChooseNone(t *testing.T) {
	vs := []dispatch.Variant{{"avx2", dispatch.AVX2.Set()}, {"sse42", dispatch.SSE42.Set()}}
	ch, err := dispatch.Choose(vs, dispatch.CPU{Has: dispatch.SSE2.Set()}, nil)
	testutil.WantErr(t, err, dispatch.ErrNoVariant, `"avx2" needs`, `"sse42" needs sse3,sse41,sse42,ssse3 (this CPU lacks them)`)
	if _, ok := ch.Chosen(); ok || ch.Index != -1 || len(ch.Variants) != 2 {
		t.Errorf("Choice = %+v", ch)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		vs    []dispatch.Variant
		wants []string
	}{
		{nil, []string{"empty"}},
		{[]dispatch.Variant{{"", 0}}, []string{`name ""`}},
		{[]dispatch.Variant{{"2x", 0}}, []string{`name "2x"`, "want a letter"}},
		{[]dispatch.Variant{{"avx-2", 0}}, []string{`name "avx-2"`}},
		{[]dispatch.Variant{{"a", 0}, {"a", 0}}, []string{`"a" used twice`}},
		{[]dispatch.Variant{{"a", 1 << 63}}, []string{"unknown feature bits 0x8000000000000000"}},
	} {
		testutil.WantErr(t, dispatch.Check(c.vs), dispatch.ErrVariantList, c.wants...)
		if errors.Is(dispatch.Check(c.vs), dispatch.ErrNoVariant) {
			t.Errorf("Check(%v) says no variant runs here; the list is malformed", c.vs)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestTurnsOffNamesDispatchHasNoBitFor(t *testing.T) {
	c, err := dispatch.CPU{Has: dispatch.AVX512BW.Set().Closure()}.TurnOff("-avx2")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"avx512": true, "avx512vaes": true, "avxifma": true, "avx2": true, "avx512f": true, "fma": false, "aes": false, "amxtile": false} {
		if got := c.TurnsOff(name); got != want {
			t.Errorf("with -avx2, TurnsOff(%q) = %v, want %v", name, got, want)
		}
	}
}
