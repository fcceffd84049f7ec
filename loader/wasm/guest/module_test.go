package guest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// testPlugin has two operators: test.Scale multiplies float32 tensors
// by its argument factor, test.Nothing is declared without devices.
func testPlugin(events *[]string) Plugin {
	return Plugin{
		Info: schema.Plugin{
			ID:          "test.plugin.scale",
			Version:     iface.V(1, 2, 3),
			Description: "Scales.",
			Operators: []schema.Op{
				{
					Name:    "test.Scale",
					Doc:     "Multiplies x by factor.",
					Inputs:  []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Float32}}},
					Outputs: []schema.Output{{Name: "y"}},
					Args:    []schema.Arg{{Name: "factor", Type: schema.Float, Default: 2.0, Min: schema.Bounds(-10), Max: schema.Bounds(10)}},
					Devices: []schema.Device{schema.CPU},
				},
				{Name: "test.Nothing", Doc: "Nothing."},
			},
		},
		Capabilities: []string{"clock"},
		Operators: map[string]Factory{
			"test.Scale": func(a Args) (Operator, error) {
				f := a.Float("factor")
				if f == 0 {
					return nil, fmt.Errorf("%w: factor 0", ErrUnsupported)
				}
				return &scale{f: float32(f), events: events}, nil
			},
			"test.Nothing": func(Args) (Operator, error) { return nil, nil },
		},
		Start: func() error { *events = append(*events, "start"); return nil },
		Stop:  func() error { *events = append(*events, "stop"); return errors.New("stopping hurts") },
	}
}

type scale struct {
	f      float32
	events *[]string
}

func (s *scale) Setup(in []Tensor) ([]Desc, error) {
	if slices.Contains(in[0].Shape, 0) {
		return nil, fmt.Errorf("%w: an empty sample", ErrNoMemory)
	}
	return []Desc{{DType: tensor.Float32, Shape: append(slices.Clone(in[0].Shape), 1)}}, nil
}

func (s *scale) Run(out, in []Tensor) error {
	x, y := in[0].Float32s(), out[0].Float32s()
	switch x[0] {
	case -1:
		return errors.New("a sample starting with -1")
	case -2:
		panic("boom")
	}
	for i, v := range x {
		y[i] = s.f * v
	}
	return nil
}

func (s *scale) Close() error {
	*s.events = append(*s.events, "close")
	return errors.New("closing hurts")
}

// TestInfoImage: dynop_wasm_info hands the host a dynop_plugin_info that
// the host's decoder (the one native plugins go through) reads back as
// the plugin's info, and the capabilities as a C string.
func TestInfoImage(t *testing.T) {
	useHost(t)
	var events []string
	p := testPlugin(&events)
	Register(p)
	r := mod.infoAddr()
	if r == 0 {
		t.Fatal("dynop_wasm_info returned 0")
	}
	m := abihost.Bytes{B: mem.(sliceMemory), Ptr: 4}
	info, _, err := abihost.DecodeInfo(m, uint64(uint32(r)))
	if err != nil {
		t.Fatal(err)
	}
	if caps, ok := m.CString(r>>32, 100); !ok || caps != "clock" {
		t.Errorf("capabilities %q (%v)", caps, ok)
	}
	if info.APIVersion != schema.APIVersion {
		t.Errorf("api_version %v, want the zero version made %v", info.APIVersion, schema.APIVersion)
	}
	want := p.Info
	want.APIVersion = schema.APIVersion
	want.Operators = slices.Clone(want.Operators)
	want.Operators[1].Devices = []schema.Device{schema.CPU}
	if d := want.Diff(info); d != "" {
		t.Errorf("the info changed on the way: %s", d)
	}
	if p.Info.Operators[1].Devices != nil || !p.Info.APIVersion.IsZero() {
		t.Error("Register changed the plugin's own info")
	}
	if again := mod.infoAddr(); again != r {
		t.Errorf("a second dynop_wasm_info returned %#x, the first %#x: the info is laid out once", again, r)
	}

	// No capabilities: 0 in the high half.
	useHost(t)
	Register(Plugin{Info: schema.Plugin{ID: "test.plugin.x", APIVersion: iface.V(0, 1, 0)}})
	if r := mod.infoAddr(); r>>32 != 0 || uint32(r) == 0 {
		t.Errorf("dynop_wasm_info without capabilities: %#x", r)
	}

	// Info that cannot be laid out makes Register panic.
	useHost(t)
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `argument "c"`) {
				t.Errorf("Register of a channel default: panic %v", r)
			}
		}()
		Register(Plugin{Info: schema.Plugin{ID: "test.plugin.bad", Operators: []schema.Op{{Name: "a.B", Args: []schema.Arg{{Name: "c", Default: make(chan int)}}}}}})
	}()
}

func TestRegisterTwicePanics(t *testing.T) {
	useHost(t)
	var events []string
	Register(testPlugin(&events))
	if mod.infoAddr() == 0 {
		t.Error("no info")
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("a second Register did not panic")
		}
	}()
	Register(testPlugin(&events))
}

func TestRegister(t *testing.T) {
	h := useHost(t)
	if mod.infoAddr() != 0 || len(h.logs) != 1 || !strings.Contains(h.logs[0], "guest.Register") {
		t.Errorf("info without a plugin: %#x, logs %q", mod.infoAddr(), h.logs)
	}
	if rc := mod.register(); rc != abi.ErrorState || !strings.Contains(h.lastErr(), "guest.Register") {
		t.Errorf("register without a plugin: %v %q", rc, h.lastErr())
	}
	var events []string
	Register(testPlugin(&events))
	if rc := mod.register(); rc != abi.OK {
		t.Fatalf("register: %v %q", rc, h.lastErr())
	}
	if want := []string{"test.Scale cpu", "test.Nothing cpu"}; !slices.Equal(h.ops, want) {
		t.Errorf("register_operator calls %q, want %q", h.ops, want)
	}
	if !slices.Equal(events, []string{"start"}) {
		t.Errorf("events %q", events)
	}
	if rc := mod.register(); rc != abi.ErrorState {
		t.Errorf("register twice: %v", rc)
	}
	if rc := mod.deregister(); rc != abi.ErrorInvalidArgument || h.lastErr() != "stopping hurts" {
		t.Errorf("deregister: %v %q", rc, h.lastErr())
	}
	if rc := mod.deregister(); rc != abi.ErrorState {
		t.Errorf("deregister twice: %v", rc)
	}
}

func TestRegisterFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Plugin, *fakeHost)
		rc     abi.Result
		msg    string
	}{
		{"no factory", func(p *Plugin, _ *fakeHost) { delete(p.Operators, "test.Nothing") },
			abi.ErrorInvalidArgument, `plugin "test.plugin.scale": operator "test.Nothing" has no factory in Plugin.Operators`},
		{"factory without operator", func(p *Plugin, _ *fakeHost) { p.Operators["test.Extra"] = p.Operators["test.Nothing"] },
			abi.ErrorInvalidArgument, `factory for "test.Extra", which the info does not declare`},
		{"gpu", func(p *Plugin, _ *fakeHost) { p.Info.Operators[0].Devices = []schema.Device{schema.CPU, schema.GPU} },
			abi.ErrorUnsupported, `operator "test.Scale" lists devices [cpu gpu]`},
		{"interfaces", func(p *Plugin, _ *fakeHost) {
			p.Info.Interfaces = []iface.Desc{{UID: iface.MustParseUID("6D79A0C1-3B5E-4C1F-8E02-517AD4902B00"), Name: "a.B", Version: iface.V(1, 0, 0)}}
		}, abi.ErrorUnsupported, "cannot provide interfaces"},
		{"host refuses", func(_ *Plugin, h *fakeHost) { h.opResult, h.last = abi.ErrorDuplicate, "registered already" },
			abi.ErrorDuplicate, `register_operator "test.Scale": registered already`},
		{"start fails", func(p *Plugin, _ *fakeHost) {
			p.Start = func() error { return fmt.Errorf("%w: no clock", ErrUnsupported) }
		}, abi.ErrorUnsupported, "unsupported: no clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := useHost(t)
			var events []string
			p := testPlugin(&events)
			tc.change(&p, h)
			Register(p)
			if rc := mod.register(); rc != tc.rc || !strings.Contains(h.lastErr(), tc.msg) {
				t.Errorf("register: %v %q; want %v %q", rc, h.lastErr(), tc.rc, tc.msg)
			}
			if mod.started {
				t.Error("started after a failed register")
			}
		})
	}
}

// start registers the test plugin with a fake host and memory.
func start(t *testing.T) (*fakeHost, *testMem, *[]string) {
	h := useHost(t)
	m := newTestMem(1 << 16)
	m.use(t)
	events := new([]string)
	Register(testPlugin(events))
	if rc := mod.register(); rc != abi.OK {
		t.Fatalf("register: %v %q", rc, h.lastErr())
	}
	return h, m, events
}

func TestOperatorLifecycle(t *testing.T) {
	h, m, events := start(t)
	op1, op2 := h.handles[0], h.handles[1]
	instOut := m.alloc(4)
	args := m.args(arg{"factor", schema.Float, true, 1, encF64(3)})
	if rc := mod.create(op1, args, 1, instOut); rc != abi.OK {
		t.Fatalf("create: %v %q", rc, h.lastErr())
	}
	inst := m.u32(instOut)
	if inst == 0 {
		t.Fatal("instance handle 0")
	}

	// Two samples of one input and one output: [2 3] and [4].
	inputs := m.alloc(2 * tensorSize)
	outputs := m.alloc(2 * tensorSize)
	m.tensorAt(inputs, 0, tensor.Float32, m.i64s(2, 3), m.i64s(3, 1), 2, 0)
	m.tensorAt(inputs+tensorSize, 0, tensor.Float32, m.i64s(4), m.i64s(1), 1, 0)
	shapes := [2]uint32{m.alloc(8 * MaxNDim), m.alloc(8 * MaxNDim)}
	for j, sp := range shapes {
		m.tensorAt(outputs+uint32(j)*tensorSize, 0, tensor.DType{}, sp, 0, 0, 0)
	}
	failed := m.alloc(4)
	le.PutUint32(m.sliceMemory[failed:], 99)
	if rc := mod.call(false, op1, inst, 2, inputs, 1, outputs, 1, failed); rc != abi.OK {
		t.Fatalf("setup: %v %q", rc, h.lastErr())
	}
	for j, want := range [][]int64{{2, 3, 1}, {4, 1}} {
		out, err := decodeTensor(m.sliceMemory, outputs+uint32(j)*tensorSize)
		if err != nil || out.DType != tensor.Float32 || !slices.Equal(out.Shape, want) {
			t.Errorf("sample %d: output %v %v (%v), want float32 %v", j, out.DType, out.Shape, err, want)
		}
	}
	if m.u32(failed) != 99 {
		t.Error("a successful setup wrote *failed")
	}

	// Run: the inputs with data, the outputs allocated as set up.
	fill := func(p uint32, vals ...float32) uint32 {
		q := m.alloc(4 * len(vals))
		for i, v := range vals {
			le.PutUint32(m.sliceMemory[q+uint32(4*i):], mathFloat32bits(v))
		}
		le.PutUint32(m.sliceMemory[p:], q)
		return q
	}
	fill(inputs, 1, 2, 3, 4, 5, 6)
	fill(inputs+tensorSize, -3, 0, 0.5, 7)
	y0 := fill(outputs, make([]float32, 6)...)
	y1 := fill(outputs+tensorSize, make([]float32, 4)...)
	le.PutUint32(m.sliceMemory[outputs+24:], m.i64s(3, 1, 1))
	le.PutUint32(m.sliceMemory[outputs+tensorSize+24:], m.i64s(1, 1))
	if rc := mod.call(true, op1, inst, 2, inputs, 1, outputs, 1, failed); rc != abi.OK {
		t.Fatalf("run: %v %q", rc, h.lastErr())
	}
	got := func(q uint32, n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = mathFloat32frombits(le.Uint32(m.sliceMemory[q+uint32(4*i):]))
		}
		return out
	}
	if g := got(y0, 6); !slices.Equal(g, []float32{3, 6, 9, 12, 15, 18}) {
		t.Errorf("sample 0: %v", g)
	}
	if g := got(y1, 4); !slices.Equal(g, []float32{-9, 0, 1.5, 21}) {
		t.Errorf("sample 1: %v", g)
	}

	// A failing sample: its index goes to *failed, the error to set_error.
	fill(inputs+tensorSize, -1, 0, 0, 0)
	if rc := mod.call(true, op1, inst, 2, inputs, 1, outputs, 1, failed); rc != abi.ErrorInvalidArgument ||
		m.u32(failed) != 1 || h.lastErr() != "a sample starting with -1" {
		t.Errorf("failing run: %v, failed %d, %q", rc, m.u32(failed), h.lastErr())
	}
	// An error wrapping a sentinel returns its code.
	m.tensorAt(inputs, 0, tensor.Float32, m.i64s(2, 0), 0, 2, 0)
	if rc := mod.call(false, op1, inst, 2, inputs, 1, outputs, 1, failed); rc != abi.ErrorNoMemory ||
		m.u32(failed) != 0 || h.lastErr() != "out of memory: an empty sample" {
		t.Errorf("failing setup: %v, failed %d, %q", rc, m.u32(failed), h.lastErr())
	}
	// Wrong handles.
	if rc := mod.call(true, op2, inst, 1, inputs, 1, outputs, 1, failed); rc != abi.ErrorInvalidArgument ||
		!strings.Contains(h.lastErr(), "run: no instance 1 of operator test.Nothing") {
		t.Errorf("run of another operator's instance: %v %q", rc, h.lastErr())
	}
	if rc := mod.call(true, 3, inst, 1, inputs, 1, outputs, 1, failed); rc != abi.ErrorInvalidArgument ||
		!strings.Contains(h.lastErr(), "no operator has handle 3") {
		t.Errorf("run of operator 3: %v %q", rc, h.lastErr())
	}

	// destroy closes; a close error is logged.
	mod.destroy(op1, inst)
	if !slices.Equal(*events, []string{"start", "close"}) || !slices.Equal(h.logs, []string{"test.Scale: close: closing hurts"}) {
		t.Errorf("destroy: events %q, logs %q", *events, h.logs)
	}
	mod.destroy(op1, inst) // gone: nothing happens
	if len(*events) != 2 {
		t.Errorf("destroy twice: events %q", *events)
	}

	// deregister closes what is left, then stops.
	if rc := mod.create(op1, args, 1, instOut); rc != abi.OK {
		t.Fatalf("create: %v %q", rc, h.lastErr())
	}
	if m.u32(instOut) == inst {
		t.Error("a handle used twice")
	}
	mod.deregister()
	if !slices.Equal(*events, []string{"start", "close", "close", "stop"}) {
		t.Errorf("deregister: events %q", *events)
	}
}

func TestCreateFails(t *testing.T) {
	h, m, _ := start(t)
	op1, op2 := h.handles[0], h.handles[1]
	instOut := m.alloc(4)
	for _, tc := range []struct {
		name       string
		op, args   uint32
		count, out uint32
		rc         abi.Result
		msg        string
	}{
		{"factory error", op1, m.args(arg{"factor", schema.Float, true, 1, encF64(0)}), 1, instOut,
			abi.ErrorUnsupported, "unsupported: factor 0"},
		{"nil operator", op2, 0, 0, instOut, abi.ErrorGeneric, "the factory of test.Nothing returned no operator and no error"},
		{"bad args", op1, m.args(arg{"factor", schema.Float, true, 3, encF64(1, 2, 3)}), 1, instOut,
			abi.ErrorInvalidArgument, `argument "factor" (float): 3 values for a scalar`},
		{"NULL *instance", op1, 0, 0, 0, abi.ErrorInvalidArgument, "*instance: NULL pointer"},
		{"no operator 0", 0, 0, 0, instOut, abi.ErrorInvalidArgument, "no operator has handle 0"},
	} {
		le.PutUint32(m.sliceMemory[instOut:], 77)
		if rc := mod.create(tc.op, tc.args, tc.count, tc.out); rc != tc.rc || !strings.Contains(h.lastErr(), tc.msg) {
			t.Errorf("%s: %v %q; want %v %q", tc.name, rc, h.lastErr(), tc.rc, tc.msg)
		}
		if tc.name == "factory error" && m.u32(instOut) != 0 {
			t.Errorf("%s: *instance is %d, want 0", tc.name, m.u32(instOut))
		}
	}
}

func TestPanicCrashes(t *testing.T) {
	h, m, _ := start(t)
	op1 := h.handles[0]
	instOut := m.alloc(4)
	if rc := mod.create(op1, m.args(arg{"factor", schema.Float, false, 1, encF64(2)}), 1, instOut); rc != abi.OK {
		t.Fatal(rc)
	}
	inputs, outputs := m.alloc(tensorSize), m.alloc(tensorSize)
	x := m.alloc(4)
	le.PutUint32(m.sliceMemory[x:], mathFloat32bits(-2))
	m.tensorAt(inputs, x, tensor.Float32, m.i64s(1), m.i64s(1), 1, 0)
	m.tensorAt(outputs, m.alloc(4), tensor.Float32, m.i64s(1), m.i64s(1), 1, 0)
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("panic %v, want boom", r)
		}
		if h.lastErr() != "guest: panic: boom" {
			t.Errorf("set_error got %q", h.lastErr())
		}
	}()
	mod.call(true, op1, m.u32(instOut), 1, inputs, 1, outputs, 1, m.alloc(4))
	t.Error("the panic was recovered")
}

func TestResultOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want abi.Result
	}{
		{nil, abi.OK},
		{errors.New("x"), abi.ErrorInvalidArgument},
		{fmt.Errorf("a: %w", ErrUnsupported), abi.ErrorUnsupported},
		{fmt.Errorf("a: %w", ErrFailed), abi.ErrorGeneric},
		{&Error{Code: abi.ErrorVersion, Err: errors.New("too old")}, abi.ErrorVersion},
		{&Error{Err: errors.New("no code")}, abi.ErrorGeneric},
		{fmt.Errorf("a: %w", ErrNotFound), abi.ErrorNotFound},
		{fmt.Errorf("a: %w", ErrState), abi.ErrorState},
		{fmt.Errorf("a: %w", errdefs.ErrCycle), abi.ErrorCycle},
	} {
		if got := resultOf(tc.err); got != tc.want {
			t.Errorf("resultOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if (&Error{Code: abi.ErrorNoMemory}).Error() != "DYNOP_ERROR_NO_MEMORY" {
		t.Error("an Error without Err")
	}
}

func TestAcquireError(t *testing.T) {
	useHost(t)
	_, err := Acquire("a.plugin.b", iface.UID{}, iface.V(1, 0, 0))
	var e *Error
	if !errors.As(err, &e) || e.Code != abi.ErrorNotFound || err.Error() != "acquire: no such plugin" {
		t.Errorf("Acquire: %v", err)
	}
	// The host's NOT_FOUND is the host's sentinel, here as in the host.
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, errdefs.ErrNotFound) || errors.Is(err, ErrState) {
		t.Errorf("Acquire: %v: errors.Is does not match ErrNotFound alone", err)
	}
}
