package native_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/plugins/vecmath"
)

// BenchmarkFirstAcquire is the lazy-start latency of one plugin: the time
// from a host that knows the example C plugin vecmath, opened from a warm
// registry cache so that none of the plugin's code has run, to its first
// interface call: dynop.Acquire (which dlopens the library and runs its
// register) and one call of Nop. ns/op is that latency; opening the host
// beforehand and releasing the reference and closing the host afterwards
// happen with the timer stopped. open-us is the mean µs of the cached
// open itself, timed apart. Each iteration closes its host before the
// next opens one: a native library is started by one host at a time per
// process. (It is the start-up cost that the DESIGN target leaves to the
// first use of a plugin: opening a host over 1,000 plugins from
// manifests/cache vs loading each plugin to ask it (NVIGI's way): ≥ 20×
// faster, ≤ 20 ms.)
//
// This benchmark is in package native_test, apart from the other open
// benchmarks, because package vecmath imports package native.
func BenchmarkFirstAcquire(b *testing.B) {
	opts := dynop.Options{Paths: []string{cbuild.VecMath(b)}, CacheDir: b.TempDir(), NoRegistered: true,
		NoDefaultPaths: true, Logger: slog.New(slog.DiscardHandler)}
	var opened time.Duration // in the loop
	open := func() *dynop.Host {
		t0 := time.Now()
		h, err := dynop.Open(ctx, opts)
		opened += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		sts := h.Plugins()
		if len(sts) != 1 || sts[0].Info.ID != vecmath.PluginID || sts[0].State != dynop.StateAvailable || sts[0].Starts != 0 {
			b.Fatalf("the host knows %+v, want %s available, never started", sts, vecmath.PluginID)
		}
		return h
	}
	closeHost := func(h *dynop.Host) {
		if err := h.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	closeHost(open()) // warms the cache
	opened = 0
	iters := 0
	for b.Loop() {
		b.StopTimer()
		h := open()
		b.StartTimer()
		m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
		if err != nil {
			b.Fatal(err)
		}
		m.Nop()
		b.StopTimer()
		if err := ref.Release(); err != nil {
			b.Fatal(err)
		}
		closeHost(h)
		iters++
		b.StartTimer()
	}
	b.ReportMetric(opened.Seconds()*1e6/float64(iters), "open-us")
}
