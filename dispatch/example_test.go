package dispatch_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dynop/dynop/dispatch"
)

// kernels are the variants of one function, best first, the portable
// reference last.
var kernels = []dispatch.Variant{
	{Name: "avx512", Needs: dispatch.Of(dispatch.AVX512BW)},
	{Name: "avx2", Needs: dispatch.Of(dispatch.AVX2, dispatch.FMA)},
	{Name: "sse41", Needs: dispatch.Of(dispatch.SSE41)},
	{Name: "scalar"},
}

// A CPU with AVX2 but no AVX-512 runs the avx2 variant; Choose says why
// each other variant does not run. A host would use dispatch.FromEnv
// (or dispatch.Host) rather than a CPU spelled out.
func Example() {
	has, err := dispatch.Parse("avx2,fma,popcnt")
	if err != nil {
		fmt.Println(err)
		return
	}
	cpu := dispatch.CPU{Has: has.Closure()}

	choice, err := dispatch.Choose(kernels, cpu, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range choice.Variants {
		fmt.Printf("%-7s %s\n", s.Name, s.Why())
	}
	best, _ := choice.Chosen()
	fmt.Println("runs:", best.Name)
	// Output:
	// avx512  needs avx512bw,avx512f,f16c (this CPU lacks them)
	// avx2    chosen: the best runnable variant
	// sse41   runnable; a better variant runs
	// scalar  runnable; a better variant runs
	// runs: avx2
}

// Turning a feature off, as DYNOP_CPU_FEATURES=-avx2 does, turns off
// every feature that builds on it, and the best variant left runs.
func ExampleCPU_TurnOff() {
	cpu := dispatch.CPU{Has: dispatch.Of(dispatch.AVX512BW, dispatch.POPCNT).Closure()}
	cpu, err := cpu.TurnOff("-avx2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cpu)

	choice, err := dispatch.Choose(kernels, cpu, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range choice.Variants {
		fmt.Printf("%-7s %s\n", s.Name, s.Why())
	}
	// Output:
	// avx,f16c,fma,popcnt,sse2,sse3,sse41,sse42,ssse3 (turned off: avx2,avx512bw,avx512f)
	// avx512  needs avx2,avx512bw,avx512f (turned off for this host: DYNOP_CPU_FEATURES or Options.CPUFeatures)
	// avx2    needs avx2 (turned off for this host: DYNOP_CPU_FEATURES or Options.CPUFeatures)
	// sse41   chosen: the best runnable variant
	// scalar  runnable; a better variant runs
}

// A variant that disagreed with the reference is disabled by name; on a
// CPU without any of the features the reference alone runs, and when
// nothing can run the error says what each variant lacks.
func ExampleChoose() {
	cpu := dispatch.CPU{Has: dispatch.Of(dispatch.AVX2, dispatch.FMA).Closure()}
	disabled := map[string]string{"avx2": "disagrees with the reference at element 17"}
	choice, err := dispatch.Choose(kernels, cpu, disabled)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range choice.Variants {
		fmt.Printf("%-7s %s\n", s.Name, s.Why())
	}

	// The zero CPU has no features: only the reference can run on it.
	choice, _ = dispatch.Choose(kernels, dispatch.CPU{}, nil)
	s, _ := choice.Chosen()
	fmt.Println(s.Name+":", s.Why())

	// A list without a portable reference may have nothing to run.
	_, err = dispatch.Choose(kernels[:2], dispatch.CPU{}, nil)
	fmt.Println(errors.Is(err, dispatch.ErrNoVariant))
	fmt.Println(err)
	// Output:
	// avx512  needs avx512bw,avx512f,f16c (this CPU lacks them)
	// avx2    disabled: disagrees with the reference at element 17
	// sse41   chosen: the best runnable variant
	// scalar  runnable; a better variant runs
	// scalar: chosen: the reference, the only runnable variant
	// true
	// no runnable variant: "avx512" needs avx,avx2,avx512bw,avx512f,f16c,fma,sse2,sse3,sse41,sse42,ssse3 (this CPU lacks them); "avx2" needs avx,avx2,fma,sse2,sse3,sse41,sse42,ssse3 (this CPU lacks them)
}

// Parse reads a comma-separated list of feature names. An unknown name
// is an error; its message goes on to suggest the nearest name known on
// this architecture and to list them all.
func ExampleParse() {
	fs, err := dispatch.Parse("fma, avx2")
	fmt.Println(fs, err)
	fmt.Println(fs.Has(dispatch.AVX2), fs.Has(dispatch.AVX))

	_, err = dispatch.Parse("avx2,avx512bf")
	fmt.Println(errors.Is(err, dispatch.ErrUnknownFeature))
	msg, _, _ := strings.Cut(err.Error(), " (did you mean")
	fmt.Println(msg)
	// Output:
	// avx2,fma <nil>
	// true false
	// true
	// unknown CPU feature "avx512bf"
}

// A variant's needs are closed under implication: asking for avx512bw
// asks for everything it builds on.
func ExampleFeatures_Closure() {
	fmt.Println(dispatch.AVX512BW.Set().Closure())
	fmt.Println(dispatch.Of(dispatch.AVX2).Closure().Has(dispatch.SSE41))
	// Output:
	// avx,avx2,avx512bw,avx512f,f16c,fma,sse2,sse3,sse41,sse42,ssse3
	// true
}

// Check catches a malformed list of variants, which is its author's
// mistake rather than the machine's.
func ExampleCheck() {
	err := dispatch.Check([]dispatch.Variant{
		{Name: "avx2", Needs: dispatch.Of(dispatch.AVX2)},
		{Name: "avx2"},
	})
	fmt.Println(errors.Is(err, dispatch.ErrVariantList))
	fmt.Println(err)
	// Output:
	// true
	// malformed list of variants: variant name "avx2" used twice
}
