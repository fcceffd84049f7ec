package image_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/schema"
)

// TestFlip: image.Flip mirrors HWC images left to right, top to bottom,
// both or neither, pixels whole, of any dtype, from compact and strided
// inputs.
func TestFlip(t *testing.T) {
	h := openHost(t)
	// 2 rows, 3 columns, 2 channels: pixel (y, x) is (10y+x, 100+10y+x).
	px := []uint8{0, 100, 1, 101, 2, 102, 10, 110, 11, 111, 12, 112}
	for _, c := range []struct {
		args schema.Args
		want []uint8
	}{
		{nil, []uint8{2, 102, 1, 101, 0, 100, 12, 112, 11, 111, 10, 110}},
		{schema.Args{"horizontal": false, "vertical": true}, []uint8{10, 110, 11, 111, 12, 112, 0, 100, 1, 101, 2, 102}},
		{schema.Args{"vertical": true}, []uint8{12, 112, 11, 111, 10, 110, 2, 102, 1, 101, 0, 100}},
		{schema.Args{"horizontal": false}, px},
	} {
		outs := run(t, h, "image.Flip", c.args, batch(t, sample(t, "HWC", px, 2, 3, 2)))
		wantShape(t, outs[0].Sample(0), "HWC", 2, 3, 2)
		wantValues(t, outs[0].Sample(0), c.want)
	}
	// float32, and a strided view: the middle column of a 2x3 image.
	f := sample(t, "HWC", []float32{1, 2, 3, 4, 5, 6}, 2, 3, 1)
	outs := run(t, h, "image.Flip", schema.Args{"vertical": true}, batch(t, f))
	wantValues(t, outs[0].Sample(0), []float32{6, 5, 4, 3, 2, 1})
	col, err := f.Crop([]int64{0, 1, 0}, []int64{2, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	outs = run(t, h, "image.Flip", nil, batch(t, col))
	wantValues(t, outs[0].Sample(0), []float32{3, 2, 6, 5})
}

// TestFlipMatchesOpenCV: image.Flip is cv2.flip (flipCode 1, 0 and -1)
// bit for bit on a random RGB image. It needs python3 with cv2
// (python3-opencv) and skips without.
func TestFlipMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openHost(t)
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]uint8, 17*23*3)
	for i := range data {
		data[i] = uint8(rng.IntN(256))
	}
	in := cvtest.Array{DType: "uint8", Shape: []int64{17, 23, 3}, Data: data}
	for _, c := range []struct {
		code int
		args schema.Args
	}{{1, nil}, {0, schema.Args{"horizontal": false, "vertical": true}}, {-1, schema.Args{"vertical": true}}} {
		want := cvtest.Run(t, fmt.Sprintf("outputs = [cv2.flip(inputs[0], %d)]", c.code), in)[0].Data
		outs := run(t, h, "image.Flip", c.args, batch(t, sample(t, "HWC", data, 17, 23, 3)))
		if got, _ := outs[0].Sample(0).Bytes(); !bytes.Equal(got, want) {
			t.Errorf("flipCode %d: differs from cv2.flip", c.code)
		}
	}
}
