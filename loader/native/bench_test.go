package native_test

import (
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/rawcall"
	"github.com/dynop/dynop/plugins/vecmath"
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
