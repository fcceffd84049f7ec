package dynop_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// Counter is the interface every fake plugin provides.
type Counter interface {
	Name() string
	Calls() int64
}

var counterDef = iface.Define[Counter]("0F5E6D7C-8B9A-4A3B-9C2D-1E0F2A3B4C5D", "test.Counter", iface.V(1, 2, 0))

type counter struct {
	name  string
	calls atomic.Int64
	owner *fake // if set, calls while the owner is not started are counted as violations
}

func (c *counter) Name() string { return c.name }

func (c *counter) Calls() int64 {
	if c.owner != nil && !c.owner.alive.Load() {
		c.owner.violations.Add(1)
	}
	return c.calls.Add(1)
}
func (c *counter) String() string { return c.name }

// events records lifecycle events across plugins, in order.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	e.list = append(e.list, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.list
	e.list = nil
	return out
}

// fake is a configurable plugin. By default it provides counterDef and
// acquires counterDef from each plugin in deps during Start.
type fake struct {
	id   string
	deps []string
	ev   *events

	// Optional behaviour.
	register  func(ctx context.Context, h plugin.Registrar) error // replaces the default body
	canUnload func() bool
	onStop    func() // called from Stop
	stopErr   error  // what Stop returns

	host                             plugin.Registrar // the host of the latest start
	alive                            atomic.Bool      // between the end of Start and Stop
	violations                       atomic.Int64
	depsMu                           sync.Mutex
	depCounters                      []Counter // what the default Start acquired
	registers, starteds, deregisters atomic.Int64
	unloads, canUnloadCalls          atomic.Int64
}

func newFake(ev *events, id string, deps ...string) *fake {
	return &fake{id: "test.plugin." + id, deps: prefixed(deps), ev: ev}
}

func prefixed(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "test.plugin." + id
	}
	return out
}

func (f *fake) Info() schema.Plugin {
	info := schema.Plugin{ID: f.id, Version: iface.V(1, 0, 0), Interfaces: []iface.Desc{counterDef.Desc}}
	for _, d := range f.deps {
		info.Needs = append(info.Needs, schema.Need{Plugin: d, Interface: counterDef.Desc})
	}
	return info
}

func (f *fake) short() string { return strings.TrimPrefix(f.id, "test.plugin.") }

func (f *fake) Start(ctx context.Context, h plugin.Registrar) error {
	f.registers.Add(1)
	f.host = h
	if f.ev != nil {
		f.ev.add("register %s", f.short())
	}
	if f.register != nil {
		return f.register(ctx, h)
	}
	var deps []Counter
	for _, d := range f.deps {
		c, _, err := plugin.Acquire(ctx, h, d, counterDef)
		if err != nil {
			return fmt.Errorf("%s needs %s: %w", f.short(), d, err)
		}
		c.Calls() // the dependency is alive while we start
		deps = append(deps, c)
	}
	f.depsMu.Lock()
	f.depCounters = deps
	f.depsMu.Unlock()
	if err := counterDef.Provide(h, &counter{name: f.short(), owner: f}); err != nil {
		return err
	}
	f.alive.Store(true)
	return nil
}

func (f *fake) Started(context.Context) {
	f.starteds.Add(1)
	if f.ev != nil {
		f.ev.add("started %s", f.short())
	}
}

func (f *fake) CanUnload() bool {
	f.canUnloadCalls.Add(1)
	if f.canUnload != nil {
		return f.canUnload()
	}
	return true
}

func (f *fake) Stop(context.Context) error {
	f.deregisters.Add(1)
	f.alive.Store(false)
	f.depsMu.Lock()
	for _, c := range f.depCounters {
		c.Calls() // dependencies outlive their dependents
	}
	f.depCounters = nil
	f.depsMu.Unlock()
	if f.ev != nil {
		f.ev.add("deregister %s", f.short())
	}
	if f.onStop != nil {
		f.onStop()
	}
	return f.stopErr
}

func (f *fake) Unload(context.Context) error {
	f.unloads.Add(1)
	if f.ev != nil {
		f.ev.add("unload %s", f.short())
	}
	return nil
}

// open opens a host over exactly the given plugins, logging to the test.
func open(t testing.TB, ps ...plugin.Plugin) *dynop.Host {
	t.Helper()
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: ps, NoRegistered: true, NoDefaultPaths: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return h
}

var testLogger = testutil.Logger

// acquire acquires the counter of test.plugin.<id> or fails the test.
func acquire(t testing.TB, h *dynop.Host, id string) (Counter, dynop.Ref) {
	t.Helper()
	c, ref, err := dynop.Acquire(context.Background(), h, "test.plugin."+id, counterDef)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", id, err)
	}
	return c, ref
}

func release(t testing.TB, ref dynop.Ref) {
	t.Helper()
	if err := ref.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// state returns the state and reference count of test.plugin.<id>.
func state(t testing.TB, h *dynop.Host, id string) (dynop.State, int) {
	t.Helper()
	st, err := h.Plugin("test.plugin." + id)
	if err != nil {
		t.Fatal(err)
	}
	return st.State, st.Refs
}

func wantState(t testing.TB, h *dynop.Host, id string, want dynop.State, wantRefs int) {
	t.Helper()
	if s, n := state(t, h, id); s != want || n != wantRefs {
		t.Errorf("plugin %s: state %v with %d refs, want %v with %d", id, s, n, want, wantRefs)
	}
}

func wantEvents(t testing.TB, ev *events, want ...string) {
	t.Helper()
	if got := ev.take(); !slices.Equal(got, want) {
		t.Errorf("events:\n got  %q\n want %q", got, want)
	}
}

var wantErr = testutil.WantErr
