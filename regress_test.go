package dynop_test

// Regression tests for interleavings found in review. Each sets up the
// interleaving with gates (and, where a goroutine must be parked inside the
// host, a short sleep: if the sleep is too short the interleaving is merely
// not produced, the test cannot fail spuriously).

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
)

// within runs fn and fails the test if it has not returned after d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v (deadlock)", what, d)
	}
}

// A clear-callback of the program that releases the last reference to a
// plugin whose own clear-callback is due in the same stop must not wait
// for that callback.
func TestClearCallbackReleasingAPluginDoesNotDeadlock(t *testing.T) {
	target, w := newFake(nil, "target"), newFake(nil, "w")
	var wCalled atomic.Bool
	w.register = func(ctx context.Context, h plugin.Registrar) error {
		if _, err := h.OnUnload(target.id, func(string) { wCalled.Store(true) }); err != nil {
			return err
		}
		return counterDef.Provide(h, &counter{name: "w"})
	}
	h := open(t, target, w)
	defer h.Close(context.Background())
	var wref dynop.Ref
	if _, err := h.OnUnload(target.id, func(string) { _ = wref.Release() }); err != nil {
		t.Fatal(err)
	}
	_, wref = acquire(t, h, "w")
	_, tref := acquire(t, h, "target")
	within(t, 5*time.Second, "Release(target)", func() { release(t, tref) })
	if wCalled.Load() {
		t.Error("w's clear-callback ran after w had stopped")
	}
	wantState(t, h, "w", dynop.StateAvailable, 0)
}

// A plugin cannot register a clear-callback once it is stopping: it would
// be called after the plugin's Unload.
func TestOnUnloadWhileStoppingIsRefused(t *testing.T) {
	target, w := newFake(nil, "target"), newFake(nil, "w")
	var onUnloadErr error
	var calledAfterStop atomic.Bool
	w.onStop = func() {
		_, onUnloadErr = w.host.OnUnload(target.id, func(string) { calledAfterStop.Store(true) })
	}
	h := open(t, target, w)
	defer h.Close(context.Background())
	_, wref := acquire(t, h, "w")
	release(t, wref)
	wantErr(t, onUnloadErr, dynop.ErrState, `plugin "test.plugin.w"`, "the plugin is stopping")
	_, tref := acquire(t, h, "target")
	release(t, tref)
	if calledAfterStop.Load() {
		t.Error("a clear-callback registered in Stop ran after the plugin stopped")
	}
}

// A started plugin acquires, from a background goroutine, a plugin that
// must be started, and stops meanwhile: the reference must not land on the
// stopped plugin, and the plugin started for it must stop again.
func TestAcquireByPluginThatStoppedMeanwhile(t *testing.T) {
	owner, slow := newFake(nil, "owner"), newFake(nil, "slow")
	gate, entered := make(chan struct{}), make(chan struct{})
	slow.register = func(ctx context.Context, h plugin.Registrar) error {
		close(entered)
		<-gate
		return counterDef.Provide(h, &counter{name: "slow"})
	}
	h := open(t, owner, slow)
	_, oref := acquire(t, h, "owner")
	hd := owner.host
	res := make(chan error, 1)
	go func() {
		_, _, err := hd.Acquire(context.Background(), slow.id, counterDef.UID, counterDef.Version)
		res <- err
	}()
	<-entered
	release(t, oref)
	close(gate)
	wantErr(t, <-res, dynop.ErrState, `plugin "test.plugin.owner"`, "not started")
	wantState(t, h, "slow", dynop.StateAvailable, 0)
	if slow.unloads.Load() != 1 {
		t.Errorf("slow: %d unloads, want 1", slow.unloads.Load())
	}
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A plugin whose Start acquires two plugins from two goroutines waits
// for both; a cycle through either is found.
func TestCycleFoundWithConcurrentAcquiresInRegister(t *testing.T) {
	p, q, r := newFake(nil, "p"), newFake(nil, "q"), newFake(nil, "r")
	rIn, qIn, rGo := make(chan struct{}), make(chan struct{}), make(chan struct{})
	p.register = func(ctx context.Context, h plugin.Registrar) error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { _, _, errs[0] = h.Acquire(ctx, r.id, counterDef.UID, counterDef.Version) })
		<-rIn
		time.Sleep(20 * time.Millisecond) // the first goroutine waits on r
		wg.Go(func() { _, _, errs[1] = h.Acquire(ctx, q.id, counterDef.UID, counterDef.Version) })
		<-qIn
		time.Sleep(20 * time.Millisecond) // the second waits on q
		close(rGo)
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
		return counterDef.Provide(h, &counter{})
	}
	r.register = func(ctx context.Context, h plugin.Registrar) error {
		close(rIn)
		<-rGo
		if _, _, err := h.Acquire(ctx, p.id, counterDef.UID, counterDef.Version); err != nil {
			return err // r → p, and p waits for r: a cycle
		}
		return counterDef.Provide(h, &counter{})
	}
	q.register = func(ctx context.Context, h plugin.Registrar) error {
		close(qIn)
		<-ctx.Done()
		return ctx.Err()
	}
	h := open(t, p, q, r)
	// q's Start blocks until this deadline; the cycle is found long before.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, _, err := h.Acquire(ctx, p.id, counterDef.UID, counterDef.Version)
	wantErr(t, err, dynop.ErrCycle, "test.plugin.r → test.plugin.p → test.plugin.r")
}

// Waits of started plugins' goroutines and waits on stopping plugins must
// not make the cycle search loop.
func TestCycleSearchTerminates(t *testing.T) {
	x, y, z := newFake(nil, "x"), newFake(nil, "y"), newFake(nil, "z", "x")
	gateX, xIn := make(chan struct{}), make(chan struct{})
	gateY, yCan := make(chan struct{}), make(chan struct{})
	x.register = func(ctx context.Context, h plugin.Registrar) error {
		close(xIn)
		<-gateX
		if _, _, err := h.Acquire(ctx, y.id, counterDef.UID, counterDef.Version); err != nil {
			return err
		}
		return counterDef.Provide(h, &counter{})
	}
	var once sync.Once
	y.canUnload = func() bool { once.Do(func() { close(yCan); <-gateY }); return true }
	h := open(t, x, y, z)
	_, yref := acquire(t, h, "y")
	go func() { _, _, _ = h.Acquire(context.Background(), x.id, counterDef.UID, counterDef.Version) }()
	<-xIn
	go func() { _, _, _ = y.host.Acquire(context.Background(), x.id, counterDef.UID, counterDef.Version) }()
	time.Sleep(20 * time.Millisecond)
	go func() { _ = yref.Release() }()
	<-yCan
	close(gateX)
	time.Sleep(20 * time.Millisecond)
	go func() { _, _, _ = h.Acquire(context.Background(), z.id, counterDef.UID, counterDef.Version) }()
	time.Sleep(20 * time.Millisecond)
	within(t, 5*time.Second, "h.Plugins()", func() { h.Plugins() })
	close(gateY)
	within(t, 5*time.Second, "Close", func() { h.Close(context.Background()) })
}

type removeInStarted struct{ *fake }

var removeInStartedErr error

func (p removeInStarted) Started(context.Context) {
	removeInStartedErr = p.host.RemoveInterface(counterDef.UID)
}

// Interfaces can be added and removed only while Start runs.
func TestRemoveInterfaceInStartedIsRefused(t *testing.T) {
	f := newFake(nil, "rm")
	h := open(t, removeInStarted{f})
	defer h.Close(context.Background())
	_, ref := acquire(t, h, "rm")
	wantErr(t, removeInStartedErr, dynop.ErrState, "allowed only during Start and Stop")
	release(t, ref)
}

// hookHandler is a slog handler that calls hook for every record, with the
// attributes added through Logger.With.
type hookHandler struct {
	hook  func(slog.Record)
	attrs []slog.Attr
}

func (hookHandler) Enabled(context.Context, slog.Level) bool { return true }
func (hh hookHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(hh.attrs...)
	hh.hook(r)
	return nil
}
func (hh hookHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return hookHandler{hh.hook, append(slices.Clip(hh.attrs), as...)}
}
func (hh hookHandler) WithGroup(string) slog.Handler { return hh }

func hasAttr(r slog.Record, key, value string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key && a.Value.String() == value
		return !found
	})
	return found
}

// A plugin's goroutine releasing a reference the plugin holds while the
// host stops the plugin must not make the host release it a second time
// (which, after the slot is reused, would release someone else's).
func TestHeldRefReleasedByPluginDuringStop(t *testing.T) {
	dep, p := newFake(nil, "dep"), newFake(nil, "p")
	var pHeld dynop.Ref
	p.register = func(ctx context.Context, h plugin.Registrar) error {
		_, ref, err := h.Acquire(ctx, dep.id, counterDef.UID, counterDef.Version)
		pHeld = ref
		if err != nil {
			return err
		}
		return counterDef.Provide(h, &counter{})
	}
	var h *dynop.Host
	var once sync.Once
	var other dynop.Ref
	hook := func(r slog.Record) {
		if r.Message != "plugin stopped" || !hasAttr(r, "plugin", p.id) {
			return
		}
		once.Do(func() {
			_ = pHeld.Release()
			_, other, _ = h.Acquire(context.Background(), dep.id, counterDef.UID, counterDef.Version)
		})
	}
	var err error
	h, err = dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{dep, p}, NoRegistered: true,
		Logger: slog.New(hookHandler{hook: hook})})
	if err != nil {
		t.Fatal(err)
	}
	_, pref := acquire(t, h, "p")
	within(t, 5*time.Second, "Release(p)", func() { release(t, pref) })
	wantState(t, h, "dep", dynop.StateStarted, 1) // only other's reference
	release(t, other)
	wantState(t, h, "dep", dynop.StateAvailable, 0)
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A Close whose context expires while a plugin starts returns; when the
// start then completes, the plugin stops by itself.
func TestStartFinishingAfterCloseGaveUpStopsThePlugin(t *testing.T) {
	for _, addFirst := range []bool{false, true} {
		slow := newFake(nil, "slow")
		gate, entered := make(chan struct{}), make(chan struct{})
		slow.register = func(ctx context.Context, h plugin.Registrar) error {
			if addFirst {
				if err := counterDef.Provide(h, &counter{}); err != nil {
					return err
				}
			}
			close(entered)
			<-gate
			if addFirst {
				return nil
			}
			return counterDef.Provide(h, &counter{})
		}
		h := open(t, slow)
		res := make(chan error, 1)
		go func() {
			_, _, err := h.Acquire(context.Background(), slow.id, counterDef.UID, counterDef.Version)
			res <- err
		}()
		<-entered
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		wantErr(t, h.Close(ctx), context.DeadlineExceeded, `waiting for plugin "test.plugin.slow" (starting)`)
		cancel()
		close(gate)
		wantErr(t, <-res, dynop.ErrClosed)
		wantErr(t, h.Close(context.Background()), dynop.ErrClosed)
		// If Start had added its interface, it succeeds and the plugin
		// is then stopped; if not, adding fails on the closed host and so
		// does Start, which leaves nothing to stop.
		wantUnloads := int64(0)
		if addFirst {
			wantUnloads = 1
		}
		if s, _ := state(t, h, "slow"); s != dynop.StateAvailable || slow.unloads.Load() != wantUnloads {
			t.Errorf("addFirst=%t: after Close: slow is %v with %d unloads, want available after %d", addFirst, s, slow.unloads.Load(), wantUnloads)
		}
	}
}

// Close racing with acquisitions and releases leaves every plugin stopped,
// and no plugin is called by its dependents while not started.
func TestCloseRacingWithAcquireAndRelease(t *testing.T) {
	iterations := 100
	if testing.Short() {
		iterations = 10
	}
	for iter := range iterations {
		fakes := []*fake{newFake(nil, "top", "mid"), newFake(nil, "mid", "base"), newFake(nil, "base"), newFake(nil, "solo")}
		fakes[3].canUnload = func() bool { return rand.IntN(2) == 0 }
		ps := make([]plugin.Plugin, len(fakes))
		for i, f := range fakes {
			ps[i] = f
		}
		h := open(t, ps...)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					f := fakes[rand.IntN(len(fakes))]
					// No calls through the interface here: Close revokes
					// references still held, so a call after it began would
					// be the program's use-after-close. The plugins' own
					// calls into their dependencies are what is checked.
					_, ref, err := dynop.Acquire(context.Background(), h, f.id, counterDef)
					if err == nil {
						_ = ref.Release()
					}
				}
			})
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		cerr := h.Close(context.Background())
		wg.Wait()
		for i, st := range h.Plugins() {
			f := fakes[i]
			for _, ff := range fakes {
				if ff.id == st.Info.ID {
					f = ff
				}
			}
			if st.State != dynop.StateAvailable || st.Refs != 0 || st.Starts != st.Stops {
				t.Fatalf("iteration %d: %s after Close: %+v (Close: %v)", iter, st.Info.ID, st, cerr)
			}
			if v := f.violations.Load(); v != 0 {
				t.Fatalf("iteration %d: %s called %d times while not started", iter, f.id, v)
			}
		}
	}
}

// A cycle that passes through the host program's code (a plugin's Start
// calls a program function that acquires through the program's *Host with
// the Start's context) is found too.
func TestCycleThroughHostProgramCode(t *testing.T) {
	a, b := newFake(nil, "a"), newFake(nil, "b")
	var h *dynop.Host
	programLookup := func(ctx context.Context) error { // program code, not a plugin
		_, ref, err := h.Acquire(ctx, b.id, counterDef.UID, counterDef.Version)
		if err == nil {
			ref.Release()
		}
		return err
	}
	a.register = func(ctx context.Context, ph plugin.Registrar) error {
		if err := programLookup(ctx); err != nil {
			return err
		}
		return counterDef.Provide(ph, &counter{})
	}
	b.register = func(ctx context.Context, ph plugin.Registrar) error {
		if _, _, err := ph.Acquire(ctx, a.id, counterDef.UID, counterDef.Version); err != nil {
			return err
		}
		return counterDef.Provide(ph, &counter{})
	}
	h = open(t, a, b)
	defer h.Close(context.Background())
	var err error
	within(t, 5*time.Second, "Acquire(a)", func() {
		_, _, err = h.Acquire(context.Background(), a.id, counterDef.UID, counterDef.Version)
	})
	wantErr(t, err, dynop.ErrCycle, "test.plugin.b → test.plugin.a → test.plugin.b")
}

// TestDeregisterFailureLogged: dynop.h says a failing deregister is
// logged; the host returned the error to whoever released the last
// reference and logged nothing, so `dynop run` swallowed it (issue 21,
// item 9).
func TestDeregisterFailureLogged(t *testing.T) {
	var logs strings.Builder
	f := newFake(nil, "a")
	f.stopErr = errors.New("the frobnicator is stuck")
	h, err := dynop.Open(context.Background(), dynop.Options{Plugins: []plugin.Plugin{f}, NoRegistered: true, NoDefaultPaths: true,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	_, ref := acquire(t, h, "a")
	wantErr(t, ref.Release(), nil, `stop plugin "test.plugin.a": deregister: the frobnicator is stuck`)
	for _, want := range []string{"level=WARN", `msg="plugin deregister failed"`, "plugin=test.plugin.a", "the frobnicator is stuck"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
}
