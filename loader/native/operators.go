package native

/*
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/dispatch"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/abisession"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// dynopGoRegisterOperator checks an operator backend a plugin registers
// during register and keeps it until register returns.
//
//export dynopGoRegisterOperator
func dynopGoRegisterOperator(h C.uintptr_t, cop *C.dynop_operator, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("register_operator", &rc, buf, n)
	s := sessionOf(h)
	if err := s.registerOperator(cop); err != nil {
		return s.fail(err, buf, n)
	}
	return C.DYNOP_OK
}

func (s *session) registerOperator(cop *C.dynop_operator) error {
	o, err := abihost.DecodeOperator(cMemory{}, addrOf(unsafe.Pointer(cop)))
	if err == nil {
		err = abisession.CheckOperatorVariants(o)
	}
	if err != nil {
		return fmt.Errorf("native: plugin %q: %w", s.p.info.ID, err)
	}
	name, device := o.Name, o.Device
	fail := func(sentinel error, format string, args ...any) error {
		return fmt.Errorf("native: plugin %q: register_operator %q (%s): %w: "+format, append([]any{s.p.info.ID, name, device, sentinel}, args...)...)
	}
	sch, err := abisession.CheckOperator(&s.p.info, name, device)
	if err != nil {
		return fmt.Errorf("native: plugin %q: %w", s.p.info.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.step != "register" {
		return fail(dynop.ErrState, "allowed only during register")
	}
	if s.ops == nil {
		s.ops = make(map[string]*op.Operator)
	}
	reg := s.ops[name]
	if reg == nil {
		reg = &op.Operator{Schema: *sch, Backends: make(map[schema.Device]op.Factory)}
		s.ops[name] = reg
		s.opOrder = append(s.opOrder, name)
	}
	if reg.Backends[device] != nil {
		return fail(dynop.ErrDuplicate, "registered already")
	}
	if o.Variants == nil {
		reg.Backends[device] = (&nativeOp{sess: s, cop: cop, run: cPointer(o.Run), schema: sch, scratch: o.Scratch(), concurrent: o.Concurrent()}).create
		return nil
	}
	if reg.Variants == nil {
		reg.Variants = make(map[schema.Device][]op.Variant)
	}
	for _, v := range o.Variants {
		f := (&nativeOp{sess: s, cop: cop, run: cPointer(v.Fn), schema: sch, scratch: o.Scratch(), concurrent: o.Concurrent()}).create
		reg.Variants[device] = append(reg.Variants[device], op.Variant{Name: v.Name, Needs: dispatch.Features(v.Needs), Factory: f})
	}
	reg.Backends[device] = reg.Variants[device][len(o.Variants)-1].Factory
	return nil
}

// publishOperators hands the operators registered during register to the
// host, in the order registered.
func (s *session) publishOperators() error {
	for _, name := range s.opOrder {
		if err := s.host.RegisterOperator(*s.ops[name]); err != nil {
			return err
		}
	}
	return nil
}

// nativeOp is one operator backend of a started native plugin, or one
// variant of it.
type nativeOp struct {
	sess       *session
	cop        *C.dynop_operator
	run        unsafe.Pointer // cop.run, or the variant's
	schema     *schema.Op
	scratch    bool // DYNOP_OPERATOR_SCRATCH: a scratch tensor follows the outputs
	concurrent bool // DYNOP_OPERATOR_CONCURRENT: an instance may run on several threads at once
}

// perSample returns the tensors that follow a sample's inputs: its
// outputs, then its scratch if the operator takes some.
func (o *nativeOp) perSample() int {
	if o.scratch {
		return len(o.schema.Outputs) + 1
	}
	return len(o.schema.Outputs)
}

// create is the backend's op.Factory: it calls the plugin's create with
// the arguments in C memory.
func (o *nativeOp) create(vals *schema.Values) (op.Impl, error) {
	if err := o.sess.enter(); err != nil {
		return nil, err
	}
	defer o.sess.leave()
	mem := newCMem(o.schema, vals)
	defer mem.free()
	impl, err := o.newImpl()
	if err != nil || mem.failed {
		impl.release()
		return nil, errors.New("out of C memory")
	}
	var inst unsafe.Pointer
	if rc := C.dynop_loader_op_create(o.sess.who, o.cop, mem.args, C.uint32_t(len(o.schema.Args)), &inst, impl.buf, errBufSize); rc != C.DYNOP_OK {
		err := o.fail("create", rc, C.GoString(impl.buf), -1)
		impl.release()
		return nil, err
	}
	impl.inst = inst
	return impl, nil
}

// newImpl returns an implementation without a plugin instance yet, with
// its C memory for messages.
func (o *nativeOp) newImpl() (*nativeImpl, error) {
	impl := &nativeImpl{op: o, checked: checkBounds()}
	impl.buf = (*C.char)(C.calloc(errBufSize+4, 1))
	if impl.buf == nil {
		return impl, errors.New("out of C memory")
	}
	impl.failed = (*C.uint32_t)(unsafe.Add(unsafe.Pointer(impl.buf), errBufSize))
	return impl, nil
}

// Share implements op.SharedImpl for an operator that sets
// DYNOP_OPERATOR_CONCURRENT: an implementation with its own C memory for
// calls over the same plugin instance, which only im destroys (op.Instance
// closes im last).
func (im *nativeImpl) Share() (op.Impl, bool) {
	if !im.op.concurrent || im.closed.Load() {
		return nil, false
	}
	c, err := im.op.newImpl()
	if err != nil {
		c.release()
		return nil, false
	}
	c.inst, c.borrowed = im.inst, true
	return c, true
}

// fail describes a failed operator function call.
func (o *nativeOp) fail(call string, rc C.dynop_result, msg string, sample int) error {
	return abisession.CallError("native", o.sess.p.info.ID, call, abi.Result(rc), msg, sample, nil)
}

const errBufSize = 1024

// cMem is C memory for create's arguments, freed after the call.
type cMem struct {
	args   *C.dynop_arg
	ptrs   []unsafe.Pointer
	failed bool
}

func (m *cMem) alloc(n uintptr) unsafe.Pointer {
	p := C.calloc(1, C.size_t(max(n, 1)))
	if p == nil {
		m.failed = true
		return nil
	}
	m.ptrs = append(m.ptrs, p)
	return p
}

func (m *cMem) free() {
	for _, p := range m.ptrs {
		C.free(p)
	}
}

// newCMem lays out every argument of s, in order, as dynop_arg
// values in C memory.
func newCMem(s *schema.Op, vals *schema.Values) *cMem {
	m := &cMem{}
	n := len(s.Args)
	m.args = (*C.dynop_arg)(m.alloc(uintptr(n) * C.sizeof_dynop_arg))
	if m.failed {
		return m
	}
	args := unsafe.Slice(m.args, n)
	for i, a := range s.Args {
		ca := &args[i]
		ca.name = (*C.char)(m.cstring(a.Name))
		ca._type = C.dynop_arg_type(a.Type)
		if vals.Has(a.Name) {
			ca.given = 1
		}
		ca.count, ca.values = m.values(vals.Value(a.Name))
	}
	return m
}

func (m *cMem) cstring(s string) unsafe.Pointer {
	p := m.alloc(uintptr(len(s)) + 1)
	if p != nil {
		copy(unsafe.Slice((*byte)(p), len(s)), s)
	}
	return p
}

// values copies one argument value into C memory as count elements.
func (m *cMem) values(v any) (C.uint32_t, unsafe.Pointer) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return fill(m, []int64{v})
	case float64:
		return fill(m, []float64{v})
	case bool:
		return fill(m, []int32{boolInt(v)})
	case tensor.DType:
		return fill(m, []tensor.DType{v})
	case string:
		return fill(m, []unsafe.Pointer{m.cstring(v)})
	case []int64:
		return fill(m, v)
	case []float64:
		return fill(m, v)
	case []tensor.DType:
		return fill(m, v)
	case []bool:
		ints := make([]int32, len(v))
		for i, b := range v {
			ints[i] = boolInt(b)
		}
		return fill(m, ints)
	case []string:
		ptrs := make([]unsafe.Pointer, len(v))
		for i, s := range v {
			ptrs[i] = m.cstring(s)
		}
		return fill(m, ptrs)
	}
	panic(fmt.Sprintf("native: argument value of type %T", v))
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// fill copies elements into C memory.
func fill[T any](m *cMem, elems []T) (C.uint32_t, unsafe.Pointer) {
	var zero T
	p := m.alloc(uintptr(len(elems)) * unsafe.Sizeof(zero))
	if p != nil {
		copy(unsafe.Slice((*T)(p), len(elems)), elems)
	}
	return C.uint32_t(len(elems)), p
}

// nativeImpl is one instance of a native operator: the plugin's instance
// pointer and C memory for the tensors it is handed, reused across calls
// so that a steady-state Run allocates nothing.
//
// Data pointers into Go memory reach C as arguments of the cgo call, up to
// argPointers per call (a batch takes as many calls as it needs), so
// nothing is pinned; only an operator with more inputs and outputs than
// that has its memory pinned for the call.
type nativeImpl struct {
	op   *nativeOp
	inst unsafe.Pointer
	buf  *C.char // errBufSize bytes for messages

	// C memory for one call: the samples × inputs tensors, then the
	// samples × outputs tensors, then DYNOP_MAX_NDIM shape and stride
	// elements for each.
	mem        unsafe.Pointer
	memTensors int         // tensors mem has room for
	failed     *C.uint32_t // C memory: the sample a call failed on
	ptrs       []unsafe.Pointer
	pin        runtime.Pinner
	closed     atomic.Bool
	checked    bool // runs check the bounds of outputs (CheckBoundsEnv)

	// The batches mem describes (after a Run), which the next Run with
	// the same batches need not describe again: batches are immutable.
	laidIn, laidOut []*tensor.Batch

	// For an operator that takes scratch: the bytes the last setup asked
	// for, per sample, and their maximum; own is the scratchpad of a Run
	// called without one (RunScratch is how op.Instance calls it).
	scratchBytes []int64
	scratchMax   int64
	own          *kernel.Scratchpad

	// borrowed: inst is another implementation's (Share), which destroys it.
	borrowed bool
}

const (
	maxNDim     = tensor.MaxNDim
	argPointers = C.DYNOP_LOADER_ARG_POINTERS
)

// tensors returns room for n tensors, with their shape and stride arrays.
func (im *nativeImpl) tensors(n int) ([]C.dynop_tensor, []C.int64_t, error) {
	if n > im.memTensors {
		C.free(im.mem)
		im.laidIn, im.laidOut = im.laidIn[:0], im.laidOut[:0]
		im.mem = C.calloc(C.size_t(n), C.size_t(C.sizeof_dynop_tensor+2*maxNDim*8))
		if im.mem == nil {
			im.memTensors = 0
			return nil, nil, errors.New("native: out of C memory for operator tensors")
		}
		im.memTensors = n
	}
	ts := unsafe.Slice((*C.dynop_tensor)(im.mem), im.memTensors)
	dims := unsafe.Slice((*C.int64_t)(unsafe.Add(im.mem, uintptr(im.memTensors)*C.sizeof_dynop_tensor)), im.memTensors*2*maxNDim)
	return ts[:n], dims, nil
}

// describe writes t, without its data pointer, into ct, with shape and
// strides in dims.
func describe(ct *C.dynop_tensor, dims []C.int64_t, t *tensor.Tensor) error {
	if t.NDim() > maxNDim {
		return fmt.Errorf("%w: a tensor of %d dimensions; the C ABI passes at most %d", op.ErrInput, t.NDim(), maxNDim)
	}
	shape, strides := dims[:maxNDim], dims[maxNDim:2*maxNDim]
	for i, d := range t.Shape() {
		shape[i] = C.int64_t(d)
	}
	for i, d := range t.Strides() {
		strides[i] = C.int64_t(d)
	}
	dev, dt := t.Device(), t.DType()
	*ct = C.dynop_tensor{
		device:      C.dynop_device{device_type: C.int32_t(dev.Type), device_id: C.int32_t(dev.ID)},
		ndim:        C.int32_t(t.NDim()),
		dtype:       C.dynop_dtype{code: C.uint8_t(dt.Code), bits: C.uint8_t(dt.Bits), lanes: C.uint16_t(dt.Lanes)},
		shape:       &shape[0],
		strides:     &strides[0],
		byte_offset: C.uint64_t(t.ByteOffset()),
	}
	return nil
}

// lay describes each sample of batches into ts: sample j's tensor of batch
// i is ts[base+j*stride+i], and its data pointer goes to
// im.ptrs[j*per+first+i], where per is the number of tensors per sample.
func (im *nativeImpl) lay(ts []C.dynop_tensor, dims []C.int64_t, base, first, per, stride int, batches []*tensor.Batch) error {
	for i, b := range batches {
		for j, t := range b.Samples() {
			k := base + j*stride + i
			if err := describe(&ts[k], dims[k*2*maxNDim:(k+1)*2*maxNDim], t); err != nil {
				return err
			}
			im.ptrs[j*per+first+i] = t.Base()
		}
	}
	return nil
}

// layAll describes inputs and outputs (nil in setup) for samples samples,
// with nout tensors after each sample's inputs (its outputs, then its
// scratch if the operator takes some). In setup the scratch is an empty
// uint8 vector whose length setup writes; in run it is described as
// scratchBytes says, its data pointer left to the caller.
func (im *nativeImpl) layAll(samples int, inputs, outputs []*tensor.Batch, nout int) ([]C.dynop_tensor, []C.int64_t, error) {
	nin := len(inputs)
	per := nin + nout
	ts, dims, err := im.tensors(samples * per)
	if err != nil {
		return nil, nil, err
	}
	im.ptrs = slices.Grow(im.ptrs[:0], samples*per)[:samples*per]
	clear(im.ptrs)
	if err := im.lay(ts, dims, 0, 0, per, nin, inputs); err != nil {
		return nil, nil, err
	}
	if outputs == nil { // setup: outputs get shape arrays to fill in
		for k := samples * nin; k < len(ts); k++ {
			ts[k] = C.dynop_tensor{shape: &dims[k*2*maxNDim], device: C.dynop_device{device_type: C.DYNOP_DEVICE_CPU}}
		}
	} else if err := im.lay(ts, dims, samples*nin, nin, per, nout, outputs); err != nil {
		return nil, nil, err
	}
	if !im.op.scratch {
		return ts, dims, nil
	}
	for j := range samples {
		k := samples*nin + j*nout + nout - 1
		shape, strides := dims[k*2*maxNDim:], dims[k*2*maxNDim+maxNDim:]
		shape[0], strides[0] = 0, 1
		if outputs != nil {
			shape[0] = C.int64_t(im.scratchBytes[j])
		}
		ts[k] = C.dynop_tensor{
			device: C.dynop_device{device_type: C.DYNOP_DEVICE_CPU},
			ndim:   1,
			dtype:  C.dynop_dtype{code: C.uint8_t(tensor.Uint8.Code), bits: 8, lanes: 1},
			shape:  &shape[0],
		}
		if outputs != nil {
			ts[k].strides = &strides[0]
		}
	}
	return ts, dims, nil
}

// setScratch points every sample's scratch tensor at p (nil for none),
// in the layout layAll made with nout tensors after the inputs.
func (im *nativeImpl) setScratch(samples, nin, nout int, p unsafe.Pointer) {
	for j := range samples {
		im.ptrs[j*(nin+nout)+nin+nout-1] = p
	}
}

// call runs the plugin's setup or run over samples samples laid out in ts,
// passing data pointers as arguments, argPointers per cgo call.
func (im *nativeImpl) call(step string, samples, nin, nout int, ts []C.dynop_tensor) error {
	per := nin + nout
	chunk, fill := samples, C.int(1)
	switch {
	case per > argPointers: // too many for arguments: pin and store them
		for k := range ts {
			if p := im.ptrs[k/per*per+k%per]; p != nil {
				im.pin.Pin(p)
			}
		}
		defer func() {
			for k := range ts {
				ts[k].data = nil // no Go pointer stays in C memory
			}
			im.pin.Unpin()
		}()
		for j := range samples {
			for i := range per {
				k := j*nin + i
				if i >= nin {
					k = samples*nin + j*nout + i - nin
				}
				ts[k].data = im.ptrs[j*per+i]
			}
		}
		fill = 0
	case per > 0:
		chunk = argPointers / per
	}
	setup, scratch := C.int(0), C.uint32_t(0)
	if step == "setup" {
		setup = 1
	}
	if im.op.scratch {
		scratch = 1
	}
	for s := 0; s < samples || s == 0; s += chunk {
		n := min(chunk, samples-s)
		var p [argPointers]unsafe.Pointer
		if fill != 0 {
			copy(p[:], im.ptrs[s*per:(s+n)*per])
		}
		var in, out C.uintptr_t
		if n*nin > 0 {
			in = cAddr(unsafe.Pointer(&ts[s*nin]))
		}
		if n*nout > 0 {
			out = cAddr(unsafe.Pointer(&ts[samples*nin+s*nout]))
		}
		rc := C.dynop_loader_op_call(cAddr(unsafe.Pointer(im.op.sess.who)), setup, cAddr(unsafe.Pointer(im.op.cop)), cAddr(im.op.run), cAddr(im.inst), C.uint32_t(n), in, C.uint32_t(nin), out, C.uint32_t(nout), scratch, fill,
			p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], C.uint32_t(s), cAddr(unsafe.Pointer(im.failed)), cAddr(unsafe.Pointer(im.buf)), errBufSize)
		if rc != C.DYNOP_OK {
			return im.op.fail(step, rc, C.GoString(im.buf), s+int(*im.failed))
		}
		if samples == 0 {
			break
		}
	}
	return nil
}

// cAddr passes a pointer to C memory as an integer, which cgo does not
// check: only pointers into Go memory need checking.
func cAddr(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

// enter begins an operator call into the plugin: it fails if the plugin
// stopped, and otherwise keeps it from stopping until leave is called.
func (im *nativeImpl) enter(call string) error {
	if err := im.op.sess.enter(); err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return nil
}

func (im *nativeImpl) leave() { im.op.sess.leave() }

// Setup implements op.Impl: the plugin's setup per sample.
func (im *nativeImpl) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	if err := im.enter("setup"); err != nil {
		return nil, err
	}
	defer im.leave()
	samples, nin, nout := abisession.Samples(inputs), len(inputs), im.op.perSample()
	im.laidIn, im.laidOut = im.laidIn[:0], im.laidOut[:0]
	im.scratchBytes, im.scratchMax = im.scratchBytes[:0], 0
	ts, dims, err := im.layAll(samples, inputs, nil, nout)
	if err != nil {
		return nil, err
	}
	if err := im.call("setup", samples, nin, nout, ts); err != nil {
		return nil, err
	}
	if im.op.scratch {
		for j := range samples {
			k := samples*nin + j*nout + nout - 1
			n := int64(dims[k*2*maxNDim])
			if n < 0 || n > abisession.MaxScratch {
				im.scratchBytes = im.scratchBytes[:0]
				return nil, fmt.Errorf("native: sample %d: %w: it asked for %d bytes of scratch; the most is %d", j, ErrABI, n, int64(abisession.MaxScratch))
			}
			im.scratchBytes = append(im.scratchBytes, n)
			im.scratchMax = max(im.scratchMax, n)
		}
	}
	descs, err := abisession.OutputDescs(im.op.schema, samples, func(j, i int) abisession.SetupOutput {
		k := samples*nin + j*nout + i
		ct := &ts[k]
		return abisession.SetupOutput{
			DType: tensor.DType{Code: tensor.Code(ct.dtype.code), Bits: uint8(ct.dtype.bits), Lanes: uint16(ct.dtype.lanes)},
			NDim:  int(ct.ndim),
			Dim:   func(x int) int64 { return int64(dims[k*2*maxNDim+x]) },
		}
	})
	if err != nil {
		return nil, fmt.Errorf("native: %w", err)
	}
	return descs, nil
}

// Run implements op.Impl: the plugin's run per sample. An operator that
// takes scratch gets it from a scratchpad of the instance's own.
func (im *nativeImpl) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	if !im.op.scratch {
		return im.run(outputs, inputs, nil)
	}
	if im.own == nil {
		im.own = kernel.NewScratchpad()
	}
	if err := im.own.Reserve(im.Scratch()); err != nil {
		return err
	}
	return im.RunScratch(ctx, im.own, outputs, inputs)
}

// Scratch implements op.ScratchImpl: the most host memory the last setup
// asked for in one sample (all samples of a call share it).
func (im *nativeImpl) Scratch() (req [kernel.NumMemKinds]int64) {
	req[kernel.HostMemory] = im.scratchMax
	return req
}

// RunScratch implements op.ScratchImpl: Run, every sample's scratch
// tensor pointing at the same memory from scratch, which C uses during
// the call only.
func (im *nativeImpl) RunScratch(ctx context.Context, scratch *kernel.Scratchpad, outputs, inputs []*tensor.Batch) error {
	if !im.op.scratch {
		return im.run(outputs, inputs, nil)
	}
	if len(im.scratchBytes) != abisession.Samples(inputs) {
		return fmt.Errorf("native: %w: setup has not succeeded for these inputs", op.ErrInput)
	}
	b, err := scratch.Alloc(kernel.HostMemory, int(im.scratchMax), C.DYNOP_SCRATCH_ALIGN)
	if err != nil {
		return fmt.Errorf("native: %w", err)
	}
	return im.run(outputs, inputs, unsafe.Pointer(unsafe.SliceData(b)))
}

// run runs the plugin's run per sample, with scratch (nil for none) as
// every sample's scratch.
func (im *nativeImpl) run(outputs, inputs []*tensor.Batch, scratch unsafe.Pointer) error {
	if err := im.enter("run"); err != nil {
		return err
	}
	defer im.leave()
	if im.checked {
		return im.runChecked(outputs, inputs)
	}
	samples, nin, nout := abisession.Samples(inputs), len(inputs), im.op.perSample()
	ts := unsafe.Slice((*C.dynop_tensor)(im.mem), samples*(nin+nout))
	if !slices.Equal(inputs, im.laidIn) || !slices.Equal(outputs, im.laidOut) || len(im.laidIn)+len(im.laidOut) == 0 {
		var err error
		if ts, _, err = im.layAll(samples, inputs, outputs, nout); err != nil {
			im.laidIn, im.laidOut = im.laidIn[:0], im.laidOut[:0]
			return err
		}
		im.laidIn, im.laidOut = append(im.laidIn[:0], inputs...), append(im.laidOut[:0], outputs...)
	}
	if im.op.scratch {
		im.setScratch(samples, nin, nout, scratch)
	}
	return im.call("run", samples, nin, nout, ts)
}

// Close implements io.Closer: the plugin's destroy, then the C memory.
func (im *nativeImpl) Close() error {
	if im.closed.Swap(true) {
		return nil
	}
	if im.borrowed {
		im.release()
		return nil
	}
	err := im.enter("destroy")
	if err == nil {
		C.dynop_loader_op_destroy(im.op.sess.who, im.op.cop, im.inst)
		im.leave()
	}
	im.release()
	return err
}

func (im *nativeImpl) release() {
	C.free(im.mem)
	C.free(unsafe.Pointer(im.buf))
	im.mem, im.buf, im.memTensors, im.ptrs = nil, nil, 0, nil
}

// tensorLayout returns dynop_tensor's size and member offsets as the C
// compiler lays them out, so that tests keep tensor.DLTensor in step.
func tensorLayout() [8]uintptr {
	var t C.dynop_tensor
	return [8]uintptr{C.sizeof_dynop_tensor, unsafe.Offsetof(t.data), unsafe.Offsetof(t.device), unsafe.Offsetof(t.ndim),
		unsafe.Offsetof(t.dtype), unsafe.Offsetof(t.shape), unsafe.Offsetof(t.strides), unsafe.Offsetof(t.byte_offset)}
}

// cMaxNDim returns DYNOP_MAX_NDIM as the C compiler sees it, so that a
// test keeps tensor.MaxNDim in step.
func cMaxNDim() int { return C.DYNOP_MAX_NDIM }
