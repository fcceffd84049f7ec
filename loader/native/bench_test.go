package native_test

import (
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/rawcall"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/vecmath"
	"github.com/dynop/dynop/tensor"
)

//go:noinline
func goNop() {}

// startedVecMath starts the C plugin in a host and returns its interface.
func startedVecMath(tb testing.TB) vecmath.Math {
	h := openHost(tb, []string{cbuild.VecMath(tb)})
	m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ref.Release() })
	return m
}

// BenchmarkNativeCall calls an empty C function three ways: a direct Go
// call of an empty Go function (the floor of any call), a raw cgo call,
// and a call through the C plugin's interface acquired from the host (an
// interface method, a cgo call to a trampoline, an indirect call through
// the table).
func BenchmarkNativeCall(b *testing.B) {
	m := startedVecMath(b)
	b.Run("go-direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			goNop()
		}
	})
	b.Run("cgo-raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rawcall.Nop()
		}
	})
	b.Run("dynop-native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Nop()
		}
	})
}

// BenchmarkNativeCallRatio interleaves the raw cgo call and the call
// through the plugin in one run and reports each, their ratio (target in
// DESIGN.md: at most 1.5) and the direct Go call for scale. ns/op counts
// all three loops.
func BenchmarkNativeCallRatio(b *testing.B) {
	m := startedVecMath(b)
	b.ReportAllocs()
	b.ResetTimer()
	timeLoop := func(f func()) float64 {
		start := time.Now()
		for range b.N {
			f()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	direct := timeLoop(goNop)
	raw := timeLoop(rawcall.Nop)
	viaPlugin := timeLoop(m.Nop)
	b.StopTimer()
	b.ReportMetric(direct, "go-ns/call")
	b.ReportMetric(raw, "cgo-ns/call")
	b.ReportMetric(viaPlugin, "dynop-ns/call")
	b.ReportMetric(viaPlugin/raw, "ratio-vs-cgo")
}

// BenchmarkNativeDot is a call that does work: a dot product of 1,024
// floats through the plugin, to show where call overhead stops mattering.
func BenchmarkNativeDot(b *testing.B) {
	m := startedVecMath(b)
	x := make([]float32, 1024)
	for i := range x {
		x[i] = float32(i)
	}
	b.SetBytes(int64(2 * 4 * len(x)))
	b.ReportAllocs()
	var s float32
	for b.Loop() {
		s += m.Dot(x, x)
	}
	_ = s
}

// TestNativeCallsDoNotAllocate guards the benchmarks' allocation counts.
func TestNativeCallsDoNotAllocate(t *testing.T) {
	m := startedVecMath(t)
	x, y := []float32{1, 2, 3, 4}, make([]float32, 4)
	if n := testing.AllocsPerRun(1000, m.Nop); n != 0 {
		t.Errorf("Nop through the plugin allocates %v times per call, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { m.Saxpy(2, x, y) }); n != 0 {
		t.Errorf("Saxpy through the plugin allocates %v times per call, want 0", n)
	}
}

// interleave times each f over b.N calls, one after the other in the same
// run, and returns ns per call for each.
// The calls alternate in rounds, so that drift in the machine's speed
// touches each alike.
func interleave(b *testing.B, fs ...func()) []float64 {
	const rounds = 10
	b.ResetTimer()
	total := make([]time.Duration, len(fs))
	for r := range rounds {
		n := b.N/rounds + min(1, b.N%rounds/(r+1))
		for i, f := range fs {
			start := time.Now()
			for range n {
				f()
			}
			total[i] += time.Since(start)
		}
	}
	b.StopTimer()
	out := make([]float64, len(fs))
	for i, d := range total {
		out[i] = float64(d.Nanoseconds()) / float64(b.N)
	}
	return out
}

// setUpOperator instantiates operator name of the plugin file path in a
// host, sets it up for inputs and allocates its outputs.
func setUpOperator(b *testing.B, path, name string, inputs []*tensor.Batch, opts ...op.Option) (run func()) {
	h := openHost(b, []string{path})
	in, err := h.NewOperator(ctx, name, nil, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close() })
	descs, err := in.Setup(inputs)
	if err != nil {
		b.Fatal(err)
	}
	outputs := make([]*tensor.Batch, len(descs))
	for i, d := range descs {
		if outputs[i], err = d.Alloc(); err != nil {
			b.Fatal(err)
		}
	}
	return func() {
		if err := in.Run(ctx, outputs, inputs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNativeOperatorEmpty runs an empty C operator on a one-sample
// batch through an op.Instance (argument-checked instance, input and
// output checks against Setup, pinning, DLPack descriptors, one cgo call
// for the batch) against a raw cgo call of an empty function (target in
// DESIGN.md: at most 1.5×; see the README for what bounds it).
//
// A call with data passes two Go pointers, which cgo checks unless
// GODEBUG=cgocheck=0; cgo-2ptr-ns is a raw cgo call with the same two
// pointers, the floor for any C function that reads Go memory.
func BenchmarkNativeOperatorEmpty(b *testing.B) {
	x, _ := tensor.New(tensor.Uint8, 16)
	y, _ := tensor.New(tensor.Uint8, 16)
	run := setUpOperator(b, opsPlugin(b), "test.Nop", []*tensor.Batch{mustBatch(b, x)})
	b.ReportAllocs()
	t := interleave(b, rawcall.Nop, func() { rawcall.Nop2(x.Base(), y.Base()) }, run)
	b.ReportMetric(t[0], "cgo-ns/call")
	b.ReportMetric(t[1], "cgo-2ptr-ns/call")
	b.ReportMetric(t[2], "op-ns/call")
	b.ReportMetric(t[2]/t[0], "ratio-vs-cgo")
	b.ReportMetric(t[2]/t[1], "ratio-vs-cgo-2ptr")
}

// BenchmarkNativeOperator4MiB converts a 1024×1024 RGBA image (4 MiB) to
// grayscale with the imgproc plugin's C kernel called directly, and with
// the same kernel as the operator imgproc.Grayscale (its scalar variant)
// through the host (target in DESIGN.md: at most 1.02×).
func BenchmarkNativeOperator4MiB(b *testing.B) {
	const h, w, c = 1024, 1024, 4
	path := cbuild.Imgproc(b)
	src := make([]uint8, h*w*c)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	dst := make([]uint8, h*w)
	kernel, err := rawcall.Symbol(path, "dynop_imgproc_gray_u8")
	if err != nil {
		b.Fatal(err)
	}
	img, _ := tensor.FromSlice(src, h, w, c)
	img, _ = img.WithLayout("HWC")
	// The exported kernel is the scalar variant: force the operator to it,
	// so that the ratio is the host's overhead and not AVX-512's speed.
	run := setUpOperator(b, path, "imgproc.Grayscale", []*tensor.Batch{mustBatch(b, img)}, op.WithVariant("scalar"))
	b.SetBytes(int64(len(src) + len(dst)))
	b.ReportAllocs()
	t := interleave(b, func() { rawcall.GrayU8(kernel, src, h, w, c, dst) }, run)
	b.ReportMetric(t[0], "direct-ns/op")
	b.ReportMetric(t[1], "op-ns/op")
	b.ReportMetric(t[1]/t[0], "ratio-vs-direct")
}
