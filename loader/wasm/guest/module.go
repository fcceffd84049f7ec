package guest

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/schema"
)

// module is the state behind the exports: the plugin Register made and
// the operator instances the host created. The exports of the wasip1
// build are thin wrappers around its methods, which the tests call with
// a byte slice for memory and a fake host.
type module struct {
	plugin  *Plugin
	info    placed // the info and capabilities, laid out by Register
	started bool   // between a successful register and deregister

	// The dynop_operator structs handed to register_operator: their
	// addresses are the operators' handles, mapped to indexes into the
	// info's operators.
	handles map[uint32]int

	instances map[uint32]*instance
	lastID    uint32 // the last instance handle handed out
}

// instance is an operator instance: its operator's handle and the
// operator.
type instance struct {
	op   uint32
	impl Operator
}

// mod is the module; host and mem are the host's imports and the
// module's memory, set by the platform's files.
var mod module

// placed is an image of structs and where its parts are, once it lies
// in the module's memory.
type placed struct {
	image      *abihost.Image
	info, caps uint32 // offsets in the image (caps 0: none)
	base       uint32 // where it lies; 0 until it is placed
}

// allocate returns size bytes of the module's memory aligned to align
// that stay allocated, or 0: the allocator of dynop_wasm_alloc in a
// module, set by tests elsewhere.
var allocate = func(size, align uint32) uint32 { return 0 }

// place copies im into the module's memory, at an address from
// allocate, with its pointers made absolute, and returns the address.
func place(im *abihost.Image) (uint32, error) {
	base := allocate(uint32(im.Len()), 8)
	if base == 0 {
		return 0, codedf(abi.ErrorNoMemory, "no memory for %d bytes of ABI structs", im.Len())
	}
	b, err := mem.view(base, uint64(im.Len()))
	if err != nil {
		return 0, err
	}
	copy(b, im.Place(uint64(base)))
	return base, nil
}

// infoAddr returns what dynop_wasm_info returns: the address of the
// plugin's dynop_plugin_info, and in the high 32 bits that of its
// capabilities (0: none); or 0, logging why, if Register was not called
// (the host then rejects the module, as it does a C module without
// get_info).
func (m *module) infoAddr() uint64 {
	if m.plugin == nil {
		host.log(int32(slog.LevelError), "dynop_wasm_info: no plugin: the program must call guest.Register from an init function")
		return 0
	}
	if m.info.base == 0 {
		base, err := place(m.info.image)
		if err != nil {
			host.log(int32(slog.LevelError), fmt.Sprintf("dynop_wasm_info: %v", err))
			return 0
		}
		m.info.base = base
	}
	var caps uint64
	if m.info.caps != 0 {
		caps = uint64(m.info.base + m.info.caps)
	}
	return caps<<32 | uint64(m.info.base+m.info.info)
}

// fail reports err to the host and returns its code. The message is the
// error's text alone: the host names the plugin, the operator, the call
// and the sample.
func fail(err error) abi.Result {
	host.setError(err.Error())
	return resultOf(err)
}

// notePanic, deferred by every export that runs plugin code, passes a
// panic's value to set_error and lets the panic go on: the module
// crashes rather than going on in a state nobody knows.
func notePanic() {
	if r := recover(); r != nil {
		host.setError(fmt.Sprintf("guest: panic: %v", r))
		panic(r)
	}
}

// register is dynop_wasm_register: it registers each operator of the
// info with the host (its dynop_operator's address is its handle), then
// runs Start.
func (m *module) register() abi.Result {
	defer notePanic()
	p := m.plugin
	switch {
	case p == nil:
		return fail(codedf(abi.ErrorState, "register: no plugin: the program must call guest.Register from an init function"))
	case m.started:
		return fail(codedf(abi.ErrorState, "register: plugin %q is registered already", p.Info.ID))
	}
	if err := p.check(); err != nil {
		return fail(err)
	}
	if m.handles == nil {
		// One dynop_operator per operator, for as long as the module
		// lives: their addresses are the handles.
		im := abihost.NewImage(4)
		at := make([]uint32, len(p.Info.Operators))
		for i, s := range p.Info.Operators {
			at[i] = im.EncodeOperator(s.Name, schema.CPU, 1)
		}
		base, err := place(im)
		if err != nil {
			return fail(err)
		}
		m.handles = make(map[uint32]int, len(at))
		for i, a := range at {
			m.handles[base+a] = i
		}
	}
	for handle, i := range m.sortedHandles() {
		if rc := host.registerOperator(handle); rc != abi.OK {
			return fail(hostError(fmt.Sprintf("register_operator %q", p.Info.Operators[i].Name), rc))
		}
	}
	if p.Start != nil {
		if err := p.Start(); err != nil {
			return fail(err)
		}
	}
	m.started = true
	return abi.OK
}

// deregister is dynop_wasm_deregister: it closes the instances the host
// left, then runs Stop.
func (m *module) deregister() abi.Result {
	defer notePanic()
	if !m.started {
		return fail(codedf(abi.ErrorState, "deregister: the plugin is not registered"))
	}
	m.started = false
	for _, id := range slices.Sorted(maps.Keys(m.instances)) {
		m.destroy(m.instances[id].op, id)
	}
	if p := m.plugin; p.Stop != nil {
		if err := p.Stop(); err != nil {
			return fail(err)
		}
	}
	return abi.OK
}

// operator returns the schema and factory of operator handle op.
func (m *module) operator(handle uint32) (*schema.Op, Factory, error) {
	if !m.started {
		return nil, nil, codedf(abi.ErrorState, "the plugin is not registered")
	}
	i, ok := m.handles[handle]
	if !ok {
		return nil, nil, codedf(abi.ErrorInvalidArgument, "no operator has handle %d", handle)
	}
	s := &m.plugin.Info.Operators[i]
	return s, m.plugin.Operators[s.Name], nil
}

// sortedHandles yields the operators' handles and indexes in the order
// of the info's operators.
func (m *module) sortedHandles() func(yield func(uint32, int) bool) {
	return func(yield func(uint32, int) bool) {
		hs := slices.SortedFunc(maps.Keys(m.handles), func(a, b uint32) int { return m.handles[a] - m.handles[b] })
		for _, h := range hs {
			if !yield(h, m.handles[h]) {
				return
			}
		}
	}
}

// create is dynop_wasm_op_create: it decodes the arguments, calls the
// factory and stores the instance's handle at instOut.
func (m *module) create(handle, args, argCount, instOut uint32) abi.Result {
	defer notePanic()
	s, factory, err := m.operator(handle)
	if err != nil {
		return fail(err)
	}
	out, err := mem.view(instOut, 4)
	if err != nil {
		return fail(codedf(abi.ErrorInvalidArgument, "*instance: %v", err))
	}
	a, err := decodeArgs(mem, args, argCount)
	if err != nil {
		return fail(codedf(abi.ErrorInvalidArgument, "%v", err))
	}
	le.PutUint32(out, 0) // no instance, unless one is made
	impl, err := factory(a)
	switch {
	case err != nil:
		return fail(err)
	case impl == nil:
		return fail(codedf(abi.ErrorGeneric, "the factory of %s returned no operator and no error", s.Name))
	}
	if m.instances == nil {
		m.instances = make(map[uint32]*instance)
	}
	id := m.lastID + 1
	for id == 0 || m.instances[id] != nil {
		id++
	}
	m.lastID = id
	m.instances[id] = &instance{op: handle, impl: impl}
	le.PutUint32(out, id)
	return abi.OK
}

// instance returns instance id of operator handle.
func (m *module) instance(call string, handle, id uint32) (*instance, error) {
	s, _, err := m.operator(handle)
	if err != nil {
		return nil, err
	}
	in := m.instances[id]
	if in == nil || in.op != handle {
		return nil, codedf(abi.ErrorInvalidArgument, "%s: no instance %d of operator %s", call, id, s.Name)
	}
	return in, nil
}

// call is dynop_wasm_op_setup or, if run, dynop_wasm_op_run: for each
// sample it decodes the sample's tensors and calls the operator's Setup,
// writing the outputs' dtype, ndim and shape, or its Run. On failure it
// stores the sample's index at failed.
func (m *module) call(run bool, handle, id, samples, inputs, nin, outputs, nout, failed uint32) abi.Result {
	defer notePanic()
	call := "setup"
	if run {
		call = "run"
	}
	in, err := m.instance(call, handle, id)
	if err != nil {
		return fail(err)
	}
	ins, outs := make([]Tensor, nin), make([]Tensor, nout)
	for j := range samples {
		if err := m.sample(run, in.impl, j, inputs, ins, outputs, outs); err != nil {
			if b, ferr := mem.view(failed, 4); ferr == nil {
				le.PutUint32(b, j)
			}
			return fail(err)
		}
	}
	return abi.OK
}

// sample sets up or runs sample j.
func (m *module) sample(run bool, impl Operator, j, inputs uint32, ins []Tensor, outputs uint32, outs []Tensor) error {
	if err := tensors(inputs, j, ins); err != nil {
		return codedf(abi.ErrorInvalidArgument, "input %v", err)
	}
	if run {
		if err := tensors(outputs, j, outs); err != nil {
			return codedf(abi.ErrorInvalidArgument, "output %v", err)
		}
		return impl.Run(outs, ins)
	}
	descs, err := impl.Setup(ins)
	if err != nil {
		return err
	}
	if len(descs) != len(outs) {
		return codedf(abi.ErrorGeneric, "Setup described %d output(s), the host asks for %d", len(descs), len(outs))
	}
	for i, d := range descs {
		off, err := at(outputs, uint64(j)*uint64(len(outs))+uint64(i), tensorSize)
		if err == nil {
			err = writeDesc(off, d)
		}
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
	}
	return nil
}

// tensors decodes sample j's tensors of the array at base into ts.
func tensors(base, j uint32, ts []Tensor) error {
	for i := range ts {
		off, err := at(base, uint64(j)*uint64(len(ts))+uint64(i), tensorSize)
		if err == nil {
			ts[i], err = decodeTensor(mem, off)
		}
		if err != nil {
			return fmt.Errorf("%d: %v", i, err)
		}
	}
	return nil
}

// writeDesc writes d's dtype, ndim and shape into the dynop_tensor at
// off, whose shape points to room for MaxNDim dimensions.
func writeDesc(off uint32, d Desc) error {
	if err := checkDesc(d); err != nil {
		return err
	}
	b, err := mem.view(off, tensorSize)
	if err != nil {
		return codedf(abi.ErrorInvalidArgument, "%v", err)
	}
	shape, err := mem.view(le.Uint32(b[20:]), 8*uint64(len(d.Shape)))
	if err != nil {
		return codedf(abi.ErrorInvalidArgument, "shape: %v", err)
	}
	le.PutUint32(b[12:], uint32(len(d.Shape)))
	b[16], b[17] = byte(d.DType.Code), d.DType.Bits
	le.PutUint16(b[18:], d.DType.Lanes)
	for k, x := range d.Shape {
		le.PutUint64(shape[8*k:], uint64(x))
	}
	return nil
}

// checkDesc checks an output description from Setup.
func checkDesc(d Desc) error {
	switch {
	case len(d.Shape) > MaxNDim:
		return codedf(abi.ErrorGeneric, "Setup gave shape %v: more than %d dimensions", d.Shape, MaxNDim)
	case slices.ContainsFunc(d.Shape, func(x int64) bool { return x < 0 }):
		return codedf(abi.ErrorGeneric, "Setup gave negative shape %v", d.Shape)
	case d.DType.Size() == 0:
		return codedf(abi.ErrorGeneric, "Setup gave dtype %v, which has no size", d.DType)
	}
	return nil
}

// destroy is dynop_wasm_op_destroy: it forgets the instance and closes
// it if it is an io.Closer.
func (m *module) destroy(handle, id uint32) {
	defer notePanic()
	in := m.instances[id]
	if in == nil || in.op != handle {
		return
	}
	delete(m.instances, id)
	if c, ok := in.impl.(io.Closer); ok {
		if err := c.Close(); err != nil {
			name := "?"
			if i, ok := m.handles[handle]; ok {
				name = m.plugin.Info.Operators[i].Name
			}
			host.log(int32(slog.LevelWarn), fmt.Sprintf("%s: close: %v", name, err))
		}
	}
}
