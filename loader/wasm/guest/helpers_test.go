package guest

import (
	"math"
	"testing"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// testMem is a wasm32 memory in a byte slice with a bump allocator, in
// which tests lay out what a host would.
type testMem struct {
	sliceMemory
	next uint32
}

func newTestMem(size int) *testMem {
	return &testMem{sliceMemory: make(sliceMemory, size), next: 64}
}

// use makes m the package's memory, and its allocator the module's, for
// the test.
func (m *testMem) use(t *testing.T) {
	old, oldAlloc := mem, allocate
	mem = m.sliceMemory
	allocate = func(size, _ uint32) uint32 { return m.alloc(int(size)) }
	t.Cleanup(func() { mem, allocate = old, oldAlloc })
}

func (m *testMem) alloc(n int) uint32 {
	p := (m.next + 7) &^ 7
	m.next = p + uint32(n)
	if int(m.next) > len(m.sliceMemory) {
		panic("testMem: full")
	}
	return p
}

func (m *testMem) put(b []byte) uint32 {
	p := m.alloc(len(b))
	copy(m.sliceMemory[p:], b)
	return p
}

func (m *testMem) cstr(s string) uint32 { return m.put(append([]byte(s), 0)) }

func (m *testMem) i64s(v ...int64) uint32 {
	p := m.alloc(8 * len(v))
	for i, x := range v {
		le.PutUint64(m.sliceMemory[p+uint32(8*i):], uint64(x))
	}
	return p
}

func (m *testMem) u32(p uint32) uint32 { return le.Uint32(m.sliceMemory[p:]) }

// tensorAt writes a dynop_tensor at p.
func (m *testMem) tensorAt(p, data uint32, dt tensor.DType, shape, strides uint32, ndim int, byteOffset uint64) {
	b := m.sliceMemory[p : p+tensorSize]
	clear(b)
	le.PutUint32(b[0:], data)
	le.PutUint32(b[4:], uint32(tensor.CPU))
	le.PutUint32(b[12:], uint32(ndim))
	b[16], b[17] = byte(dt.Code), dt.Bits
	le.PutUint16(b[18:], dt.Lanes)
	le.PutUint32(b[20:], shape)
	le.PutUint32(b[24:], strides)
	le.PutUint64(b[32:], byteOffset)
}

// tensor lays out a tensor of shape and strides (nil: strides 0) over
// data, and returns its offset.
func (m *testMem) tensor(data uint32, dt tensor.DType, shape, strides []int64, byteOffset uint64) uint32 {
	p := m.alloc(tensorSize)
	var sp, stp uint32
	if len(shape) > 0 {
		sp = m.i64s(shape...)
	}
	if strides != nil {
		stp = m.i64s(strides...)
	}
	m.tensorAt(p, data, dt, sp, stp, len(shape), byteOffset)
	return p
}

// arg is one dynop_arg to lay out: values are the C elements' bytes.
type arg struct {
	name  string
	typ   schema.Type
	given bool
	count uint32
	vals  []byte
}

func (m *testMem) args(as ...arg) uint32 {
	p := m.alloc(argSize * len(as))
	for i, a := range as {
		b := m.sliceMemory[p+uint32(argSize*i):]
		le.PutUint32(b[0:], m.cstr(a.name))
		le.PutUint32(b[4:], uint32(a.typ))
		if a.given {
			le.PutUint32(b[8:], 1)
		}
		le.PutUint32(b[12:], a.count)
		if a.vals != nil {
			le.PutUint32(b[16:], m.put(a.vals))
		}
	}
	return p
}

// Element encoders for arg values.
func encI64(v ...int64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = le.AppendUint64(b, uint64(x))
	}
	return b
}

func encF64(v ...float64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = le.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func encBool(v ...bool) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		n := uint32(0)
		if x {
			n = 1
		}
		b = le.AppendUint32(b, n)
	}
	return b
}

func encDType(v ...tensor.DType) []byte {
	var b []byte
	for _, d := range v {
		b = append(b, byte(d.Code), d.Bits)
		b = le.AppendUint16(b, d.Lanes)
	}
	return b
}

func (m *testMem) encStr(v ...string) []byte {
	var b []byte
	for _, s := range v {
		b = le.AppendUint32(b, m.cstr(s))
	}
	return b
}

// fakeHost records the calls of the module into the host.
type fakeHost struct {
	logs     []string
	errs     []string
	ops      []string // "name device" of each dynop_operator registered
	handles  []uint32 // their addresses
	opResult abi.Result
	last     string
}

func (h *fakeHost) log(level int32, msg string) { h.logs = append(h.logs, msg) }
func (h *fakeHost) setError(msg string)         { h.errs = append(h.errs, msg) }
func (h *fakeHost) lastError() string           { return h.last }
func (h *fakeHost) registerOperator(op uint32) abi.Result {
	o, err := abihost.DecodeOperator(abihost.Bytes{B: mem.(sliceMemory), Ptr: 4}, uint64(op))
	if err != nil {
		h.last = err.Error()
		return abi.ErrorInvalidArgument
	}
	h.ops = append(h.ops, o.Name+" "+string(o.Device))
	h.handles = append(h.handles, op)
	return h.opResult
}
func (h *fakeHost) acquire(string, iface.UID, iface.Version) (uint64, abi.Result) {
	h.last = "no such plugin"
	return 0, abi.ErrorNotFound
}
func (h *fakeHost) release(uint64) abi.Result { return abi.OK }

// lastErr returns the last message set_error got, or "".
func (h *fakeHost) lastErr() string {
	if len(h.errs) == 0 {
		return ""
	}
	return h.errs[len(h.errs)-1]
}

// useHost makes a fake host and a fresh module the package's for the
// test.
func useHost(t *testing.T) *fakeHost {
	h := &fakeHost{}
	oldHost, oldMod := host, mod
	host, mod = h, module{}
	t.Cleanup(func() { host, mod = oldHost, oldMod })
	newTestMem(1 << 16).use(t)
	return h
}

func mathFloat32bits(f float32) uint32     { return math.Float32bits(f) }
func mathFloat32frombits(b uint32) float32 { return math.Float32frombits(b) }
