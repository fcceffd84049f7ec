package dynop_test

import (
	"context"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// Adder is the interface the call benchmarks go through.
type Adder interface{ Add(a, b int) int }

var adderDef = iface.Define[Adder]("8E2F4A6C-1B3D-4E5F-8A7B-9C0D1E2F3A4B", "bench.Adder", iface.V(1, 0, 0))

type adder struct{}

// Add is kept out of line: a real kernel is not inlined into its caller,
// so the direct call it is compared with is a real call too.
//
//go:noinline
func (adder) Add(a, b int) int { return a + b }

type adderPlugin struct{}

func (adderPlugin) Info() schema.Plugin {
	return schema.Plugin{ID: "bench.plugin.adder", Version: iface.V(1, 0, 0), Interfaces: []iface.Desc{adderDef.Desc}}
}

func (adderPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	return adderDef.Provide(h, adder{})
}

var sink int

// startedAdder opens a host over the adder plugin and acquires its
// interface, which keeps it started until cleanup.
func startedAdder(tb testing.TB) (*dynop.Host, Adder) {
	tb.Helper()
	ctx := context.Background()
	h := open(tb, adderPlugin{})
	a, ref, err := dynop.Acquire(ctx, h, "bench.plugin.adder", adderDef)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ref.Release()
		h.Close(ctx)
	})
	return h, a
}

// BenchmarkAcquireRelease measures acquiring and releasing a reference to
// an interface of a started plugin (another reference keeps it started).
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	h, _ := startedAdder(b)

	b.Run("untyped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, ref, err := h.Acquire(ctx, "bench.plugin.adder", adderDef.UID, adderDef.Version)
			if err != nil {
				b.Fatal(err)
			}
			if err := ref.Release(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, ref, err := dynop.Acquire(ctx, h, "bench.plugin.adder", adderDef)
			if err != nil {
				b.Fatal(err)
			}
			sink += a.Add(1, 2)
			if err := ref.Release(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCall measures a call through an interface acquired from a Go
// plugin against a direct call of the same method in the same run, and
// reports both, the ratio and the extra nanoseconds per call (target in
// DESIGN.md: at most 20 ns more, no allocations). ns/op counts both loops.
func BenchmarkCall(b *testing.B) {
	_, viaPlugin := startedAdder(b)
	var direct adder

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		sink += direct.Add(i, 1)
	}
	directNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	start = time.Now()
	for i := range b.N {
		sink += viaPlugin.Add(i, 1)
	}
	pluginNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.StopTimer()

	b.ReportMetric(directNs, "direct-ns/call")
	b.ReportMetric(pluginNs, "plugin-ns/call")
	b.ReportMetric(pluginNs/directNs, "ratio")
	b.ReportMetric(pluginNs-directNs, "extra-ns/call")
}

// TestHotPathsDoNotAllocate guards the benchmarks' allocation counts:
// acquiring and releasing a started plugin's interface, and calling
// through it, allocate nothing.
func TestHotPathsDoNotAllocate(t *testing.T) {
	ctx := context.Background()
	h, a := startedAdder(t)
	if n := testing.AllocsPerRun(1000, func() {
		a2, ref, err := dynop.Acquire(ctx, h, "bench.plugin.adder", adderDef)
		if err != nil {
			t.Fatal(err)
		}
		sink += a2.Add(1, 2)
		if err := ref.Release(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("acquire+call+release allocates %v times per run, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() { sink += a.Add(3, 4) }); n != 0 {
		t.Errorf("a call through an acquired interface allocates %v times, want 0", n)
	}
}
