package wasm

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/dynop/dynop/internal/abisession"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// wasm32 layouts of dynop.h's structs (checked in dynop_wasm.h).
const (
	tensorSize = 40             // dynop_tensor
	argSize    = 20             // dynop_arg
	maxNDim    = tensor.MaxNDim // DYNOP_MAX_NDIM
	dataAlign  = 64             // guest buffers, like tensor.New's
	guardSize  = 64             // guard bytes after each output
	guardByte  = 0xA5
)

// guard is what follows each output in the module's memory until the
// module runs: a write past the output's end changes it.
var guard = bytes.Repeat([]byte{guardByte}, guardSize)

// pool keeps a started plugin's idle module instances.
type pool struct {
	mu   sync.Mutex
	idle []*instance
}

// get returns an idle instance, or makes one and runs register in it.
func (s *session) get(ctx context.Context) (*instance, error) {
	s.pool.mu.Lock()
	if n := len(s.pool.idle); n > 0 {
		in := s.pool.idle[n-1]
		s.pool.idle = s.pool.idle[:n-1]
		s.pool.mu.Unlock()
		return in, nil
	}
	s.pool.mu.Unlock()
	in, err := s.e.newInstance(ctx)
	if err != nil {
		return nil, err
	}
	// The same calls as in the first instance, so that register finds
	// the same heap (the C shim allocates the info JSON).
	if _, _, err := in.info(ctx); err != nil {
		in.discard(err)
		return nil, err
	}
	if _, err := s.register(ctx, in, true); err != nil {
		in.discard(err)
		return nil, err
	}
	return in, nil
}

// put returns an instance to the pool, unless it was discarded.
func (s *session) put(in *instance) {
	if in.dead != nil {
		return
	}
	s.pool.mu.Lock()
	s.pool.idle = append(s.pool.idle, in)
	s.pool.mu.Unlock()
}

// wasmOp is an operator backend a module registered.
type wasmOp struct {
	s *session
	registered
	schema *schema.Op
}

// perSample returns the tensors that follow a sample's inputs: its
// outputs, then its scratch if the operator takes some.
func (o *wasmOp) perSample() int {
	if o.scratch {
		return len(o.schema.Outputs) + 1
	}
	return len(o.schema.Outputs)
}

// create is the backend's op.Factory: it takes a module instance from the
// pool and calls the module's create in it.
func (o *wasmOp) create(vals *schema.Values) (op.Impl, error) {
	if err := o.s.enter(); err != nil {
		return nil, err
	}
	defer o.s.leave()
	im := &wasmImpl{op: o, vals: vals, step: "create"}
	if err := im.attach(context.Background()); err != nil {
		return nil, err
	}
	return im, nil
}

// wasmImpl is one instance of a WebAssembly operator: the module's
// instance handle in the module instance it keeps, and an arena of guest
// memory for the tensors of a call, reused across calls.
type wasmImpl struct {
	op     *wasmOp
	vals   *schema.Values
	in     *instance // nil after a discard, until the next call
	handle uint32
	closed bool
	step   string // the op.Impl call under way: create, setup, run, close
	relays int    // runs laid out as the last run was (relay), for tests

	arena, arenaSize uint32
	meta             []byte     // the call's structs, written in one piece
	lay              callLayout // the last call's, reused

	// For an operator that takes scratch: the bytes the last setup asked
	// for, per sample, and their maximum. The scratch lies in the arena,
	// after the outputs: guest memory the instance keeps, shared by the
	// samples of a call and reused from call to call.
	scratchBytes []int64
	scratchMax   int64
}

// where names the call for errors. They reach the caller as an
// op.Error, which names the operator, its plugin and the step (create,
// setup, run, close): where names the loader, and the call only when it
// is not that step (a run that creates the operator again in a new
// module instance: "wasm: create").
func (im *wasmImpl) where(call string) string {
	if call == im.step {
		return "wasm"
	}
	return "wasm: " + call
}

// attach takes a module instance and creates the operator instance in it.
func (im *wasmImpl) attach(ctx context.Context) error {
	s := im.op.s
	in, err := s.get(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", im.where("create"), err)
	}
	args := layArgs(im.op.schema, im.vals)
	argsLen := uint32(alignUp(len(args), 8))
	p, err := in.alloc(ctx, argsLen+8, 8)
	if err != nil {
		s.put(in)
		return fmt.Errorf("%s: %w", im.where("create"), err)
	}
	relocate(args, p)
	in.mem.Write(p, args)
	out := p + argsLen // the instance handle, aligned
	if err := in.call(ctx, exCreate, uint64(im.op.handle), uint64(p), uint64(len(im.op.schema.Args)), uint64(out)); err != nil {
		// A call that did not start (ctx done) left the instance usable.
		in.free(ctx, p)
		s.put(in)
		return fmt.Errorf("%s: %w", im.where("create"), err)
	}
	if rc := in.result(); rc != 0 {
		err := s.resultError(in, "create", rc, -1)
		in.free(ctx, p)
		s.put(in)
		return err
	}
	h, _ := in.mem.ReadUint32Le(out)
	in.free(ctx, p)
	if in.dead != nil {
		return fmt.Errorf("%s: %w", im.where("create"), in.dead)
	}
	im.in, im.handle, im.arena, im.arenaSize = in, h, 0, 0
	return nil
}

// layArgs lays out every argument of schema as dynop_arg structs (wasm32)
// followed by their values, as if at offset 0, and then the list of the
// pointers in it; relocate moves them to the real offset.
func layArgs(schema *schema.Op, vals *schema.Values) (b []byte) {
	n := len(schema.Args)
	b = make([]byte, n*argSize)
	var ptrs []int // offsets in b of pointers to relocate
	put := func(data []byte, align int) uint32 {
		for len(b)%align != 0 {
			b = append(b, 0)
		}
		off := len(b)
		b = append(b, data...)
		return uint32(off)
	}
	cstr := func(s string) uint32 { return put(append([]byte(s), 0), 1) }
	for i, a := range schema.Args {
		at := i * argSize
		name := cstr(a.Name) // before indexing b: cstr may move it
		le.PutUint32(b[at:], name)
		ptrs = append(ptrs, at)
		le.PutUint32(b[at+4:], uint32(a.Type))
		if vals.Has(a.Name) {
			le.PutUint32(b[at+8:], 1)
		}
		count, data, strs := argValues(vals.Value(a.Name))
		var p uint32
		if strs != nil {
			arr := make([]uint32, len(strs))
			for j, s := range strs {
				arr[j] = cstr(s)
			}
			data = make([]byte, 4*len(arr))
			for j, v := range arr {
				le.PutUint32(data[4*j:], v)
			}
			p = put(data, 4)
			for j := range arr {
				ptrs = append(ptrs, int(p)+4*j)
			}
		} else if data != nil {
			p = put(data, 8)
		}
		le.PutUint32(b[at+12:], count)
		if count > 0 {
			le.PutUint32(b[at+16:], p)
			ptrs = append(ptrs, at+16)
		}
	}
	b = slices.Grow(b, 4*len(ptrs)+4)
	for _, at := range ptrs {
		b = le.AppendUint32(b, uint32(at))
	}
	return le.AppendUint32(b, uint32(len(ptrs)))
}

// relocate adds base to every pointer layArgs recorded in b.
func relocate(b []byte, base uint32) {
	n := int(le.Uint32(b[len(b)-4:]))
	list := b[len(b)-4-4*n : len(b)-4]
	for i := range n {
		at := le.Uint32(list[4*i:])
		le.PutUint32(b[at:], le.Uint32(b[at:])+base)
	}
}

// argValues encodes one argument value as count elements of its C type;
// strings come back as strs, for the caller to lay out.
func argValues(v any) (count uint32, data []byte, strs []string) {
	switch v := v.(type) {
	case nil:
		return 0, nil, nil
	case int64:
		return 1, le.AppendUint64(nil, uint64(v)), nil
	case float64:
		return 1, le.AppendUint64(nil, math.Float64bits(v)), nil
	case bool:
		return 1, le.AppendUint32(nil, boolInt(v)), nil
	case tensor.DType:
		return 1, dtypeBytes(nil, v), nil
	case string:
		return 1, nil, []string{v}
	case []int64:
		for _, x := range v {
			data = le.AppendUint64(data, uint64(x))
		}
		return uint32(len(v)), data, nil
	case []float64:
		for _, x := range v {
			data = le.AppendUint64(data, math.Float64bits(x))
		}
		return uint32(len(v)), data, nil
	case []bool:
		for _, x := range v {
			data = le.AppendUint32(data, boolInt(x))
		}
		return uint32(len(v)), data, nil
	case []tensor.DType:
		for _, x := range v {
			data = dtypeBytes(data, x)
		}
		return uint32(len(v)), data, nil
	case []string:
		if len(v) == 0 {
			return 0, nil, nil
		}
		return uint32(len(v)), nil, v
	}
	panic(fmt.Sprintf("wasm: argument value of type %T", v))
}

func boolInt(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func dtypeBytes(b []byte, dt tensor.DType) []byte {
	return append(b, byte(dt.Code), dt.Bits, byte(dt.Lanes), byte(dt.Lanes>>8))
}

// enter begins a call: the plugin must be started, the instance open, and
// the module instance alive — if an earlier call discarded it, a new one
// is attached (and, for run, set up with the run's inputs).
func (im *wasmImpl) enter(ctx context.Context, call string, inputs []*tensor.Batch) error {
	if im.closed {
		return fmt.Errorf("%s: %w", im.where(call), errdefs.ErrClosed)
	}
	if err := im.op.s.enter(); err != nil {
		return err
	}
	if im.in != nil && im.in.dead == nil {
		return nil
	}
	im.in = nil
	if err := im.attach(ctx); err != nil {
		im.op.s.leave()
		return err
	}
	if call == "run" {
		if _, err := im.setup(ctx, inputs); err != nil {
			im.op.s.leave()
			return err
		}
	}
	return nil
}

// Setup implements op.Impl: the module's setup per sample.
func (im *wasmImpl) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	ctx := context.Background()
	im.step = "setup"
	if err := im.enter(ctx, "setup", nil); err != nil {
		return nil, err
	}
	defer im.op.s.leave()
	return im.setup(ctx, inputs)
}

func (im *wasmImpl) setup(ctx context.Context, inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	samples, nin, nout := abisession.Samples(inputs), len(inputs), im.op.perSample()
	im.scratchBytes, im.scratchMax = im.scratchBytes[:0], 0
	lay, err := im.layout(ctx, samples, inputs, nil)
	if err != nil {
		return nil, err
	}
	if err := im.call(ctx, "setup", exSetup, lay); err != nil {
		return nil, err
	}
	in := im.in
	meta := in.read("setup outputs", im.arena, lay.metaSize)
	if im.op.scratch {
		for j := range samples {
			k := samples*nin + j*nout + nout - 1
			n := int64(le.Uint64(meta[lay.dims[k]:]))
			if n < 0 || n > math.MaxUint32 {
				im.scratchBytes = im.scratchBytes[:0]
				return nil, fmt.Errorf("%s: sample %d: %w: it asked for %d bytes of scratch; a module has at most %d", im.where("setup"), j, ErrABI, n, int64(math.MaxUint32))
			}
			im.scratchBytes = append(im.scratchBytes, n)
			im.scratchMax = max(im.scratchMax, n)
		}
	}
	descs, err := abisession.OutputDescs(im.op.schema, samples, func(j, i int) abisession.SetupOutput {
		k := samples*nin + j*nout + i
		t := meta[k*tensorSize:]
		dims := meta[lay.dims[k]:]
		return abisession.SetupOutput{
			DType: tensor.DType{Code: tensor.Code(t[16]), Bits: t[17], Lanes: uint16(t[18]) | uint16(t[19])<<8},
			NDim:  int(int32(le.Uint32(t[12:]))),
			Dim:   func(x int) int64 { return int64(le.Uint64(dims[8*x:])) },
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", im.where("setup"), err)
	}
	return descs, nil
}

// Run implements op.Impl: it writes the inputs into the module's memory,
// runs the module's run per sample, checks the guard bytes after each
// output and copies the outputs out.
func (im *wasmImpl) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	im.step = "run"
	if err := im.enter(ctx, "run", inputs); err != nil {
		return err
	}
	defer im.op.s.leave()
	samples := abisession.Samples(inputs)
	if im.op.scratch && len(im.scratchBytes) != samples {
		return fmt.Errorf("%s: %w: setup has not succeeded for these inputs", im.where("run"), op.ErrInput)
	}
	lay, err := im.layout(ctx, samples, inputs, outputs)
	if err != nil {
		return err
	}
	if err := im.call(ctx, "run", exRun, lay); err != nil {
		return err
	}
	mem := im.in.mem
	spans := lay.spans[len(lay.spans)-len(lay.outs):]
	for k := range lay.outs {
		span := spans[k]
		off := lay.outOffs[k]
		b, ok := mem.Read(off, uint32(len(span))+guardSize)
		if !ok {
			return fmt.Errorf("%s: %w: the module's memory shrank", im.where("run"), ErrABI)
		}
		if !bytes.Equal(b[len(span):], guard) {
			err := fmt.Errorf("%s: %w: the module wrote past the end of output %d of sample %d (%d bytes)", im.where("run"), ErrABI, k%len(outputs), k/len(outputs), len(span))
			im.in.discard(err) // its heap may be corrupt
			return err
		}
		copy(span, b[:len(span)])
	}
	return nil
}

// callLayout is where a call's tensors lie in the arena.
type callLayout struct {
	samples, nin, nout int    // nout: the tensors after each sample's inputs, scratch included
	failed             int    // offset of the failed-sample index
	metaSize           uint32 // bytes of structs, arrays and index
	// dims[k]: offset of tensor k's shape array, its strides following
	// (ndims[k] entries each): as many as the tensor has, or, for what
	// setup writes (its outputs, the scratch length), DYNOP_MAX_NDIM.
	dims, ndims []int
	outs        []*tensor.Tensor
	outOffs     []uint32
	spans       [][]byte // of the inputs, then the outputs, in the order laid out
	// A run's layout, kept for the next run: the arena it was laid out
	// in, the offsets of the inputs' data and the tensors, in the order
	// of spans. Tensors do not change, so the same tensors in the same
	// arena make the same metadata.
	reusable bool
	base     uint32
	inOffs   []uint32
	tensors  []*tensor.Tensor
}

// same reports whether a run of inputs and outputs would be laid out as
// the last run was: the same tensors, in an arena at the same place.
func (lay *callLayout) same(base uint32, inputs, outputs []*tensor.Batch) bool {
	if !lay.reusable || base != lay.base || len(inputs) != lay.nin {
		return false
	}
	k := 0
	for _, b := range inputs {
		for _, t := range b.Samples() {
			if k >= len(lay.tensors) || t != lay.tensors[k] {
				return false
			}
			k++
		}
	}
	for j := range lay.samples {
		for _, b := range outputs {
			if s := b.Samples(); j >= len(s) || k >= len(lay.tensors) || s[j] != lay.tensors[k] {
				return false
			}
			k++
		}
	}
	return k == len(lay.tensors)
}

// relay lays out a run as the last one, which it is the same as (see
// same): the inputs' data, the metadata, the outputs cleared and
// guarded.
func (im *wasmImpl) relay() (*callLayout, error) {
	im.relays++
	lay, mem := &im.lay, im.in.mem
	for k, off := range lay.inOffs {
		if span := lay.spans[k]; len(span) > 0 && !mem.Write(off, span) {
			return nil, fmt.Errorf("%s: %w: input outside the module's memory", im.where("run"), ErrABI)
		}
	}
	if !mem.Write(lay.base, im.meta[:lay.metaSize]) {
		return nil, fmt.Errorf("%s: %w: arena outside the module's memory", im.where("run"), ErrABI)
	}
	spans := lay.spans[len(lay.inOffs):]
	for k, off := range lay.outOffs {
		n := len(spans[k])
		o, ok := mem.Read(off, uint32(n)+guardSize)
		if !ok {
			return nil, fmt.Errorf("%s: %w: output outside the module's memory", im.where("run"), ErrABI)
		}
		clear(o[:n])
		copy(o[n:], guard)
	}
	return lay, nil
}

// layout writes the tensors of a call (outputs nil: setup) into the
// arena, growing it if need be. The scratch of an operator that takes
// some follows each sample's outputs: in setup an empty uint8 vector
// whose length setup writes, in run the arena's scratch, after the
// outputs' data.
func (im *wasmImpl) layout(ctx context.Context, samples int, inputs, outputs []*tensor.Batch) (*callLayout, error) {
	step := "run"
	if outputs == nil {
		step = "setup"
	}
	lay := &im.lay
	if outputs != nil && lay.samples == samples && lay.same(im.arena, inputs, outputs) {
		return im.relay()
	}
	nin, nout := len(inputs), im.op.perSample()
	nt := samples * (nin + nout)
	*lay = callLayout{samples: samples, nin: nin, nout: nout, dims: lay.dims[:0], ndims: lay.ndims[:0], outs: lay.outs[:0], outOffs: lay.outOffs[:0], spans: lay.spans[:0], inOffs: lay.inOffs[:0], tensors: lay.tensors[:0]}
	// The structs, then the shape and stride arrays, packed: a call's
	// metadata is what the module reads, not DYNOP_MAX_NDIM slots per
	// tensor.
	lay.ndims = slices.Grow(lay.ndims, nt)[:nt]
	for j := range samples {
		for i, b := range inputs {
			lay.ndims[j*nin+i] = b.Samples()[j].NDim()
		}
		for i := range nout {
			nd := maxNDim
			if outputs != nil {
				nd = 1 // the scratch
				if i < len(outputs) {
					nd = outputs[i].Samples()[j].NDim()
				}
			}
			lay.ndims[samples*nin+j*nout+i] = nd
		}
	}
	at := nt * tensorSize
	for _, nd := range lay.ndims {
		if nd > maxNDim {
			return nil, fmt.Errorf("%s: %w: a tensor of %d dimensions; the ABI passes at most %d", im.where(step), op.ErrInput, nd, maxNDim)
		}
		lay.dims = append(lay.dims, at)
		at += 2 * 8 * nd
	}
	lay.failed = at
	meta := alignUp(lay.failed+4, dataAlign)
	lay.metaSize = uint32(lay.failed + 4)
	// Data: each input's span, each output's span and guard.
	size := meta
	for _, b := range inputs {
		for _, t := range b.Samples() {
			span := t.Span()
			lay.spans = append(lay.spans, span)
			size = alignUp(size+len(span), dataAlign)
		}
	}
	for j := range samples * min(len(outputs), 1) {
		for _, b := range outputs {
			span := b.Samples()[j].Span()
			lay.spans = append(lay.spans, span)
			size = alignUp(size+len(span)+guardSize, dataAlign)
		}
	}
	scratchAt := size
	if outputs != nil && im.op.scratch {
		size = alignUp(size+int(im.scratchMax), dataAlign)
	}
	if size > math.MaxUint32-dataAlign {
		return nil, fmt.Errorf("%s: %w: the call needs %d bytes of module memory, more than wasm32 addresses", im.where(step), ErrMemoryLimit, size)
	}
	if err := im.grow(ctx, step, uint32(size)); err != nil {
		return nil, err
	}
	base := im.arena
	im.meta = slices.Grow(im.meta[:0], meta)[:meta]
	clear(im.meta)
	m := im.meta
	data := uint32(meta)
	mem := im.in.mem
	describe := func(k int, t *tensor.Tensor, span []byte) {
		s := m[k*tensorSize:]
		dev, dt := t.Device(), t.DType()
		le.PutUint32(s[4:], uint32(dev.Type))
		le.PutUint32(s[8:], uint32(dev.ID))
		le.PutUint32(s[12:], uint32(t.NDim()))
		dtypeBytes(s[16:16], dt)
		dims, nd := lay.dims[k], lay.ndims[k]
		le.PutUint32(s[20:], base+uint32(dims))
		le.PutUint32(s[24:], base+uint32(dims+nd*8))
		for i, d := range t.Shape() {
			le.PutUint64(m[dims+8*i:], uint64(d))
		}
		for i, d := range t.Strides() {
			le.PutUint64(m[dims+nd*8+8*i:], uint64(d))
		}
		le.PutUint32(s[0:], base+data)
		data = uint32(alignUp(int(data)+len(span), dataAlign))
	}
	k := 0 // into lay.spans
	for i, b := range inputs {
		for j, t := range b.Samples() {
			at, span := data, lay.spans[k]
			k++
			describe(j*nin+i, t, span)
			lay.inOffs = append(lay.inOffs, base+at)
			lay.tensors = append(lay.tensors, t)
			if len(span) > 0 && !mem.Write(base+at, span) {
				return nil, fmt.Errorf("%s: %w: input outside the module's memory", im.where(step), ErrABI)
			}
		}
	}
	if outputs == nil {
		for k := samples * nin; k < nt; k++ {
			s := m[k*tensorSize:]
			le.PutUint32(s[4:], 1) // DYNOP_DEVICE_CPU
			le.PutUint32(s[20:], base+uint32(lay.dims[k]))
		}
	} else {
		for j := range samples {
			for i, b := range outputs {
				t := b.Samples()[j]
				at, n := data, len(lay.spans[k])
				k++
				describe(samples*nin+j*nout+i, t, lay.spans[k-1])
				data = uint32(alignUp(int(at)+n+guardSize, dataAlign))
				o, ok := mem.Read(base+at, uint32(n)+guardSize)
				if !ok {
					return nil, fmt.Errorf("%s: %w: output outside the module's memory", im.where(step), ErrABI)
				}
				clear(o[:n]) // as zeroed as a native operator's new output
				copy(o[n:], guard)
				lay.outs = append(lay.outs, t)
				lay.tensors = append(lay.tensors, t)
				lay.outOffs = append(lay.outOffs, base+at)
			}
		}
	}
	if im.op.scratch {
		for j := range samples {
			k := samples*nin + j*nout + nout - 1
			s, dims := m[k*tensorSize:], lay.dims[k]
			le.PutUint32(s[0:], 0)
			if outputs != nil {
				le.PutUint32(s[0:], base+uint32(scratchAt))
				le.PutUint64(m[dims:], uint64(im.scratchBytes[j]))
				le.PutUint64(m[dims+8:], 1)
				le.PutUint32(s[24:], base+uint32(dims+8))
			}
			le.PutUint32(s[4:], 1) // DYNOP_DEVICE_CPU
			le.PutUint32(s[12:], 1)
			dtypeBytes(s[16:16], tensor.Uint8)
			le.PutUint32(s[20:], base+uint32(dims))
		}
	}
	if !mem.Write(base, m[:lay.metaSize]) {
		return nil, fmt.Errorf("%s: %w: arena outside the module's memory", im.where(step), ErrABI)
	}
	lay.reusable, lay.base = outputs != nil, base
	return lay, nil
}

// grow makes the arena at least size bytes.
func (im *wasmImpl) grow(ctx context.Context, step string, size uint32) error {
	if size <= im.arenaSize {
		return nil
	}
	in := im.in
	in.free(ctx, im.arena)
	im.arena, im.arenaSize = 0, 0
	want := uint32(min(uint64(size)+uint64(size)/4, math.MaxUint32-dataAlign))
	p, err := in.alloc(ctx, want, dataAlign)
	if err != nil {
		return fmt.Errorf("%s: %w", im.where(step), err)
	}
	im.arena, im.arenaSize = p, want
	return nil
}

// call calls setup or run over the laid-out batch.
func (im *wasmImpl) call(ctx context.Context, step string, x int, lay *callLayout) error {
	in, base := im.in, im.arena
	inputs, outputs := uint64(0), uint64(0)
	if lay.nin > 0 {
		inputs = uint64(base)
	}
	nout := lay.nout // what the module's operator is told: its schema's outputs
	if im.op.scratch {
		nout--
	}
	if lay.nout > 0 {
		outputs = uint64(base) + uint64(lay.samples*lay.nin*tensorSize)
	}
	failed := uint64(base) + uint64(lay.failed)
	in.mem.WriteUint32Le(uint32(failed), ^uint32(0)) // no sample, unless the module says
	if err := in.call(ctx, x, uint64(im.op.handle), uint64(im.handle), uint64(lay.samples), inputs, uint64(lay.nin), outputs, uint64(nout), failed); err != nil {
		return fmt.Errorf("%s: %w", im.where(step), err)
	}
	if rc := in.result(); rc != 0 {
		sample, _ := in.mem.ReadUint32Le(uint32(failed))
		k := int(sample)
		if sample >= uint32(lay.samples) {
			k = -1
		}
		return im.op.s.resultError(in, step, rc, k)
	}
	return nil
}

// Close implements io.Closer: the module's destroy, then the instance goes
// back to the pool.
func (im *wasmImpl) Close() error {
	if im.closed {
		return nil
	}
	im.step = "close"
	im.closed = true
	in := im.in
	im.in = nil
	if in == nil || in.dead != nil {
		return nil
	}
	s := im.op.s
	if err := s.enter(); err != nil {
		return nil // the plugin stopped: its instances are gone
	}
	defer s.leave()
	ctx := context.Background()
	err := in.call(ctx, exDestroy, uint64(im.op.handle), uint64(im.handle))
	in.free(ctx, im.arena)
	s.put(in)
	if err != nil {
		return fmt.Errorf("%s: %w", im.where("destroy"), err)
	}
	return nil
}

func alignUp(n, a int) int { return (n + a - 1) &^ (a - 1) }
