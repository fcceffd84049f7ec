package blas_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/blas"
	"github.com/dynop/dynop/tensor"
)

// openHost opens a host over the blas plugin, built for the test (skipped
// without OpenBLAS), with the CPU features off turned off.
func openHost(t testing.TB, off string) *dynop.Host {
	t.Helper()
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Paths: []string{cbuild.BLAS(t)}, NoDefaultPaths: true,
		CacheDir: t.TempDir(), Logger: testutil.Logger(t), CPUFeatures: off})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return h
}

// acquire returns the plugin's dynop.blas.BLAS.
func acquire(t testing.TB) blas.BLAS {
	t.Helper()
	m, ref, err := dynop.Acquire(context.Background(), openHost(t, ""), blas.PluginID, blas.Interface)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Release() })
	return m
}

// u is float32's unit roundoff, 2⁻²⁴.
const u = 0x1p-24

// randoms returns n normally distributed float32s.
func randoms(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// stored returns the rows and columns of the matrix that holds an
// operand of rows×cols, its transpose if trans.
func stored(trans bool, rows, cols int) (int, int) {
	if trans {
		return cols, rows
	}
	return rows, cols
}

// gemmRef is the reference of Sgemm: C = alpha·op(A)·op(B) + beta·C as a
// triple loop in float64 over the float32 values, and per element of C
// the bound on a float32 computation's error in any order of summation:
// (k+4)·u·(Σ|alpha·a·b| + |beta·c|), k+1 roundings of the products and
// sums, one of alpha's product, one of beta's, one of the last addition,
// and one to spare. Both are compact m×n.
func gemmRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, bound []float64) {
	at := func(i, p int) float64 {
		if transA {
			return float64(a[p*lda+i])
		}
		return float64(a[i*lda+p])
	}
	bt := func(p, j int) float64 {
		if transB {
			return float64(b[j*ldb+p])
		}
		return float64(b[p*ldb+j])
	}
	want, bound = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, abs float64
			for p := range k {
				t := float64(alpha) * at(i, p) * bt(p, j)
				s += t
				abs += math.Abs(t)
			}
			bc := 0.0 // with beta 0, C is not read (it may be nil)
			if beta != 0 {
				bc = float64(beta) * float64(c[i*ldc+j])
			}
			want[i*n+j] = s + bc
			bound[i*n+j] = float64(k+4) * u * (abs + math.Abs(bc))
		}
	}
	return want, bound
}

// floats returns the elements of a float32 tensor of any strides, in
// row-major order.
func floats(t testing.TB, x *tensor.Tensor) []float32 {
	t.Helper()
	x, err := x.Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// matrix returns a compact rows×cols float32 tensor holding x.
func matrix(t testing.TB, x []float32, rows, cols int) *tensor.Tensor {
	t.Helper()
	m, err := tensor.FromSlice(x, int64(rows), int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// batch returns a batch of the one tensor x.
func batch(t testing.TB, x *tensor.Tensor) *tensor.Batch {
	t.Helper()
	b, err := tensor.NewBatch(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
