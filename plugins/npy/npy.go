// Package npy is a built-in Go plugin (dynop.plugin.npy) whose operator
// npy.Encode writes tensors as NumPy .npy files (format version 1.0), so
// that a pipeline's results load with numpy.load. A pipeline output with
// format: npy goes through it.
//
// Importing the package registers the plugin, as database/sql drivers
// register themselves.
package npy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// ID is the plugin's ID.
const ID = "dynop.plugin.npy"

// Encode is the name of the operator that writes .npy files.
const Encode = "npy.Encode"

// ErrDType reports a tensor whose dtype has no NumPy equivalent (vector
// lanes, bfloat16, opaque handles).
var ErrDType = errors.New("dtype has no NumPy form")

func init() { plugin.Register(New()) }

// New returns the plugin, for hosts opened with
// dynop.Options{NoRegistered: true, Plugins: ...}.
func New() plugin.Plugin { return npyPlugin{} }

type npyPlugin struct{}

func encodeSchema() schema.Op {
	return schema.Op{
		Name: Encode,
		Doc: "Writes each sample as the bytes of a NumPy .npy file (format 1.0): its dtype, its shape, " +
			"then its elements in C order, little-endian. numpy.load reads it back.",
		Inputs:  []schema.Input{{Name: "x", Doc: "Any tensor of a dtype NumPy has: bool, int and uint of 8 to 64 bits, float16, float32, float64, complex64, complex128."}},
		Outputs: []schema.Output{{Name: "file", Doc: "The .npy file's bytes, 1-D uint8.", DTypes: []tensor.DType{tensor.Uint8}, NDim: 1}},
		Devices: []schema.Device{schema.CPU},
	}
}

func (npyPlugin) Info() schema.Plugin {
	return schema.Plugin{
		ID:          ID,
		Version:     iface.V(1, 0, 0),
		Description: "Writes tensors as NumPy .npy files.",
		Author:      "dynop",
		Operators:   []schema.Op{encodeSchema()},
	}
}

func (npyPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	return h.RegisterOperator(op.Operator{Schema: encodeSchema(), Backends: map[schema.Device]op.Factory{
		schema.CPU: func(*schema.Values) (op.Impl, error) { return &encoder{}, nil },
	}})
}

// encoder is npy.Encode: Setup makes each sample's header and sizes the
// file; Run writes header and elements.
type encoder struct{ headers [][]byte }

func (e *encoder) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	in := inputs[0]
	e.headers = e.headers[:0]
	shapes := make([][]int64, in.Len())
	for i, t := range in.Samples() {
		h, err := Header(t.DType(), t.Shape())
		if err != nil {
			return nil, fmt.Errorf("%w: sample %d: %w", op.ErrInput, i, err)
		}
		e.headers = append(e.headers, h)
		shapes[i] = []int64{int64(len(h)) + t.NBytes()}
	}
	return []op.OutputDesc{{DType: tensor.Uint8, Shapes: shapes}}, nil
}

func (e *encoder) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := outputs[0].Sample(i).Bytes()
		if err != nil {
			return err
		}
		c := t
		if !t.IsContiguous() {
			if c, err = t.Contiguous(); err != nil {
				return fmt.Errorf("sample %d: %w", i, err)
			}
		}
		data, err := c.Bytes()
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		n := copy(out, e.headers[i])
		copy(out[n:], data) // little-endian on every machine dynop runs on
	}
	return nil
}

// Header returns the .npy (format 1.0) header of an array of dtype dt and
// shape: the magic, the version, the header's length and the dict
// describing the array, padded with spaces to a multiple of 64 bytes
// with the newline last. The elements follow it in C order.
func Header(dt tensor.DType, shape []int64) ([]byte, error) {
	descr, err := descr(dt)
	if err != nil {
		return nil, err
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	const prefix = 10 // magic (6), version (2), header length (2)
	total := (prefix + len(dict) + 1 + 63) / 64 * 64
	if total-prefix > 0xffff {
		return nil, fmt.Errorf("npy: a header of %d bytes does not fit format 1.0", total-prefix)
	}
	h := make([]byte, 0, total)
	h = append(h, "\x93NUMPY\x01\x00"...)
	h = binary.LittleEndian.AppendUint16(h, uint16(total-prefix))
	h = append(h, dict...)
	for len(h) < total-1 {
		h = append(h, ' ')
	}
	return append(h, '\n'), nil
}

// descr returns NumPy's type string for dt.
func descr(dt tensor.DType) (string, error) {
	if dt.Lanes != 1 {
		return "", fmt.Errorf("%w: %s has %d lanes", ErrDType, dt, dt.Lanes)
	}
	var kind byte
	switch dt.Code {
	case tensor.Int:
		kind = 'i'
	case tensor.UInt:
		kind = 'u'
	case tensor.Float:
		kind = 'f'
	case tensor.Complex:
		kind = 'c'
	case tensor.Bool:
		if dt.Bits == 8 {
			return "|b1", nil
		}
	}
	bytes := int(dt.Bits) / 8
	if kind == 0 || dt.Bits%8 != 0 || bytes == 0 || kind == 'f' && bytes == 1 {
		return "", fmt.Errorf("%w: %s", ErrDType, dt)
	}
	if bytes == 1 {
		return "|" + string(kind) + "1", nil
	}
	return "<" + string(kind) + strconv.Itoa(bytes), nil
}
