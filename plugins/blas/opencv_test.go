package blas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/internal/testutil"
)

// TestMatMulMatchesOpenCV: blas.MatMul against OpenCV's cv2.gemm (alpha,
// the transposes as GEMM_1_T and GEMM_2_T, the bias tiled into src3 with
// beta 1, relu as np.maximum(x, 0)) and NumPy's matmul of the same
// float32 values, on 1×1, 7×13·13×5, 64×64·64×64 and 257×129·129×65 with
// transposes, bias, relu and alpha: every element within twice the bound
// of TestMatMulMatchesReference, (k+5)·2⁻²⁴·(Σ|alpha·a·b| + |bias|), of
// each (all three are within the bound of the exact result, so within
// twice of each other). It skips without python3-opencv.
func TestMatMulMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	cvtest.Require(t)
	h := openHost(t, "")
	rng := rand.New(rand.NewPCG(15, 16))
	for _, c := range []mmCase{
		{1, 1, 1, false, false, true, true, 1},
		{7, 13, 5, false, false, true, true, 1},
		{7, 13, 5, true, true, false, false, -2},
		{64, 64, 64, false, true, true, false, 0.5},
		{257, 129, 65, true, false, true, true, 1.5},
	} {
		a, b, bias := c.operands(t, rng)
		in := []cvtest.Array{cvtest.FromTensor(t, a), cvtest.FromTensor(t, b)}
		if bias != nil {
			in = append(in, cvtest.FromTensor(t, bias))
		}
		code := fmt.Sprintf(`
a, b = inputs[0], inputs[1]
flags = (cv2.GEMM_1_T if %[1]s else 0) | (cv2.GEMM_2_T if %[2]s else 0)
alpha = %[3]v
if len(inputs) == 3:
    cv = cv2.gemm(a, b, alpha, np.tile(inputs[2], (%[4]d, 1)), 1.0, flags=flags)
else:
    cv = cv2.gemm(a, b, alpha, None, 0.0, flags=flags)
A = a.T if %[1]s else a
B = b.T if %[2]s else b
npy = np.float32(alpha) * np.matmul(A, B)
if len(inputs) == 3:
    npy = npy + inputs[2]
if %[5]s:
    cv, npy = np.maximum(cv, 0), np.maximum(npy, 0)
outputs = [cv.astype(np.float32), npy.astype(np.float32)]
`, pyBool(c.transA), pyBool(c.transB), c.alpha, c.m, pyBool(c.relu))
		refs := cvtest.Run(t, code, in...)
		out, _, err := exec(h, c.args(), inputs(t, a, b, bias)...)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		got := floats(t, out)
		_, bound := matmulRef(t, c, a, b, bias)
		for k, name := range []string{"cv2.gemm", "numpy.matmul"} {
			if s := refs[k].Shape; len(s) != 2 || s[0] != int64(c.m) || s[1] != int64(c.n) {
				t.Fatalf("%v: %s gave shape %v", c, name, s)
			}
			want := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(refs[k].Data))), c.m*c.n)
			worst := 0.0
			for i := range got {
				d := math.Abs(float64(got[i]) - float64(want[i]))
				if !(d <= 2*bound[i]) {
					t.Fatalf("%v: out[%d][%d] = %v, %s %v: apart by %.3g, more than twice the bound %.3g", c, i/c.n, i%c.n, got[i], name, want[i], d, bound[i])
				}
				if bound[i] > 0 {
					worst = max(worst, d/bound[i])
				}
			}
			t.Logf("%v: within %.3f of the bound of %s", c, worst, name)
		}
	}
}

// pyBool is b as Python writes it.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
