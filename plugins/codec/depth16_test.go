package codec_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// png16 returns a 16-bit PNG of random samples: gray, RGB (NRGBA64 with
// opaque alpha is written as RGBA by Go, so colour comes as RGBA64) or
// RGBA, and the image.
func png16(t testing.TB, rng *rand.Rand, w, h int, kind string) ([]byte, image.Image) {
	t.Helper()
	var img image.Image
	switch kind {
	case "gray":
		g := image.NewGray16(image.Rect(0, 0, w, h))
		for i := 0; i+1 < len(g.Pix); i += 2 {
			binary.BigEndian.PutUint16(g.Pix[i:], uint16(rng.IntN(65536)))
		}
		img = g
	case "rgb", "rgba":
		n := image.NewNRGBA64(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				a := uint16(65535)
				if kind == "rgba" {
					a = uint16(rng.IntN(65536))
				}
				n.SetNRGBA64(x, y, color.NRGBA64{uint16(rng.IntN(65536)), uint16(rng.IntN(65536)), uint16(rng.IntN(65536)), a})
			}
		}
		img = n
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), img
}

// samples16 returns a uint16 tensor's samples in C order.
func samples16(t testing.TB, x *tensor.Tensor) []uint16 {
	t.Helper()
	if x.DType() != tensor.Uint16 {
		t.Fatalf("dtype %s, want uint16", x.DType())
	}
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// want16 returns img's samples as c channels of uint16, the way
// codec.Decode documents: straight alpha, gray replicated, alpha 65535
// where there is none, and luma (9798 R + 19235 G + 3735 B + 16384) >> 15.
func want16(img image.Image, c int) []uint16 {
	b := img.Bounds()
	var out []uint16
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n := color.NRGBA64Model.Convert(img.At(x, y)).(color.NRGBA64)
			switch c {
			case 1:
				out = append(out, uint16((9798*uint64(n.R)+19235*uint64(n.G)+3735*uint64(n.B)+16384)>>15))
			case 3:
				out = append(out, n.R, n.G, n.B)
			case 4:
				out = append(out, n.R, n.G, n.B, n.A)
			}
		}
	}
	return out
}

// TestDecode16BitPNG: with dtype uint16, codec.Decode keeps a 16-bit
// PNG's samples whole, for gray, RGB and RGBA files into 1, 3 and 4
// channels; with the default uint8 it keeps their high bytes, as before.
func TestDecode16BitPNG(t *testing.T) {
	h := openCodec(t)
	rng := rand.New(rand.NewPCG(16, 16))
	for _, kind := range []string{"gray", "rgb", "rgba"} {
		data, img := png16(t, rng, 13, 7, kind)
		for _, c := range []int{1, 3, 4} {
			x := mustDecode(t, h, "codec.Decode", data, schema.Args{"channels": c, "dtype": "uint16"})
			if s := x.Shape(); s[0] != 7 || s[1] != 13 || s[2] != int64(c) {
				t.Fatalf("%s to %d channels: shape %v", kind, c, s)
			}
			got, want := samples16(t, x), want16(img, c)
			if kind == "gray" && c == 1 {
				want = nil
				g := img.(*image.Gray16)
				for i := 0; i < len(g.Pix); i += 2 {
					want = append(want, binary.BigEndian.Uint16(g.Pix[i:]))
				}
			}
			if !equal16(got, want) {
				t.Errorf("%s PNG to %d uint16 channels: differs from the file's samples", kind, c)
			}
			x8 := mustDecode(t, h, "codec.Decode", data, schema.Args{"channels": c})
			p8, _, _, _ := pixels(t, x8)
			for i := range p8 {
				if p8[i] != uint8(want[i]>>8) && !(c == 1 && kind != "gray") {
					t.Fatalf("%s PNG to %d uint8 channels: sample %d is %d, want the high byte of %d", kind, c, i, p8[i], want[i])
				}
			}
		}
	}
}

// TestDecodeUint16From8Bit: 8-bit files (JPEG, PNG, WebP) decoded to
// uint16 are the uint8 decode times 257, so 255 becomes 65535.
func TestDecodeUint16From8Bit(t *testing.T) {
	h := openCodec(t)
	files := map[string][]byte{"JPEG": encodeJPEG(t, photo(40, 24, false), 90)}
	var buf bytes.Buffer
	if err := png.Encode(&buf, photo(40, 24, true)); err != nil {
		t.Fatal(err)
	}
	files["PNG"] = buf.Bytes()
	webp, err := encodeWith(t, h, "codec.Encode", mustTensor(t, photo(40, 24, false), 3), schema.Args{"format": "webp"})
	if err != nil {
		t.Fatal(err)
	}
	files["WebP"] = webp
	for name, data := range files {
		for _, c := range []int{1, 3, 4} {
			p8, _, _, _ := pixels(t, mustDecode(t, h, "codec.Decode", data, schema.Args{"channels": c}))
			got := samples16(t, mustDecode(t, h, "codec.Decode", data, schema.Args{"channels": c, "dtype": "uint16"}))
			if len(got) != len(p8) {
				t.Fatalf("%s, %d channels: %d uint16 samples, %d uint8", name, c, len(got), len(p8))
			}
			for i := range got {
				if got[i] != uint16(p8[i])*257 {
					t.Fatalf("%s, %d channels: sample %d is %d, want %d*257", name, c, i, got[i], p8[i])
				}
			}
		}
	}
}

// TestEncode16BitPNG: codec.Encode and the Go image.Encode write uint16
// images as 16-bit PNGs that Go's image/png reads back sample for sample,
// from compact and strided images; JPEG and WebP refuse uint16, saying
// why.
func TestEncode16BitPNG(t *testing.T) {
	for _, enc := range []string{"codec.Encode", "image.Encode"} {
		t.Run(enc, func(t *testing.T) { testEncode16BitPNG(t, enc) })
	}
}

func testEncode16BitPNG(t *testing.T, enc string) {
	h := openCodec(t)
	rng := rand.New(rand.NewPCG(3, 16))
	for _, kind := range []string{"gray", "rgb", "rgba"} {
		data, img := png16(t, rng, 9, 5, kind)
		c := map[string]int{"gray": 1, "rgb": 3, "rgba": 4}[kind]
		x := mustDecode(t, h, "codec.Decode", data, schema.Args{"channels": c, "dtype": "uint16"})
		out, err := encodeWith(t, h, enc, x, schema.Args{"format": "png"})
		if err != nil {
			t.Fatal(err)
		}
		back, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if !equal16(want16(back, c), want16(img, c)) {
			t.Errorf("%s: the 16-bit PNG written reads back other samples", kind)
		}
		// A strided view: columns 2..6.
		view, err := x.Crop([]int64{0, 2, 0}, []int64{5, 5, int64(c)})
		if err != nil {
			t.Fatal(err)
		}
		out, err = encodeWith(t, h, enc, view, schema.Args{"format": "png"})
		if err != nil {
			t.Fatal(err)
		}
		back, err = png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if !equal16(want16(back, c), want16(subImage(img, image.Rect(2, 0, 7, 5)), c)) {
			t.Errorf("%s: a strided 16-bit view reads back other samples", kind)
		}
	}
	data, _ := png16(t, rng, 4, 4, "rgb")
	x := mustDecode(t, h, "codec.Decode", data, schema.Args{"dtype": "uint16"})
	formats := []string{"jpeg", "webp"}
	if enc == "image.Encode" {
		formats = formats[:1] // Go has no WebP encoder
	}
	for _, f := range formats {
		_, err := encodeWith(t, h, enc, x, schema.Args{"format": f})
		wantErr(t, err, "holds 8-bit samples: write format png (16-bit), or cast the image to uint8 first")
	}
	if enc != "codec.Encode" {
		return
	}
	_, err := h.NewOperator(t.Context(), "codec.Decode", schema.Args{"dtype": "float32"})
	wantErr(t, err, `argument "dtype": float32 is not one of [uint8 uint16]`)
}

// TestDecode16BitMatchesOpenCV: a 16-bit RGB and RGBA PNG decode to the
// samples cv2.imread(IMREAD_UNCHANGED) reads, channels reordered from
// OpenCV's BGR(A): bit-identical. It skips without python3-opencv.
func TestDecode16BitMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openCodec(t)
	rng := rand.New(rand.NewPCG(6, 16))
	for _, kind := range []string{"rgb", "rgba"} {
		data, _ := png16(t, rng, 21, 11, kind)
		c := map[string]int{"rgb": 3, "rgba": 4}[kind]
		conv := map[string]string{"rgb": "COLOR_BGR2RGB", "rgba": "COLOR_BGRA2RGBA"}[kind]
		want := cvtest.Run(t, "outputs = [cv2.cvtColor(cv2.imdecode(inputs[0], cv2.IMREAD_UNCHANGED), cv2."+conv+")]",
			cvtest.Array{DType: "uint8", Shape: []int64{int64(len(data))}, Data: data})[0]
		if want.DType != "uint16" {
			t.Fatalf("OpenCV read %s, not uint16", want.DType)
		}
		got, err := mustDecode(t, h, "codec.Decode", data, schema.Args{"channels": c, "dtype": "uint16"}).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Data) {
			t.Errorf("%s: differs from cv2.imread(IMREAD_UNCHANGED)", kind)
		}
	}
}

func equal16(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func subImage(img image.Image, r image.Rectangle) image.Image {
	return img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(r)
}
