package op

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/tensor"
)

// pendingVerify is the verification an instance owes at its first Run.
type pendingVerify struct {
	r        *Registry
	st       *variantState
	variants []Variant
}

// verifyVariants runs the operator's variant check once per registry and
// device, then moves the instance to another variant if its own was
// disabled.
func (in *Instance) verifyVariants(ctx context.Context, inputs []*tensor.Batch) error {
	if noElements(inputs) {
		return nil // nothing to compare on: the next Run verifies
	}
	v := in.verify
	// Verification runs to the end even if the caller's context ends: a
	// variant cut short must not be taken for one that disagrees.
	v.st.verified.Do(func() { v.r.runVerification(context.WithoutCancel(ctx), in, v, inputs) })
	disabled := v.st.disabledCopy()
	if disabled[in.variant] == "" {
		in.verify = nil
		return nil
	}
	// in.verify stays set until the move succeeds, so that a failed move
	// is tried again rather than the disabled variant run.
	ch, err := dispatch.Choose(describeVariants(v.variants), v.r.cpu, disabled)
	if err != nil {
		return in.fail("run", err)
	}
	next := v.variants[ch.Index]
	var impl Impl
	if err := in.guard("create", func() (err error) { impl, err = next.Factory(in.args); return err }); err != nil {
		return err
	}
	if err := in.guard("setup", func() error { _, err := impl.Setup(inputs); return err }); err != nil {
		closeImpl(impl)
		return err
	}
	old, oldName := in.impl, in.variant
	in.impl, in.variant, in.verify = impl, next.Name, nil
	if old == in.shared.impl {
		return nil // instances share it: the last one closes it
	}
	if err := closeImpl(old); err != nil {
		v.r.log.Warn("closing the instance of a disabled variant", "operator", in.schema.Name, "variant", oldName, "err", err)
	}
	return nil
}

// noElements reports whether inputs hold no element at all (an empty
// batch, or samples of size zero), on which variants cannot be compared.
func noElements(inputs []*tensor.Batch) bool {
	for _, b := range inputs {
		for _, t := range b.Samples() {
			if t.NumElements() > 0 {
				return false
			}
		}
	}
	return len(inputs) > 0
}

func closeImpl(impl Impl) (err error) {
	if c, ok := impl.(io.Closer); ok {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("%w: %v", errdefs.ErrPanic, v)
			}
		}()
		return c.Close()
	}
	return nil
}

// runVerification runs every variant the CPU can run on random inputs
// shaped like inputs and compares each with the reference, disabling
// those that fail or disagree.
func (r *Registry) runVerification(ctx context.Context, in *Instance, v *pendingVerify, inputs []*tensor.Batch) {
	log := r.log.With("operator", in.schema.Name, "plugin", in.plugin)
	rng := rand.New(rand.NewPCG(0x5eed, 0xd15a7c4))
	random, err := randomLike(inputs, rng)
	if err != nil {
		log.Warn("variants not verified", "err", err)
		return
	}
	ref := v.variants[len(v.variants)-1]
	ch, _ := dispatch.Choose(describeVariants(v.variants), r.cpu, nil)
	if st := ch.Variants[len(ch.Variants)-1]; !st.Runnable() {
		log.Warn("variants not verified: this CPU cannot run the reference variant", "reference", ref.Name, "why", st.Why())
		return
	}
	want, err := in.runVariant(ctx, ref, random)
	if err != nil {
		log.Warn("variants not verified: the reference variant failed on random input", "reference", ref.Name, "err", err)
		return
	}
	for i, vv := range v.variants[:len(v.variants)-1] {
		if !ch.Variants[i].Runnable() {
			continue
		}
		got, err := in.runVariant(ctx, vv, random)
		if err == nil {
			err = Agree(got, want)
		}
		if err != nil {
			why := fmt.Sprintf("disagrees with the reference %q on random input: %v", ref.Name, err)
			v.st.disable(vv.Name, why)
			log.Warn("variant disabled", "variant", vv.Name, "why", why)
			continue
		}
		log.Debug("variant agrees with the reference", "variant", vv.Name, "reference", ref.Name)
	}
}

// runVariant instantiates variant v with the instance's arguments and runs
// it once on inputs.
func (in *Instance) runVariant(ctx context.Context, v Variant, inputs []*tensor.Batch) (outs []*tensor.Batch, err error) {
	var impl Impl
	if err := in.guard("create", func() (err error) { impl, err = v.Factory(in.args); return err }); err != nil {
		return nil, err
	}
	defer closeImpl(impl)
	var descs []OutputDesc
	if err := in.guard("setup", func() (err error) { descs, err = impl.Setup(inputs); return err }); err != nil {
		return nil, err
	}
	if err := in.checkDescs(descs, len(inputs) > 0); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	for _, d := range descs {
		b, err := d.Alloc()
		if err != nil {
			return nil, err
		}
		outs = append(outs, b)
	}
	return outs, in.guard("run", func() error { return in.runImpl(ctx, impl, outs, inputs) })
}

// randomLike returns CPU batches of the dtypes, layouts and shapes of bs
// with random contents ([tensor.Random]).
func randomLike(bs []*tensor.Batch, rng *rand.Rand) ([]*tensor.Batch, error) {
	out := make([]*tensor.Batch, len(bs))
	for i, b := range bs {
		if b.Len() > 0 && b.Device().Type != tensor.CPU {
			return nil, fmt.Errorf("input %d is on %s; random inputs are made on the CPU only", i, b.Device())
		}
		r, err := tensor.Random(rng, b.DType(), b.Layout(), b.Shapes())
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		out[i] = r
	}
	return out, nil
}

// Float tolerances of [Agree], relative to max(1, |want|): eight units in
// the last place of 1.0, room for a variant that sums in another order or
// fuses a multiply-add.
const (
	float32Tolerance = 0x1p-20
	float64Tolerance = 0x1p-49
)

// Agree reports whether the outputs got of a variant agree with want, the
// reference's: the same number of batches and samples, dtypes and shapes,
// and elements that are equal, bit for bit for integer and other types,
// and within 2⁻²⁰ (float32) or 2⁻⁴⁹ (float64) of want, relative to
// max(1, |want|), for float32 and float64 (NaN agrees with NaN). The
// error names the first element that differs.
func Agree(got, want []*tensor.Batch) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Len() != want[i].Len() {
			return fmt.Errorf("output %d has %d samples, want %d", i, got[i].Len(), want[i].Len())
		}
		for j := range want[i].Len() {
			if err := agreeTensors(got[i].Sample(j), want[i].Sample(j)); err != nil {
				return fmt.Errorf("output %d sample %d: %w", i, j, err)
			}
		}
	}
	return nil
}

func agreeTensors(got, want *tensor.Tensor) error {
	if got.DType() != want.DType() || !slices.Equal(got.Shape(), want.Shape()) {
		return fmt.Errorf("%s %v, want %s %v", got.DType(), got.Shape(), want.DType(), want.Shape())
	}
	g, err := contiguousBytes(got)
	if err != nil {
		return err
	}
	w, err := contiguousBytes(want)
	if err != nil {
		return err
	}
	dt := want.DType()
	size := dt.Size()
	for k := 0; k+size <= len(w); k += size {
		a, b := g[k:k+size], w[k:k+size]
		var ok bool
		var gs, ws string
		switch {
		case dt.Code == tensor.Float && dt.Bits == 32 && dt.Lanes == 1:
			x, y := math.Float32frombits(binary.NativeEndian.Uint32(a)), math.Float32frombits(binary.NativeEndian.Uint32(b))
			ok, gs, ws = within(float64(x), float64(y), float32Tolerance), fmt.Sprint(x), fmt.Sprint(y)
		case dt.Code == tensor.Float && dt.Bits == 64 && dt.Lanes == 1:
			x, y := math.Float64frombits(binary.NativeEndian.Uint64(a)), math.Float64frombits(binary.NativeEndian.Uint64(b))
			ok, gs, ws = within(x, y, float64Tolerance), fmt.Sprint(x), fmt.Sprint(y)
		default:
			ok, gs, ws = string(a) == string(b), fmt.Sprintf("%x", a), fmt.Sprintf("%x", b)
		}
		if !ok {
			return fmt.Errorf("element %v is %s, want %s", unravel(k/size, want.Shape()), gs, ws)
		}
	}
	return nil
}

func within(x, y, tol float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.IsNaN(x) && math.IsNaN(y)
	}
	if x == y { // infinities
		return true
	}
	return math.Abs(x-y) <= tol*math.Max(1, math.Abs(y))
}

func contiguousBytes(t *tensor.Tensor) ([]byte, error) {
	c, err := t.Contiguous()
	if err != nil {
		return nil, err
	}
	return c.Bytes()
}

// unravel turns a flat element index into a multi-index of shape.
func unravel(k int, shape []int64) []int64 {
	idx := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = int64(k) % shape[d]
			k /= int(shape[d])
		}
	}
	return idx
}
