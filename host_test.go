package dynop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

func TestOpenStartsNothing(t *testing.T) {
	ev := &events{}
	a, b := newFake(ev, "a", "b"), newFake(ev, "b")
	h := open(t, a, b)
	defer h.Close(context.Background())
	list := h.Plugins()
	if len(list) != 2 || list[0].Info.ID != "test.plugin.a" || list[1].Info.ID != "test.plugin.b" {
		t.Fatalf("Plugins = %+v", list)
	}
	for _, st := range list {
		if st.State != dynop.StateAvailable || st.Starts != 0 || st.Info.APIVersion != schema.APIVersion {
			t.Errorf("%s: %+v", st.Info.ID, st)
		}
	}
	wantEvents(t, ev)
}

func TestAcquireStartsDependenciesAndReleaseStopsDependentsFirst(t *testing.T) {
	ev := &events{}
	a, b, c := newFake(ev, "a", "b"), newFake(ev, "b", "c"), newFake(ev, "c")
	h := open(t, a, b, c)
	defer h.Close(context.Background())

	ca, ref := acquire(t, h, "a")
	if ca.Name() != "a" {
		t.Errorf("acquired %q, want a's counter", ca.Name())
	}
	wantEvents(t, ev, "register a", "register b", "register c", "started c", "started b", "started a")
	wantState(t, h, "a", dynop.StateStarted, 1)
	wantState(t, h, "b", dynop.StateStarted, 1) // held by a
	wantState(t, h, "c", dynop.StateStarted, 1) // held by b

	// A second reference to a started plugin starts nothing.
	_, ref2 := acquire(t, h, "a")
	wantState(t, h, "a", dynop.StateStarted, 2)
	release(t, ref2)
	wantEvents(t, ev)

	release(t, ref)
	wantEvents(t, ev, "deregister a", "unload a", "deregister b", "unload b", "deregister c", "unload c")
	for _, id := range []string{"a", "b", "c"} {
		wantState(t, h, id, dynop.StateAvailable, 0)
	}

	// Acquiring again restarts them.
	_, ref = acquire(t, h, "a")
	release(t, ref)
	for _, f := range []*fake{a, b, c} {
		if f.registers.Load() != 2 || f.deregisters.Load() != 2 || f.unloads.Load() != 2 {
			t.Errorf("%s: %d registers, %d deregisters, %d unloads; want 2 each", f.id, f.registers.Load(), f.deregisters.Load(), f.unloads.Load())
		}
	}
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSharedDependencyStopsWithItsLastDependent(t *testing.T) {
	ev := &events{}
	h := open(t, newFake(ev, "a", "c"), newFake(ev, "b", "c"), newFake(ev, "c"))
	defer h.Close(context.Background())
	_, ra := acquire(t, h, "a")
	_, rb := acquire(t, h, "b")
	wantState(t, h, "c", dynop.StateStarted, 2)
	ev.take()
	release(t, ra)
	wantEvents(t, ev, "deregister a", "unload a")
	wantState(t, h, "c", dynop.StateStarted, 1)
	release(t, rb)
	wantEvents(t, ev, "deregister b", "unload b", "deregister c", "unload c")
}

func TestAcquireErrors(t *testing.T) {
	ctx := context.Background()
	f := newFake(nil, "text")
	h := open(t, f)
	defer h.Close(ctx)

	_, _, err := h.Acquire(ctx, "test.plugin.txet", counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrNotFound, `plugin "test.plugin.txet"`, `did you mean "test.plugin.text"`)
	_, _, err = h.Acquire(ctx, "acme.plugin.nothing", counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrNotFound, `plugin "acme.plugin.nothing"`)
	if strings.Contains(err.Error(), "did you mean") {
		t.Errorf("suggestion for a name close to nothing: %v", err)
	}

	other := iface.MustParseUID("DEADBEEF-0000-4000-8000-000000000001")
	_, _, err = h.Acquire(ctx, f.id, other, iface.V(1, 0, 0))
	wantErr(t, err, dynop.ErrNotFound, `plugin "test.plugin.text"`, "{DEADBEEF-0000-4000-8000-000000000001}",
		"it provides test.Counter v1.2.0 {0F5E6D7C-8B9A-4A3B-9C2D-1E0F2A3B4C5D}")

	_, _, err = h.Acquire(ctx, f.id, counterDef.UID, iface.V(1, 3, 0))
	wantErr(t, err, dynop.ErrVersion, `plugin "test.plugin.text"`, `interface "test.Counter"`, "requested 1.3.0", "provided 1.2.0")
	_, _, err = h.Acquire(ctx, f.id, counterDef.UID, iface.V(2, 0, 0))
	wantErr(t, err, dynop.ErrVersion, "major versions differ (1 vs 2)")

	// None of that started the plugin: its Info answered everything.
	if n := f.registers.Load(); n != 0 {
		t.Errorf("failed acquisitions ran Start %d times", n)
	}

	// An older minimum than provided is fine.
	_, ref, err := h.Acquire(ctx, f.id, counterDef.UID, iface.V(1, 0, 0))
	if err != nil {
		t.Fatalf("Acquire with an older minimum: %v", err)
	}
	release(t, ref)

	// A typed request with a Go type the implementation is not.
	wrongType := iface.Def[interface{ Nope() }](counterDef)
	_, _, err = dynop.Acquire(ctx, h, f.id, wrongType)
	wantErr(t, err, dynop.ErrType, "test.Counter", "*dynop_test.counter")
	wantState(t, h, "text", dynop.StateAvailable, 0) // the reference was given back
}

func TestUnusablePlugins(t *testing.T) {
	ctx := context.Background()
	badID := &infoPlugin{info: schema.Plugin{ID: "Bad-ID", Interfaces: []iface.Desc{counterDef.Desc}}}
	newer := &infoPlugin{info: schema.Plugin{ID: "test.plugin.future", APIVersion: iface.V(schema.APIVersion.Major, schema.APIVersion.Minor+1, 0),
		Interfaces: []iface.Desc{counterDef.Desc}}}
	h := open(t, badID, newer, newFake(nil, "fine"))
	defer h.Close(ctx)

	_, _, err := h.Acquire(ctx, "Bad-ID", counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrInvalid, `acquire plugin "Bad-ID" interface {0F5E6D7C-8B9A-4A3B-9C2D-1E0F2A3B4C5D}: plugin is broken`, `plugin id "Bad-ID" has 1 part(s)`)
	_, _, err = h.Acquire(ctx, "test.plugin.future", counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrVersion, `plugin "test.plugin.future" was built for a plugin API this host does not implement`, "plugin is unsupported")
	if !errors.Is(err, dynop.ErrUnsupported) {
		t.Errorf("error %v does not wrap ErrUnsupported", err)
	}
	st, _ := h.Plugin("test.plugin.future")
	if st.State != dynop.StateUnsupported || st.Err == nil {
		t.Errorf("status = %+v, want unsupported with a reason", st)
	}
	if st, _ := h.Plugin("Bad-ID"); st.State != dynop.StateBroken {
		t.Errorf("a plugin with a bad ID is %v, want broken", st.State)
	}
	if badID.registers != 0 || newer.registers != 0 {
		t.Error("an unusable plugin was started")
	}
	_, ref := acquire(t, h, "fine") // the others do not take the host down
	release(t, ref)
}

// TestPluginNotFound: the status of an unknown ID cannot be taken for a
// plugin's: its state is "not found", not "available", and it carries the
// error, with a suggestion for a near miss.
func TestPluginNotFound(t *testing.T) {
	ctx := context.Background()
	h := open(t, newFake(nil, "fine"))
	defer h.Close(ctx)
	for _, c := range []struct{ id, want string }{
		{"test.plugin.fien", `dynop: plugin "test.plugin.fien": not found (did you mean "test.plugin.fine"?)`},
		{"acme.plugin.nothing", `dynop: plugin "acme.plugin.nothing": not found`},
	} {
		st, err := h.Plugin(c.id)
		wantErr(t, err, dynop.ErrNotFound, c.want)
		if st.State != dynop.StateNotFound || st.State.String() != "not found" || st.State.Usable() {
			t.Errorf("%s: state %v (usable %v), want not found", c.id, st.State, st.State.Usable())
		}
		if st.Err != err || st.Info.ID != c.id || st.Refs != 0 || st.Path != "" {
			t.Errorf("%s: status %+v, want the error and the ID", c.id, st)
		}
	}
	if st, err := h.Plugin("test.plugin.fine"); err != nil || st.State != dynop.StateAvailable {
		t.Errorf("a known plugin: %v, %v", st.State, err)
	}
}

type panickyInfo struct{ infoPlugin }

func (*panickyInfo) Info() schema.Plugin { panic("Info exploded") }

func TestPanickingInfoMakesPluginUnusable(t *testing.T) {
	h := open(t, &panickyInfo{}, newFake(nil, "fine"))
	defer h.Close(context.Background())
	st, err := h.Plugin("*dynop_test.panickyInfo")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != dynop.StateBroken {
		t.Errorf("state %v, want broken", st.State)
	}
	wantErr(t, st.Err, dynop.ErrPanic, "Info exploded")
	_, ref := acquire(t, h, "fine")
	release(t, ref)
}

// infoPlugin is a plugin with fixed Info that adds nothing.
type infoPlugin struct {
	info      schema.Plugin
	registers int
}

func (p *infoPlugin) Info() schema.Plugin                           { return p.info }
func (p *infoPlugin) Start(context.Context, plugin.Registrar) error { p.registers++; return nil }

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{newFake(nil, "a"), nil}})
	wantErr(t, err, nil, "Options.Plugins[1] is nil")
	_, err = dynop.Open(ctx, dynop.Options{NoRegistered: true, Plugins: []plugin.Plugin{newFake(nil, "a"), newFake(nil, "a")}})
	wantErr(t, err, dynop.ErrDuplicate, `"test.plugin.a"`)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = dynop.Open(cancelled, dynop.Options{})
	wantErr(t, err, context.Canceled)
}

func TestRegisterErrorLeavesPluginNotStarted(t *testing.T) {
	ctx := context.Background()
	ev := &events{}
	errBoom := errors.New("boom")
	dep := newFake(ev, "dep")
	bad := newFake(ev, "bad", "dep")
	fail := true
	var cancelled bool
	bad.register = func(ctx context.Context, h plugin.Registrar) error {
		if _, _, err := plugin.Acquire(ctx, h, dep.id, counterDef); err != nil {
			return err
		}
		if err := counterDef.Provide(h, &counter{name: "bad"}); err != nil {
			return err
		}
		if _, err := h.OnUnload(dep.id, func(string) { cancelled = true }); err != nil {
			return err
		}
		if fail {
			return errBoom
		}
		return nil
	}
	h := open(t, bad, dep)
	defer h.Close(ctx)

	_, _, err := dynop.Acquire(ctx, h, bad.id, counterDef)
	wantErr(t, err, errBoom, `plugin "test.plugin.bad"`, "register", "boom")
	wantState(t, h, "bad", dynop.StateAvailable, 0)
	wantState(t, h, "dep", dynop.StateAvailable, 0) // what Start acquired was released
	wantEvents(t, ev, "register bad", "register dep", "started dep", "deregister dep", "unload dep")
	if cancelled {
		t.Error("the failed plugin's clear-callback ran after its start failed")
	}
	if bad.deregisters.Load() != 0 || bad.starteds.Load() != 0 {
		t.Error("a plugin whose Start failed got Started or Stop")
	}
	st, _ := h.Plugin(bad.id)
	if st.Starts != 0 || !errors.Is(st.Err, errBoom) {
		t.Errorf("status after failed start = %+v", st)
	}

	// The failure is not sticky: the next request tries again.
	fail = false
	c, ref := acquire(t, h, "bad")
	if c.Name() != "bad" {
		t.Errorf("got %q", c.Name())
	}
	release(t, ref)
	if st, _ := h.Plugin(bad.id); st.Err != nil || st.Starts != 1 || st.Stops != 1 {
		t.Errorf("status after success = %+v", st)
	}
}

func TestRegisterPanicIsRecovered(t *testing.T) {
	ctx := context.Background()
	p := newFake(nil, "panicky")
	p.register = func(ctx context.Context, h plugin.Registrar) error {
		_ = counterDef.Provide(h, &counter{})
		panic("nil map write, say")
	}
	h := open(t, p, newFake(nil, "fine"))
	defer h.Close(ctx)
	_, _, err := dynop.Acquire(ctx, h, p.id, counterDef)
	wantErr(t, err, dynop.ErrPanic, `plugin "test.plugin.panicky"`, "Start", "nil map write, say")
	wantState(t, h, "panicky", dynop.StateAvailable, 0)
	_, ref := acquire(t, h, "fine")
	release(t, ref)
}

func TestPanicsInStopHooksAreErrors(t *testing.T) {
	p := newFake(nil, "p")
	p.onStop = func() { panic("deregister exploded") }
	h := open(t, p)
	defer h.Close(context.Background())
	_, ref := acquire(t, h, "p")
	err := ref.Release()
	wantErr(t, err, dynop.ErrPanic, `plugin "test.plugin.p"`, "Stop", "deregister exploded")
	wantState(t, h, "p", dynop.StateAvailable, 0) // released and stopped all the same
	if p.unloads.Load() != 1 {
		t.Error("Unload not called after Stop panicked")
	}
}

func TestDeclaredInterfaceMissingFailsStart(t *testing.T) {
	p := newFake(nil, "lazy")
	p.register = func(context.Context, plugin.Registrar) error { return nil }
	h := open(t, p)
	defer h.Close(context.Background())
	_, _, err := dynop.Acquire(context.Background(), h, p.id, counterDef)
	wantErr(t, err, dynop.ErrNotFound, `plugin "test.plugin.lazy"`, "Info declares interface(s) that Start did not add", "test.Counter v1.2.0")
	if p.deregisters.Load() != 1 || p.unloads.Load() != 1 {
		t.Errorf("Start succeeded, so the plugin must be deregistered: %d deregisters, %d unloads", p.deregisters.Load(), p.unloads.Load())
	}
	wantState(t, h, "lazy", dynop.StateAvailable, 0)
}

func TestAddInterfaceRules(t *testing.T) {
	undeclared := iface.Desc{UID: iface.MustParseUID("ABCDEF01-2345-4678-9ABC-DEF012345678"), Name: "test.Other", Version: iface.V(1, 0, 0)}
	var errs []error
	p := newFake(nil, "strict")
	p.register = func(ctx context.Context, h plugin.Registrar) error {
		errs = append(errs,
			h.AddInterface(undeclared, &counter{}),
			h.AddInterface(iface.Desc{UID: counterDef.UID, Name: counterDef.Name, Version: iface.V(1, 1, 0)}, &counter{}),
			h.AddInterface(iface.Desc{UID: counterDef.UID, Name: "test.Renamed", Version: counterDef.Version}, &counter{}),
			h.AddInterface(counterDef.Desc, nil),
		)
		if err := counterDef.Provide(h, &counter{name: "strict"}); err != nil {
			return err
		}
		errs = append(errs, counterDef.Provide(h, &counter{}))
		return nil
	}
	h := open(t, p)
	defer h.Close(context.Background())
	_, ref := acquire(t, h, "strict")
	wantErr(t, errs[0], dynop.ErrInvalid, "test.Other", "its Info does not declare it")
	wantErr(t, errs[1], dynop.ErrVersion, "its Info declares version 1.2.0")
	wantErr(t, errs[2], dynop.ErrInvalid, `declares this UID as "test.Counter"`)
	wantErr(t, errs[3], dynop.ErrInvalid, "implementation is nil")
	wantErr(t, errs[4], dynop.ErrDuplicate, "already added")

	// After Start, the plugin's host refuses changes.
	err := p.host.AddInterface(counterDef.Desc, &counter{})
	wantErr(t, err, dynop.ErrState, "allowed only during Start")
	err = p.host.RemoveInterface(counterDef.UID)
	wantErr(t, err, dynop.ErrState, "allowed only during Start and Stop")
	release(t, ref)

	// Once stopped, the old host is dead.
	_, _, err = p.host.Acquire(context.Background(), p.id, counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrState, "the plugin is not started")
	_, err = p.host.OnUnload("", func(string) {})
	wantErr(t, err, dynop.ErrState, "the plugin is not started")
}

func TestRemoveInterfaceDuringDeregister(t *testing.T) {
	p := newFake(nil, "tidy")
	var removeErrs []error
	p.onStop = func() {
		removeErrs = append(removeErrs, p.host.RemoveInterface(counterDef.UID), p.host.RemoveInterface(counterDef.UID))
		_, _, err := p.host.Acquire(context.Background(), p.id, counterDef.UID, counterDef.Version)
		removeErrs = append(removeErrs, err)
	}
	h := open(t, p)
	defer h.Close(context.Background())
	_, ref := acquire(t, h, "tidy")
	release(t, ref)
	if removeErrs[0] != nil {
		t.Errorf("RemoveInterface in Stop: %v", removeErrs[0])
	}
	wantErr(t, removeErrs[1], dynop.ErrNotFound, "not added")
	wantErr(t, removeErrs[2], dynop.ErrState, "the plugin is stopping")
}

func TestReleaseTwice(t *testing.T) {
	h := open(t, newFake(nil, "a"))
	defer h.Close(context.Background())
	_, r1 := acquire(t, h, "a")
	_, r2 := acquire(t, h, "a")
	release(t, r1)
	err := r1.Release()
	wantErr(t, err, dynop.ErrReleased, "reference already released")
	wantState(t, h, "a", dynop.StateStarted, 1) // the second Release changed nothing
	copyOfR2 := r2
	release(t, r2)
	wantErr(t, copyOfR2.Release(), dynop.ErrReleased)
	wantState(t, h, "a", dynop.StateAvailable, 0)

	// A stale Ref whose slot was recycled by a newer acquisition must not
	// release the newer reference.
	_, r3 := acquire(t, h, "a")
	wantErr(t, r1.Release(), dynop.ErrReleased)
	wantState(t, h, "a", dynop.StateStarted, 1)
	release(t, r3)
	wantErr(t, dynop.Ref{}.Release(), plugin.ErrNoRef)
}

func TestCallsAfterClose(t *testing.T) {
	ctx := context.Background()
	h := open(t, newFake(nil, "a"))
	_, ref := acquire(t, h, "a")
	release(t, ref)
	c, ref := acquire(t, h, "a")
	wantErr(t, h.Close(ctx), dynop.ErrLeaked, `kept started until released: "test.plugin.a"`)
	_, _, err := h.Acquire(ctx, "test.plugin.a", counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrClosed, `"test.plugin.a"`)
	_, err = h.OnUnload("", func(string) {})
	wantErr(t, err, dynop.ErrClosed)
	wantErr(t, h.Close(ctx), dynop.ErrClosed)
	// The leaked reference keeps its plugin started after Close, so a call
	// through it still reaches a started plugin; its Release stops it.
	c.Calls()
	wantState(t, h, "a", dynop.StateStarted, 1)
	release(t, ref)
	wantErr(t, ref.Release(), dynop.ErrClosed)
	if st, _ := h.Plugin("test.plugin.a"); st.State != dynop.StateAvailable || st.Stops != 2 {
		t.Errorf("after the last release: %+v", st)
	}
}

func TestCloseStopsDependentsFirstAndReportsLeaks(t *testing.T) {
	ev := &events{}
	lazy := newFake(ev, "lazy", "low") // refuses to unload until the host closes
	lazy.canUnload = func() bool { return false }
	h := open(t, newFake(ev, "app", "lib"), newFake(ev, "lib", "base"), newFake(ev, "base"), newFake(ev, "solo"),
		lazy, newFake(ev, "low"))
	_, base := acquire(t, h, "base") // leaked, started first
	_, app1 := acquire(t, h, "app")
	_, app2 := acquire(t, h, "app")
	_, solo := acquire(t, h, "solo")
	_, ref := acquire(t, h, "lazy")
	release(t, ref)
	wantState(t, h, "lazy", dynop.StateStarted, 0)
	ev.take()

	// Close stops what no leaked reference holds, dependents first, and
	// keeps the rest started.
	err := h.Close(context.Background())
	wantErr(t, err, dynop.ErrLeaked,
		`plugin "test.plugin.app" interface test.Counter v1.2.0 {0F5E6D7C-8B9A-4A3B-9C2D-1E0F2A3B4C5D} (2 reference(s))`,
		`plugin "test.plugin.base" interface test.Counter v1.2.0`, `plugin "test.plugin.solo"`,
		`kept started until released: "test.plugin.app", "test.plugin.base", "test.plugin.solo"`)
	wantEvents(t, ev, "deregister lazy", "unload lazy", "deregister low", "unload low")
	wantState(t, h, "lazy", dynop.StateAvailable, 0)
	wantState(t, h, "low", dynop.StateAvailable, 0)
	wantState(t, h, "app", dynop.StateStarted, 2)
	wantState(t, h, "lib", dynop.StateStarted, 1)
	wantState(t, h, "base", dynop.StateStarted, 2)
	wantState(t, h, "solo", dynop.StateStarted, 1)

	// The leaked references' releases stop the rest, dependents first.
	release(t, app1)
	release(t, app2)
	release(t, base)
	release(t, solo)
	got := ev.take()
	pos := func(e string) int {
		for i, g := range got {
			if g == e {
				return i
			}
		}
		t.Fatalf("event %q missing from %q", e, got)
		return -1
	}
	if !(pos("unload app") < pos("deregister lib") && pos("unload lib") < pos("deregister base")) {
		t.Errorf("stop order %q: want app, then lib, then base", got)
	}
	pos("unload solo")
	for _, st := range h.Plugins() {
		if st.State != dynop.StateAvailable || st.Refs != 0 || st.Starts != st.Stops {
			t.Errorf("%s after the last release: %+v", st.Info.ID, st)
		}
	}
}

func TestCloseBreaksReferenceCycles(t *testing.T) {
	// x and y acquire each other after they started (not from Start, which
	// would be a start cycle), so neither reference count can reach zero.
	ev := &events{}
	x, y := newFake(ev, "x"), newFake(ev, "y")
	h := open(t, x, y)
	_, rx := acquire(t, h, "x")
	_, ry := acquire(t, h, "y")
	if _, _, err := x.host.Acquire(context.Background(), y.id, counterDef.UID, counterDef.Version); err != nil {
		t.Fatal(err)
	}
	if _, _, err := y.host.Acquire(context.Background(), x.id, counterDef.UID, counterDef.Version); err != nil {
		t.Fatal(err)
	}
	release(t, rx)
	release(t, ry)
	wantState(t, h, "x", dynop.StateStarted, 1)
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, f := range []*fake{x, y} {
		if f.deregisters.Load() != 1 || f.unloads.Load() != 1 {
			t.Errorf("%s: %d deregisters, %d unloads after Close", f.id, f.deregisters.Load(), f.unloads.Load())
		}
	}
}

func TestCanUnload(t *testing.T) {
	ev := &events{}
	stubborn := newFake(ev, "stubborn")
	busy := true
	stubborn.canUnload = func() bool { return !busy }
	other := newFake(ev, "other")
	h := open(t, stubborn, other)

	_, ref := acquire(t, h, "stubborn")
	release(t, ref)
	wantState(t, h, "stubborn", dynop.StateStarted, 0) // refused: stays
	if stubborn.deregisters.Load() != 0 {
		t.Fatal("a plugin that refused to unload was deregistered")
	}

	// Asked again on the next release, of any reference.
	_, ref = acquire(t, h, "other")
	release(t, ref)
	if n := stubborn.canUnloadCalls.Load(); n != 2 {
		t.Errorf("CanUnload asked %d times, want 2", n)
	}
	wantState(t, h, "stubborn", dynop.StateStarted, 0)

	// Used again in between: a reference cancels the pending stop.
	_, ref = acquire(t, h, "stubborn")
	if stubborn.registers.Load() != 1 {
		t.Error("a plugin that stayed started was registered again")
	}
	busy = false
	release(t, ref)
	wantState(t, h, "stubborn", dynop.StateAvailable, 0)

	// At close, a refusal does not keep it alive.
	busy = true
	_, ref = acquire(t, h, "stubborn")
	release(t, ref)
	wantState(t, h, "stubborn", dynop.StateStarted, 0)
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantState(t, h, "stubborn", dynop.StateAvailable, 0)
	if stubborn.deregisters.Load() != 2 {
		t.Errorf("deregisters = %d, want 2", stubborn.deregisters.Load())
	}
}

func TestClearCallbacksRunBeforeDeregister(t *testing.T) {
	ev := &events{}
	target := newFake(ev, "target")
	watcher := newFake(ev, "watcher")
	watcher.register = func(ctx context.Context, h plugin.Registrar) error {
		// Keeps something that points into target without a reference.
		if _, err := h.OnUnload(target.id, func(id string) { ev.add("watcher clears %s", id) }); err != nil {
			return err
		}
		return counterDef.Provide(h, &counter{name: "watcher"})
	}
	h := open(t, target, watcher)
	defer h.Close(context.Background())

	cancelAll, err := h.OnUnload("", func(id string) { ev.add("host clears %s", id) })
	if err != nil {
		t.Fatal(err)
	}
	_, wref := acquire(t, h, "watcher")
	_, tref := acquire(t, h, "target")
	ev.take()
	release(t, tref)
	// In registration order: the host program registered first.
	wantEvents(t, ev, "host clears test.plugin.target", "watcher clears test.plugin.target", "deregister target", "unload target")

	// When the watcher stops, its callbacks go with it: they are not called
	// for its own stop nor after it.
	release(t, wref)
	wantEvents(t, ev, "host clears test.plugin.watcher", "deregister watcher", "unload watcher")
	_, tref = acquire(t, h, "target")
	ev.take()
	release(t, tref)
	wantEvents(t, ev, "host clears test.plugin.target", "deregister target", "unload target")

	cancelAll()
	cancelAll() // cancel is idempotent
	_, tref = acquire(t, h, "target")
	ev.take()
	release(t, tref)
	wantEvents(t, ev, "deregister target", "unload target")

	_, err = h.OnUnload("test.plugin.nope", func(string) {})
	wantErr(t, err, dynop.ErrNotFound, `"test.plugin.nope"`)
	_, err = h.OnUnload("", nil)
	wantErr(t, err, dynop.ErrInvalid, "callback is nil")

	cancelPanic, _ := h.OnUnload(target.id, func(string) { panic("callback bug") })
	_, tref = acquire(t, h, "target")
	wantErr(t, tref.Release(), dynop.ErrPanic, "callback bug", "host program")
	cancelPanic()
	wantState(t, h, "target", dynop.StateAvailable, 0)
}

func TestStartCycleIsReported(t *testing.T) {
	ev := &events{}
	a, b, c := newFake(ev, "a", "b"), newFake(ev, "b", "c"), newFake(ev, "c", "a")
	h := open(t, a, b, c)
	defer h.Close(context.Background())
	_, _, err := dynop.Acquire(context.Background(), h, a.id, counterDef)
	wantErr(t, err, dynop.ErrCycle, "test.plugin.c → test.plugin.a → test.plugin.b → test.plugin.c")
	for _, id := range []string{"a", "b", "c"} {
		wantState(t, h, id, dynop.StateAvailable, 0)
	}
	for _, f := range []*fake{a, b, c} {
		if f.deregisters.Load() != 0 || f.starteds.Load() != 0 {
			t.Errorf("%s half started", f.id)
		}
	}

	// A plugin that declares it needs itself is rejected from its Info; one
	// that acquires itself anyway gets ErrCycle.
	h2 := open(t, newFake(nil, "narcissus", "narcissus"))
	defer h2.Close(context.Background())
	_, _, err = dynop.Acquire(context.Background(), h2, "test.plugin.narcissus", counterDef)
	wantErr(t, err, dynop.ErrInvalid, `needs interface "test.Counter" from itself`)

	self := newFake(nil, "self")
	self.register = func(ctx context.Context, h plugin.Registrar) error {
		_, _, err := plugin.Acquire(ctx, h, self.id, counterDef)
		return err
	}
	h2 = open(t, self)
	defer h2.Close(context.Background())
	_, _, err = dynop.Acquire(context.Background(), h2, self.id, counterDef)
	wantErr(t, err, dynop.ErrCycle, "acquires its own interface", "test.plugin.self → test.plugin.self")
}

func TestStartCycleAcrossGoroutines(t *testing.T) {
	// p and q start in two goroutines at once and each acquires the other
	// from its Start: neither may wait for the other forever.
	inP, inQ := make(chan struct{}), make(chan struct{})
	p, q := newFake(nil, "p"), newFake(nil, "q")
	p.register = func(ctx context.Context, h plugin.Registrar) error {
		close(inP)
		<-inQ
		if _, _, err := plugin.Acquire(ctx, h, q.id, counterDef); err != nil {
			return err
		}
		return counterDef.Provide(h, &counter{})
	}
	q.register = func(ctx context.Context, h plugin.Registrar) error {
		close(inQ)
		<-inP
		if _, _, err := plugin.Acquire(ctx, h, p.id, counterDef); err != nil {
			return err
		}
		return counterDef.Provide(h, &counter{})
	}
	h := open(t, p, q)
	defer h.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	for _, id := range []string{p.id, q.id} {
		go func() { _, _, err := dynop.Acquire(ctx, h, id, counterDef); errs <- err }()
	}
	for range 2 {
		err := <-errs
		wantErr(t, err, dynop.ErrCycle)
	}
	wantState(t, h, "p", dynop.StateAvailable, 0)
	wantState(t, h, "q", dynop.StateAvailable, 0)
}

func TestConcurrentAcquireStartsOnce(t *testing.T) {
	slow := newFake(nil, "slow")
	gate := make(chan struct{})
	slow.register = func(ctx context.Context, h plugin.Registrar) error {
		<-gate
		return counterDef.Provide(h, &counter{name: "slow"})
	}
	h := open(t, slow)
	defer h.Close(context.Background())
	const n = 16
	refs := make(chan dynop.Ref, n)
	for range n {
		go func() {
			_, ref, err := dynop.Acquire(context.Background(), h, slow.id, counterDef)
			if err != nil {
				t.Error(err)
			}
			refs <- ref
		}()
	}
	time.Sleep(20 * time.Millisecond) // let them pile up behind the start
	close(gate)
	var held []dynop.Ref
	for range n {
		held = append(held, <-refs)
	}
	wantState(t, h, "slow", dynop.StateStarted, n)
	for _, ref := range held {
		release(t, ref)
	}
	if slow.registers.Load() != 1 || slow.deregisters.Load() != 1 {
		t.Errorf("%d registers, %d deregisters, want 1 each", slow.registers.Load(), slow.deregisters.Load())
	}
}

func TestAcquireWaitHonoursContext(t *testing.T) {
	slow := newFake(nil, "slow")
	gate := make(chan struct{})
	entered := make(chan struct{})
	slow.register = func(ctx context.Context, h plugin.Registrar) error {
		close(entered)
		<-gate
		return counterDef.Provide(h, &counter{})
	}
	h := open(t, slow)
	defer h.Close(context.Background())
	first := make(chan dynop.Ref)
	go func() { _, ref := acquire(t, h, "slow"); first <- ref }()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := dynop.Acquire(ctx, h, slow.id, counterDef)
	wantErr(t, err, context.DeadlineExceeded, `plugin "test.plugin.slow"`)
	close(gate)
	release(t, <-first)
}

func TestWaitersShareAFailedStart(t *testing.T) {
	bad := newFake(nil, "bad")
	gate := make(chan struct{})
	bad.register = func(ctx context.Context, h plugin.Registrar) error {
		<-gate
		return errors.New("no GPU")
	}
	h := open(t, bad)
	defer h.Close(context.Background())
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() { _, _, err := dynop.Acquire(context.Background(), h, bad.id, counterDef); errs <- err }()
	}
	time.Sleep(20 * time.Millisecond)
	close(gate)
	for range n {
		wantErr(t, <-errs, nil, "no GPU")
	}
	if r := bad.registers.Load(); r >= n {
		t.Errorf("Start ran %d times for %d waiting callers; waiters should share a failed start", r, n)
	}
}
