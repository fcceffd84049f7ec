package image

import (
	"context"
	"fmt"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// toFloat is image.ToFloat: a table of the 256 results.
type toFloat struct{ lut [256]float32 }

func newToFloat(args *schema.Values) (op.Impl, error) {
	t := new(toFloat)
	scale := args.Float("scale")
	for i := range t.lut {
		t.lut[i] = float32(float64(i) * scale)
	}
	return t, nil
}

// Share implements op.SharedImpl: the table is only read.
func (t *toFloat) Share() (op.Impl, bool) { return t, true }

func (*toFloat) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	return []op.OutputDesc{{DType: tensor.Float32, Layout: in.Layout(), Shapes: in.Shapes()}}, nil
}

func (t *toFloat) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, s := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		src, err := elems[uint8](s)
		if err == nil {
			err = fill(outputs[0].Sample(i), func(dst []float32) error {
				for j, v := range src {
					dst[j] = t.lut[v]
				}
				return nil
			})
		}
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// grayscale is image.Grayscale.
type grayscale struct{}

func newGrayscale(*schema.Values) (op.Impl, error) { return grayscale{}, nil }

// Share implements op.SharedImpl: grayscale keeps nothing.
func (g grayscale) Share() (op.Impl, bool) { return g, true }

func (grayscale) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	shapes := make([][]int64, in.Len())
	for i, t := range in.Samples() {
		h, w, c := dims(t)
		if c != 3 && c != 4 {
			return nil, fmt.Errorf("%w: sample %d has %d channels; Grayscale takes 3 (RGB) or 4 (RGBA)", op.ErrInput, i, c)
		}
		shapes[i] = []int64{int64(h), int64(w), 1}
	}
	return []op.OutputDesc{{DType: in.DType(), Layout: "HWC", Shapes: shapes}}, nil
}

func (grayscale) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, _, c := dims(t)
		var err error
		if t.DType() == tensor.Uint8 {
			err = gray8(outputs[0].Sample(i), t, c)
		} else {
			err = gray32(outputs[0].Sample(i), t, c)
		}
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// gray8 writes luma of the c-channel uint8 pixels of in into out.
func gray8(out, in *tensor.Tensor, c int) error {
	src, err := elems[uint8](in)
	if err != nil {
		return err
	}
	return fill(out, func(dst []uint8) error {
		for j := range dst {
			p := src[j*c : j*c+3]
			dst[j] = luma8(p[0], p[1], p[2])
		}
		return nil
	})
}

// gray32 writes luma of the c-channel float32 pixels of in into out.
func gray32(out, in *tensor.Tensor, c int) error {
	src, err := elems[float32](in)
	if err != nil {
		return err
	}
	return fill(out, func(dst []float32) error {
		for j := range dst {
			p := src[j*c : j*c+3]
			dst[j] = luma32(p[0], p[1], p[2])
		}
		return nil
	})
}

// resize is image.Resize. It keeps the column taps and a row of float32
// results between calls.
type resize struct {
	w, h int
	cols []tap
	row  []float32
}

// tap is where an output column or row samples the source: between
// source columns (rows) i0 and i1, at fraction f of the way.
type tap struct {
	i0, i1 int
	f      float32
}

func newResize(args *schema.Values) (op.Impl, error) {
	w, h := args.Int("width"), args.Int("height")
	if px := w * h; px > maxPixels {
		return nil, fmt.Errorf("%w: width %d x height %d is %d pixels, more than the %d Resize allows", schema.ErrArgument, w, h, px, maxPixels)
	}
	return &resize{w: int(w), h: int(h)}, nil
}

func (r *resize) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	shapes := make([][]int64, in.Len())
	for i, t := range in.Samples() {
		h, w, c := dims(t)
		if h == 0 || w == 0 {
			return nil, fmt.Errorf("%w: sample %d is empty (%dx%d), there is nothing to resize", op.ErrInput, i, w, h)
		}
		if n := int64(r.w) * int64(r.h) * int64(c); n > maxElements {
			return nil, fmt.Errorf("%w: sample %d: %dx%d pixels of %d channels are %d elements, more than the %d Resize allows",
				op.ErrInput, i, r.w, r.h, c, n, int64(maxElements))
		}
		shapes[i] = []int64{int64(r.h), int64(r.w), int64(c)}
	}
	return []op.OutputDesc{{DType: in.DType(), Layout: "HWC", Shapes: shapes}}, nil
}

func (r *resize) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if t.DType() == tensor.Uint8 {
			err = resample(r, outputs[0].Sample(i), t, func(dst []uint8, v []float32) {
				for j, x := range v {
					switch x += 0.5; {
					case x >= 255:
						dst[j] = 255
					case x > 0:
						dst[j] = uint8(x)
					default:
						dst[j] = 0
					}
				}
			})
		} else {
			err = resample(r, outputs[0].Sample(i), t, func(dst, v []float32) { copy(dst, v) })
		}
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// taps returns, in dst's memory, the tap of each of out positions
// resampling in positions.
func taps(dst []tap, in, out int) []tap {
	dst = dst[:0]
	for x := range out {
		dst = append(dst, tapAt(x, in, out))
	}
	return dst
}

// tapAt returns where output position x of out samples a source of in
// positions: the half-pixel centre (x+0.5)*in/out - 0.5, clamped to the
// border. A product that feeds a division cannot be fused with an
// addition, so no conversion is needed to round it.
func tapAt(x, in, out int) tap {
	s := (float32(x)+0.5)*float32(in)/float32(out) - 0.5
	s = min(max(s, 0), float32(in-1))
	i0 := int(s)
	return tap{i0: i0, i1: min(i0+1, in-1), f: s - float32(i0)}
}

// lerp is a + f*(b-a), the product rounded before the sum so that it is
// the same on every architecture; a itself where f is 0.
func lerp(a, b, f float32) float32 {
	if f == 0 {
		return a
	}
	return a + float32(f*(b-a))
}

// resample resizes in into out a row at a time, computing each row in
// float32 into r.row and storing it into out with store.
func resample[T uint8 | float32](r *resize, out, in *tensor.Tensor, store func(dst []T, v []float32)) error {
	src, err := elems[T](in)
	if err != nil {
		return err
	}
	inH, inW, c := dims(in)
	r.cols = taps(r.cols, inW, r.w)
	if n := r.w * c; cap(r.row) < n {
		r.row = make([]float32, n)
	} else {
		r.row = r.row[:n]
	}
	rowLen := inW * c
	return fill(out, func(dst []T) error {
		for y := range r.h {
			ty := tapAt(y, inH, r.h)
			r0, r1 := src[ty.i0*rowLen:][:rowLen], src[ty.i1*rowLen:][:rowLen]
			v := r.row
			for x, tx := range r.cols {
				a0, a1, b0, b1 := r0[tx.i0*c:][:c], r0[tx.i1*c:][:c], r1[tx.i0*c:][:c], r1[tx.i1*c:][:c]
				for k := range c {
					top := lerp(float32(a0[k]), float32(a1[k]), tx.f)
					bot := lerp(float32(b0[k]), float32(b1[k]), tx.f)
					v[x*c+k] = lerp(top, bot, ty.f)
				}
			}
			store(dst[y*r.w*c:][:r.w*c], v)
		}
		return nil
	})
}

// flip is image.Flip.
type flip struct{ horizontal, vertical bool }

func newFlip(args *schema.Values) (op.Impl, error) {
	return flip{horizontal: args.Bool("horizontal"), vertical: args.Bool("vertical")}, nil
}

// Share implements op.SharedImpl: flip keeps nothing.
func (f flip) Share() (op.Impl, bool) { return f, true }

func (flip) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	return []op.OutputDesc{{DType: in.DType(), Layout: "HWC", Shapes: in.Shapes()}}, nil
}

func (f flip) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		src, err := t.Contiguous() // the sample itself when it is compact
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		in, err := src.Bytes()
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		out, err := outputs[0].Sample(i).Bytes()
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		h, w, c := dims(t)
		px := c * t.DType().Size() // bytes per pixel
		row := w * px
		for y := range h {
			sy := y
			if f.vertical {
				sy = h - 1 - y
			}
			s, d := in[sy*row:(sy+1)*row], out[y*row:(y+1)*row]
			if !f.horizontal {
				copy(d, s)
				continue
			}
			for x := range w {
				copy(d[x*px:(x+1)*px], s[(w-1-x)*px:(w-x)*px])
			}
		}
	}
	return nil
}
