package codec_test

import (
	"bytes"
	"context"
	"image/png"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugins/codec"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// fuzzMaxElements bounds the outputs a fuzz input may make the host
// allocate: a forged header may claim up to 2^28 pixels, which is a
// valid (if slow) decode but not what fuzzing is for.
const fuzzMaxElements = 1 << 22

// fuzzDecode runs data through a codec.Decode instance's Setup and, if
// its output is small enough, Run: errors are fine, crashes are not.
func fuzzDecode(t *testing.T, inst *op.Instance, data []byte) (*tensor.Tensor, error) {
	ctx := context.Background()
	b, err := tensor.NewBatch(bytesT(t, data))
	if err != nil {
		t.Fatal(err)
	}
	in := []*tensor.Batch{b}
	descs, err := inst.Setup(in)
	if err != nil {
		return nil, err
	}
	s := descs[0].Shapes[0]
	if s[0]*s[1]*s[2] > fuzzMaxElements {
		return nil, nil
	}
	out, err := tensor.Alloc(descs[0].DType, descs[0].Layout, descs[0].Shapes)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Run(ctx, []*tensor.Batch{out}, in); err != nil {
		return nil, err
	}
	return out.Sample(0), nil
}

// FuzzCodecDecode: arbitrary bytes into codec.Decode's Setup and Run
// (through the host, in the bounds-checking mode) never crash, only
// return errors, for each channel count, with shrink-on-load and into
// uint16 (16-bit PNG seeds included).
func FuzzCodecDecode(f *testing.F) {
	h := openCodec(f)
	jpg := encodeJPEG(f, photo(16, 8, false), 80)
	f.Add(jpg)
	f.Add(withAPP1(jpg, exifOrientation(6, true)))
	var pb bytes.Buffer
	if err := png.Encode(&pb, photo(9, 5, true)); err != nil {
		f.Fatal(err)
	}
	f.Add(pb.Bytes())
	for _, name := range []string{"testdata/cmyk.jpg", "testdata/interlaced.png"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	if w, err := encodeWith(f, h, codec.Encode, mustTensor(f, photo(9, 5, true), 4), schema.Args{"format": "webp", "lossless": true}); err == nil {
		f.Add(w)
	}
	p16, _ := png16(f, rand.New(rand.NewPCG(1, 2)), 5, 3, "rgba")
	f.Add(p16)
	f.Add([]byte("RIFF\x1a\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02\x00\x00\x00\x0f\x00\x00\x0f\x00\x00"))
	ctx := context.Background()
	var insts []*op.Instance
	for _, args := range []schema.Args{{"channels": 1}, {"channels": 3, "min_width": 4}, {"channels": 4}, {"channels": 1, "dtype": "uint16"}, {"channels": 3, "dtype": "uint16", "min_width": 4}} {
		inst, err := h.NewOperator(ctx, codec.Decode, args)
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { inst.Close() })
		insts = append(insts, inst)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, inst := range insts {
			fuzzDecode(t, inst, data)
		}
	})
}

// FuzzCodecEXIF: an arbitrary APP1 payload in a valid JPEG never makes
// it fail: the parser ignores what it cannot read, and the image decodes
// as it is or turned (width and height swapped or not), never otherwise;
// the Go image.Decode's parser reads the same orientation (the same
// shape, and the same pixels within the two JPEG decoders' difference).
func FuzzCodecEXIF(f *testing.F) {
	h := openCodec(f)
	base := encodeJPEG(f, photo(12, 7, false), 80)
	for o := uint16(0); o <= 9; o++ {
		f.Add(exifOrientation(o, o%2 == 0))
	}
	f.Add([]byte("Exif\x00\x00II*\x00\x08\x00\x00\x00\xff\xff"))
	inst, err := h.NewOperator(context.Background(), codec.Decode, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { inst.Close() })
	goInst, err := h.NewOperator(context.Background(), "image.Decode", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { goInst.Close() })
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > 65533 {
			payload = payload[:65533]
		}
		x, err := fuzzDecode(t, inst, withAPP1(base, payload))
		if err != nil {
			t.Fatalf("a JPEG with an APP1 of % x: %v", payload[:min(len(payload), 32)], err)
		}
		if s := x.Shape(); !(s[0] == 7 && s[1] == 12) && !(s[0] == 12 && s[1] == 7) {
			t.Fatalf("shape %v, want 7x12 or 12x7", s)
		}
		g, err := fuzzDecode(t, goInst, withAPP1(base, payload))
		if err != nil {
			t.Fatalf("image.Decode, a JPEG with an APP1 of % x: %v", payload[:min(len(payload), 32)], err)
		}
		if !slices.Equal(g.Shape(), x.Shape()) {
			t.Fatalf("image.Decode: shape %v, codec.Decode %v: the parsers disagree on APP1 % x", g.Shape(), x.Shape(), payload[:min(len(payload), 32)])
		}
		if maxd, _ := diff(t, g, x); maxd > 3 {
			t.Fatalf("image.Decode differs from codec.Decode by %d: the parsers disagree on APP1 % x", maxd, payload[:min(len(payload), 32)])
		}
	})
}
