package image_test

import (
	"bytes"
	"fmt"
	goimage "image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/schema"
)

// randomPixels returns n random bytes from a fixed seed.
func randomPixels(seed uint64, n int) []uint8 {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	p := make([]uint8, n)
	for i := range p {
		p[i] = uint8(rng.IntN(256))
	}
	return p
}

// smoothRGBA is a w×h photo-like image: gradients, rings and an edge, so
// that JPEG and resampling see what photos show them.
func smoothRGBA(w, h int) *goimage.NRGBA {
	m := goimage.NewNRGBA(goimage.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			d := math.Hypot(float64(x-w/3), float64(y-h/2))
			r := uint8(255 * x / w)
			g := uint8(128 + 100*math.Sin(d/5))
			b := uint8(255 * y / h)
			if x > 2*w/3 {
				b = 255 - b
			}
			m.Pix[m.PixOffset(x, y)+0], m.Pix[m.PixOffset(x, y)+1], m.Pix[m.PixOffset(x, y)+2], m.Pix[m.PixOffset(x, y)+3] = r, g, b, 255
		}
	}
	return m
}

// compareU8 returns the largest difference between a and b and how many
// values differ.
func compareU8(t *testing.T, a, b []uint8) (maxd, n int) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d values against %d", len(a), len(b))
	}
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		if d > 0 {
			n++
		}
		maxd = max(maxd, d)
	}
	return maxd, n
}

// TestPointwiseMatchesOpenCV: on all 256 uint8 values (as a 16x16 gray
// image), image.Invert is cv2.bitwise_not bit for bit; image.Adjust is
// cv2.addWeighted(x, c, x, 0, 128 - 128c + b) except where the exact
// value lies within 0.01 of a half (OpenCV rounds in float32 to even,
// Adjust in float64 half away from zero), where they differ by at most 1;
// image.Gamma is cv2.LUT with the table numpy computes as
// round(255·(i/255)^(1/g)) except at exact halves; image.ToFloat is
// cv2.multiply(x, 1, scale=s, dtype=CV_32F) bit for bit. It skips
// without python3-opencv.
func TestPointwiseMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openHost(t)
	all := make([]uint8, 256)
	for i := range all {
		all[i] = uint8(i)
	}
	x := sample(t, "HWC", all, 16, 16, 1)
	adjusts := []struct{ contrast, brightness float64 }{{1.6, 10}, {0.5, -20}, {1, 37}, {2.3, 0}}
	gammas := []float64{0.8, 2.2, 0.45}
	scales := []float64{1.0 / 255, 0.5}
	code := "x = inputs[0]\noutputs = [cv2.bitwise_not(x)]\n"
	for _, c := range adjusts {
		code += fmt.Sprintf("outputs.append(cv2.addWeighted(x, %v, x, 0, %v))\n", c.contrast, 128-128*c.contrast+c.brightness)
	}
	for _, g := range gammas {
		code += fmt.Sprintf("outputs.append(cv2.LUT(x, np.clip(np.round(255.0 * (np.arange(256) / 255.0) ** (1.0 / %v)), 0, 255).astype(np.uint8)))\n", g)
	}
	for _, sc := range scales {
		code += fmt.Sprintf("outputs.append(cv2.multiply(x, 1, scale=%v, dtype=cv2.CV_32F))\n", sc)
	}
	cv := cvtest.Run(t, code, cvtest.Array{DType: "uint8", Shape: []int64{16, 16}, Data: all})
	got, _ := run(t, h, "image.Invert", nil, batch(t, x))[0].Sample(0).Bytes()
	if maxd, _ := compareU8(t, got, cv[0].Data); maxd != 0 {
		t.Errorf("image.Invert differs from cv2.bitwise_not by up to %d", maxd)
	}
	cv = cv[1:]
	for k, c := range adjusts {
		want := cv[k].Data
		got, _ := run(t, h, "image.Adjust", schema.Args{"contrast": c.contrast, "brightness": c.brightness}, batch(t, x))[0].Sample(0).Bytes()
		for i := range got {
			exact := c.contrast*(float64(i)-128) + 128 + c.brightness
			if got[i] == want[i] {
				continue
			}
			if _, frac := math.Modf(math.Abs(exact)); math.Abs(frac-0.5) > 0.01 || absDiff(got[i], want[i]) > 1 {
				t.Errorf("image.Adjust contrast %v brightness %v: %d gives %d, cv2.addWeighted %d (exact %.4f)", c.contrast, c.brightness, i, got[i], want[i], exact)
			}
		}
	}
	cv = cv[len(adjusts):]
	for k, g := range gammas {
		want := cv[k].Data
		got, _ := run(t, h, "image.Gamma", schema.Args{"gamma": g}, batch(t, x))[0].Sample(0).Bytes()
		for i := range got {
			exact := 255 * math.Pow(float64(i)/255, 1/g)
			if _, frac := math.Modf(exact); got[i] != want[i] && (math.Abs(frac-0.5) > 1e-9 || absDiff(got[i], want[i]) > 1) {
				t.Errorf("image.Gamma %v: %d gives %d, cv2.LUT %d (exact %.6f)", g, i, got[i], want[i], exact)
			}
		}
	}
	cv = cv[len(gammas):]
	for k, sc := range scales {
		got, _ := run(t, h, "image.ToFloat", schema.Args{"scale": sc}, batch(t, x))[0].Sample(0).Bytes()
		if !bytes.Equal(got, cv[k].Data) {
			t.Errorf("image.ToFloat scale %v differs from cv2.multiply(x, 1, scale=%v, dtype=CV_32F)", sc, sc)
		}
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestResizeMatchesOpenCV: image.Resize (bilinear, half-pixel centres, in
// float32) against cv2.resize with INTER_LINEAR (the same centres, 11-bit
// fixed-point weights on uint8): up and down, on a photo-like RGB image,
// the values differ by at most 1, and in under 15% of them (about 13%
// measured: the rounding of OpenCV's fixed-point weights).
func TestResizeMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openHost(t)
	img := smoothRGBA(61, 47)
	rgb := make([]uint8, 0, 61*47*3)
	for i := 0; i < len(img.Pix); i += 4 {
		rgb = append(rgb, img.Pix[i:i+3]...)
	}
	in := cvtest.Array{DType: "uint8", Shape: []int64{47, 61, 3}, Data: rgb}
	sizes := [][2]int{{30, 23}, {128, 100}, {61, 20}}
	code := "outputs = []\n"
	for _, size := range sizes {
		code += fmt.Sprintf("outputs.append(cv2.resize(inputs[0], (%d, %d), interpolation=cv2.INTER_LINEAR))\n", size[0], size[1])
	}
	cv := cvtest.Run(t, code, in)
	for k, size := range sizes {
		want := cv[k].Data
		got, _ := run(t, h, "image.Resize", schema.Args{"width": size[0], "height": size[1]}, batch(t, sample(t, "HWC", rgb, 47, 61, 3)))[0].Sample(0).Bytes()
		maxd, n := compareU8(t, got, want)
		t.Logf("61x47 to %dx%d: max difference %d, %d of %d values differ", size[0], size[1], maxd, n, len(got))
		if maxd > 1 || n*100 > 15*len(got) {
			t.Errorf("61x47 to %dx%d: differs from cv2.resize(INTER_LINEAR) by up to %d in %d of %d values", size[0], size[1], maxd, n, len(got))
		}
	}
}

// TestDecodeMatchesOpenCV: image.Decode of a PNG is cv2.imdecode's pixels
// (BGR reordered to RGB) bit for bit; of a JPEG (Go's image/jpeg, whose
// chroma upsampling replicates, against OpenCV's libjpeg-turbo, whose
// "fancy" upsampling interpolates) within 40 at hard colour edges (37
// measured) and on average within 3.5 (3.3). It skips without
// python3-opencv.
func TestDecodeMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openHost(t)
	img := smoothRGBA(64, 48)
	var pngBuf, jpgBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpgBuf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		data       []byte
		maxd       int
		meanWithin float64
	}{{"PNG", pngBuf.Bytes(), 0, 0}, {"JPEG", jpgBuf.Bytes(), 40, 3.5}} {
		want := cvtest.Run(t, "outputs = [cv2.cvtColor(cv2.imdecode(inputs[0], cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)]",
			cvtest.Array{DType: "uint8", Shape: []int64{int64(len(c.data))}, Data: c.data})[0].Data
		got, _ := run(t, h, "image.Decode", nil, batch(t, sample(t, "", c.data, int64(len(c.data)))))[0].Sample(0).Bytes()
		maxd, _ := compareU8(t, got, want)
		sum := 0
		for i := range got {
			sum += absDiff(got[i], want[i])
		}
		mean := float64(sum) / float64(len(got))
		t.Logf("%s: max difference %d, mean %.3f", c.name, maxd, mean)
		if maxd > c.maxd || mean > c.meanWithin {
			t.Errorf("%s: differs from cv2.imdecode by up to %d, %.3f on average", c.name, maxd, mean)
		}
	}
}

// TestEncodeMatchesOpenCV: what image.Encode writes as PNG, cv2.imdecode
// reads back bit for bit; as JPEG quality 90, cv2.imdecode reads back
// what it reads back of cv2.imencode's own JPEG at quality 90 within 12,
// and on average within 1 (Go's encoder against libjpeg-turbo, both
// 4:2:0 with the standard tables scaled to 90). It skips without
// python3-opencv.
func TestEncodeMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openHost(t)
	img := smoothRGBA(64, 48)
	rgb := make([]uint8, 0, 64*48*3)
	for i := 0; i < len(img.Pix); i += 4 {
		rgb = append(rgb, img.Pix[i:i+3]...)
	}
	pngFile, _ := run(t, h, "image.Encode", schema.Args{"format": "png"}, batch(t, sample(t, "HWC", rgb, 48, 64, 3)))[0].Sample(0).Bytes()
	jpgFile, _ := run(t, h, "image.Encode", schema.Args{"format": "jpeg", "quality": 90}, batch(t, sample(t, "HWC", rgb, 48, 64, 3)))[0].Sample(0).Bytes()
	cv := cvtest.Run(t, `rgb2bgr = lambda a: cv2.cvtColor(a, cv2.COLOR_RGB2BGR)
read = lambda f: cv2.cvtColor(cv2.imdecode(f, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
ok, own = cv2.imencode(".jpg", rgb2bgr(inputs[2]), [cv2.IMWRITE_JPEG_QUALITY, 90])
outputs = [read(inputs[0]), read(inputs[1]), read(own)]`,
		cvtest.Array{DType: "uint8", Shape: []int64{int64(len(pngFile))}, Data: pngFile},
		cvtest.Array{DType: "uint8", Shape: []int64{int64(len(jpgFile))}, Data: jpgFile},
		cvtest.Array{DType: "uint8", Shape: []int64{48, 64, 3}, Data: rgb})
	if maxd, _ := compareU8(t, cv[0].Data, rgb); maxd != 0 {
		t.Errorf("png: OpenCV reads back pixels within %d", maxd)
	}
	maxd, _ := compareU8(t, cv[1].Data, cv[2].Data)
	sum := 0
	for i := range cv[1].Data {
		sum += absDiff(cv[1].Data[i], cv[2].Data[i])
	}
	mean := float64(sum) / float64(len(rgb))
	t.Logf("jpeg: within %d of OpenCV's own JPEG, %.3f on average", maxd, mean)
	if maxd > 12 || mean > 1 {
		t.Errorf("jpeg: within %d of OpenCV's own JPEG, %.3f on average", maxd, mean)
	}
}
