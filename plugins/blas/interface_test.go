package blas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/internal/rawcall"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/blas"
)

// gemmCase is one Sgemm call: sizes, transposes, and how much each
// leading dimension exceeds its minimum.
type gemmCase struct {
	m, n, k        int
	transA, transB bool
	pad            int
	alpha, beta    float32
}

func (c gemmCase) String() string {
	return fmt.Sprintf("m=%d n=%d k=%d transA=%v transB=%v pad=%d alpha=%g beta=%g", c.m, c.n, c.k, c.transA, c.transB, c.pad, c.alpha, c.beta)
}

// gemmCases are odd and even sizes, 1×1 to 257×129, every combination of
// transposes, with and without padded rows.
func gemmCases() []gemmCase {
	var cs []gemmCase
	for _, s := range [][3]int{{1, 1, 1}, {7, 5, 13}, {64, 64, 64}, {257, 67, 129}, {3, 1, 200}, {1, 9, 2}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, pad := range []int{0, 3} {
				cs = append(cs, gemmCase{s[0], s[1], s[2], tr[0], tr[1], pad, 1.5, 0})
			}
		}
		cs = append(cs, gemmCase{s[0], s[1], s[2], false, false, 1, -0.75, 0.5})
	}
	return cs
}

// operands returns random A, B and C for c with their leading dimensions.
func (c gemmCase) operands(rng *rand.Rand) (a []float32, lda int, b []float32, ldb int, cm []float32, ldc int) {
	ar, ac := stored(c.transA, c.m, c.k)
	br, bc := stored(c.transB, c.k, c.n)
	lda, ldb, ldc = ac+c.pad, bc+c.pad, c.n+c.pad
	return randoms(rng, ar*lda), lda, randoms(rng, br*ldb), ldb, randoms(rng, c.m*ldc), ldc
}

// TestSgemmMatchesReference: through the table, Sgemm computes the
// float64 triple loop's C within the bound of a float32 computation,
// (k+4)·2⁻²⁴·(Σ|alpha·a·b| + |beta·c|) per element, and leaves the padding
// between C's rows as it was.
func TestSgemmMatchesReference(t *testing.T) {
	m := acquire(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range gemmCases() {
		a, lda, b, ldb, cm, ldc := c.operands(rng)
		want, bound := gemmRef(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, cm, ldc)
		got := slices.Clone(cm)
		if err := m.Sgemm(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, got, ldc); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		worst := 0.0
		for i := range c.m {
			for j := range ldc {
				g := got[i*ldc+j]
				if j >= c.n {
					if g != cm[i*ldc+j] {
						t.Fatalf("%v: Sgemm wrote C[%d][%d], in the padding", c, i, j)
					}
					continue
				}
				d := math.Abs(float64(g) - want[i*c.n+j])
				if d > bound[i*c.n+j] {
					t.Fatalf("%v: C[%d][%d] = %v, want %v within %.3g", c, i, j, g, want[i*c.n+j], bound[i*c.n+j])
				}
				worst = max(worst, d/bound[i*c.n+j])
			}
		}
		if testing.Verbose() {
			t.Logf("%v: worst error %.3f of the bound", c, worst)
		}
	}
}

// TestSgemmEmpty: with k = 0, C = beta·C; with m or n 0, nothing is
// touched, and empty slices are enough.
func TestSgemmEmpty(t *testing.T) {
	m := acquire(t)
	c := []float32{1, 2, 3, 4, 5, 6}
	if err := m.Sgemm(false, false, 2, 3, 0, 1, nil, 1, nil, 3, 0.5, c, 3); err != nil {
		t.Fatal(err)
	}
	if want := []float32{0.5, 1, 1.5, 2, 2.5, 3}; !slices.Equal(c, want) {
		t.Errorf("k = 0: C = %v, want beta·C = %v", c, want)
	}
	if err := m.Sgemm(false, false, 0, 3, 2, 1, nil, 2, []float32{1, 2, 3, 4, 5, 6}, 3, 0, nil, 3); err != nil {
		t.Errorf("m = 0: %v", err)
	}
	if err := m.Sgemm(false, false, 2, 0, 2, 1, []float32{1, 2, 3, 4}, 2, nil, 1, 0, nil, 1); err != nil {
		t.Errorf("n = 0: %v", err)
	}
}

// TestTableMatchesDirectOpenBLAS: Sgemm through the table is cblas_sgemm
// called directly, bit for bit: the table adds nothing to the arithmetic.
func TestTableMatchesDirectOpenBLAS(t *testing.T) {
	m := acquire(t)
	fn, err := rawcall.Symbol("libopenblas.so.0", "cblas_sgemm")
	if err != nil {
		t.Skip(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range gemmCases() {
		a, lda, b, ldb, cm, ldc := c.operands(rng)
		viaTable, direct := slices.Clone(cm), slices.Clone(cm)
		if err := m.Sgemm(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, viaTable, ldc); err != nil {
			t.Fatal(err)
		}
		rawcall.Sgemm(fn, c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, direct, ldc)
		for i := range direct {
			if math.Float32bits(viaTable[i]) != math.Float32bits(direct[i]) {
				t.Fatalf("%v: element %d: %v through the table, %v from cblas_sgemm", c, i, viaTable[i], direct[i])
			}
		}
	}
}

// TestSaxpySdotMatchReference: Saxpy within 2·2⁻²⁴·(|alpha·x| + |y|) of
// the float64 result per element (a fused multiply-add rounds once, a
// product and a sum twice), Sdot within (n+2)·2⁻²⁴·Σ|x·y|, for lengths 0
// to 1000 and x and y the same slice.
func TestSaxpySdotMatchReference(t *testing.T) {
	m := acquire(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 13, 64, 257, 1000} {
		x, y := randoms(rng, n), randoms(rng, n)
		const alpha = float32(-1.25)
		got := slices.Clone(y)
		if err := m.Saxpy(alpha, x, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			ax := float64(alpha) * float64(x[i])
			want := ax + float64(y[i])
			if d := math.Abs(float64(got[i]) - want); d > 2*u*(math.Abs(ax)+math.Abs(float64(y[i]))) {
				t.Fatalf("Saxpy n=%d: y[%d] = %v, want %v", n, i, got[i], want)
			}
		}
		for _, yy := range [][]float32{y, x} {
			dot, err := m.Sdot(x, yy)
			if err != nil {
				t.Fatal(err)
			}
			var want, abs float64
			for i := range x {
				p := float64(x[i]) * float64(yy[i])
				want += p
				abs += math.Abs(p)
			}
			if d := math.Abs(float64(dot) - want); d > float64(n+2)*u*abs {
				t.Errorf("Sdot n=%d: %v, want %v within %.3g", n, dot, want, float64(n+2)*u*abs)
			}
		}
	}
}

// TestBadArguments: every size the routines cannot take is an error that
// wraps blas.ErrArgument and says what is wrong, and C and y are left as
// they were.
func TestBadArguments(t *testing.T) {
	m := acquire(t)
	a, b := make([]float32, 12), make([]float32, 12)
	c := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	orig := slices.Clone(c)
	big := huge(t)
	// a 3×4 times 4×3 into 3×3 is right: each case breaks one thing.
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"negative m", func() error { return m.Sgemm(false, false, -1, 3, 4, 1, a, 4, b, 3, 0, c, 3) }, "Sgemm: m = -1 is negative"},
		{"negative n", func() error { return m.Sgemm(false, false, 3, -2, 4, 1, a, 4, b, 3, 0, c, 3) }, "Sgemm: n = -2 is negative"},
		{"negative k", func() error { return m.Sgemm(false, false, 3, 3, -4, 1, a, 4, b, 3, 0, c, 3) }, "Sgemm: k = -4 is negative"},
		{"negative ldc", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c, -3) }, "Sgemm: ldc = -3 is negative"},
		{"m beyond int32", func() error { return m.Sgemm(false, false, math.MaxInt32+1, 3, 4, 1, a, 4, b, 3, 0, c, 3) }, "Sgemm: m = 2147483648; BLAS takes at most 2147483647"},
		{"lda < k", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a, 3, b, 3, 0, c, 3) }, "Sgemm: lda = 3 is less than max(1, 4), the columns of a, stored m×k = 3x4"},
		{"lda < m transposed", func() error { return m.Sgemm(true, false, 3, 3, 4, 1, a, 2, b, 3, 0, c, 3) }, "Sgemm: lda = 2 is less than max(1, 3), the columns of a, stored k×m (transA) = 4x3"},
		{"ldb < n", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 2, 0, c, 3) }, "Sgemm: ldb = 2 is less than max(1, 3), the columns of b, stored k×n = 4x3"},
		{"ldb < k transposed", func() error { return m.Sgemm(false, true, 3, 3, 4, 1, a, 4, b, 3, 0, c, 3) }, "Sgemm: ldb = 3 is less than max(1, 4), the columns of b, stored n×k (transB) = 3x4"},
		{"ldc < n", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c, 2) }, "Sgemm: ldc = 2 is less than max(1, 3), the columns of c, stored m×n = 3x3"},
		{"ld 0 for an empty matrix", func() error { return m.Sgemm(false, false, 3, 3, 0, 1, nil, 0, nil, 3, 0, c, 3) }, "Sgemm: lda = 0 is less than max(1, 0)"},
		{"a too short", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a[:11], 4, b, 3, 0, c, 3) }, "Sgemm: len(a) = 11, want at least 12 for m×k = 3x4 with lda = 4"},
		{"b too short for its ldb", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 4, 0, c, 3) }, "Sgemm: len(b) = 12, want at least 15 for k×n = 4x3 with ldb = 4"},
		{"c too short", func() error { return m.Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c[:8], 3) }, "Sgemm: len(c) = 8, want at least 9 for m×n = 3x3 with ldc = 3"},
		{"Saxpy lengths differ", func() error { return m.Saxpy(2, a[:3], c[:4]) }, "Saxpy: len(x) = 3, len(y) = 4: want the same length"},
		{"Saxpy beyond int32", func() error { return m.Saxpy(2, big, big) }, "Saxpy: 2147483648 elements; BLAS takes at most 2147483647"},
		{"Sdot lengths differ", func() error { _, err := m.Sdot(a[:5], b[:2]); return err }, "Sdot: len(x) = 5, len(y) = 2: want the same length"},
		{"Sdot beyond int32", func() error { _, err := m.Sdot(big, big); return err }, "Sdot: 2147483648 elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.WantErr(t, tc.call(), blas.ErrArgument, tc.want)
			if !slices.Equal(c, orig) {
				t.Errorf("C changed to %v", c)
			}
		})
	}
}

// huge returns a slice of 2³¹ float32s over address space reserved
// without access (never touched: only its length is read, by the checks
// that refuse it), outside Go's heap, where the race detector's pointer
// checks would object.
func huge(t *testing.T) []float32 {
	t.Helper()
	const n = math.MaxInt32 + 1
	mem, err := syscall.Mmap(-1, 0, 4*n, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		t.Skipf("cannot reserve 8 GiB of address space: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(mem))), n)
}

// TestCallsDoNotAllocate: calls through the binding allocate nothing.
func TestCallsDoNotAllocate(t *testing.T) {
	m := acquire(t)
	a, b, c := make([]float32, 16), make([]float32, 16), make([]float32, 16)
	var sink float32
	for name, f := range map[string]func(){
		"Sgemm": func() { _ = m.Sgemm(false, true, 4, 4, 4, 1, a, 4, b, 4, 0, c, 4) },
		"Saxpy": func() { _ = m.Saxpy(2, a, c) },
		"Sdot":  func() { d, _ := m.Sdot(a, b); sink += d },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s through the binding allocates %v times per call, want 0", name, n)
		}
	}
	_ = sink
}

// TestTableRefusesBadSizes: the C table checks sgemm's sizes itself, for
// C callers, which have no binding to check them: where CBLAS would print
// an error and return, it returns DYNOP_ERROR_INVALID_ARGUMENT (2) without
// calling OpenBLAS, and C is left as it was.
func TestTableRefusesBadSizes(t *testing.T) {
	m := acquire(t)
	a, b := make([]float32, 12), make([]float32, 12)
	c := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	orig := slices.Clone(c)
	for _, tc := range []struct {
		name                    string
		transA, transB          bool
		mm, n, k, lda, ldb, ldc int
	}{
		{"negative m", false, false, -1, 3, 4, 4, 3, 3},
		{"negative n", false, false, 3, -1, 4, 4, 3, 3},
		{"negative k", false, false, 3, 3, -1, 4, 3, 3},
		{"lda < k", false, false, 3, 3, 4, 3, 3, 3},
		{"lda < m transposed", true, false, 3, 3, 4, 2, 3, 3},
		{"ldb < n", false, false, 3, 3, 4, 4, 2, 3},
		{"ldb < k transposed", false, true, 3, 3, 4, 4, 3, 3},
		{"ldc < n", false, false, 3, 3, 4, 4, 3, 2},
		{"lda 0", false, false, 3, 3, 0, 0, 3, 3},
	} {
		err := blas.UncheckedSgemm(m, tc.transA, tc.transB, tc.mm, tc.n, tc.k, 1, a, tc.lda, b, tc.ldb, 0, c, tc.ldc)
		testutil.WantErr(t, err, blas.ErrArgument, "Sgemm: the plugin refused the sizes (result 2)")
		if !slices.Equal(c, orig) {
			t.Fatalf("%s: C changed to %v", tc.name, c)
		}
	}
	if err := blas.UncheckedSgemm(m, false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c, 3); err != nil {
		t.Errorf("right sizes: %v", err)
	}
}

// TestConcurrentCalls: the table is safe for concurrent use, as blas.h
// says: goroutines multiplying at once each get the result of a lone call,
// bit for bit.
func TestConcurrentCalls(t *testing.T) {
	m := acquire(t)
	rng := rand.New(rand.NewPCG(17, 18))
	c := gemmCase{m: 33, n: 31, k: 47, alpha: 1, pad: 1}
	a, lda, b, ldb, cm, ldc := c.operands(rng)
	want := slices.Clone(cm)
	if err := m.Sgemm(false, false, c.m, c.n, c.k, 1, a, lda, b, ldb, 0, want, ldc); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range errs {
		wg.Go(func() {
			got := make([]float32, len(cm))
			for range 50 {
				if err := m.Sgemm(false, false, c.m, c.n, c.k, 1, a, lda, b, ldb, 0, got, ldc); err != nil {
					errs[g] = err
					return
				}
				for i := range got {
					if i%ldc < c.n && math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						errs[g] = fmt.Errorf("goroutine %d: element %d = %v, a lone call gave %v", g, i, got[i], want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
