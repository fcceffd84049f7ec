package image

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"unsafe"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// The formats Decode reads, by the bytes their files start with. Decode
// tells them apart itself rather than through image.DecodeConfig, so
// that formats other packages of the program register (GIF, say) make no
// difference to what it accepts.
const (
	pngMagic  = "\x89PNG\r\n\x1a\n"
	jpegMagic = "\xff\xd8"
)

// sniff returns "png" or "jpeg" for data that starts like such a file,
// and "" for anything else.
func sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte(pngMagic)):
		return "png"
	case bytes.HasPrefix(data, []byte(jpegMagic)):
		return "jpeg"
	}
	return ""
}

// decodeErr is the error for sample i that could not be decoded.
func decodeErr(i int, format string, err error) error {
	return &op.SampleError{Sample: i, Err: fmt.Errorf("%w (%s): %w", ErrDecode, format, err)}
}

// decoder is image.Decode.
type decoder struct {
	channels int
	orient   bool   // apply JPEG EXIF orientation
	row      []byte // one row of NRGBA pixels, reused
	turned   []byte // a decoded image before its orientation, reused
}

func newDecode(args *schema.Values) (op.Impl, error) {
	return &decoder{channels: int(args.Int("channels")), orient: args.Bool("orientation")}, nil
}

// orientation returns the EXIF orientation Decode applies to data.
func (d *decoder) orientation(data []byte) int {
	if !d.orient || sniff(data) != "jpeg" {
		return 1
	}
	return exifOrientation(data)
}

// Setup reads each sample's header to size its output.
func (d *decoder) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	shapes := make([][]int64, in.Len())
	for i, t := range in.Samples() {
		data, err := elems[uint8](t)
		if err != nil {
			return nil, &op.SampleError{Sample: i, Err: err}
		}
		cfg, err := decodeConfig(i, data)
		if err != nil {
			return nil, err
		}
		if d.orientation(data) >= 5 {
			cfg.Width, cfg.Height = cfg.Height, cfg.Width
		}
		shapes[i] = []int64{int64(cfg.Height), int64(cfg.Width), int64(d.channels)}
	}
	return []op.OutputDesc{{DType: tensor.Uint8, Layout: "HWC", Shapes: shapes}}, nil
}

// decodeConfig reads the header of sample i.
func decodeConfig(i int, data []byte) (image.Config, error) {
	var cfg image.Config
	var err error
	switch f := sniff(data); f {
	case "png":
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	case "jpeg":
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	default:
		n := min(len(data), 8)
		return cfg, &op.SampleError{Sample: i, Err: fmt.Errorf("%w: not PNG or JPEG: %d bytes starting % x", ErrDecode, len(data), data[:n])}
	}
	if err != nil {
		return cfg, decodeErr(i, sniff(data), err)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > maxPixels {
		return cfg, &op.SampleError{Sample: i, Err: fmt.Errorf("%w: a %dx%d image has %d pixels, more than the %d Decode allows", op.ErrInput, cfg.Width, cfg.Height, px, maxPixels)}
	}
	return cfg, nil
}

// Run decodes each sample and converts its pixels into the output.
func (d *decoder) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := elems[uint8](t)
		if err != nil {
			return &op.SampleError{Sample: i, Err: err}
		}
		format := sniff(data)
		var img image.Image
		switch format {
		case "png":
			img, err = png.Decode(bytes.NewReader(data))
		case "jpeg":
			img, err = jpeg.Decode(bytes.NewReader(data))
		default:
			_, err = decodeConfig(i, data) // the error it had in Setup
			return err
		}
		if err != nil {
			return decodeErr(i, format, err)
		}
		out := outputs[0].Sample(i)
		h, w, _ := dims(out)
		o := d.orientation(data)
		if o >= 5 {
			h, w = w, h
		}
		if sz := img.Bounds().Size(); sz.X != w || sz.Y != h {
			return &op.SampleError{Sample: i, Err: fmt.Errorf("%w (%s): decoded %dx%d, the header said %dx%d in Setup", ErrDecode, format, sz.X, sz.Y, w, h)}
		}
		convert := func(pix []uint8) error { d.convert(pix, img); return nil }
		if o != 1 {
			convert = func(pix []uint8) error {
				d.turned = grow(d.turned, len(pix))
				d.convert(d.turned, img)
				orient(pix, d.turned, h, w, d.channels, o)
				return nil
			}
		}
		if err := fill(out, convert); err != nil {
			return &op.SampleError{Sample: i, Err: err}
		}
	}
	return nil
}

// convert writes img's pixels into pix, HWC with d.channels channels.
func (d *decoder) convert(pix []uint8, img image.Image) {
	b := img.Bounds()
	w, c := b.Dx(), d.channels
	if w == 0 {
		return
	}
	if g, ok := img.(*image.Gray); ok && c == 1 { // luma8 of gray is gray
		for y := range b.Dy() {
			copy(pix[y*w:(y+1)*w], g.Pix[g.PixOffset(b.Min.X, b.Min.Y+y):])
		}
		return
	}
	if c != 4 {
		d.row = grow(d.row, 4*w)
	}
	var pal []color.NRGBA
	if p, ok := img.(*image.Paletted); ok {
		pal = make([]color.NRGBA, len(p.Palette))
		for i, col := range p.Palette {
			pal[i] = color.NRGBAModel.Convert(col).(color.NRGBA)
		}
	}
	for y := range b.Dy() {
		dst := pix[y*w*c : (y+1)*w*c]
		row := dst
		if c != 4 {
			row = d.row
		}
		nrgbaRow(row, img, b.Min.Y+y, pal)
		switch c {
		case 3:
			for x := range w {
				copy(dst[3*x:3*x+3], row[4*x:])
			}
		case 1:
			for x := range w {
				p := row[4*x:]
				dst[x] = luma8(p[0], p[1], p[2])
			}
		}
	}
}

// grow returns b with length n, reusing its memory if it has room.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// nrgbaRow writes row y of img as 8-bit straight-alpha RGBA into dst,
// four bytes per pixel, converting as color.NRGBAModel does. pal is the
// palette of a paletted image as NRGBA.
func nrgbaRow(dst []byte, img image.Image, y int, pal []color.NRGBA) {
	b := img.Bounds()
	w := b.Dx()
	switch m := img.(type) {
	case *image.NRGBA:
		copy(dst, m.Pix[m.PixOffset(b.Min.X, y):][:4*w])
	case *image.RGBA:
		src := m.Pix[m.PixOffset(b.Min.X, y):][:4*w]
		for x := 0; x < 4*w; x += 4 {
			unpremultiply(dst[x:x+4], src[x:x+4])
		}
	case *image.Gray:
		src := m.Pix[m.PixOffset(b.Min.X, y):][:w]
		for x, v := range src {
			dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = v, v, v, 0xff
		}
	case *image.YCbCr:
		for x := range w {
			yi, ci := m.YOffset(b.Min.X+x, y), m.COffset(b.Min.X+x, y)
			r, g, bl := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
			dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = r, g, bl, 0xff
		}
	case *image.CMYK:
		src := m.Pix[m.PixOffset(b.Min.X, y):][:4*w]
		for x := 0; x < 4*w; x += 4 {
			r, g, bl := color.CMYKToRGB(src[x], src[x+1], src[x+2], src[x+3])
			dst[x], dst[x+1], dst[x+2], dst[x+3] = r, g, bl, 0xff
		}
	case *image.Gray16:
		src := m.Pix[m.PixOffset(b.Min.X, y):][:2*w]
		for x := range w {
			v := src[2*x] // the high byte: GrayModel's and NRGBAModel's 16-to-8 bits
			dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = v, v, v, 0xff
		}
	case *image.NRGBA64:
		src := m.Pix[m.PixOffset(b.Min.X, y):][:8*w]
		for x := range 4 * w {
			dst[x] = src[2*x]
		}
	case *image.Paletted:
		src := m.Pix[m.PixOffset(b.Min.X, y):][:w]
		for x, i := range src {
			c := color.NRGBA{}
			if int(i) < len(pal) {
				c = pal[i]
			}
			dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = c.R, c.G, c.B, c.A
		}
	default: // *image.RGBA64 and what decoders may return one day
		for x := range w {
			c := color.NRGBAModel.Convert(img.At(b.Min.X+x, y)).(color.NRGBA)
			dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = c.R, c.G, c.B, c.A
		}
	}
}

// unpremultiply converts one premultiplied RGBA pixel to straight alpha
// as color.NRGBAModel does.
func unpremultiply(dst, src []byte) {
	switch a := uint32(src[3]); a {
	case 0xff:
		copy(dst, src)
	case 0:
		dst[0], dst[1], dst[2], dst[3] = 0, 0, 0, 0
	default:
		a16 := a * 0x101
		for k := range 3 {
			dst[k] = uint8(uint32(src[k]) * 0x101 * 0xffff / a16 >> 8)
		}
		dst[3] = uint8(a)
	}
}

// encoder is image.Encode. Setup encodes every sample into bufs, which the
// instance keeps for the next Setup; Run copies them out; Close drops
// them.
type encoder struct {
	format  string
	quality int
	png     png.Encoder
	pool    pngPool
	bufs    []bytes.Buffer
}

// pngPool keeps the PNG encoder's compression state between samples and
// calls. An instance runs on one goroutine at a time, so it needs no lock.
type pngPool struct{ b *png.EncoderBuffer }

func (p *pngPool) Get() *png.EncoderBuffer  { b := p.b; p.b = nil; return b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.b = b }

func newEncode(args *schema.Values) (op.Impl, error) {
	e := &encoder{format: args.String("format"), quality: int(args.Int("quality"))}
	e.png.BufferPool = &e.pool
	return e, nil
}

// Setup encodes each sample, since the size of its encoding is the shape
// of its output.
func (e *encoder) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	n := in.Len()
	if cap(e.bufs) < n {
		e.bufs = make([]bytes.Buffer, n)
	} else {
		clear(e.bufs[n:cap(e.bufs)]) // what a larger batch left
		e.bufs = e.bufs[:n]
	}
	shapes := make([][]int64, n)
	for i, t := range in.Samples() {
		buf := &e.bufs[i]
		buf.Reset()
		if err := e.encode(buf, i, t); err != nil {
			return nil, err
		}
		shapes[i] = []int64{int64(buf.Len())}
	}
	return []op.OutputDesc{{DType: tensor.Uint8, Shapes: shapes}}, nil
}

// encode encodes sample i, t, into buf.
func (e *encoder) encode(buf *bytes.Buffer, i int, t *tensor.Tensor) error {
	h, w, c := dims(t)
	if c != 1 && c != 3 && c != 4 {
		return fmt.Errorf("%w: sample %d has %d channels; Encode takes 1 (gray), 3 (RGB) or 4 (RGBA)", op.ErrInput, i, c)
	}
	if c == 4 && e.format == "jpeg" {
		// JPEG has no alpha: encode the colour channels, as they are.
		v, err := t.Crop([]int64{0, 0, 0}, []int64{int64(h), int64(w), 3})
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		t = v
	}
	if t.DType() == tensor.Uint16 {
		if h == 0 || w == 0 {
			return fmt.Errorf("%w: sample %d: cannot encode an empty %dx%d image", ErrEncode, i, w, h)
		}
		if e.format != "png" {
			return fmt.Errorf("%w: sample %d is uint16, and %s holds 8-bit samples: write format png (16-bit), or cast the image to uint8 first", op.ErrInput, i, strings.ToUpper(e.format))
		}
		if err := e.png.Encode(buf, image16(t, h, w, c)); err != nil {
			return fmt.Errorf("%w: sample %d (%dx%d, %d channels) as png: %w", ErrEncode, i, w, h, c, err)
		}
		return nil
	}
	// Image shares t's memory where it can; three channels are copied.
	img, err := t.Image()
	if err != nil {
		return fmt.Errorf("sample %d: %w", i, err)
	}
	if m, ok := img.(*image.RGBA); ok && c == 4 {
		// The channels are straight alpha, as Decode produces them.
		img = &image.NRGBA{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}
	}
	if e.format == "jpeg" {
		err = jpeg.Encode(buf, img, &jpeg.Options{Quality: e.quality})
	} else {
		err = e.png.Encode(buf, img)
	}
	if err != nil {
		return fmt.Errorf("%w: sample %d (%dx%d, %d channels) as %s: %w", ErrEncode, i, w, h, c, e.format, err)
	}
	return nil
}

// Run copies the encodings Setup made into the outputs.
func (e *encoder) Run(ctx context.Context, outputs, _ []*tensor.Batch) error {
	for i, out := range outputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fill(out, func(dst []uint8) error { copy(dst, e.bufs[i].Bytes()); return nil })
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// Close drops the encodings and the encoder's state.
func (e *encoder) Close() error {
	e.bufs, e.pool.b = nil, nil
	return nil
}

// image16 copies the uint16 HWC image t (any strides) into a 16-bit Go
// image that image/png writes as a 16-bit PNG: Gray16 for one channel,
// NRGBA64 for four (straight alpha) and for three (alpha 65535).
func image16(t *tensor.Tensor, h, w, c int) image.Image {
	st := t.Strides()
	src := unsafe.Slice((*uint16)(t.Data()), int(st[0])*(h-1)+int(st[1])*(w-1)+int(st[2])*(c-1)+1)
	at := func(y, x, k int) uint16 { return src[y*int(st[0])+x*int(st[1])+k*int(st[2])] }
	r := image.Rect(0, 0, w, h)
	if c == 1 {
		g := image.NewGray16(r)
		for y := range h {
			for x := range w {
				binary.BigEndian.PutUint16(g.Pix[y*g.Stride+2*x:], at(y, x, 0))
			}
		}
		return g
	}
	m := image.NewNRGBA64(r)
	for y := range h {
		for x := range w {
			d := m.Pix[y*m.Stride+8*x:]
			for k := range 4 {
				v := uint16(0xffff)
				if k < c {
					v = at(y, x, k)
				}
				binary.BigEndian.PutUint16(d[2*k:], v)
			}
		}
	}
	return m
}
