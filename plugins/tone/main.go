//go:build wasip1

package main

import (
	"fmt"
	"math"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/wasm/guest"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

func init() {
	guest.Register(guest.Plugin{
		Info: schema.Plugin{
			ID:          "dynop.plugin.tone",
			Version:     iface.V(0, 1, 0),
			APIVersion:  schema.APIVersion,
			Description: "Example Go WebAssembly plugin: tone curves.",
			Operators: []schema.Op{{
				Name: "tone.Gamma",
				Doc:  "Applies gamma correction: uint8 on a 0..255 scale, float32 on a 0..1 scale (negatives become 0).",
				Inputs: []schema.Input{{
					Name:    "images",
					DTypes:  []tensor.DType{tensor.Uint8, tensor.Float32},
					Layouts: []string{"HWC"},
					NDim:    3,
				}},
				Outputs: []schema.Output{{Name: "out", Doc: "The images, of the input's shape and dtype.", Layout: "HWC"}},
				Args: []schema.Arg{{
					Name:     "gamma",
					Doc:      "The gamma; values are raised to 1/gamma.",
					Type:     schema.Float,
					Required: true,
					Min:      schema.Bounds(0.01),
					Max:      schema.Bounds(100),
				}},
				Devices: []schema.Device{schema.CPU},
			}},
		},
		Operators: map[string]guest.Factory{"tone.Gamma": newGamma},
	})
}

// gamma is a tone.Gamma instance: the exponent and the uint8 table.
type gamma struct {
	e   float64 // 1/gamma
	lut [256]uint8
}

func newGamma(args guest.Args) (guest.Operator, error) {
	g := args.Float("gamma")
	if !(g > 0) || math.IsInf(g, 0) {
		return nil, fmt.Errorf("gamma %g is not a positive number", g)
	}
	o := &gamma{e: 1 / g}
	for i := range o.lut {
		o.lut[i] = uint8(math.Round(255 * math.Pow(float64(i)/255, o.e)))
	}
	return o, nil
}

func (o *gamma) Setup(in []guest.Tensor) ([]guest.Desc, error) {
	x := in[0]
	if len(x.Shape) != 3 {
		return nil, fmt.Errorf("images: want HWC, got shape %v", x.Shape)
	}
	return []guest.Desc{{DType: x.DType, Shape: x.Shape}}, nil
}

func (o *gamma) Run(out, in []guest.Tensor) error {
	x, y := in[0], out[0]
	switch x.DType {
	case tensor.Uint8:
		src, dst := x.Uint8s(), y.Uint8s()
		if x.Contiguous() && y.Contiguous() {
			for i, v := range src[:len(dst)] {
				dst[i] = o.lut[v]
			}
			return nil
		}
		each(x, y, func(i, j int64) { dst[j] = o.lut[src[i]] })
	case tensor.Float32:
		src, dst := x.Float32s(), y.Float32s()
		if x.Contiguous() && y.Contiguous() {
			for i, v := range src[:len(dst)] {
				dst[i] = o.pow(v)
			}
			return nil
		}
		each(x, y, func(i, j int64) { dst[j] = o.pow(src[i]) })
	default:
		return fmt.Errorf("%w: images of dtype %v", guest.ErrUnsupported, x.DType)
	}
	return nil
}

func (o *gamma) pow(x float32) float32 {
	if x > 0 {
		return float32(math.Pow(float64(x), o.e))
	}
	return 0
}

// each calls f with the element index in x and in y of every element of
// the HWC tensors x and y, which have the same shape.
func each(x, y guest.Tensor, f func(i, j int64)) {
	sx, sy := x.Strides, y.Strides
	for h := range x.Shape[0] {
		for w := range x.Shape[1] {
			i, j := h*sx[0]+w*sx[1], h*sy[0]+w*sy[1]
			for range x.Shape[2] {
				f(i, j)
				i, j = i+sx[2], j+sy[2]
			}
		}
	}
}

func main() {}
