package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
)

// variantsLib builds the loader's variant fixture, whose variants add
// their own number (scalar 1, avx2 2, avx512 3).
func variantsLib(t *testing.T) string {
	return cbuild.Plugin(t, "libvariants.so", "loader/native/testdata/variants.c", "-DMARK")
}

func TestInspectOperatorVariants(t *testing.T) {
	if !dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Skip("this CPU has no AVX2 to turn off")
	}
	lib := variantsLib(t)
	t.Setenv("DYNOP_CPU_FEATURES", "-avx2")
	code, out, errOut := runCLI(t, "inspect", "test.AddOne", lib)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`operator +test\.AddOne`,
		`cpu +.*\(turned off: avx2,`,
		`variants +best first; the last is the reference`,
		`avx512 +needs avx512bw,avx512f +needs avx2,avx512bw,avx512f \(turned off for this host: DYNOP_CPU_FEATURES or Options\.CPUFeatures\)`,
		`avx2 +needs avx2 +needs avx2 \(turned off for this host: DYNOP_CPU_FEATURES or Options\.CPUFeatures\)`,
		`\* scalar +needs nothing +chosen: the reference, the only runnable variant`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("inspect does not match %s:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(t, "inspect", "--json", "test.AddOne", lib)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Schema   string
		Operator struct{ Plugin string }
		CPU      struct{ Available, Off []string }
		Variants []struct {
			Name             string
			Needs            []string
			Runnable, Chosen bool
			Reference        bool
			Why              string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Schema != "dynop.operator/v2" || got.Operator.Plugin != "dynop.plugin.variants" || len(got.Variants) != 3 ||
		!got.Variants[2].Chosen || !got.Variants[2].Reference || got.Variants[0].Runnable || len(got.CPU.Off) == 0 {
		t.Errorf("inspect --json: %+v", got)
	}
}

func TestBenchVariants(t *testing.T) {
	if !dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Skip("this CPU has no AVX2")
	}
	lib := variantsLib(t)
	t.Setenv("DYNOP_CPU_FEATURES", "-avx512f")
	// Flags may come after the operator's name.
	code, out, errOut := runCLI(t, "bench", "test.AddOne", "--shape", "64x32", "--time", "1ms", lib, "--batch", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`test\.AddOne on 2 × uint8 \[64 32\]`,
		`VARIANT +NEEDS +TIME/CALL +INPUT MB/s +VS REFERENCE +CALLS`,
		`avx512 +avx512bw,avx512f +- +- +- +- +skipped: needs avx512bw,avx512f \(turned off for this host: DYNOP_CPU_FEATURES or Options\.CPUFeatures\)`,
		// The fixture's variants add different numbers: bench says so.
		`avx2 +avx2 +[0-9.]+[µnm]?s +[0-9]+ +[0-9.]+× +[0-9]+ +chosen; DISAGREES with the reference: output 0 sample 0: element \[0 0\] is [0-9a-f]{2}, want [0-9a-f]{2}`,
		`scalar +nothing +[0-9.]+[µnm]?s +[0-9]+ +1\.00× +[0-9]+ +reference`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("bench does not match %s:\n%s", want, out)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	lib := variantsLib(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "bench takes an operator name"},
		{[]string{"bench", "--shape", "3xq", "test.AddOne", lib}, `--shape "3xq": dimension "q" is not a count`},
		{[]string{"bench", "--shape", "", "test.AddOne", lib}, "no dimensions"},
		{[]string{"bench", "--batch", "0", "test.AddOne", lib}, "--batch 0: want at least 1"},
		{[]string{"bench", "--time", "-1s", "test.AddOne", lib}, "want a positive duration"},
		{[]string{"bench", "--arg", "nothing", "test.AddOne", lib}, `--arg "nothing": want NAME=VALUE`},
		{[]string{"bench", "test.AddTwo", lib}, `did you mean "test.AddOne"?`},
		{[]string{"bench", "--dtype", "float32", "test.AddOne", lib}, "float32"},
		{[]string{"bench", "--arg", "k=1", "test.AddOne", lib}, `"k"`},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error saying %q", c.args, code, errOut, c.want)
		}
	}
}
