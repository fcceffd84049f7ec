package codec_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/dynop/dynop/plugins/codec"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// TestEncodeRoundTrips: PNG and lossless WebP give back the pixels
// exactly (read by image/png and by codec.Decode), JPEG and lossy WebP
// close to them, for 1, 3 and 4 channels, compact and cropped (strided)
// inputs.
func TestEncodeRoundTrips(t *testing.T) {
	h := openCodec(t)
	src := photo(61, 43, true)
	for _, c := range []int{1, 3, 4} {
		full := mustTensor(t, src, c)
		crop, err := full.Crop([]int64{3, 5, 0}, []int64{30, 40, int64(c)})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []struct {
			name string
			x    *tensor.Tensor
		}{{"compact", full}, {"cropped", crop}} {
			for _, f := range []struct {
				args     schema.Args
				maxMean  float64
				goDecode func([]byte) (image.Image, error)
			}{
				{schema.Args{"format": "png"}, 0, func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }},
				{schema.Args{"format": "png", "compression": 0}, 0, nil},
				{schema.Args{"format": "png", "compression": 9}, 0, nil},
				{schema.Args{"format": "webp", "lossless": true}, 0, nil},
				{schema.Args{"format": "webp", "quality": 90}, 8, nil},
				{schema.Args{"format": "jpeg", "quality": 95}, 8, func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }},
				{schema.Args{"format": "jpeg", "quality": 95, "subsampling": "444", "progressive": true}, 3, nil},
			} {
				t.Run(fmt.Sprintf("c%d %s %v", c, in.name, f.args), func(t *testing.T) {
					data, err := encodeWith(t, h, codec.Encode, in.x, f.args)
					if err != nil {
						t.Fatal(err)
					}
					if f.goDecode != nil {
						if _, err := f.goDecode(data); err != nil {
							t.Errorf("Go cannot read it: %v", err)
						}
					}
					back := mustDecode(t, h, codec.Decode, data, schema.Args{"channels": c})
					want := in.x
					if f.args["format"] == "jpeg" && c == 4 { // JPEG drops alpha
						back = mustDecode(t, h, codec.Decode, data, schema.Args{"channels": 3})
						want, _ = in.x.Crop([]int64{0, 0, 0}, []int64{want.Shape()[0], want.Shape()[1], 3})
					}
					maxd, mean := diff(t, back, want)
					if f.maxMean == 0 && maxd != 0 {
						t.Errorf("lossless round trip differs by up to %d", maxd)
					}
					if mean > f.maxMean {
						t.Errorf("round trip differs by %.3f on average, want at most %.1f", mean, f.maxMean)
					}
				})
			}
		}
	}
}

// TestEncodeOptions: progressive and subsampling reach the JPEG file
// (SOF2; the luma's sampling factors), compression changes the PNG's
// size, and format and quality default as image.Encode's.
func TestEncodeOptions(t *testing.T) {
	h := openCodec(t)
	x := mustTensor(t, photo(64, 64, false), 3)
	enc := func(args schema.Args) []byte {
		t.Helper()
		b, err := encodeWith(t, h, codec.Encode, x, args)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sof := func(b []byte) (marker byte, lumaSampling byte) {
		for i := 2; i+10 < len(b); {
			m := b[i+1]
			if m == 0xC0 || m == 0xC1 || m == 0xC2 {
				return m, b[i+11]
			}
			i += 2 + int(b[i+2])<<8 + int(b[i+3])
		}
		t.Fatal("no SOF")
		return 0, 0
	}
	for _, c := range []struct {
		args     schema.Args
		marker   byte
		sampling byte
	}{
		{schema.Args{"format": "jpeg"}, 0xC0, 0x22},
		{schema.Args{"format": "jpeg", "subsampling": "422"}, 0xC0, 0x21},
		{schema.Args{"format": "jpeg", "subsampling": "444"}, 0xC0, 0x11},
		{schema.Args{"format": "jpeg", "progressive": true}, 0xC2, 0x22},
	} {
		if m, s := sof(enc(c.args)); m != c.marker || s != c.sampling {
			t.Errorf("%v: SOF %#x, sampling %#x; want %#x, %#x", c.args, m, s, c.marker, c.sampling)
		}
	}
	if def := enc(nil); !bytes.HasPrefix(def, []byte("\x89PNG")) {
		t.Errorf("the default format is not PNG: % x", def[:8])
	}
	if q90, q20 := enc(schema.Args{"format": "jpeg"}), enc(schema.Args{"format": "jpeg", "quality": 20}); len(q20) >= len(q90) {
		t.Errorf("quality 20 (%d bytes) is not smaller than the default 90 (%d)", len(q20), len(q90))
	}
	if z0, z9 := enc(schema.Args{"compression": 0}), enc(schema.Args{"compression": 9}); len(z9) >= len(z0) {
		t.Errorf("compression 9 (%d bytes) is not smaller than 0 (%d)", len(z9), len(z0))
	}
	if w := enc(schema.Args{"format": "webp"}); !bytes.HasPrefix(w, []byte("RIFF")) || !bytes.Equal(w[8:12], []byte("WEBP")) {
		t.Errorf("not a WebP file: % x", w[:12])
	}
}

// TestEncodeBadArgs: arguments out of their schema and inputs Encode
// cannot take fail with errors that say what is wrong.
func TestEncodeBadArgs(t *testing.T) {
	h := openCodec(t)
	x := mustTensor(t, photo(8, 8, false), 3)
	for _, c := range []struct {
		args schema.Args
		want string
	}{
		{schema.Args{"format": "gif"}, "gif"},
		{schema.Args{"quality": 0}, "quality"},
		{schema.Args{"quality": 101}, "quality"},
		{schema.Args{"subsampling": "411"}, "411"},
		{schema.Args{"compression": 10}, "compression"},
		{schema.Args{"lossless": "yes"}, "lossless"},
		{schema.Args{"qualty": 80}, "qualty"},
	} {
		_, err := encodeWith(t, h, codec.Encode, x, c.args)
		wantErr(t, err, c.want)
	}
	two, _ := tensor.FromSlice(make([]uint8, 8*8*2), 8, 8, 2)
	_, err := encodeWith(t, h, codec.Encode, two, nil)
	wantErr(t, err, "the image has 2 channels; Encode takes 1 (gray), 3 (RGB) or 4 (RGBA)")
	empty, _ := tensor.FromSlice(make([]uint8, 0), 0, 8, 3)
	_, err = encodeWith(t, h, codec.Encode, empty, nil)
	wantErr(t, err, "cannot encode an empty 8x0 image")
	wide, _ := tensor.FromSlice(make([]uint8, 16384*3), 1, 16384, 3)
	_, err = encodeWith(t, h, codec.Encode, wide, schema.Args{"format": "webp"})
	wantErr(t, err, "a 16384x1 image is too large for WebP (at most 16383 per side)")
	f32, _ := tensor.FromSlice(make([]float32, 12), 2, 2, 3)
	_, err = encodeWith(t, h, codec.Encode, f32, nil)
	wantErr(t, err, "float32")
}

// TestEncodeBatches: Setup encodes every sample of a batch and Run copies
// each its own encoding, across batches of other lengths on one instance;
// a Run with inputs Setup has not seen fails, saying so.
func TestEncodeBatches(t *testing.T) {
	h := openCodec(t)
	ctx := context.Background()
	inst, err := h.NewOperator(ctx, codec.Encode, schema.Args{"format": "png"})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	for round, n := range []int{3, 1, 4, 2} {
		var xs []*tensor.Tensor
		for k := range n {
			xs = append(xs, mustTensor(t, photo(10+k+round, 7+2*k, true), 4))
		}
		b, _ := tensor.NewBatch(xs...)
		outs, err := inst.Exec(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for k, x := range xs {
			back := mustDecode(t, h, codec.Decode, outs[0].Sample(k).Span(), schema.Args{"channels": 4})
			if maxd, _ := diff(t, back, x); maxd != 0 {
				t.Errorf("round %d sample %d: the output is not the sample's encoding", round, k)
			}
		}
	}
	// Run on inputs that Setup did not see.
	a, _ := tensor.NewBatch(mustTensor(t, photo(5, 5, false), 3))
	descs, err := inst.Setup([]*tensor.Batch{a})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tensor.Alloc(tensor.Uint8, "", descs[0].Shapes)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tensor.NewBatch(mustTensor(t, photo(5, 5, false), 3))
	err = inst.Run(ctx, []*tensor.Batch{out}, []*tensor.Batch{other})
	wantErr(t, err, "run got an input that setup has not encoded")
}
