package tensor

import (
	"image"
	"image/draw"
	"unsafe"
)

// FromImage returns a uint8 CPU tensor of img's pixels with layout "HWC".
//
// An *image.Gray (shape [H W 1]), *image.RGBA or *image.NRGBA (shape
// [H W 4]) is not copied: the tensor shares its Pix, rows Stride bytes
// apart, so writing the tensor changes the image. Every other image is
// copied: an *image.Gray16 into a new gray [H W 1], and any other
// (*image.YCbCr from JPEG, *image.Paletted from GIF, *image.RGBA64, ...)
// into a new RGBA [H W 4].
//
// Element [y, x] is the pixel at img.Bounds().Min + (x, y): a sub-image's
// tensor starts at its own corner. The tensor does not record whether the
// alpha of 4 channels is premultiplied (RGBA) or not (NRGBA).
func FromImage(img image.Image) (*Tensor, error) {
	switch m := img.(type) {
	case nil:
		return nil, invalidf("FromImage of a nil image")
	case *image.Gray:
		return fromPix(m.Pix, m.Stride, m.Rect, 1)
	case *image.RGBA:
		return fromPix(m.Pix, m.Stride, m.Rect, 4)
	case *image.NRGBA:
		return fromPix(m.Pix, m.Stride, m.Rect, 4)
	case *image.Gray16:
		g := image.NewGray(image.Rectangle{Max: m.Rect.Size()})
		draw.Draw(g, g.Rect, m, m.Rect.Min, draw.Src)
		return fromPix(g.Pix, g.Stride, g.Rect, 1)
	}
	b := img.Bounds()
	m := image.NewRGBA(image.Rectangle{Max: b.Size()})
	draw.Draw(m, m.Rect, img, b.Min, draw.Src)
	return fromPix(m.Pix, m.Stride, m.Rect, 4)
}

// fromPix returns the HWC tensor of an image's pixel memory, whose pixel
// at r.Min starts pix and whose rows are stride bytes apart.
func fromPix(pix []byte, stride int, r image.Rectangle, channels int) (*Tensor, error) {
	shape := []int64{int64(r.Dy()), int64(r.Dx()), int64(channels)}
	strides := []int64{int64(stride), int64(channels), 1}
	var base unsafe.Pointer
	var size int64
	if shape[0] > 0 && shape[1] > 0 && stride >= 0 {
		var ok bool
		if size, ok = extent(shape, strides, 1); !ok || size > int64(len(pix)) {
			return nil, invalidf("image %v with stride %d reaches past its %d bytes of pixels", r, stride, len(pix))
		}
		base = unsafe.Pointer(unsafe.SliceData(pix))
	}
	t, err := newTensor(base, int(size), cpu, Uint8, shape, strides, 0)
	if err != nil {
		return nil, within(err, "image %v", r)
	}
	t.layout = "HWC"
	return t, nil
}

// Image returns the pixels of a uint8 CPU tensor of shape [H W C] or, for
// gray, [H W] as an image with bounds (0, 0)-(W, H). The layout must be
// "HWC", "HW" or none.
//
// One channel gives an *image.Gray and four an *image.RGBA; these share
// the tensor's memory when each row's pixels are compact (strides [S C 1]
// with S at least W*C) and are copies otherwise. Three channels give a
// copy into an *image.RGBA with opaque alpha. Four channels read as
// premultiplied alpha; wrap the Pix of pixels from an *image.NRGBA in an
// *image.NRGBA instead.
func (t *Tensor) Image() (image.Image, error) {
	nd := len(t.shape)
	if t.dtype != Uint8 || nd < 2 || nd > 3 ||
		(nd == 3 && t.shape[2] != 1 && t.shape[2] != 3 && t.shape[2] != 4) ||
		(t.layout != "" && t.layout != "HWC"[:nd]) {
		return nil, invalidf("Image needs uint8 HW or HWC with 1, 3 or 4 channels, tensor is %v %v %q",
			t.dtype, t.shape, t.layout)
	}
	if err := t.onCPU("Image"); err != nil {
		return nil, err
	}
	h, w, c := int(t.shape[0]), int(t.shape[1]), 1
	sh, sw, sc := int(t.strides[0]), int(t.strides[1]), 1
	if nd == 3 {
		c, sc = int(t.shape[2]), int(t.strides[2])
	}
	if h == 1 {
		sh = w * c // the only row's stride does not matter
	}
	r := image.Rect(0, 0, w, h)
	src := t.Span()
	if h > 0 && w > 0 && sw == c && (c == 1 || sc == 1) && sh >= w*c {
		switch c {
		case 1:
			return &image.Gray{Pix: src, Stride: sh, Rect: r}, nil
		case 4:
			return &image.RGBA{Pix: src, Stride: sh, Rect: r}, nil
		}
	}
	var img image.Image
	var dst []byte
	dc := 4
	if c == 1 {
		g := image.NewGray(r)
		img, dst, dc = g, g.Pix, 1
	} else {
		m := image.NewRGBA(r)
		img, dst = m, m.Pix
	}
	for y := range h {
		for x := range w {
			d, s := dst[(y*w+x)*dc:], src[y*sh+x*sw:]
			for k := range c {
				d[k] = s[k*sc]
			}
			if c == 3 {
				d[3] = 0xff
			}
		}
	}
	return img, nil
}
