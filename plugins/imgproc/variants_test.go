package imgproc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// opCase is one operator call of the variant proof.
type opCase struct {
	name   string
	op     string
	args   schema.Args
	inputs []*tensor.Batch
}

// oddShapes are image sizes (H, W) that are not multiples of any vector
// width, with 1×1, a single row, a single column and a few larger ones.
var oddShapes = [][2]int64{{1, 1}, {1, 17}, {17, 1}, {2, 3}, {7, 13}, {33, 65}, {67, 129}, {5, 200}, {101, 301}}

func imageBatch(t *testing.T, rng *rand.Rand, dt tensor.DType, h, w, c int64) *tensor.Batch {
	t.Helper()
	b, err := tensor.Random(rng, dt, "HWC", [][]int64{{h, w, c}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// variantCases lists every operator of the plugin on random images of odd
// sizes, both dtypes and every channel count it takes.
func variantCases(t *testing.T) []opCase {
	rng := rand.New(rand.NewPCG(42, 7))
	var cases []opCase
	for _, dt := range []tensor.DType{tensor.Uint8, tensor.Float32} {
		for _, s := range oddShapes {
			h, w := s[0], s[1]
			for _, c := range []int64{1, 3, 4} {
				in := []*tensor.Batch{imageBatch(t, rng, dt, h, w, c)}
				add := func(name, opName string, args schema.Args) {
					cases = append(cases, opCase{fmt.Sprintf("%s %s %dx%dx%d %s", opName, dt, h, w, c, name), opName, args, in})
				}
				for _, sigma := range []float64{0.4, 1, 2.5, 9} {
					add(fmt.Sprintf("sigma=%g", sigma), imgproc.GaussianBlur, schema.Args{"sigma": sigma})
				}
				add("sigma=3 radius=1", imgproc.GaussianBlur, schema.Args{"sigma": 3.0, "radius": 1})
				add("", imgproc.Sobel, nil)
				add("up", imgproc.Resize, schema.Args{"width": 2*w + 1, "height": h + 3})
				add("down", imgproc.Resize, schema.Args{"width": max(w/3, 1), "height": max(h/2, 1)})
				if c >= 3 {
					add("", imgproc.Grayscale, nil)
				}
			}
		}
	}
	for _, shape := range [][]int64{{1}, {17}, {7, 13}, {1000003}} {
		x, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{shape})
		y, _ := tensor.Random(rng, tensor.Float32, "", [][]int64{shape})
		cases = append(cases, opCase{fmt.Sprintf("saxpy %v", shape), imgproc.Saxpy, schema.Args{"a": -1.75}, []*tensor.Batch{x, y}})
	}
	return cases
}

// runCases runs every case on a host whose CPU features off turns off
// (dynop.Options.CPUFeatures, as DYNOP_CPU_FEATURES would) and returns
// the outputs and the variant each instance ran.
func runCases(t *testing.T, lib, off string, cases []opCase) ([][]*tensor.Batch, []string) {
	t.Helper()
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{lib}, NoDefaultPaths: true, CacheDir: t.TempDir(), CPUFeatures: off})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	outs := make([][]*tensor.Batch, len(cases))
	ran := make([]string, len(cases))
	for i, c := range cases {
		in, err := h.NewOperator(ctx, c.op, c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if outs[i], err = in.Exec(ctx, c.inputs...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ran[i] = in.Variant()
		in.Close()
	}
	return outs, ran
}

// TestEveryVariantAgreesWithScalar is the proof of the plugin's variants:
// on random images of odd sizes, every variant this CPU can run, forced
// through DYNOP_CPU_FEATURES, computes what the scalar reference computes:
// the same bytes for uint8, and float32 within op.Agree's tolerance.
func TestEveryVariantAgreesWithScalar(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	lib := cbuild.Imgproc(t)
	cases := variantCases(t)
	want, ran := runCases(t, lib, "-sse2", cases) // no SIMD feature left: the reference
	for i, v := range ran {
		if v != "scalar" {
			t.Fatalf("%s: with -sse2 ran %q, want scalar", cases[i].name, v)
		}
	}
	tested := map[string]bool{}
	for _, off := range []string{"", "-avx512f", "-avx2"} {
		cpu, err := dispatch.Host().TurnOff(off)
		if err != nil {
			t.Fatal(err)
		}
		best := dispatch.Variant{Name: "scalar"}
		for _, v := range []dispatch.Variant{{Name: "avx512", Needs: dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW)}, {Name: "avx2", Needs: dispatch.Of(dispatch.AVX2)}} {
			if cpu.Available().Contains(v.Needs.Closure()) {
				best = v
				break
			}
		}
		run := cases
		if best.Name == "scalar" { // the reference's bytes: check the choice on a few cases
			run = cases[:min(len(cases), 12)]
		}
		got, ran := runCases(t, lib, off, run)
		for i, c := range run {
			if ran[i] != best.Name {
				t.Errorf("DYNOP_CPU_FEATURES=%q: %s ran %q, want %q on this CPU (%v)", off, c.name, ran[i], best.Name, cpu)
			}
			if err := op.Agree(got[i], want[i]); err != nil {
				t.Errorf("DYNOP_CPU_FEATURES=%q: %s: variant %s disagrees with scalar: %v", off, c.name, ran[i], err)
			}
		}
		tested[best.Name] = true
	}
	t.Logf("variants tested against scalar on this CPU: %v (%d cases each)", tested, len(cases))
	if !tested["avx2"] && dispatch.Host().Available().Has(dispatch.AVX2) {
		t.Error("the AVX2 variants were never tested on a CPU that has AVX2")
	}
}
