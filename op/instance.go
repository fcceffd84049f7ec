package op

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Impl is what an operator's factory makes: the operator's code for one
// instance. The [Instance] around it checks inputs against the schema
// before Setup and outputs against Setup's answer before Run, so an Impl
// can trust both. An Impl that also implements io.Closer is closed with
// its instance.
type Impl interface {
	// Setup returns, for inputs, the dtype, layout and per-sample shape
	// of each output.
	Setup(inputs []*tensor.Batch) ([]OutputDesc, error)
	// Run computes outputs, allocated as Setup described, from inputs.
	Run(ctx context.Context, outputs, inputs []*tensor.Batch) error
}

// ScratchImpl is an Impl that takes its temporary memory from the host
// instead of allocating it, as DALI's kernels take theirs from a
// scratchpad ([kernel.Scratchpad]). After each Setup, Scratch reports
// how many bytes of each memory kind the next run takes; the [Instance]
// then calls RunScratch in place of Run, with a scratchpad reserved and
// reset for that much. Instances that never run at the same time share
// one scratchpad ([Instance.ShareScratchpad]; a graph's nodes on one
// worker do), so scratch is allocated once per worker and reused from
// batch to batch. C operators that set DYNOP_OPERATOR_SCRATCH are
// ScratchImpls.
type ScratchImpl interface {
	Impl
	// Scratch returns the bytes per memory kind that RunScratch takes
	// for the inputs of the last Setup.
	Scratch() [kernel.NumMemKinds]int64
	// RunScratch is Run, taking temporary memory from scratch.
	RunScratch(ctx context.Context, scratch *kernel.Scratchpad, outputs, inputs []*tensor.Batch) error
}

// SharedImpl is an Impl whose operator is safe to run from several
// goroutines at once. Share returns an Impl for another goroutine that
// shares with this one what the operator keeps per instance (tables
// made from its arguments, a model), with state of its own for calls;
// an Impl safe for concurrent calls itself returns itself. ok is false
// when this instance cannot be shared after all (a C operator without
// DYNOP_OPERATOR_CONCURRENT). See [Instance.Share].
type SharedImpl interface {
	Impl
	Share() (impl Impl, ok bool)
}

// OutputDesc describes one output batch: its dtype, layout and the shape
// of each sample.
type OutputDesc struct {
	DType  tensor.DType
	Layout string
	Shapes [][]int64
}

// Alloc allocates a CPU batch as d describes.
func (d OutputDesc) Alloc() (*tensor.Batch, error) { return tensor.Alloc(d.DType, d.Layout, d.Shapes) }

// Instance is an instantiated operator. Setup and Run must be called in
// that order, from one goroutine at a time (as with DALI's operators);
// Close releases the instance and what keeps its plugin started.
type Instance struct {
	schema   *schema.Op
	plugin   string
	device   schema.Device
	args     *schema.Values
	impl     Impl
	variant  string         // the variant impl runs, if the backend has variants
	verify   *pendingVerify // variants to verify at the first Run
	shared   *shared        // what the instances sharing one implementation share
	maxBytes int64
	closed   atomic.Bool

	setUp     bool
	outs      []OutputDesc
	inShapes  [][][]int64 // per input, per sample, as seen by Setup
	inKinds   []batchKind // per input, as seen by Setup
	batchSize int

	// The batches of the last Run that passed checkRun since Setup.
	// Batches and tensors are immutable, so the same batches pass again.
	okIn, okOut []*tensor.Batch

	// spare holds, by output, a batch handed back with Recycle, for Exec
	// to reuse. Recycle may come from another goroutine than Exec's.
	spareMu sync.Mutex
	spare   []*tensor.Batch
	// pool holds, by output, samples of batches handed back that no Exec
	// took whole, for outputs of other lengths and shapes; keep is the
	// most samples one output has had, the most pool keeps.
	pool [][]*tensor.Tensor
	keep int

	// scratch is where a ScratchImpl's runs take memory from: shared
	// with other instances, or the instance's own, made when first
	// needed.
	scratch *kernel.Scratchpad
}

// shared is what instances made by [Instance.Share] share: the first
// instance's implementation, closed when the last of them closes, and
// the release of the plugin reference they hold together.
type shared struct {
	refs    atomic.Int32
	impl    Impl
	release func() error
}

// Share returns a new instance of the same operator with the same
// arguments that shares this one's implementation ([SharedImpl]): the
// operator's per-instance state is made once, and each instance runs on
// its own goroutine with its own setup, outputs and scratch. ok is false
// when the operator did not declare itself safe for concurrent calls;
// then make another instance with [Registry.New]. The implementation is
// closed, and the plugin may stop, when the last of the instances
// closes. Call it before either runs, as a pipeline does for its
// workers.
func (in *Instance) Share() (_ *Instance, ok bool) {
	si, isShared := in.impl.(SharedImpl)
	if !isShared || in.closed.Load() {
		return nil, false
	}
	impl, ok := si.Share()
	if !ok || impl == nil {
		return nil, false
	}
	in.shared.refs.Add(1)
	return &Instance{schema: in.schema, plugin: in.plugin, device: in.device, args: in.args, impl: impl,
		variant: in.variant, verify: in.verify, shared: in.shared, maxBytes: in.maxBytes}, true
}

// closeShared closes the instance's implementation, unless instances share
// it: then the last of them closes it. It releases the plugin reference
// when the last instance closes.
func (in *Instance) closeShared(impl Impl) error {
	var err error
	if c, ok := impl.(io.Closer); ok && impl != in.shared.impl {
		err = in.guard("close", c.Close)
	}
	if in.shared.refs.Add(-1) > 0 {
		return err
	}
	if c, ok := in.shared.impl.(io.Closer); ok {
		err = errors.Join(err, in.guard("close", c.Close))
	}
	return joinRelease(err, in.shared.release)
}

// ShareScratchpad makes the instance take the scratch memory of its
// operator ([ScratchImpl]) from sp, which instances that never run at
// the same time may share: a graph whose executor runs its nodes one at
// a time (graph.Serial, as each worker of a pipeline does) gives all its
// operator nodes one. A nil sp gives the instance one of its own. Call
// it between runs, from the goroutine that runs the instance.
func (in *Instance) ShareScratchpad(sp *kernel.Scratchpad) { in.scratch = sp }

// runImpl runs impl (the instance's, or a variant's under verification),
// reserving scratch for it first if it takes some from the host.
func (in *Instance) runImpl(ctx context.Context, impl Impl, outputs, inputs []*tensor.Batch) error {
	si, ok := impl.(ScratchImpl)
	if !ok {
		return impl.Run(ctx, outputs, inputs)
	}
	if in.scratch == nil {
		in.scratch = kernel.NewScratchpad()
	}
	if err := in.scratch.Reserve(si.Scratch()); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	return si.RunScratch(ctx, in.scratch, outputs, inputs)
}

// Schema returns the operator's schema.
func (in *Instance) Schema() *schema.Op { return in.schema }

// Name returns the operator's name.
func (in *Instance) Name() string { return in.schema.Name }

// Plugin returns the ID of the plugin that provides the operator, or "".
func (in *Instance) Plugin() string { return in.plugin }

// Device returns the device the instance runs on.
func (in *Instance) Device() schema.Device { return in.device }

// Args returns the instance's argument values.
func (in *Instance) Args() *schema.Values { return in.args }

// Variant returns the name of the variant the instance runs, or "" if
// the operator's backend has no variants.
func (in *Instance) Variant() string { return in.variant }

// Impl returns the operator's implementation, for callers that know its
// type.
func (in *Instance) Impl() Impl { return in.impl }

// Error is the error of an operator instance: it names the operator and
// the plugin that provides it, once, and the step that failed, so that a
// caller that names the operator itself (a graph's node error) can say
// the rest alone ([Error.Detail]) rather than name it twice. Every error
// of an [Instance] after [Registry.New] is one; test for it with
// [errors.As], and for what went wrong with [errors.Is] as before.
type Error struct {
	Operator string // the operator's name
	Plugin   string // the ID of the plugin that provides it; "" for an operator the host registered
	Step     string // "create", "setup", "alloc" (Exec allocating the outputs), "run", "close", or "" (choosing a variant)
	Err      error  // what went wrong
	// oneSample: the batch had one sample, so a [SampleError] need
	// not say which.
	oneSample bool
}

func (e *Error) Error() string {
	who := fmt.Sprintf("operator %q", e.Operator)
	if e.Plugin != "" {
		who += fmt.Sprintf(" (plugin %q)", e.Plugin)
	}
	return "op: " + who + ": " + e.Detail()
}

// Detail returns the message without the operator and plugin: the step
// and what went wrong. A [SampleError] of a batch of one sample says
// what went wrong without the sample's index: a caller that runs samples
// one at a time (a pipeline naming the file at fault) has named it.
func (e *Error) Detail() string {
	msg := e.Err.Error()
	if se, ok := e.Err.(*SampleError); ok && e.oneSample && se.Sample == 0 {
		msg = se.Err.Error()
	}
	if pe, ok := e.Err.(PluginCallError); ok {
		if m, sample, ok := pe.Without(e.Plugin, e.Step); ok {
			msg = m
			if sample >= 0 && !(e.oneSample && sample == 0) {
				msg = fmt.Sprintf("sample %d: %s", sample, m)
			}
		}
	}
	if e.Step == "" {
		return msg
	}
	return e.Step + ": " + msg
}

// Unwrap returns what went wrong.
func (e *Error) Unwrap() error { return e.Err }

// PluginCallError is the error of a call into a plugin's code that
// names the plugin and the call itself (a native or WebAssembly
// plugin's operator function that returned an error result): an [Error]
// for the same plugin and step asks it for the rest, so that each is
// said once.
type PluginCallError interface {
	error
	// Without returns the message without the plugin and the call when
	// they are plugin and step, and the sample the call failed on (-1:
	// none); ok is false if they are not.
	Without(plugin, step string) (msg string, sample int, ok bool)
}

// SampleError is an operator's error about one sample of its batch:
// "sample 1: cannot decode image: …". Operators return it from Setup or
// Run, and [Error] leaves the index out of a batch of one sample.
type SampleError struct {
	Sample int   // the sample's index in the batch
	Err    error // what is wrong with it
}

func (e *SampleError) Error() string { return fmt.Sprintf("sample %d: %v", e.Sample, e.Err) }

// Unwrap returns what is wrong with the sample.
func (e *SampleError) Unwrap() error { return e.Err }

// fail returns err as the instance's error in step.
func (in *Instance) fail(step string, err error) error {
	return &Error{Operator: in.schema.Name, Plugin: in.plugin, Step: step, Err: err, oneSample: in.batchSize == 1}
}

// failf is fail of fmt.Errorf(format, args...).
func (in *Instance) failf(step, format string, args ...any) error {
	return in.fail(step, fmt.Errorf(format, args...))
}

// Setup checks inputs against the schema (count, dtype, layout, ndim,
// device, equal batch sizes) and returns the outputs' descriptions as the
// operator computes them: one per schema output, one shape per sample.
// Errors wrap [ErrInput], [dynop.ErrClosed], [dynop.ErrPanic] or the operator's error,
// and name the operator.
func (in *Instance) Setup(inputs []*tensor.Batch) ([]OutputDesc, error) {
	in.setUp = false
	in.okIn, in.okOut = in.okIn[:0], in.okOut[:0]
	if in.closed.Load() {
		return nil, in.fail("setup", errdefs.ErrClosed)
	}
	if err := in.checkInputs(inputs); err != nil {
		return nil, err
	}
	var outs []OutputDesc
	if err := in.guard("setup", func() (err error) { outs, err = in.impl.Setup(inputs); return err }); err != nil {
		return nil, err
	}
	if err := in.checkDescs(outs, len(inputs) > 0); err != nil {
		return nil, in.fail("setup", err)
	}
	in.outs = outs
	in.recordShapes(inputs)
	in.setUp = true
	return outs, nil
}

// checkDescs checks what an operator's Setup returned: one description
// per schema output, a shape per sample (if there are inputs), no
// negative dimension, no sample over the size limit. Errors wrap
// [schema.ErrOp].
func (in *Instance) checkDescs(outs []OutputDesc, hasInputs bool) error {
	if len(outs) != len(in.schema.Outputs) {
		return fmt.Errorf("%w: returned %d output description(s), the schema has %d", schema.ErrOp, len(outs), len(in.schema.Outputs))
	}
	for i, o := range outs {
		if hasInputs && len(o.Shapes) != in.batchSize {
			return fmt.Errorf("%w: output %q has %d sample shape(s) for a batch of %d", schema.ErrOp, in.schema.Outputs[i].Name, len(o.Shapes), in.batchSize)
		}
		for j, s := range o.Shapes {
			if slices.ContainsFunc(s, func(d int64) bool { return d < 0 }) {
				return fmt.Errorf("%w: output %q sample %d has negative shape %v", schema.ErrOp, in.schema.Outputs[i].Name, j, s)
			}
			if n, ok := sampleBytes(o.DType, s); !ok || n > in.maxBytes {
				return fmt.Errorf("%w: output %q sample %d is %s %v, larger than the limit of %d bytes per sample (op.Options.MaxSampleBytes)",
					schema.ErrOp, in.schema.Outputs[i].Name, j, o.DType, s, in.maxBytes)
			}
		}
	}
	return nil
}

// checkInputs checks inputs against the schema and sets in.batchSize.
func (in *Instance) checkInputs(inputs []*tensor.Batch) error {
	s := in.schema
	if n := len(inputs); n < s.MinInputs() || n > len(s.Inputs) {
		want := fmt.Sprint(len(s.Inputs))
		if s.OptionalInputs > 0 {
			want = fmt.Sprintf("%d to %d", s.MinInputs(), len(s.Inputs))
		}
		return in.failf("setup", "%w: takes %s input(s), got %d", ErrInput, want, n)
	}
	in.batchSize = 0
	for i, b := range inputs {
		spec := &s.Inputs[i]
		fail := func(format string, args ...any) error {
			return in.failf("setup", "input %d %q: %w: "+format, append([]any{i, spec.Name, ErrInput}, args...)...)
		}
		if b == nil {
			return fail("batch is nil")
		}
		if i == 0 {
			in.batchSize = b.Len()
		} else if b.Len() != in.batchSize {
			return fail("batch of %d sample(s); input 0 has %d", b.Len(), in.batchSize)
		}
		if b.Len() == 0 {
			continue
		}
		if want := tensorDevice(in.device); b.Device().Type != want {
			return fail("data is on %s; the operator runs on %s", b.Device(), in.device)
		}
		if len(spec.DTypes) > 0 && !slices.Contains(spec.DTypes, b.DType()) {
			return fail("dtype %s is not allowed (want %v)", b.DType(), spec.DTypes)
		}
		if len(spec.Layouts) > 0 {
			if l := b.Layout(); l != "" && !slices.Contains(spec.Layouts, l) {
				return fail("layout %q is not allowed (want one of %q)", l, spec.Layouts)
			}
			if !slices.ContainsFunc(spec.Layouts, func(l string) bool { return len(l) == b.NDim() }) {
				return fail("samples have %d dimension(s); layouts %q allow none of that many", b.NDim(), spec.Layouts)
			}
		}
		if spec.NDim > 0 && b.NDim() != spec.NDim {
			return fail("samples have %d dimension(s), want %d", b.NDim(), spec.NDim)
		}
	}
	return nil
}

// tensorDevice is the tensor device type an operator device reads.
func tensorDevice(d schema.Device) tensor.DeviceType {
	if d == schema.GPU {
		return tensor.CUDA
	}
	return tensor.CPU
}

// batchKind is what a batch's samples share besides their shapes.
type batchKind struct {
	dtype  tensor.DType
	device tensor.Device
	layout string
}

func kindOf(b *tensor.Batch) batchKind {
	return batchKind{b.DType(), b.Device(), b.Layout()}
}

// recordShapes keeps the input shapes and kinds Setup saw, reusing memory.
func (in *Instance) recordShapes(inputs []*tensor.Batch) {
	in.inKinds = in.inKinds[:0]
	for _, b := range inputs {
		in.inKinds = append(in.inKinds, kindOf(b))
	}
	in.inShapes = slices.Grow(in.inShapes[:0], len(inputs))[:len(inputs)]
	for i, b := range inputs {
		per := slices.Grow(in.inShapes[i][:0], b.Len())[:b.Len()]
		for j, t := range b.Samples() {
			per[j] = append(per[j][:0], t.Shape()...)
		}
		in.inShapes[i] = per
	}
}

// Run computes outputs from inputs. The inputs must have the shapes,
// dtypes, devices and layouts they had at the last Setup, and the outputs the dtype and shapes that Setup
// returned, contiguous (allocate them with [OutputDesc.Alloc], or reuse
// batches of the same shapes); so a kernel never writes outside its
// buffers and may assume compact outputs. Inputs may be strided views.
// Cancellation is checked before the operator runs; the operator sees ctx.
// Errors wrap [ErrInput], [dynop.ErrClosed], [dynop.ErrPanic] or the operator's error
// and name the operator.
func (in *Instance) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	if in.closed.Load() {
		return in.fail("run", errdefs.ErrClosed)
	}
	if !in.setUp {
		return in.failf("run", "%w: Setup has not succeeded", ErrInput)
	}
	if !slices.Equal(inputs, in.okIn) || !slices.Equal(outputs, in.okOut) || len(in.okIn)+len(in.okOut) == 0 {
		if err := in.checkRun(outputs, inputs); err != nil {
			return err
		}
		in.okIn, in.okOut = append(in.okIn[:0], inputs...), append(in.okOut[:0], outputs...)
	}
	if err := ctx.Err(); err != nil {
		return in.fail("run", err)
	}
	if in.verify != nil {
		if err := in.verifyVariants(ctx, inputs); err != nil {
			return err
		}
	}
	return in.guard("run", func() error { return in.runImpl(ctx, in.impl, outputs, inputs) })
}

// checkRun verifies that inputs match Setup's and outputs match its
// answer. It allocates nothing.
func (in *Instance) checkRun(outputs, inputs []*tensor.Batch) error {
	if len(inputs) != len(in.inShapes) {
		return in.failf("run", "%w: %d input(s); Setup saw %d", ErrInput, len(inputs), len(in.inShapes))
	}
	for i, b := range inputs {
		if b == nil || b.Len() != len(in.inShapes[i]) {
			return in.failf("run", "%w: input %d differs from the one given to Setup", ErrInput, i)
		}
		if k := kindOf(b); b.Len() > 0 && k != in.inKinds[i] {
			return in.failf("run", "%w: input %d is %s %s %q; Setup saw %s %s %q", ErrInput, i,
				k.dtype, k.device, k.layout, in.inKinds[i].dtype, in.inKinds[i].device, in.inKinds[i].layout)
		}
		for j, t := range b.Samples() {
			if !slices.Equal(t.Shape(), in.inShapes[i][j]) {
				return in.failf("run", "%w: input %d sample %d has shape %v; Setup saw %v", ErrInput, i, j, t.Shape(), in.inShapes[i][j])
			}
		}
	}
	if len(outputs) != len(in.outs) {
		return in.failf("run", "%w: %d output(s), want %d", ErrInput, len(outputs), len(in.outs))
	}
	for i, b := range outputs {
		d := in.outs[i]
		name := in.schema.Outputs[i].Name
		if b == nil || b.Len() != len(d.Shapes) {
			return in.failf("run", "%w: output %q must have %d sample(s)", ErrInput, name, len(d.Shapes))
		}
		for j, t := range b.Samples() {
			if t.DType() != d.DType || !slices.Equal(t.Shape(), d.Shapes[j]) {
				return in.failf("run", "%w: output %q sample %d is %s %v; Setup asked for %s %v", ErrInput, name, j, t.DType(), t.Shape(), d.DType, d.Shapes[j])
			}
			if !t.IsContiguous() {
				return in.failf("run", "%w: output %q sample %d is not contiguous; operators write compact outputs (allocate them with OutputDesc.Alloc)", ErrInput, name, j)
			}
			if t.Device().Type != tensorDevice(in.device) {
				return in.failf("run", "%w: output %q sample %d is on %s; the operator runs on %s", ErrInput, name, j, t.Device(), in.device)
			}
		}
	}
	return nil
}

// Exec sets the instance up for inputs, allocates the outputs and runs it.
func (in *Instance) Exec(ctx context.Context, inputs ...*tensor.Batch) ([]*tensor.Batch, error) {
	descs, err := in.Setup(inputs)
	if err != nil {
		return nil, err
	}
	outs := make([]*tensor.Batch, len(descs))
	for i, d := range descs {
		if outs[i] = in.takeSpare(i, d); outs[i] != nil {
			continue
		}
		if outs[i], err = d.Alloc(); err != nil {
			return nil, in.failf("alloc", "output %q: %w", in.schema.Outputs[i].Name, err)
		}
	}
	if err := in.Run(ctx, outs, inputs); err != nil {
		return nil, err
	}
	return outs, nil
}

// Recycle hands back outputs of an earlier Exec that the caller no longer
// uses, nor anything made from them: the next Execs fill their memory
// again (cleared, as a new allocation is) instead of allocating, sample
// by sample, where a sample has the same dtype and number of elements,
// or, for uint8 outputs such as encoded files, no more; batches of
// another length (a run's last, smaller batch) reuse it too, and samples
// no Exec took wait for a later one, up to the most samples an output
// has had. A nil batch hands back nothing. A graph recycles the outputs of its operator nodes that only
// other operators read, and a pipeline run the outputs it has written,
// so tensors are allocated once per worker, not once per batch. Recycle
// may be called from any goroutine.
func (in *Instance) Recycle(outs []*tensor.Batch) {
	if len(outs) != len(in.schema.Outputs) {
		return
	}
	in.spareMu.Lock()
	defer in.spareMu.Unlock()
	if in.spare == nil {
		in.spare = make([]*tensor.Batch, len(outs))
		in.pool = make([][]*tensor.Tensor, len(outs))
	}
	for i, b := range outs {
		if b == nil {
			continue
		}
		if old := in.spare[i]; old != nil { // not taken: its samples may serve later
			in.pool[i] = in.keepSamples(append(in.pool[i], old.Samples()...))
		}
		in.spare[i] = b
	}
}

// keepSamples drops the oldest of pool beyond the most samples one
// output has had.
func (in *Instance) keepSamples(pool []*tensor.Tensor) []*tensor.Tensor {
	if drop := len(pool) - max(in.keep, 1); drop > 0 {
		clear(pool[:drop])
		pool = pool[drop:]
	}
	return pool
}

// takeSpare returns a batch for output i as d describes over recycled
// memory, cleared: the batch handed back last if it has d's shapes, and
// otherwise one whose samples reuse the memory of recycled samples where
// one fits (the same dtype and number of elements, or, for uint8, at
// least as many), so batches of other lengths (the last, smaller batch
// of a run) and shapes reuse it too. It returns nil when nothing was
// handed back.
func (in *Instance) takeSpare(i int, d OutputDesc) *tensor.Batch {
	in.spareMu.Lock()
	defer in.spareMu.Unlock()
	in.keep = max(in.keep, len(d.Shapes))
	if i >= len(in.spare) {
		return nil
	}
	b := in.spare[i]
	in.spare[i] = nil
	if b != nil && b.DType() == d.DType && b.Layout() == d.Layout && b.Len() == len(d.Shapes) {
		same := true
		for j, t := range b.Samples() {
			same = same && t.IsContiguous() && t.Device().Type == tensor.CPU && slices.Equal(t.Shape(), d.Shapes[j])
		}
		if same {
			for _, t := range b.Samples() {
				clear(t.Span())
			}
			return b
		}
	}
	pool := in.pool[i]
	if b != nil {
		pool = append(pool, b.Samples()...)
	}
	if len(pool) == 0 {
		return nil
	}
	samples := make([]*tensor.Tensor, len(d.Shapes))
	for j, shape := range d.Shapes {
		var t *tensor.Tensor
		if k := slices.IndexFunc(pool, func(t *tensor.Tensor) bool { return fits(t, d.DType, shape) }); k >= 0 {
			t = over(pool[k], d.DType, d.Layout, shape)
			pool = slices.Delete(pool, k, k+1)
		}
		if t == nil {
			var err error
			if t, err = tensor.New(d.DType, shape...); err == nil && d.Layout != "" {
				t, err = t.WithLayout(d.Layout)
			}
			if err != nil {
				in.pool[i] = in.keepSamples(pool)
				return nil
			}
		}
		samples[j] = t
	}
	in.pool[i] = in.keepSamples(pool)
	out, err := tensor.NewBatch(samples...)
	if err != nil {
		return nil
	}
	return out
}

// fits reports whether a tensor of dtype dt and shape can use t's
// memory: t is compact, on the CPU and of dt, with as many elements, or,
// for uint8 (encoded files of varying size), at least as many.
func fits(t *tensor.Tensor, dt tensor.DType, shape []int64) bool {
	if !t.IsContiguous() || t.Device().Type != tensor.CPU || t.DType() != dt {
		return false
	}
	n, ok := sampleBytes(dt, shape)
	have := int64(len(t.Span()))
	return ok && (n == have || dt == tensor.Uint8 && n < have)
}

// over returns a tensor of dtype dt, layout and shape over t's memory,
// which fits it, cleared; nil if it cannot be made.
func over(t *tensor.Tensor, dt tensor.DType, layout string, shape []int64) *tensor.Tensor {
	var err error
	switch n, _ := sampleBytes(dt, shape); {
	case slices.Equal(t.Shape(), shape):
	case n == int64(len(t.Span())):
		t, err = t.Reshape(shape...)
	default: // uint8, larger
		t, err = tensor.FromSlice(t.Span()[:n:n], shape...)
	}
	if err == nil && t.Layout() != layout {
		t, err = t.WithLayout(layout)
	}
	if err != nil {
		return nil
	}
	clear(t.Span())
	return t
}

// Close closes the implementation, if it is an io.Closer, and releases
// what keeps the operator's plugin started; the plugin may stop. A second
// Close returns an error wrapping [dynop.ErrClosed].
func (in *Instance) Close() error {
	if in.closed.Swap(true) {
		return in.fail("close", errdefs.ErrClosed)
	}
	return in.closeShared(in.impl)
}

// sampleBytes returns the bytes of a tensor of dt and shape, and false if
// that overflows.
func sampleBytes(dt tensor.DType, shape []int64) (int64, bool) {
	n := int64(dt.Size())
	for _, d := range shape {
		if d != 0 && n > math.MaxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

func joinRelease(err error, release func() error) error {
	if rerr := release(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// guard runs one step of the operator's code, turning a panic into an
// error wrapping errdefs.ErrPanic and wrapping errors with the operator's name.
func (in *Instance) guard(step string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = in.failf(step, "%w: %v", errdefs.ErrPanic, v)
		}
	}()
	if err := fn(); err != nil {
		return in.fail(step, err)
	}
	return nil
}
