package native

/*
#include "loader.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/abi"
	"log/slog"
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/abisession"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
)

// session is the Go side of one start of a native plugin: what the host
// table's functions need when the plugin calls them, from any thread.
type session struct {
	p    *Plugin
	host plugin.Registrar
	who  *C.dynop_loader_ident // the library's, for reports of crashes in its code

	mu      sync.Mutex
	step    string                  // the entry point running: "register", "deregister" or ""
	stepCtx context.Context         // the context of the entry point running, or nil
	message string                  // set_error's message during the running entry point
	lastErr error                   // the last error a host function returned during it
	refs    abisession.Refs         // what the plugin acquired
	ops     map[string]*op.Operator // registered during register
	opOrder []string                // their names, in order
	gate    abisession.Gate         // calls into the plugin's code (operators, passes)
}

func newSession(p *Plugin, h plugin.Registrar) *session {
	return &session{p: p, host: h}
}

// enter begins a call into the plugin's code (an operator function, a
// pass): it fails if the plugin stopped, and otherwise holds off stop
// until leave (see abisession.Gate: calls may nest).
func (s *session) enter() error {
	if !s.gate.Enter() {
		return fmt.Errorf("native: plugin %q: %w: the plugin stopped; its code is gone", s.p.info.ID, dynop.ErrState)
	}
	return nil
}

// leave ends a call begun by a successful enter.
func (s *session) leave() { s.gate.Leave() }

// stop marks the session stopped and waits for calls in flight to
// return, so that no call runs the plugin's code once deregister (and
// dlclose) begins.
func (s *session) stop() { s.gate.Stop() }

// begin marks the start of a call into the plugin's entry point step:
// host functions it calls use ctx, and its messages are collected afresh.
func (s *session) begin(ctx context.Context, step string) {
	s.mu.Lock()
	s.step, s.stepCtx, s.message, s.lastErr = step, ctx, "", nil
	s.mu.Unlock()
}

// end marks the end of the entry point's call, returning its outcome as an
// error: nil for DYNOP_OK, or a *abi.ResultError.
func (s *session) end(step string, rc C.dynop_result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg, last := s.message, s.lastErr
	s.step, s.stepCtx, s.message, s.lastErr = "", nil, "", nil
	if abi.Result(rc) == abi.OK {
		return nil
	}
	return abisession.CallError("native", s.p.info.ID, step, abi.Result(rc), msg, -1, last)
}

// ctx returns the context for a host call made now: the running entry
// point's, so that the host sees an acquisition from register as part of
// the plugin's start, or else a background context.
func (s *session) ctx() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stepCtx != nil {
		return s.stepCtx
	}
	return context.Background()
}

// fail records err as the last host error of the running entry point,
// writes its message into the calling thread's error buffer, and returns
// its result code.
func (s *session) fail(err error, buf *C.char, n C.size_t) C.dynop_result {
	s.mu.Lock()
	if s.stepCtx != nil {
		s.lastErr = err
	}
	s.mu.Unlock()
	writeCString(buf, n, err.Error())
	return C.dynop_result(resultOf(err))
}

// writeCString copies msg into the C buffer buf of n bytes, truncating it
// and terminating it with NUL.
func writeCString(buf *C.char, n C.size_t, msg string) {
	if buf == nil || n == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	k := copy(b[:len(b)-1], msg)
	b[k] = 0
}

func sessionOf(h C.uintptr_t) *session {
	return cgo.Handle(h).Value().(*session)
}

func uidOf(u *C.dynop_uid) iface.UID {
	return iface.UID(unsafe.Slice((*byte)(unsafe.Pointer(u)), 16))
}

func versionOf(v C.dynop_version) iface.Version {
	return iface.Version{Major: uint32(v.major), Minor: uint32(v.minor), Patch: uint32(v.patch)}
}

// Every function below is called from C, through the plugin's frames: a
// panic must not unwind through them (C++ destructors would not run, and
// on a thread the plugin made it would kill the process). Each recovers
// and reports the panic as DYNOP_ERROR.

// catch turns a panic in host function what into an error result.
func catch(what string, rc *C.dynop_result, buf *C.char, n C.size_t) {
	if p := recover(); p != nil {
		writeCString(buf, n, fmt.Sprintf("native: host function %s panicked: %v", what, p))
		*rc = C.DYNOP_ERROR
	}
}

//export dynopGoAddInterface
func dynopGoAddInterface(h C.uintptr_t, tbl unsafe.Pointer, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("add_interface", &rc, buf, n)
	s := sessionOf(h)
	t := TableAt(tbl)
	desc, err := abisession.CheckInterface(&s.p.info, t.Header())
	var impl any
	if err == nil {
		if impl, err = bindTable(t); err != nil {
			err = fmt.Errorf("add_interface %s: %w", desc, err)
		}
	}
	if err != nil {
		err = fmt.Errorf("native: plugin %q: %w", s.p.info.ID, err)
	} else {
		err = s.host.AddInterface(desc, impl)
	}
	if err != nil {
		return s.fail(err, buf, n)
	}
	return C.DYNOP_OK
}

//export dynopGoRemoveInterface
func dynopGoRemoveInterface(h C.uintptr_t, uid *C.dynop_uid, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("remove_interface", &rc, buf, n)
	s := sessionOf(h)
	if err := s.host.RemoveInterface(uidOf(uid)); err != nil {
		return s.fail(err, buf, n)
	}
	return C.DYNOP_OK
}

//export dynopGoAcquire
func dynopGoAcquire(h C.uintptr_t, id *C.char, uid *C.dynop_uid, min *C.dynop_version, out *unsafe.Pointer, ref *C.dynop_ref, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("acquire", &rc, buf, n)
	s := sessionOf(h)
	pluginID, want, minVersion := goString(id), uidOf(uid), versionOf(*min)
	impl, r, err := s.host.Acquire(s.ctx(), pluginID, want, minVersion)
	if err != nil {
		return s.fail(err, buf, n)
	}
	ex, ok := impl.(Exported)
	if !ok {
		err = fmt.Errorf("native: plugin %q interface {%s}: %w: its implementation %T is a Go value not exported to C (it has no NativeTable method)",
			pluginID, want, dynop.ErrType, impl)
		return s.fail(errors.Join(err, r.Release()), buf, n)
	}
	// The table goes to C code that trusts it: check what the host's
	// bookkeeping cannot, the table itself.
	t := ex.NativeTable()
	if err := t.Check(iface.Desc{UID: want, Name: fmt.Sprintf("of plugin %q", pluginID), Version: minVersion}, abi.HeaderSize); err != nil {
		return s.fail(errors.Join(err, r.Release()), buf, n)
	}
	*out = t.Pointer()
	*ref = C.dynop_ref(s.refs.Add(r))
	return C.DYNOP_OK
}

// dynopGoRelease gives back a reference. During deregister it only
// forgets the reference: the host releases what a plugin holds after the
// plugin is unloaded, so what it depended on outlives its code even if its
// deregister releases first and touches the interface after.
//
//export dynopGoRelease
func dynopGoRelease(h C.uintptr_t, token C.dynop_ref, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("release", &rc, buf, n)
	s := sessionOf(h)
	s.mu.Lock()
	deferred := s.step == "deregister"
	s.mu.Unlock()
	if err := s.refs.Release(uint64(token), deferred); err != nil {
		return s.fail(fmt.Errorf("native: plugin %q: %w", s.p.info.ID, err), buf, n)
	}
	return C.DYNOP_OK
}

//export dynopGoLog
func dynopGoLog(h C.uintptr_t, level C.dynop_log_level, msg *C.char) {
	defer func() { recover() }() // a log line is not worth a crash
	s := sessionOf(h)
	s.host.Logger().Log(context.Background(), slog.Level(level), goString(msg), "native", true)
}

//export dynopGoSetError
func dynopGoSetError(h C.uintptr_t, msg *C.char) {
	defer func() { recover() }()
	s := sessionOf(h)
	m := goString(msg)
	s.mu.Lock()
	s.message = m
	s.mu.Unlock()
}

// dynopGoSelectVariant chooses among variants of a plugin's function, as
// the host chooses among an operator's, and logs the choice.
//
//export dynopGoSelectVariant
func dynopGoSelectVariant(h C.uintptr_t, name *C.char, variants *C.dynop_variant, count C.uint32_t, buf *C.char, n C.size_t) (index C.int32_t) {
	var rc C.dynop_result
	defer func() {
		if rc != C.DYNOP_OK {
			index = -1
		}
	}()
	defer catch("select_variant", &rc, buf, n)
	s := sessionOf(h)
	fn := goString(name)
	vs, err := abihost.DecodeVariants(cMemory{}, "select_variant "+fn, addrOf(unsafe.Pointer(variants)), uint32(count))
	var desc []dispatch.Variant
	if err == nil {
		desc, err = abisession.CheckVariants("select_variant "+fn, vs)
	}
	if err != nil {
		rc = s.fail(fmt.Errorf("native: plugin %q: %w", s.p.info.ID, err), buf, n)
		return -1
	}
	ch, err := dispatch.Choose(desc, s.host.CPU(), nil)
	if err != nil {
		rc = s.fail(fmt.Errorf("native: plugin %q: select_variant %s: %w: %w", s.p.info.ID, fn, dynop.ErrUnsupported, err), buf, n)
		return -1
	}
	chosen, _ := ch.Chosen()
	s.host.Logger().Debug("variant chosen", "function", fn, "variant", chosen.Name, "needs", chosen.Needs.String())
	return C.int32_t(ch.Index)
}
