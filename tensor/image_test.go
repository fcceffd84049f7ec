package tensor_test

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/jpeg"
	"slices"
	"testing"
	"unsafe"

	"github.com/dynop/dynop/tensor"
)

// newRGBA returns an image of the given size whose pixel bytes count
// 0, 1, 2, ...
func newRGBA(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	copy(m.Pix, iota(len(m.Pix)))
	return m
}

func TestFromImageZeroCopy(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 3, 2))
	rgba := image.NewRGBA(image.Rect(0, 0, 3, 2))
	nrgba := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	tests := []struct {
		img   image.Image
		pix   []byte
		shape []int64
	}{
		{gray, gray.Pix, []int64{2, 3, 1}},
		{rgba, rgba.Pix, []int64{2, 3, 4}},
		{nrgba, nrgba.Pix, []int64{2, 3, 4}},
	}
	for _, tt := range tests {
		x := must(tensor.FromImage(tt.img))
		if x.DType() != tensor.Uint8 || x.Layout() != "HWC" || !slices.Equal(x.Shape(), tt.shape) {
			t.Errorf("FromImage(%T) = %v", tt.img, x)
		}
		b := must(x.Bytes())
		b[len(b)-1] = 0xab
		if tt.pix[len(tt.pix)-1] != 0xab {
			t.Errorf("FromImage(%T): writing the tensor did not change the image", tt.img)
		}
	}
}

func TestFromImageSubImage(t *testing.T) {
	m := newRGBA(5, 4)
	for _, r := range []image.Rectangle{
		image.Rect(1, 1, 3, 3),
		image.Rect(3, 2, 5, 4), // the bottom right corner: the last byte of Pix
		image.Rect(0, 3, 5, 4),
		image.Rect(2, 2, 2, 4), // empty
	} {
		sub := m.SubImage(r).(*image.RGBA)
		x := must(tensor.FromImage(sub))
		rs := sub.Rect // SubImage of an empty rectangle has no stride
		if !slices.Equal(x.Shape(), []int64{int64(rs.Dy()), int64(rs.Dx()), 4}) ||
			!slices.Equal(x.Strides(), []int64{int64(sub.Stride), 4, 1}) {
			t.Errorf("FromImage of sub-image %v = %v strides %v", r, x, x.Strides())
		}
		var want []byte
		for y := r.Min.Y; y < r.Max.Y; y++ {
			want = append(want, m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]...)
		}
		if got := values[uint8](t, x); !slices.Equal(got, want) {
			t.Errorf("FromImage of sub-image %v values %v, want %v", r, got, want)
		}
	}
}

func TestFromImageCopies(t *testing.T) {
	ycbcr := image.NewYCbCr(image.Rect(0, 0, 4, 2), image.YCbCrSubsampleRatio420)
	for i := range ycbcr.Y {
		ycbcr.Y[i] = 0x80
	}
	for i := range ycbcr.Cb {
		ycbcr.Cb[i], ycbcr.Cr[i] = 0x80, 0x80
	}
	pal := image.NewPaletted(image.Rect(10, 10, 12, 11), palette.Plan9)
	pal.SetColorIndex(11, 10, 3)
	gray16 := image.NewGray16(image.Rect(0, 0, 2, 1))
	gray16.SetGray16(1, 0, color.Gray16{Y: 0xff00})
	rgba64 := image.NewRGBA64(image.Rect(0, 0, 1, 1))
	rgba64.SetRGBA64(0, 0, color.RGBA64{0x1000, 0x2000, 0x3000, 0xffff})
	r, g, b, _ := palette.Plan9[3].RGBA()

	tests := []struct {
		img    image.Image
		shape  []int64
		values []uint8
	}{
		{ycbcr, []int64{2, 4, 4}, slices.Repeat([]uint8{0x80, 0x80, 0x80, 0xff}, 8)},
		{pal, []int64{1, 2, 4}, []uint8{0, 0, 0, 0xff, uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}},
		{gray16, []int64{1, 2, 1}, []uint8{0, 0xff}},
		{rgba64, []int64{1, 1, 4}, []uint8{0x10, 0x20, 0x30, 0xff}},
	}
	for _, tt := range tests {
		x := must(tensor.FromImage(tt.img))
		if x.Layout() != "HWC" || !slices.Equal(x.Shape(), tt.shape) {
			t.Errorf("FromImage(%T) = %v, want shape %v", tt.img, x, tt.shape)
		}
		if got := values[uint8](t, x); !slices.Equal(got, tt.values) {
			t.Errorf("FromImage(%T) values %v, want %v", tt.img, got, tt.values)
		}
	}
}

func TestFromImageJPEG(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, newRGBA(16, 8), nil); err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	x := must(tensor.FromImage(img))
	if got := x.String(); got != "tensor(uint8 [8 16 4] HWC cpu)" {
		t.Errorf("FromImage of a %T = %s", img, got)
	}
}

func TestFromImageErrors(t *testing.T) {
	_, err := tensor.FromImage(nil)
	wantErr(t, err, "FromImage of a nil image")
	short := &image.RGBA{Pix: make([]byte, 15), Stride: 8, Rect: image.Rect(0, 0, 2, 2)}
	_, err = tensor.FromImage(short)
	wantErr(t, err, "image (0,0)-(2,2) with stride 8 reaches past its 15 bytes of pixels")
	negative := &image.Gray{Pix: make([]byte, 4), Stride: -2, Rect: image.Rect(0, 0, 2, 2)}
	_, err = tensor.FromImage(negative)
	wantErr(t, err, "image (0,0)-(2,2): strides [-2 1 1] have negative stride")
}

func TestImageRoundTrip(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 3, 2))
	copy(gray.Pix, iota(6))
	rgba := newRGBA(3, 2)
	sub := newRGBA(6, 5).SubImage(image.Rect(1, 2, 4, 4)).(*image.RGBA)
	for _, img := range []image.Image{gray, rgba, sub} {
		x := must(tensor.FromImage(img))
		back := must(x.Image())
		b := img.Bounds()
		if back.Bounds() != image.Rect(0, 0, b.Dx(), b.Dy()) {
			t.Errorf("Image(FromImage(%T %v)) bounds %v", img, b, back.Bounds())
		}
		for y := range b.Dy() {
			for x := range b.Dx() {
				if got, want := back.At(x, y), img.At(b.Min.X+x, b.Min.Y+y); got != want {
					t.Errorf("Image(FromImage(%T %v)).At(%d, %d) = %v, want %v", img, b, x, y, got, want)
				}
			}
		}
		if pixPtr(back) != pixPtr(img) {
			t.Errorf("Image(FromImage(%T %v)) copied the pixels", img, b)
		}
	}
}

// pixPtr returns the address of the first pixel of a Gray or RGBA image.
func pixPtr(img image.Image) unsafe.Pointer {
	switch m := img.(type) {
	case *image.Gray:
		return unsafe.Pointer(&m.Pix[0])
	case *image.RGBA:
		return unsafe.Pointer(&m.Pix[0])
	}
	return nil
}

func TestImageOfCrop(t *testing.T) {
	m := newRGBA(5, 4)
	x := must(tensor.FromImage(m))
	c := must(x.Crop([]int64{1, 2, 0}, []int64{2, 3, 4}))
	img := must(c.Image())
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Stride != m.Stride || &rgba.Pix[0] != &m.Pix[m.PixOffset(2, 1)] {
		t.Fatalf("Image of a crop is %T, not sharing the image's rows", img)
	}
	for y := range 2 {
		for x := range 3 {
			if got, want := rgba.RGBAAt(x, y), m.RGBAAt(x+2, y+1); got != want {
				t.Errorf("crop pixel (%d, %d) = %v, want %v", x, y, got, want)
			}
		}
	}
	rgba.SetRGBA(2, 1, color.RGBA{1, 2, 3, 4})
	if got := m.RGBAAt(4, 2); got != (color.RGBA{1, 2, 3, 4}) {
		t.Errorf("writing the crop's image did not change the image: %v", got)
	}
}

func TestImageCopies(t *testing.T) {
	rgb := must(tensor.FromSlice(iota(12), 2, 2, 3))
	hw := must(tensor.FromSlice(iota(6), 2, 3))
	chw := must(must(must(tensor.FromSlice(iota(8), 1, 2, 4)).WithLayout("CHW")).Permute(1, 2, 0))
	tests := []struct {
		name string
		x    *tensor.Tensor
		want image.Image
	}{
		{"rgb", rgb, &image.RGBA{Rect: image.Rect(0, 0, 2, 2), Stride: 8,
			Pix: []uint8{0, 1, 2, 255, 3, 4, 5, 255, 6, 7, 8, 255, 9, 10, 11, 255}}},
		{"2-D gray", hw, &image.Gray{Rect: image.Rect(0, 0, 3, 2), Stride: 3, Pix: iota(6)}},
		{"planar", chw, &image.Gray{Rect: image.Rect(0, 0, 4, 2), Stride: 4, Pix: iota(8)}},
		{"transposed gray", must(hw.Permute(1, 0)), &image.Gray{Rect: image.Rect(0, 0, 2, 3), Stride: 2,
			Pix: []uint8{0, 3, 1, 4, 2, 5}}},
		{"transposed rgba", must(must(tensor.FromSlice(iota(16), 2, 2, 4)).Permute(1, 0, 2)), &image.RGBA{
			Rect: image.Rect(0, 0, 2, 2), Stride: 8, Pix: []uint8{0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15}}},
		{"empty", must(tensor.New(tensor.Uint8, 0, 3, 4)), image.NewRGBA(image.Rect(0, 0, 3, 0))},
	}
	for _, tt := range tests {
		got := must(tt.x.Image())
		if !imagesEqual(got, tt.want) {
			t.Errorf("%s: Image() = %#v, want %#v", tt.name, got, tt.want)
		}
	}
	rgba := must(tensor.FromSlice(iota(8), 1, 2, 4))
	if img := must(rgba.Image()); pixPtr(img) != rgba.Data() {
		t.Error("Image of a compact RGBA tensor copied it")
	}
}

func imagesEqual(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	switch a := a.(type) {
	case *image.Gray:
		b, ok := b.(*image.Gray)
		return ok && bytes.Equal(a.Pix[:len(b.Pix)], b.Pix)
	case *image.RGBA:
		b, ok := b.(*image.RGBA)
		return ok && bytes.Equal(a.Pix[:len(b.Pix)], b.Pix)
	}
	return false
}

func TestImageErrors(t *testing.T) {
	buf := make([]byte, 64)
	onGPU := must(tensor.FromPointer(unsafe.Pointer(&buf[0]), 64, cuda0, tensor.Uint8, []int64{4, 4, 4}, nil, 0))
	tests := []struct {
		x    *tensor.Tensor
		want string
	}{
		{must(tensor.New(tensor.Float32, 2, 2, 3)), "Image needs uint8 HW or HWC with 1, 3 or 4 channels, tensor is float32 [2 2 3]"},
		{must(tensor.New(tensor.Uint8, 2, 2, 5)), "tensor is uint8 [2 2 5]"},
		{must(tensor.New(tensor.Uint8, 4)), "tensor is uint8 [4]"},
		{must(tensor.New(tensor.Uint8, 1, 2, 2, 3)), "tensor is uint8 [1 2 2 3]"},
		{must(must(tensor.New(tensor.Uint8, 3, 2, 2)).WithLayout("CHW")), `tensor is uint8 [3 2 2] "CHW"`},
		{onGPU, "Image needs CPU memory, tensor is on cuda:0"},
	}
	for _, tt := range tests {
		_, err := tt.x.Image()
		wantErr(t, err, tt.want)
	}
}
