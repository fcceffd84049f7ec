package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/dynop/dynop/internal/english"
	"github.com/dynop/dynop/tensor"
)

// Stream runs a pipeline compiled with Options.Memory on batches from
// memory, as DALI's external_source feeds a pipeline and its iterators
// drain it. Each step in yields one batch per pipeline input, in the
// order of the file's inputs section, holding what the input's files
// would have been (what the first operators take: a PNG or JPEG file's
// bytes as a 1-D uint8 tensor for image.Decode); all of them have as
// many samples. For each step, in order, Stream yields one batch per
// pipeline output, in the order of the outputs section: the tensors of
// the output's node, sample for sample.
//
// As in Run, the workers share each step's samples and up to
// Options.Prefetch steps are in flight, so in is read ahead of what
// Stream yields. A step that is malformed, or a sample that fails (which
// the error names), ends the stream with the error; on_error does not
// apply. Stopping the loop early, or cancelling ctx, stops the work and
// in.
func (p *Pipeline) Stream(ctx context.Context, in iter.Seq[[]*tensor.Batch]) iter.Seq2[[]*tensor.Batch, error] {
	return func(yield func([]*tensor.Batch, error) bool) {
		if !p.opts.Memory {
			yield(nil, fmt.Errorf("pipeline %s: %w: Stream needs a pipeline compiled with Options.Memory", p.spec.file, ErrInvalid))
			return
		}
		pull, stop := iter.Pull(in)
		defer stop()
		e := p.startSource(ctx, func(k int) (*batch, []*tensor.Batch, bool) {
			ins, ok := pull()
			if !ok {
				return nil, nil, false
			}
			b := &batch{start: time.Now()}
			if err := p.checkStep(ins); err != nil {
				b.setFailed(-1, fmt.Errorf("step %d: %w", k, err))
				return b, nil, true
			}
			for i := range ins[0].Len() {
				b.idx = append(b.idx, i)
			}
			b.kept = b.idx
			return b, ins, true
		})
		defer e.stop()
		for k := 0; ; k++ {
			b, ok, err := e.next(ctx, k)
			if err != nil {
				yield(nil, err)
				return
			}
			if !ok {
				return
			}
			e.release()
			if len(b.failed) > 0 {
				f := slices.MinFunc(b.failed, func(x, y sampleError) int { return cmp.Compare(x.i, y.i) })
				if f.i >= 0 {
					err = fmt.Errorf("step %d, sample %d: %w", k, f.i, f.err)
				} else {
					err = f.err
				}
				yield(nil, fmt.Errorf("pipeline %s: %w", p.spec.file, err))
				return
			}
			outs := make([]*tensor.Batch, len(p.spec.outputs))
			for o := range outs {
				samples := make([]*tensor.Tensor, len(b.outs))
				for j, s := range b.outs {
					samples[j] = s[o]
				}
				if outs[o], err = tensor.NewBatch(samples...); err != nil {
					yield(nil, fmt.Errorf("pipeline %s: step %d: output %q: %w", p.spec.file, k, p.spec.outputs[o].name, err))
					return
				}
			}
			if !yield(outs, nil) {
				return
			}
		}
	}
}

// checkStep reports a step that is not one batch per pipeline input,
// each with the same number of samples, at least one.
func (p *Pipeline) checkStep(ins []*tensor.Batch) error {
	if len(ins) != len(p.spec.inputs) {
		return fmt.Errorf("%w: %s for the pipeline's %s (%v)", ErrInvalid, english.Plural(len(ins), "batch"), english.Plural(len(p.spec.inputs), "input"), p.spec.Inputs())
	}
	for k, b := range ins {
		switch {
		case b == nil || b.Len() == 0:
			return fmt.Errorf("%w: input %q: no samples", ErrInvalid, p.spec.inputs[k].name)
		case b.Len() != ins[0].Len():
			return fmt.Errorf("%w: input %q has %s and input %q %d: a step's inputs have as many", ErrInvalid, p.spec.inputs[k].name, english.Plural(b.Len(), "sample"), p.spec.inputs[0].name, ins[0].Len())
		}
	}
	return nil
}
