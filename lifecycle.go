package dynop

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/dynop/dynop/plugin"
)

// guard calls fn, turning a panic into an error wrapping ErrPanic that
// names the plugin and the step; the stack goes to the log.
func (h *Host) guard(id, step string, fn func() error) error {
	err := guard(id, step, fn)
	if pe, ok := errors.AsType[*panicError](err); ok {
		h.log.Error("plugin panicked", "plugin", id, "step", step, "panic", pe.value, "stack", string(pe.stack))
	}
	return err
}

type panicError struct {
	id, step string
	value    any
	stack    []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("plugin %q: %s: %v: %v", e.id, e.step, ErrPanic, e.value)
}

func (e *panicError) Unwrap() error { return ErrPanic }

func guard(id, step string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{id: id, step: step, value: v, stack: debug.Stack()}
		}
	}()
	return fn()
}

// start runs rec's Start and Started hooks. rec is in StateStarting.
// On failure the plugin moves to StateStopping (so neither it nor its
// goroutines can add, acquire or register anything more), everything it
// added, registered or acquired is undone, and, if Start itself
// succeeded, its stop hooks run: it is left not started rather than half
// started. The caller ends the transition.
func (h *Host) start(ctx context.Context, rec *record) error {
	rec.log.Debug("plugin starting")
	h.mu.Lock()
	rec.registering = true
	hd := rec.handle
	h.mu.Unlock()
	err := h.guard(rec.id, "Start", func() error { return rec.p.Start(ctx, hd) })
	h.mu.Lock()
	rec.registering = false
	h.mu.Unlock()
	if err != nil {
		rec.log.Debug("plugin failed to start", "err", err)
		return errors.Join(fmt.Errorf("dynop: start plugin %q: register: %w", rec.id, err), h.undoStart(ctx, rec, false))
	}
	err = h.checkLive(rec)
	if l, ok := rec.p.(plugin.StartListener); ok && err == nil {
		if perr := h.guard(rec.id, "Started", func() error { l.Started(ctx); return nil }); perr != nil {
			err = fmt.Errorf("dynop: start plugin %q: %w", rec.id, perr)
		}
	}
	if err != nil {
		rec.log.Debug("plugin failed to start", "err", err)
		return errors.Join(err, h.undoStart(ctx, rec, true))
	}
	rec.log.Debug("plugin started")
	return nil
}

// undoStart tears down a failed start of rec; with registered set, the
// plugin's Start had succeeded and its stop hooks run too.
func (h *Host) undoStart(ctx context.Context, rec *record, registered bool) error {
	h.mu.Lock()
	rec.state = StateStopping
	h.mu.Unlock()
	var err error
	if registered {
		err = h.stopHooks(ctx, rec)
	} else {
		h.dropWatchersOf(rec)
	}
	return errors.Join(err, h.releaseHeld(rec))
}

// releaseHeld removes rec's interfaces, retires its handle and releases
// every reference rec holds, in one critical section so that none can be
// released twice; then it stops what that left unused. rec stays in its
// transition meanwhile, so Close waits for the cascade to finish.
func (h *Host) releaseHeld(rec *record) error {
	var stop []*record
	h.mu.Lock()
	rec.live = nil
	rec.ops, rec.passes = nil, nil
	rec.handle.dead = true
	for rec.held.head != nil {
		stop = append(stop, h.drop(rec.held.head)...)
	}
	h.mu.Unlock()
	return h.stopAll(stop)
}

// checkLive verifies that Start added every interface and registered
// every operator and pass that Info declares, and publishes them.
func (h *Host) checkLive(rec *record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var missing []string
	for _, d := range rec.info.Interfaces {
		if rec.entry(d.UID) == nil && d.UID != operatorsInterface.UID && d.UID != passesInterface.UID {
			missing = append(missing, d.String())
		}
	}
	if missing != nil {
		return fmt.Errorf("dynop: start plugin %q: %w: Info declares interface(s) that Start did not add: %s",
			rec.id, ErrNotFound, strings.Join(missing, ", "))
	}
	if err := h.publishOperators(rec); err != nil {
		return err
	}
	return h.publishPasses(rec)
}

// markStopping moves a started plugin to StateStopping. h.mu is held.
func (h *Host) markStopping(rec *record) {
	rec.state = StateStopping
	rec.done = make(chan struct{})
	if rec.refused {
		rec.refused = false
		h.refusals--
	}
}

// endTransition ends rec's start or stop in state s and wakes its waiters.
// h.mu is held.
func (h *Host) endTransition(rec *record, s State) {
	rec.state = s
	close(rec.done)
	rec.done = nil
	if s == StateAvailable {
		rec.handle.dead = true
		rec.handle = nil
	}
}

// stopAll stops each plugin in recs, which are marked stopping.
func (h *Host) stopAll(recs []*record) error {
	var errs []error
	for _, rec := range recs {
		if err := h.stop(context.Background(), rec, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// stop stops rec, which is in StateStopping: CanUnload, clear-callbacks,
// Stop, Unload; then the references rec held are released, which may
// stop the plugins it depended on, and rec is available again. Unless force
// is set or the host is closed, a plugin whose CanUnload says false goes
// back to StateStarted and is asked again on the next release.
func (h *Host) stop(ctx context.Context, rec *record, force bool) error {
	if c, ok := rec.p.(plugin.UnloadChecker); ok {
		can := true
		err := h.guard(rec.id, "CanUnload", func() error { can = c.CanUnload(); return nil })
		h.mu.Lock()
		force = force || h.closed
		if err == nil && !can && !force {
			rec.refused = true
			h.refusals++
			h.endTransition(rec, StateStarted)
			h.mu.Unlock()
			rec.log.Debug("plugin refuses to unload; will ask again")
			return nil
		}
		h.mu.Unlock()
		switch {
		case err != nil:
			rec.log.Warn("CanUnload failed; stopping the plugin", "err", err)
		case !can:
			rec.log.Warn("plugin refuses to unload, but the host is closing; stopping it anyway")
		}
	}
	rec.log.Debug("plugin stopping")
	err := h.stopHooks(ctx, rec)
	rec.log.Debug("plugin stopped") // its code is done; what it held goes next
	err = errors.Join(err, h.releaseHeld(rec))
	h.mu.Lock()
	rec.stops++
	h.endTransition(rec, StateAvailable)
	h.mu.Unlock()
	return err
}

// stopHooks runs the clear-callbacks against rec, then its Stop and
// Unload. Callbacks that rec itself registered are removed first: nothing
// of rec's runs once it starts going away.
func (h *Host) stopHooks(ctx context.Context, rec *record) error {
	h.dropWatchersOf(rec)
	errs := h.runWatchers(rec.id)
	if d, ok := rec.p.(plugin.Stopper); ok {
		if err := h.guard(rec.id, "Stop", func() error { return d.Stop(ctx) }); err != nil {
			rec.log.Warn("plugin deregister failed", "err", err) // dynop.h: a failing deregister is logged
			errs = append(errs, fmt.Errorf("dynop: stop plugin %q: deregister: %w", rec.id, err))
		}
	}
	if u, ok := rec.p.(plugin.Unloader); ok {
		if err := h.guard(rec.id, "Unload", func() error { return u.Unload(ctx) }); err != nil {
			rec.log.Warn("plugin unload failed", "err", err)
			errs = append(errs, fmt.Errorf("dynop: stop plugin %q: unload: %w", rec.id, err))
		}
	}
	return errors.Join(errs...)
}
