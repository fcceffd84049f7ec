package tensor

import (
	"fmt"
	"slices"
	"strings"
)

// Batch is a list of samples of one DType, number of dimensions, device
// and layout whose shapes may differ, as DALI's TensorList: a batch of
// decoded images of different sizes, say. An empty batch has the zero
// DType, Device and layout and no dimensions.
type Batch struct {
	samples []*Tensor
}

// NewBatch returns the batch of the given samples, which must agree in
// DType, number of dimensions, device and layout.
func NewBatch(samples ...*Tensor) (*Batch, error) {
	for i, s := range samples {
		if s == nil {
			return nil, invalidf("batch sample %d is nil", i)
		}
		first := samples[0]
		var what string
		var have, want any
		switch {
		case s.dtype != first.dtype:
			what, have, want = "dtype", s.dtype, first.dtype
		case len(s.shape) != len(first.shape):
			what, have, want = "ndim", len(s.shape), len(first.shape)
		case s.dev != first.dev:
			what, have, want = "device", s.dev, first.dev
		case s.layout != first.layout:
			what, have, want = "layout", fmt.Sprintf("%q", s.layout), fmt.Sprintf("%q", first.layout)
		default:
			continue
		}
		return nil, invalidf("batch sample %d has %s %v, sample 0 has %v", i, what, have, want)
	}
	return &Batch{samples: slices.Clone(samples)}, nil
}

// Alloc returns a batch of new zeroed CPU tensors (see [New]), one of each
// shape, all of type dt and layout layout. The shapes must have the same
// number of dimensions, which layout, unless "", names.
func Alloc(dt DType, layout string, shapes [][]int64) (*Batch, error) {
	samples := make([]*Tensor, len(shapes))
	for i, shape := range shapes {
		if len(shape) != len(shapes[0]) {
			return nil, invalidf("batch sample %d has shape %v, sample 0 has %v: ndim differs", i, shape, shapes[0])
		}
		t, err := New(dt, shape...)
		if err == nil {
			t, err = t.WithLayout(layout)
		}
		if err != nil {
			return nil, within(err, "batch sample %d", i)
		}
		samples[i] = t
	}
	return &Batch{samples: samples}, nil
}

// Len returns the number of samples.
func (b *Batch) Len() int { return len(b.samples) }

// Sample returns sample i; it panics if i is out of range, as indexing
// does.
func (b *Batch) Sample(i int) *Tensor { return b.samples[i] }

// Samples returns the samples. The slice is the batch's own and must not
// be modified.
func (b *Batch) Samples() []*Tensor { return b.samples }

// first returns the first sample, or an empty tensor for an empty batch.
func (b *Batch) first() *Tensor {
	if len(b.samples) == 0 {
		return &Tensor{}
	}
	return b.samples[0]
}

// DType returns the samples' element type.
func (b *Batch) DType() DType { return b.first().dtype }

// NDim returns the samples' number of dimensions.
func (b *Batch) NDim() int { return len(b.first().shape) }

// Layout returns the samples' layout.
func (b *Batch) Layout() string { return b.first().layout }

// Device returns the device of the samples' memory.
func (b *Batch) Device() Device { return b.first().dev }

// Shapes returns a copy of each sample's shape.
func (b *Batch) Shapes() [][]int64 {
	shapes := make([][]int64, len(b.samples))
	for i, s := range b.samples {
		shapes[i] = slices.Clone(s.shape)
	}
	return shapes
}

// IsUniform reports whether all samples have the same shape. An empty
// batch is uniform.
func (b *Batch) IsUniform() bool {
	for _, s := range b.samples {
		if !slices.Equal(s.shape, b.samples[0].shape) {
			return false
		}
	}
	return true
}

// maxShown is the number of sample shapes String shows.
const maxShown = 4

// String describes the batch and its first few shapes, as in
// "batch(2 samples, uint8 HWC cpu: [480 640 3] [720 1280 3])".
func (b *Batch) String() string {
	if len(b.samples) == 0 {
		return "batch(0 samples)"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "batch(%d samples, %v", len(b.samples), b.DType())
	if l := b.Layout(); l != "" {
		sb.WriteString(" " + l)
	}
	fmt.Fprintf(&sb, " %v:", b.Device())
	for _, s := range b.samples[:min(len(b.samples), maxShown)] {
		fmt.Fprintf(&sb, " %v", s.shape)
	}
	if len(b.samples) > maxShown {
		sb.WriteString(" ...")
	}
	sb.WriteString(")")
	return sb.String()
}
