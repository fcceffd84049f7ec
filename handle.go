package dynop

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/dynop/dynop/dispatch"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
)

// handle is the plugin.Registrar one start of one plugin sees. It dies when
// that start ends in failure or the plugin stops; a restarted plugin gets a
// new handle.
type handle struct {
	h    *Host
	rec  *record
	dead bool // guarded by h.mu
}

var _ plugin.Registrar = (*handle)(nil)

// usable reports why hd cannot be used for op now, or nil. h.mu is held.
func (hd *handle) usable(op string) error {
	if hd.dead {
		return fmt.Errorf("dynop: plugin %q: %s: %w: the plugin is not started", hd.rec.id, op, ErrState)
	}
	if hd.h.closed {
		return fmt.Errorf("dynop: plugin %q: %s: %w", hd.rec.id, op, ErrClosed)
	}
	return nil
}

// AddInterface implements plugin.Registrar.
func (hd *handle) AddInterface(desc iface.Desc, impl any) error {
	h, rec := hd.h, hd.rec
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := hd.usable("AddInterface"); err != nil {
		return err
	}
	if !rec.registering {
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: allowed only during Start", rec.id, desc, ErrState)
	}
	declared, ok := rec.info.Provides(desc.UID)
	switch {
	case !ok:
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: its Info does not declare it (declares %s)",
			rec.id, desc, ErrInvalid, listDescs(rec.info.Interfaces))
	case declared.Version != desc.Version:
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: its Info declares version %s",
			rec.id, desc, ErrVersion, declared.Version)
	case declared.Name != desc.Name:
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: its Info declares this UID as %q",
			rec.id, desc, ErrInvalid, declared.Name)
	case desc.UID == operatorsInterface.UID:
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: the host provides it from the operators registered", rec.id, desc, ErrInvalid)
	case impl == nil:
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: implementation is nil", rec.id, desc, ErrInvalid)
	case rec.entry(desc.UID) != nil:
		return fmt.Errorf("dynop: plugin %q: AddInterface %s: %w: already added", rec.id, desc, ErrDuplicate)
	}
	rec.live = append(rec.live, &entry{rec: rec, desc: declared, impl: impl})
	return nil
}

// RemoveInterface implements plugin.Registrar.
func (hd *handle) RemoveInterface(uid iface.UID) error {
	h, rec := hd.h, hd.rec
	h.mu.Lock()
	defer h.mu.Unlock()
	// Unlike the other methods this one works on a closed host: Close
	// stops plugins, and their Stop may remove what they added.
	if hd.dead {
		return hd.usable("RemoveInterface")
	}
	if !rec.registering && rec.state != StateStopping {
		return fmt.Errorf("dynop: plugin %q: RemoveInterface {%s}: %w: allowed only during Start and Stop", rec.id, uid, ErrState)
	}
	i := slices.IndexFunc(rec.live, func(e *entry) bool { return e.desc.UID == uid })
	if i < 0 {
		return fmt.Errorf("dynop: plugin %q: RemoveInterface {%s}: %w: not added", rec.id, uid, ErrNotFound)
	}
	rec.live = slices.Delete(rec.live, i, i+1)
	return nil
}

// Acquire implements plugin.Registrar: the reference belongs to the plugin and
// is released when the plugin stops, if the plugin has not released it.
func (hd *handle) Acquire(ctx context.Context, pluginID string, uid iface.UID, min iface.Version) (any, plugin.Ref, error) {
	return hd.h.acquire(ctx, hd, pluginID, uid, min)
}

// OnUnload implements plugin.Registrar.
func (hd *handle) OnUnload(pluginID string, fn func(pluginID string)) (func(), error) {
	return hd.h.addWatcher(hd, pluginID, fn)
}

// Logger implements plugin.Registrar.
func (hd *handle) Logger() *slog.Logger { return hd.rec.log }

func (hd *handle) CPU() dispatch.CPU { return hd.h.cpu }

// A watcher is a clear-callback registered with OnUnload.
type watcher struct {
	target  string  // plugin it watches; "" for every plugin
	owner   *record // plugin that registered it; nil for the host program
	fn      func(string)
	running int  // calls in progress; guarded by Host.mu
	dead    bool // cancelled; guarded by Host.mu
}

// addWatcher registers a clear-callback for the host program (hd nil) or
// a plugin.
func (h *Host) addWatcher(hd *handle, target string, fn func(string)) (func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var owner *record
	if hd != nil {
		if err := hd.usable("OnUnload"); err != nil {
			return nil, err
		}
		owner = hd.rec
		if owner.state == StateStopping {
			// Its callbacks have been dropped for good; one added now
			// could run after its Unload.
			return nil, fmt.Errorf("dynop: plugin %q: OnUnload: %w: the plugin is stopping", owner.id, ErrState)
		}
	} else if h.closed {
		return nil, fmt.Errorf("dynop: OnUnload: %w", ErrClosed)
	}
	if fn == nil {
		return nil, fmt.Errorf("dynop: OnUnload(%q): %w: callback is nil", target, ErrInvalid)
	}
	if _, ok := h.plugins[target]; target != "" && !ok {
		return nil, fmt.Errorf("dynop: OnUnload: plugin %q: %w", target, ErrNotFound)
	}
	w := &watcher{target: target, owner: owner, fn: fn}
	h.watchers = append(h.watchers, w)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.removeWatcher(w)
			h.mu.Unlock()
		})
	}, nil
}

// removeWatcher cancels w. h.mu is held.
func (h *Host) removeWatcher(w *watcher) {
	w.dead = true
	if i := slices.Index(h.watchers, w); i >= 0 {
		h.watchers = slices.Delete(h.watchers, i, i+1)
	}
}

// dropWatchersOf cancels the callbacks rec registered and waits until none
// of them is running, so that none runs once rec starts going away.
func (h *Host) dropWatchersOf(rec *record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var mine []*watcher
	for _, w := range h.watchers {
		if w.owner == rec {
			mine = append(mine, w)
		}
	}
	for _, w := range mine {
		h.removeWatcher(w)
	}
	for _, w := range mine {
		for w.running > 0 {
			h.idle.Wait()
		}
	}
}

// runWatchers calls, in registration order, the clear-callbacks that watch
// plugin id, and returns the errors of those that panicked. A callback is
// marked running only while it runs, and one cancelled meanwhile is
// skipped, so a callback that stops another plugin (by releasing its last
// reference) never waits for that plugin's callbacks queued behind it.
func (h *Host) runWatchers(id string) []error {
	h.mu.Lock()
	var due []*watcher
	for _, w := range h.watchers {
		if w.target == "" || w.target == id {
			due = append(due, w)
		}
	}
	h.mu.Unlock()
	var errs []error
	for _, w := range due {
		h.mu.Lock()
		if w.dead {
			h.mu.Unlock()
			continue
		}
		w.running++
		h.mu.Unlock()
		who := "host program"
		if w.owner != nil {
			who = w.owner.id
		}
		if err := h.guard(who, "clear-callback for "+id, func() error { w.fn(id); return nil }); err != nil {
			errs = append(errs, fmt.Errorf("dynop: stop plugin %q: %w", id, err))
		}
		h.mu.Lock()
		w.running--
		if w.running == 0 {
			h.idle.Broadcast()
		}
		h.mu.Unlock()
	}
	return errs
}
