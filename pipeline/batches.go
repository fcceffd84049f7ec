package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/dynop/dynop/tensor"
)

// A Step is one batch of a pipeline's outputs, as [Pipeline.Batches]
// yields it.
type Step struct {
	// Outputs has one batch per pipeline output, in the order of the
	// outputs section: the tensors of the output's node, sample for
	// sample. The caller owns them: the pipeline never reuses their
	// memory.
	Outputs []*tensor.Batch
	// Files has, per sample, the file of each input it was made from,
	// in the order of the inputs section.
	Files [][]string
}

// Batches runs a pipeline compiled with Options.Tensors over its input
// files and yields its outputs batch by batch, as DALI's iterators hand a
// training loop its batches: the files are read and run as by Run (the
// workers share each batch, up to Options.Prefetch batches are in
// flight), but nothing is encoded or written and no journal is kept.
//
// A file that cannot be read or run ends the iteration with an error
// naming it, or with on_error: skip is left out of its batch (a warning
// is logged); a batch whose samples were all left out is not yielded.
// Stopping the loop early, or cancelling ctx, stops the work.
func (p *Pipeline) Batches(ctx context.Context) iter.Seq2[Step, error] {
	return func(yield func(Step, error) bool) {
		if !p.opts.Tensors {
			yield(Step{}, fmt.Errorf("pipeline %s: %w: Batches needs a pipeline compiled with Options.Tensors", p.spec.file, ErrInvalid))
			return
		}
		todo := make([]int, len(p.files[0]))
		for i := range todo {
			todo[i] = i
		}
		e := p.startEngine(ctx, todo)
		defer e.stop()
		for k := 0; ; k++ {
			b, ok, err := e.next(ctx, k)
			if err != nil {
				yield(Step{}, err)
				return
			}
			if !ok {
				return
			}
			e.release()
			slices.SortStableFunc(b.failed, func(x, y sampleError) int { return cmp.Compare(x.i, y.i) })
			for _, f := range b.failed {
				files := strings.Join(p.inputFiles(f.i), ", ")
				if p.spec.onError != onErrorSkip {
					yield(Step{}, fmt.Errorf("pipeline %s: input %s: %w (on_error: skip would skip it)", p.spec.file, files, f.err))
					return
				}
				p.log.Warn("skipping input", "file", files, "err", f.err)
			}
			// The file buffers are not handed back for reuse: an output
			// may be a view of its input.
			var step Step
			var rows [][]*tensor.Tensor
			for j, i := range b.kept {
				if b.outs[j] != nil {
					rows = append(rows, b.outs[j])
					step.Files = append(step.Files, p.inputFiles(i))
				}
			}
			if len(rows) == 0 {
				continue
			}
			step.Outputs = make([]*tensor.Batch, len(p.spec.outputs))
			for o := range step.Outputs {
				samples := make([]*tensor.Tensor, len(rows))
				for j, r := range rows {
					samples[j] = r[o]
				}
				if step.Outputs[o], err = tensor.NewBatch(samples...); err != nil {
					yield(Step{}, fmt.Errorf("pipeline %s: batch %d: output %q: %w", p.spec.file, k, p.spec.outputs[o].name, err))
					return
				}
			}
			if !yield(step, nil) {
				return
			}
		}
	}
}
