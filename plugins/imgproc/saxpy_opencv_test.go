package imgproc_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugins/imgproc"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// TestSaxpyMatchesOpenCV: imgproc.Saxpy is cv2.scaleAdd(x, a, y), OpenCV's
// a·x + y on float32, on 100003 random values and three factors: equal
// for a = 1, else apart by at most |a·x|·2⁻²³ + |out|·2⁻²³ (the product's
// rounding, which OpenCV's fused multiply-add skips and Saxpy makes, and
// each one's rounding of the sum; up to 0.99 of that measured). It skips
// without python3-opencv.
func TestSaxpyMatchesOpenCV(t *testing.T) {
	testutil.SkipNumericsUnderRace(t)
	t.Parallel()
	cvtest.Require(t)
	h := openImgproc(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 100003
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(rng.NormFloat64()*100), float32(rng.NormFloat64()*100)
	}
	x, _ := tensor.FromSlice(xs, n)
	y, _ := tensor.FromSlice(ys, n)
	factors := []float64{1, -2.5, 0.3}
	code := "outputs = []\n"
	for _, a := range factors {
		code += "outputs.append(cv2.scaleAdd(inputs[0], " + strconv.FormatFloat(a, 'g', -1, 64) + ", inputs[1]))\n"
	}
	cv := cvtest.Run(t, code, cvtest.FromTensor(t, x), cvtest.FromTensor(t, y))
	for k, a := range factors {
		xb, _ := tensor.NewBatch(x)
		yb, _ := tensor.NewBatch(y)
		outs, err := exec(h, imgproc.Saxpy, schema.Args{"a": a}, xb, yb)
		if err != nil {
			t.Fatal(err)
		}
		got := unsafe.Slice((*float32)(outs[0].Sample(0).Data()), n)
		want := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(cv[k].Data))), n)
		differ, worst := 0, 0.0 // the largest difference over its bound
		for i := range got {
			if got[i] == want[i] {
				continue
			}
			differ++
			prod := math.Abs(float64(float32(a)) * float64(xs[i]))
			bound := prod*0x1p-23 + math.Abs(float64(want[i]))*0x1p-23
			worst = max(worst, math.Abs(float64(got[i])-float64(want[i]))/bound)
		}
		t.Logf("a = %v: %d of %d values differ from cv2.scaleAdd, by up to %.2f of the bound", a, differ, n, worst)
		if worst > 1 || (a == 1 && differ > 0) {
			t.Errorf("a = %v: differs from cv2.scaleAdd by %.2f times the product's and the result's rounding", a, worst)
		}
	}
}
