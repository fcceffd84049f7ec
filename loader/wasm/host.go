package wasm

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/dynop/dynop/abi"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/abisession"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
)

// hostFunction is one import of module "dynop" (see dynop_wasm.h).
type hostFunction struct {
	name            string
	params, results []valType
	fn              func(in *instance, stack []uint64)
}

var i64 = []valType{valI64}

// hostFunctions are the imports the host provides. Each runs in the
// instance that calls it; a pointer outside the module's memory panics
// with an abiError, which fails the module's running call.
var hostFunctions = []hostFunction{
	{"log", i32s(3), nil, hostLog},
	{"set_error", i32s(2), nil, hostSetError},
	{"last_error", i32s(2), i32s(1), hostLastError},
	{"register_operator", i32s(1), i32s(1), hostRegisterOperator},
	{"select_variant", i32s(4), i32s(1), hostSelectVariant},
	{"add_interface", i32s(1), i32s(1), hostAddInterface},
	{"remove_interface", i32s(1), i32s(1), hostRemoveInterface},
	{"acquire", i32s(5), i32s(1), hostAcquire},
	{"release", i64, i32s(1), hostRelease},
}

// str reads a string the module passes as offset and length.
func (in *instance) str(what string, off, n uint64) string {
	return string(in.read(what, uint32(off), uint32(n)))
}

// logger returns the log of the plugin the instance belongs to.
func (in *instance) logger() *slog.Logger {
	if s := in.e.sess; s != nil {
		return s.h.Logger()
	}
	return in.e.cfg.log.With("plugin", in.e.name)
}

func hostLog(in *instance, stack []uint64) {
	level := slog.Level(int32(uint32(stack[0])))
	msg := in.str("log message", stack[1], stack[2])
	in.logger().Log(context.Background(), level, msg)
}

func hostSetError(in *instance, stack []uint64) {
	in.message = in.str("set_error message", stack[0], stack[1])
}

func hostLastError(in *instance, stack []uint64) {
	buf, n := uint32(stack[0]), uint32(stack[1])
	msg := ""
	if in.lastErr != nil {
		msg = in.lastErr.Error()
	}
	copy(in.read("last_error buffer", buf, min(n, uint32(len(msg)))), msg)
	stack[0] = uint64(uint32(len(msg)))
}

// done ends a host call that returns a dynop_result.
func (in *instance) done(stack []uint64, err error) {
	in.lastErr = err
	stack[0] = uint64(uint32(abi.ResultOf(err)))
}

// register is what a module's register did in one instance.
type register struct {
	ctx     context.Context
	replica bool // not the plugin's first instance: check, do not publish
	ops     []registered
	ifaces  []uint32
	refs    uint64 // fake references handed out in a replica
}

// registered is an operator backend a module registered.
type registered struct {
	name, variant string
	handle        uint32
	scratch       bool // DYNOP_OPERATOR_SCRATCH
}

func hostRegisterOperator(in *instance, stack []uint64) {
	o, err := abihost.DecodeOperator(linear{in.mem}, uint64(uint32(stack[0])))
	if err == nil {
		err = abisession.CheckOperatorVariants(o)
	}
	if err != nil {
		in.done(stack, err)
		return
	}
	r := registered{name: o.Name, handle: uint32(o.Addr), scratch: o.Scratch()}
	switch {
	case r.scratch && in.abiMinor < abiScratchMinor:
		err = fmt.Errorf("%w: register_operator %q asks for scratch, but the module's dynop_wasm.c (ABI %d.%d) does not pass it: rebuild the module with this dynop's abi/wasm/dynop_wasm.c", ErrABI, o.Name, abiMajor, in.abiMinor)
	case o.Device != schema.CPU:
		err = fmt.Errorf("%w: register_operator %q: device %q: WebAssembly plugins run on the cpu only", errdefs.ErrUnsupported, o.Name, o.Device)
	case o.Variants != nil:
		// The module runs the first variant that needs no CPU features
		// (dynop_wasm.c): CPU features mean nothing in wasm, and the
		// reference, the last, must need none.
		ref := o.Variants[len(o.Variants)-1]
		if ref.Needs != 0 {
			err = fmt.Errorf("%w: register_operator %q: no variant can run: the last, %q, needs CPU features %s, and WebAssembly plugins have none", errdefs.ErrUnsupported, o.Name, ref.Name, dispatch.Features(ref.Needs))
		}
		for _, v := range o.Variants {
			if v.Needs == 0 {
				r.variant = v.Name
				break
			}
		}
	}
	if err == nil {
		err = in.registerOperator(r)
	}
	in.done(stack, err)
}

// hostSelectVariant is dynop_host.select_variant: it checks the list as
// for a native plugin and chooses as for a CPU without features, which
// is what a module runs on.
func hostSelectVariant(in *instance, stack []uint64) {
	name := in.str("select_variant name", stack[0], stack[1])
	vs, err := abihost.DecodeVariants(linear{in.mem}, "select_variant "+name, uint64(uint32(stack[2])), uint32(stack[3]))
	var desc []dispatch.Variant
	if err == nil {
		desc, err = abisession.CheckVariants("select_variant "+name, vs)
	}
	if err == nil {
		var ch dispatch.Choice
		if ch, err = dispatch.Choose(desc, dispatch.CPU{}, nil); err != nil {
			err = fmt.Errorf("%w: select_variant %s: %w (WebAssembly plugins have no CPU features)", errdefs.ErrUnsupported, name, err)
		} else {
			in.lastErr = nil
			in.logger().Debug("variant chosen", "function", name, "variant", vs[ch.Index].Name)
			stack[0] = uint64(uint32(ch.Index))
			return
		}
	}
	in.lastErr = err
	stack[0] = uint64(math.MaxUint32) // -1
}

func (in *instance) registerOperator(r registered) error {
	reg, s := in.reg, in.e.sess
	if reg == nil || s == nil {
		return fmt.Errorf("%w: register_operator %q is allowed only during register", errdefs.ErrState, r.name)
	}
	if _, err := abisession.CheckOperator(&s.p.info, r.name, schema.CPU); err != nil {
		return err
	}
	for _, o := range reg.ops {
		if o.name == r.name {
			return fmt.Errorf("%w: register_operator %q: registered already", errdefs.ErrDuplicate, r.name)
		}
	}
	if reg.replica {
		if k := len(reg.ops); k >= len(s.ops) || s.ops[k].registered != r {
			return fmt.Errorf("%w: register_operator %q (handle %d, variant %q): this instance registers differently from the plugin's first (the operators, their order and handles must not depend on anything but the module)", ErrABI, r.name, r.handle, r.variant)
		}
	}
	reg.ops = append(reg.ops, r)
	return nil
}

func hostAddInterface(in *instance, stack []uint64) {
	in.done(stack, in.addInterface(uint32(stack[0])))
}

func (in *instance) addInterface(off uint32) error {
	reg, s := in.reg, in.e.sess
	if reg == nil || s == nil {
		return fmt.Errorf("%w: add_interface is allowed only during register", errdefs.ErrState)
	}
	hdr := abi.ParseHeader(in.read("add_interface table", off, abi.HeaderSize))
	in.read("add_interface table", off, max(hdr.Size, abi.HeaderSize))
	if reg.replica {
		k := len(reg.ifaces)
		if k >= len(s.tables) || s.tables[k].off != off {
			return fmt.Errorf("%w: add_interface {%s}: this instance adds interfaces differently from the plugin's first", ErrABI, hdr.Type)
		}
		reg.ifaces = append(reg.ifaces, off)
		return nil
	}
	desc, err := abisession.CheckInterface(&s.p.info, hdr)
	if err != nil {
		return err
	}
	t := &Table{s: s, off: off, hdr: hdr}
	if err := s.h.AddInterface(desc, t); err != nil {
		return err
	}
	s.tables = append(s.tables, t)
	reg.ifaces = append(reg.ifaces, off)
	return nil
}

func hostRemoveInterface(in *instance, stack []uint64) {
	uid := iface.UID(in.read("remove_interface uid", uint32(stack[0]), 16))
	s := in.e.sess
	if s == nil || in.reg != nil && in.reg.replica {
		in.done(stack, nil)
		return
	}
	in.done(stack, s.h.RemoveInterface(uid))
}

func hostAcquire(in *instance, stack []uint64) {
	id := in.str("acquire plugin_id", stack[0], stack[1])
	uid := iface.UID(in.read("acquire uid", uint32(stack[2]), 16))
	v := in.read("acquire min_version", uint32(stack[3]), 12)
	min := iface.Version{Major: le.Uint32(v), Minor: le.Uint32(v[4:]), Patch: le.Uint32(v[8:])}
	out := in.read("acquire ref", uint32(stack[4]), 8)
	s := in.e.sess
	switch {
	case s == nil || in.reg == nil:
		in.done(stack, fmt.Errorf("%w: acquire is allowed only during register", errdefs.ErrState))
	case in.reg.replica: // the first instance holds the real reference
		in.reg.refs++
		le.PutUint64(out, 1<<63|in.reg.refs)
		in.done(stack, nil)
	default:
		token, err := s.acquire(in.reg.ctx, id, uid, min)
		if err == nil {
			le.PutUint64(out, token)
		}
		in.done(stack, err)
	}
}

func hostRelease(in *instance, stack []uint64) {
	token := stack[0]
	s := in.e.sess
	if s == nil || token&(1<<63) != 0 {
		in.done(stack, nil)
		return
	}
	in.done(stack, s.release(token))
}

func (s *session) acquire(ctx context.Context, id string, uid iface.UID, min iface.Version) (uint64, error) {
	_, ref, err := s.h.Acquire(ctx, id, uid, min)
	if err != nil {
		return 0, err
	}
	return s.refs.Add(ref), nil
}

func (s *session) release(token uint64) error {
	return s.refs.Release(token, s.deregistering.Load())
}
