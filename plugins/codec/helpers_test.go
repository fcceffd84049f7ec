package codec_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// openCodec opens a host with the codec plugin, built for the test (the
// test skips where the libraries are missing), and the Go image plugin.
func openCodec(t testing.TB) *dynop.Host {
	t.Helper()
	ctx := context.Background()
	lib := cbuild.Codec(t)
	h, err := dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{imageplugin.New()}, Paths: []string{lib},
		NoDefaultPaths: true, CacheDir: t.TempDir(), Logger: testutil.Logger(t)})
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

// run runs operator name with args on a batch of the given samples and
// returns the output samples.
func run(h *dynop.Host, name string, args schema.Args, samples ...*tensor.Tensor) ([]*tensor.Tensor, error) {
	ctx := context.Background()
	in, err := h.NewOperator(ctx, name, args)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	b, err := tensor.NewBatch(samples...)
	if err != nil {
		return nil, err
	}
	outs, err := in.Exec(ctx, b)
	if err != nil {
		return nil, err
	}
	return outs[0].Samples(), nil
}

// bytesT is a file's bytes as a 1-D uint8 tensor.
func bytesT(t testing.TB, data []byte) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromSlice(append([]byte{}, data...), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// decodeWith decodes data with operator name (codec.Decode or
// image.Decode).
func decodeWith(t testing.TB, h *dynop.Host, name string, data []byte, args schema.Args) (*tensor.Tensor, error) {
	t.Helper()
	outs, err := run(h, name, args, bytesT(t, data))
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

func mustDecode(t testing.TB, h *dynop.Host, name string, data []byte, args schema.Args) *tensor.Tensor {
	t.Helper()
	x, err := decodeWith(t, h, name, data, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return x
}

// encodeWith encodes the HWC pixels x with operator name.
func encodeWith(t testing.TB, h *dynop.Host, name string, x *tensor.Tensor, args schema.Args) ([]byte, error) {
	t.Helper()
	outs, err := run(h, name, args, x)
	if err != nil {
		return nil, err
	}
	return append([]byte{}, outs[0].Span()...), nil
}

// photo is a w×h image with smooth gradients, texture and an edge, so
// that JPEG coding costs and errs as on photos; alpha varies if alpha.
func photo(w, h int, alpha bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			img.Pix[i+0] = uint8((x*255/max(w-1, 1) + (x*y)%7) & 0xff)
			img.Pix[i+1] = uint8((y*255/max(h-1, 1) + (x^y)%5) & 0xff)
			b := uint8(40)
			if x > w/3 && y < h/2 {
				b = 220
			}
			img.Pix[i+2] = b
			img.Pix[i+3] = 255
			if alpha {
				img.Pix[i+3] = uint8((x + 3*y) & 0xff)
			}
		}
	}
	return img
}

// gray is photo's green channel as a gray image.
func gray(w, h int) *image.Gray {
	p := photo(w, h, false)
	g := image.NewGray(p.Rect)
	for i := range g.Pix {
		g.Pix[i] = p.Pix[4*i+1]
	}
	return g
}

func encodeJPEG(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withAPP1 inserts an APP1 segment with payload right after the SOI of
// the JPEG data.
func withAPP1(data, payload []byte) []byte {
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	out := append([]byte{}, data[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, data[2:]...)
}

// exifOrientation is an EXIF APP1 payload with one IFD0 entry, the
// orientation o, in byte order le (little-endian) or big-endian.
func exifOrientation(o uint16, le bool) []byte {
	var bo binary.AppendByteOrder = binary.BigEndian
	tiff := []byte("MM\x00\x2a")
	if le {
		bo, tiff = binary.LittleEndian, []byte("II\x2a\x00")
	}
	tiff = bo.AppendUint32(tiff, 8) // IFD0 offset
	tiff = bo.AppendUint16(tiff, 2) // entries
	// An entry before it: ImageDescription-ish, ASCII, count 4, inline.
	tiff = bo.AppendUint16(tiff, 0x010E)
	tiff = bo.AppendUint16(tiff, 2)
	tiff = bo.AppendUint32(tiff, 4)
	tiff = append(tiff, 'a', 'b', 'c', 0)
	tiff = bo.AppendUint16(tiff, 0x0112)
	tiff = bo.AppendUint16(tiff, 3)
	tiff = bo.AppendUint32(tiff, 1)
	tiff = bo.AppendUint16(tiff, o)
	tiff = append(tiff, 0, 0)
	tiff = bo.AppendUint32(tiff, 0) // no next IFD
	return append([]byte("Exif\x00\x00"), tiff...)
}

// pixels returns x's elements, HWC, and its height, width and channels.
func pixels(t testing.TB, x *tensor.Tensor) (p []uint8, h, w, c int) {
	t.Helper()
	s := x.Shape()
	if len(s) != 3 {
		t.Fatalf("shape %v, want HWC", s)
	}
	c2, err := x.Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensor.Values[uint8](c2)
	if err != nil {
		t.Fatal(err)
	}
	return v, int(s[0]), int(s[1]), int(s[2])
}

// diff returns the largest and the mean absolute difference of two
// tensors of the same shape, failing the test if the shapes differ.
func diff(t testing.TB, a, b *tensor.Tensor) (maxd int, mean float64) {
	t.Helper()
	pa, ha, wa, ca := pixels(t, a)
	pb, hb, wb, cb := pixels(t, b)
	if ha != hb || wa != wb || ca != cb {
		t.Fatalf("shapes differ: %dx%dx%d and %dx%dx%d", ha, wa, ca, hb, wb, cb)
	}
	sum := 0
	for i := range pa {
		d := int(pa[i]) - int(pb[i])
		if d < 0 {
			d = -d
		}
		sum += d
		maxd = max(maxd, d)
	}
	if len(pa) > 0 {
		mean = float64(sum) / float64(len(pa))
	}
	return maxd, mean
}

// orient turns x (HWC) by EXIF orientation o as the package doc says.
func orient(t testing.TB, x *tensor.Tensor, o int) *tensor.Tensor {
	t.Helper()
	p, h, w, c := pixels(t, x)
	oh, ow := h, w
	if o >= 5 {
		oh, ow = w, h
	}
	out := make([]uint8, len(p))
	for y := range oh {
		for xx := range ow {
			var sy, sx int
			switch o {
			case 1:
				sy, sx = y, xx
			case 2:
				sy, sx = y, w-1-xx
			case 3:
				sy, sx = h-1-y, w-1-xx
			case 4:
				sy, sx = h-1-y, xx
			case 5:
				sy, sx = xx, y
			case 6:
				sy, sx = h-1-xx, y
			case 7:
				sy, sx = h-1-xx, w-1-y
			case 8:
				sy, sx = xx, w-1-y
			}
			copy(out[(y*ow+xx)*c:(y*ow+xx+1)*c], p[(sy*w+sx)*c:])
		}
	}
	r, err := tensor.FromSlice(out, int64(oh), int64(ow), int64(c))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var _ = color.Gray{}

// mustTensor returns img's pixels as an HWC tensor of c channels: 4 is
// RGBA, 3 RGB, 1 the green channel.
func mustTensor(t testing.TB, img *image.NRGBA, c int) *tensor.Tensor {
	t.Helper()
	w, h := img.Rect.Dx(), img.Rect.Dy()
	p := make([]uint8, 0, w*h*c)
	for i := 0; i < len(img.Pix); i += 4 {
		switch c {
		case 1:
			p = append(p, img.Pix[i+1])
		case 3:
			p = append(p, img.Pix[i:i+3]...)
		default:
			p = append(p, img.Pix[i:i+4]...)
		}
	}
	x, err := tensor.FromSlice(p, int64(h), int64(w), int64(c))
	if err != nil {
		t.Fatal(err)
	}
	return x
}
