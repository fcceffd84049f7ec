package bench

import (
	"log/slog"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/rawcall"
	"github.com/dynop/dynop/plugins/blas"
)

// blasNative returns the blas plugin, which wraps OpenBLAS; benchmarks
// that ask for it skip where OpenBLAS's cblas.h is missing.
func blasNative(b *testing.B) string { return fixture(b, "libdynop_blas.so", cbuild.BLAS) }

// BenchmarkSgemm multiplies 64×64 float32 matrices (C = A·Bᵀ, row-major)
// with OpenBLAS's cblas_sgemm two ways: called directly from Go through
// cgo (the reference: a cgo call of the function's address, found with
// dlsym in libopenblas.so.0, the library the plugin links), and through
// the dynop.blas.BLAS table of the plugin dynop.plugin.blas, acquired
// from a host (the binding's checks of the sizes in Go, then a cgo call
// to a trampoline that calls through the table, which calls
// cblas_sgemm). The table's row alternates with the reference in its loop
// and reports the ratio of their times. Target (issue 25): at most 1.05×.
func BenchmarkSgemm(b *testing.B) {
	const n = 64
	a, bm, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], bm[i] = float32(i%17)/17, float32(i%13)/13
	}
	direct := func(b *testing.B) func() {
		fn, err := rawcall.Symbol("libopenblas.so.0", "cblas_sgemm")
		if err != nil {
			b.Skip(err)
		}
		return func() { rawcall.Sgemm(fn, false, true, n, n, n, 1, a, n, bm, n, 0, c, n) }
	}
	b.Run("n=64/cgo-direct", func(b *testing.B) { loop(b, direct(b)) })
	b.Run("n=64/dynop-table", func(b *testing.B) {
		h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, NoDefaultPaths: true, Paths: []string{blasNative(b)}, CacheDir: b.TempDir(),
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close(ctx) })
		m, ref, err := dynop.Acquire(ctx, h, blas.PluginID, blas.Interface)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ref.Release() })
		versus(b, 0, direct(b), func() {
			if err := m.Sgemm(false, true, n, n, n, 1, a, n, bm, n, 0, c, n); err != nil {
				b.Fatal(err)
			}
		})
	})
}
