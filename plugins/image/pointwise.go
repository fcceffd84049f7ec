package image

import (
	"context"
	"fmt"
	"math"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// pointwise is an operator that maps each element on its own with its
// element functions: image.Adjust, image.Gamma and image.Invert. Run and
// Pointwise use the same functions, so that a fused chain of such
// operators gives bit for bit what the operators give one by one.
type pointwise op.PointwiseFuncs

var _ op.Pointwise = pointwise{}

func newAdjust(args *schema.Values) (op.Impl, error) {
	contrast, brightness := args.Float("contrast"), args.Float("brightness")
	// As in Float32 below, the conversion keeps the product from being
	// fused with the sum, which could round a result the other way.
	lut := newLUT(func(x float64) float64 { return float64(contrast*(x-128)) + 128 + brightness })
	c, o := float32(contrast), float32(0.5+brightness/255)
	return pointwise{
		Uint8: lut.apply,
		Float32: func(v []float32) {
			for i, x := range v {
				// The conversion rounds the product, which forbids fusing
				// it with the sum into a multiply-add (see luma32): Run
				// gives the same on every architecture.
				v[i] = float32(c*(x-0.5)) + o
			}
		},
	}, nil
}

func newGamma(args *schema.Values) (op.Impl, error) {
	e := 1 / args.Float("gamma")
	lut := newLUT(func(x float64) float64 { return 255 * math.Pow(x/255, e) })
	return pointwise{
		Uint8: lut.apply,
		Float32: func(v []float32) {
			for i, x := range v {
				if x >= 0 {
					v[i] = float32(math.Pow(float64(x), e))
				}
			}
		},
	}, nil
}

func newInvert(*schema.Values) (op.Impl, error) {
	return pointwise{
		Uint8: func(v []uint8) {
			for i, x := range v {
				v[i] = 255 - x
			}
		},
		Float32: func(v []float32) {
			for i, x := range v {
				v[i] = 1 - x
			}
		},
	}, nil
}

func (p pointwise) Pointwise() op.PointwiseFuncs { return op.PointwiseFuncs(p) }

// Share implements op.SharedImpl: a pointwise operator keeps nothing
// between calls, so a pipeline's workers share one instance.
func (p pointwise) Share() (op.Impl, bool) { return p, true }

func (pointwise) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	return []op.OutputDesc{{DType: in.DType(), Layout: in.Layout(), Shapes: in.Shapes()}}, nil
}

func (p pointwise) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, s := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if s.DType() == tensor.Uint8 {
			err = apply(outputs[0].Sample(i), s, p.Uint8)
		} else {
			err = apply(outputs[0].Sample(i), s, p.Float32)
		}
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

// apply copies input sample in into output sample out and applies f to
// the copy.
func apply[T uint8 | float32](out, in *tensor.Tensor, f func([]T)) error {
	if err := out.CopyFrom(in); err != nil {
		return err
	}
	return fill(out, func(v []T) error {
		f(v)
		return nil
	})
}

// lut is a table of the results of a uint8 element function.
type lut [256]uint8

// newLUT tabulates f over 0..255, rounding its results half away from
// zero and clamping them to 0..255.
func newLUT(f func(x float64) float64) *lut {
	t := new(lut)
	for i := range t {
		t[i] = uint8(min(max(math.Round(f(float64(i))), 0), 255))
	}
	return t
}

// apply replaces each element of v by its entry in t.
func (t *lut) apply(v []uint8) {
	for i, x := range v {
		v[i] = t[x]
	}
}
