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
	if errors.Is(err, ErrPanic) {
		var pe *panicError
		if errors.As(err, &pe) {
			h.log.Error("plugin panicked", "plugin", id, "step", step, "panic", pe.value, "stack", string(pe.stack))
		}
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

// start runs rec's Register and Started hooks. rec is in StateStarting.
// On failure everything the plugin added, registered or acquired is undone
// (and, if Register itself succeeded, the plugin's stop hooks run), so the
// plugin is left not started rather than half started.
func (h *Host) start(ctx context.Context, rec *record, hd *handle) error {
	h.log.Debug("plugin starting", "plugin", rec.id)
	err := h.guard(rec.id, "Register", func() error { return rec.p.Register(ctx, hd) })
	if err != nil {
		h.log.Debug("plugin failed to start", "plugin", rec.id, "err", err)
		return errors.Join(fmt.Errorf("dynop: start plugin %q: register: %w", rec.id, err), h.undoStart(rec))
	}
	err = h.checkLive(rec)
	if l, ok := rec.p.(plugin.StartListener); ok && err == nil {
		if perr := h.guard(rec.id, "Started", func() error { l.Started(ctx); return nil }); perr != nil {
			err = fmt.Errorf("dynop: start plugin %q: %w", rec.id, perr)
		}
	}
	if err != nil {
		h.log.Debug("plugin failed to start", "plugin", rec.id, "err", err)
		return errors.Join(err, h.stopHooks(ctx, rec), h.undoStart(rec))
	}
	h.log.Debug("plugin started", "plugin", rec.id)
	return nil
}

// undoStart removes what a failed start of rec added and releases what it
// acquired.
func (h *Host) undoStart(rec *record) error {
	h.dropWatchersOf(rec)
	h.mu.Lock()
	held := h.detach(rec)
	h.mu.Unlock()
	return h.releaseAll(held)
}

// detach removes rec's interfaces and returns the references it holds,
// which the caller releases once h.mu is unlocked. h.mu is held.
func (h *Host) detach(rec *record) []*slot {
	rec.handle.dead = true
	rec.live = nil
	return rec.held.takeAll()
}

// checkLive verifies that Register added every interface Info declares.
func (h *Host) checkLive(rec *record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var missing []string
	for _, d := range rec.info.Interfaces {
		if rec.entry(d.UID) == nil {
			missing = append(missing, d.String())
		}
	}
	if missing != nil {
		return fmt.Errorf("dynop: start plugin %q: %w: Info declares interface(s) that Register did not add: %s",
			rec.id, ErrNotFound, strings.Join(missing, ", "))
	}
	return nil
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
// Deregister, Unload; then rec is available again and the references it
// held are released, which may stop the plugins it depended on. Unless
// force is set, a plugin whose CanUnload says false goes back to
// StateStarted and is asked again on the next release.
func (h *Host) stop(ctx context.Context, rec *record, force bool) error {
	if c, ok := rec.p.(plugin.UnloadChecker); ok {
		can := true
		err := h.guard(rec.id, "CanUnload", func() error { can = c.CanUnload(); return nil })
		switch {
		case err != nil:
			h.log.Warn("CanUnload failed; stopping the plugin", "plugin", rec.id, "err", err)
		case !can && force:
			h.log.Warn("plugin refuses to unload at close; stopping it anyway", "plugin", rec.id)
		case !can:
			h.log.Debug("plugin refuses to unload; will ask again", "plugin", rec.id)
			h.mu.Lock()
			rec.refused = true
			h.refusals++
			h.endTransition(rec, StateStarted)
			h.mu.Unlock()
			return nil
		}
	}
	h.log.Debug("plugin stopping", "plugin", rec.id)
	err := h.stopHooks(ctx, rec)
	h.mu.Lock()
	held := h.detach(rec)
	rec.stops++
	h.endTransition(rec, StateAvailable)
	h.mu.Unlock()
	h.log.Debug("plugin stopped", "plugin", rec.id)
	return errors.Join(err, h.releaseAll(held))
}

// stopHooks runs the clear-callbacks against rec, then its Deregister and
// Unload. Callbacks that rec itself registered are removed first: nothing
// of rec's runs once it starts going away.
func (h *Host) stopHooks(ctx context.Context, rec *record) error {
	h.dropWatchersOf(rec)
	errs := h.runWatchers(rec.id)
	if d, ok := rec.p.(plugin.Deregisterer); ok {
		if err := h.guard(rec.id, "Deregister", func() error { return d.Deregister(ctx) }); err != nil {
			errs = append(errs, fmt.Errorf("dynop: stop plugin %q: deregister: %w", rec.id, err))
		}
	}
	if u, ok := rec.p.(plugin.Unloader); ok {
		if err := h.guard(rec.id, "Unload", func() error { return u.Unload(ctx) }); err != nil {
			errs = append(errs, fmt.Errorf("dynop: stop plugin %q: unload: %w", rec.id, err))
		}
	}
	return errors.Join(errs...)
}
