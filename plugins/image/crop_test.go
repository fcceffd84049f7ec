package image_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// gridImage returns an H x W x C uint8 image whose element (y, x, c) is
// 40y + 5x + c, for boxes that are easy to read.
func gridImage(h, w, c int) []uint8 {
	px := make([]uint8, h*w*c)
	for i := range px {
		y, x, ch := i/(w*c), i/c%w, i%c
		px[i] = uint8(40*y + 5*x + ch)
	}
	return px
}

// box returns the box [y, y+bh) x [x, x+bw) of the H x W x C image px,
// row-major: what img[y:y+bh, x:x+bw] is in NumPy.
func box[T any](px []T, w, c, x, y, bw, bh int) []T {
	var out []T
	for r := y; r < y+bh; r++ {
		out = append(out, px[(r*w+x)*c:(r*w+x+bw)*c]...)
	}
	return out
}

// TestCropModes: the box's corner from x/y or crop_pos_x/crop_pos_y, its
// size from width/height, rel_width/rel_height or the whole side, each
// with the rounding the package doc gives, on a 5x7 (height x width)
// image.
func TestCropModes(t *testing.T) {
	h := openHost(t)
	const H, W, C = 5, 7, 2
	px := gridImage(H, W, C)
	img := sample(t, "HWC", px, H, W, C)
	for _, c := range []struct {
		args         schema.Args
		x, y, bw, bh int
	}{
		// Centred by default: round(0.5*4) = 2, round(0.5*3) = round(1.5) = 2.
		{schema.Args{"width": 3, "height": 2}, 2, 2, 3, 2},
		{schema.Args{"width": 3, "height": 2, "crop_pos_x": 0.0, "crop_pos_y": 1.0}, 0, 3, 3, 2},
		{schema.Args{"width": 3, "height": 2, "crop_pos_x": 1.0, "crop_pos_y": 0.0}, 4, 0, 3, 2},
		// round(0.3*4) = round(1.2) = 1, round(0.83*3) = round(2.49) = 2.
		{schema.Args{"width": 3, "height": 2, "crop_pos_x": 0.3, "crop_pos_y": 0.83}, 1, 2, 3, 2},
		// Absolute x, anchored y.
		{schema.Args{"x": 4, "width": 3, "height": 2}, 4, 2, 3, 2},
		{schema.Args{"y": 1, "width": 3, "height": 2, "crop_pos_x": 0.0}, 0, 1, 3, 2},
		{schema.Args{"x": 1, "y": 2, "width": 6, "height": 3}, 1, 2, 6, 3},
		// Relative: round(0.5*7) = round(3.5) = 4 columns, round(0.3*5) =
		// round(1.5) = 2 rows, centred at round(1.5) = 2 and round(1.5) = 2.
		{schema.Args{"rel_width": 0.5, "rel_height": 0.3}, 2, 2, 4, 2},
		// At least one pixel: round(0.01*7) = 0.
		{schema.Args{"rel_width": 0.01, "rel_height": 1.0, "crop_pos_x": 1.0}, 6, 0, 1, 5},
		// Relative width, absolute height and corner.
		{schema.Args{"x": 0, "y": 0, "rel_width": 1.0, "height": 1}, 0, 0, 7, 1},
		// No size: the whole side (and its corner 0).
		{schema.Args{}, 0, 0, 7, 5},
		{schema.Args{"width": 2}, 3, 0, 2, 5}, // round(0.5*5) = round(2.5) = 3
		{schema.Args{"height": 4, "crop_pos_y": 1.0}, 0, 1, 7, 4},
	} {
		t.Run(fmt.Sprint(c.args), func(t *testing.T) {
			outs := run(t, h, "image.Crop", c.args, batch(t, img))
			wantShape(t, outs[0].Sample(0), "HWC", int64(c.bh), int64(c.bw), C)
			wantValues(t, outs[0].Sample(0), box(px, W, C, c.x, c.y, c.bw, c.bh))
		})
	}

	// float32 from a strided view: the columns 1..5 of a 4x7 image,
	// centred box of 3x2: x = round(0.5*2) = 1, y = round(0.5*2) = 1.
	f := make([]float32, 4*7)
	for i := range f {
		f[i] = float32(i) + 0.5
	}
	view := must(sample(t, "HWC", f, 4, 7, 1).Crop([]int64{0, 1, 0}, []int64{4, 5, 1}))
	outs := run(t, h, "image.Crop", schema.Args{"width": 3, "height": 2}, batch(t, view))
	wantValues(t, outs[0].Sample(0), []float32{9.5, 10.5, 11.5, 16.5, 17.5, 18.5})
}

// TestCropArgumentConflicts: arguments that say the same thing twice are
// refused when the operator is made, naming both.
func TestCropArgumentConflicts(t *testing.T) {
	h := openHost(t)
	for _, c := range []struct {
		args schema.Args
		want []string
	}{
		{schema.Args{"x": 1, "crop_pos_x": 0.5}, []string{"x and crop_pos_x"}},
		{schema.Args{"y": 1, "crop_pos_y": 0.0}, []string{"y and crop_pos_y"}},
		{schema.Args{"width": 3, "rel_width": 0.5}, []string{"width and rel_width"}},
		{schema.Args{"height": 3, "rel_height": 0.5}, []string{"height and rel_height"}},
		{schema.Args{"random": true, "x": 0}, []string{"random and x"}},
		{schema.Args{"random": true, "y": 2}, []string{"random and y"}},
		{schema.Args{"random": true, "crop_pos_x": 0.5}, []string{"random and crop_pos_x"}},
		{schema.Args{"random": true, "crop_pos_y": 0.1}, []string{"random and crop_pos_y"}},
		{schema.Args{"seed": 3}, []string{"seed without random"}},
		{schema.Args{"seed": 3, "random": false}, []string{"seed without random"}},
		{schema.Args{"rel_width": 0.0}, []string{`"rel_width"`}},
		{schema.Args{"rel_height": 1.5}, []string{`"rel_height"`}},
		{schema.Args{"crop_pos_x": -0.1}, []string{`"crop_pos_x"`}},
	} {
		_, err := h.NewOperator(context.Background(), "image.Crop", c.args)
		wantErr(t, err, schema.ErrArgument, c.want...)
	}
}

// TestCropDoesNotFit: a box larger than the image, or whose corner
// leaves it outside, fails naming the box's and the image's sizes.
func TestCropDoesNotFit(t *testing.T) {
	h := openHost(t)
	small := sample(t, "HWC", make([]uint8, 5*7), 5, 7, 1)
	for _, c := range []struct {
		args schema.Args
		want []string
	}{
		{schema.Args{"width": 8, "height": 2}, []string{"sample 0", "width=8 height=2", "7x5"}},
		{schema.Args{"width": 3, "height": 6, "random": true, "seed": 1}, []string{"width=3 height=6", "7x5"}},
		{schema.Args{"x": 5, "width": 3}, []string{"x=5 width=3 height=5", "7x5"}},
		{schema.Args{"y": 4, "rel_height": 0.5}, []string{"y=4 width=7 height=3 (rel_height 0.5)", "7x5"}},
	} {
		err := runErr(t, h, "image.Crop", c.args, batch(t, small))
		wantErr(t, err, op.ErrInput, c.want...)
	}
	// An empty image has no room for a relative box (at least 1 pixel),
	// and gives an empty box of its whole sides.
	empty := sample(t, "HWC", []uint8{}, 0, 4, 1)
	wantErr(t, runErr(t, h, "image.Crop", schema.Args{"rel_height": 0.5}, batch(t, empty)), op.ErrInput, "height=1", "4x0")
	outs := run(t, h, "image.Crop", schema.Args{"random": true}, batch(t, empty))
	wantShape(t, outs[0].Sample(0), "HWC", 0, 4, 1)
}

// specSplitMix64 is SplitMix64 as published (Steele, Lea and Flood).
func specSplitMix64(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// specRandomCorner computes a random crop's corner as the package doc
// defines it, independently of the operator.
func specRandomCorner(t *testing.T, x *tensor.Tensor, seed, spareX, spareY int64) (int64, int64) {
	t.Helper()
	msg := []byte(x.DType().String())
	for _, n := range x.Shape() {
		msg = binary.LittleEndian.AppendUint64(msg, uint64(n))
	}
	msg = append(msg, must(must(x.Contiguous()).Bytes())...)
	s := uint64(seed) ^ uint64(crc32.Checksum(msg, crc32.MakeTable(crc32.Castagnoli)))<<32
	cx, _ := bits.Mul64(specSplitMix64(&s), uint64(spareX)+1)
	cy, _ := bits.Mul64(specSplitMix64(&s), uint64(spareY)+1)
	return int64(cx), int64(cy)
}

// TestCropRandom: a random crop's corner is the documented draw, the same
// for the same seed and image in any batch, at any position and in any
// instance, and covers every corner where the box fits.
func TestCropRandom(t *testing.T) {
	// The standard algorithms: CRC-32C's check value, and SplitMix64's
	// first output from state 0.
	if got := crc32.Checksum([]byte("123456789"), crc32.MakeTable(crc32.Castagnoli)); got != 0xe3069283 {
		t.Fatalf("CRC-32C check value %#x", got)
	}
	if s := uint64(0); specSplitMix64(&s) != 0xe220a8397b1dcdaf {
		t.Fatal("SplitMix64 from 0")
	}

	h := openHost(t)
	const H, W, C = 6, 9, 3
	rng := rand.New(rand.NewPCG(3, 4))
	var imgs [][]uint8
	var samples []*tensor.Tensor
	for range 4 {
		px := make([]uint8, H*W*C)
		for i := range px {
			px[i] = uint8(rng.IntN(256))
		}
		imgs = append(imgs, px)
		samples = append(samples, sample(t, "HWC", px, H, W, C))
	}
	const bw, bh = 4, 3
	args := func(seed int) schema.Args {
		return schema.Args{"random": true, "seed": seed, "width": bw, "height": bh}
	}
	// Exact: each sample of a batch gets the documented corner.
	for _, seed := range []int{0, 1, 42, -7} {
		outs := run(t, h, "image.Crop", args(seed), batch(t, samples...))
		for i, s := range samples {
			x, y := specRandomCorner(t, s, int64(seed), W-bw, H-bh)
			wantShape(t, outs[0].Sample(i), "HWC", bh, bw, C)
			if got := values[uint8](t, outs[0].Sample(i)); !bytes.Equal(got, box(imgs[i], W, C, int(x), int(y), bw, bh)) {
				t.Errorf("seed %d sample %d: not the box at x=%d y=%d", seed, i, x, y)
			}
		}
	}
	// Whatever the batch and the position in it, and in another instance:
	// sample 2 alone, first, last, twice.
	want := values[uint8](t, run(t, h, "image.Crop", args(5), batch(t, samples...))[0].Sample(2))
	for _, b := range [][]*tensor.Tensor{
		{samples[2]},
		{samples[2], samples[0]},
		{samples[3], samples[1], samples[0], samples[2]},
		{samples[2], samples[2]},
	} {
		outs := run(t, h, "image.Crop", args(5), batch(t, b...))
		for i, s := range b {
			if s == samples[2] && !bytes.Equal(values[uint8](t, outs[0].Sample(i)), want) {
				t.Errorf("sample 2 at position %d of %d: another box", i, len(b))
			}
		}
	}
	// The same pixels in a strided view: the same box (the hash reads the
	// elements, not the memory).
	wide := make([]uint8, H*(W+2)*C)
	for y := range H {
		copy(wide[(y*(W+2)+1)*C:], imgs[2][y*W*C:(y+1)*W*C])
	}
	view := must(sample(t, "HWC", wide, H, W+2, C).Crop([]int64{0, 1, 0}, []int64{H, W, C}))
	if got := values[uint8](t, run(t, h, "image.Crop", args(5), batch(t, view))[0].Sample(0)); !bytes.Equal(got, want) {
		t.Error("a strided view of sample 2: another box")
	}
	// Over seeds, every corner where the box fits comes up.
	seen := map[[2]int64]int{}
	for seed := range 300 {
		x, y := specRandomCorner(t, samples[0], int64(seed), W-bw, H-bh)
		if x < 0 || x > W-bw || y < 0 || y > H-bh {
			t.Fatalf("seed %d: corner (%d, %d) outside", seed, x, y)
		}
		seen[[2]int64{x, y}]++
	}
	if len(seen) != (W-bw+1)*(H-bh+1) {
		t.Errorf("300 seeds drew %d of the %d corners: %v", len(seen), (W-bw+1)*(H-bh+1), seen)
	}
}

// TestCropMatchesOpenCV: each mode's box is the NumPy slice
// img[y:y+h, x:x+w] that OpenCV crops with (cv2 images are NumPy
// arrays), bit for bit, on random uint8 and float32 images, with the
// corner and size the package doc gives. It needs python3 with cv2
// (python3-opencv) and skips without.
func TestCropMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openHost(t)
	rng := rand.New(rand.NewPCG(8, 9))
	const H, W, C = 17, 23, 3
	u8 := make([]uint8, H*W*C)
	f32 := make([]float32, H*W*C)
	for i := range u8 {
		u8[i] = uint8(rng.IntN(256))
		f32[i] = rng.Float32()
	}
	imgs := []*tensor.Tensor{sample(t, "HWC", u8, H, W, C), sample(t, "HWC", f32, H, W, C)}
	var outs []*tensor.Tensor
	var names []string
	code := "outputs = []\n"
	for i, img := range imgs {
		rx, ry := specRandomCorner(t, img, 42, W-10, H-7)
		for _, c := range []struct {
			args         schema.Args
			x, y, bw, bh int64
		}{
			{schema.Args{"x": 3, "y": 2, "width": 10, "height": 7}, 3, 2, 10, 7},
			{schema.Args{"width": 10, "height": 7}, 7, 5, 10, 7},                                        // round(6.5), round(5)
			{schema.Args{"width": 10, "height": 7, "crop_pos_x": 0.25, "crop_pos_y": 0.9}, 3, 9, 10, 7}, // round(3.25), round(9)
			{schema.Args{"rel_width": 0.5, "rel_height": 0.3}, 6, 6, 12, 5},                             // round(11.5) = 12, round(5.1) = 5
			{schema.Args{"random": true, "seed": 42, "width": 10, "height": 7}, rx, ry, 10, 7},
			{schema.Args{}, 0, 0, W, H},
		} {
			outs = append(outs, run(t, h, "image.Crop", c.args, batch(t, img))[0].Sample(0))
			names = append(names, fmt.Sprintf("%s %v: img[%d:%d, %d:%d]", img.DType(), c.args, c.y, c.y+c.bh, c.x, c.x+c.bw))
			code += fmt.Sprintf("outputs.append(inputs[%d][%d:%d, %d:%d])\n", i, c.y, c.y+c.bh, c.x, c.x+c.bw)
		}
	}
	want := cvtest.Run(t, code, cvtest.FromTensor(t, imgs[0]), cvtest.FromTensor(t, imgs[1]))
	for i, out := range outs {
		if got := must(out.Bytes()); !bytes.Equal(got, want[i].Data) || fmt.Sprint(out.Shape()) != fmt.Sprint(want[i].Shape) || out.DType().String() != want[i].DType {
			t.Errorf("%s: got %v, NumPy %v", names[i], out.Shape(), want[i].Shape)
		}
	}
}
