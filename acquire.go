package dynop

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
)

// Acquire returns the implementation of interface uid provided by plugin
// pluginID, and a reference to release when done with it. The plugin must
// provide a version of the interface [iface.Compatible] with min. If the
// plugin is not started, Acquire starts it (and the plugins it acquires in
// its Register) before returning; if another goroutine is starting or
// stopping it, Acquire waits, for as long as ctx allows.
//
// Errors wrap [ErrNotFound] (unknown plugin or interface), [ErrVersion],
// [ErrCycle], [ErrInvalid] (unusable plugin), [ErrClosed], or the error
// of the plugin's Register, and name the plugin and the interface.
func (h *Host) Acquire(ctx context.Context, pluginID string, uid iface.UID, min iface.Version) (any, Ref, error) {
	return h.acquire(ctx, nil, pluginID, uid, min)
}

// Acquire acquires interface def of plugin pluginID from h as a T, asking
// for at least def.Version; see [Host.Acquire]. If the implementation is not
// a T, the error wraps [ErrType].
func Acquire[T any](ctx context.Context, h *Host, pluginID string, def iface.Def[T]) (T, Ref, error) {
	return plugin.Acquire(ctx, h, pluginID, def)
}

// acquire is Acquire for the host program (hd nil) or the plugin whose
// handle hd is; that plugin then owns the reference.
func (h *Host) acquire(ctx context.Context, hd *handle, id string, uid iface.UID, min iface.Version) (any, Ref, error) {
	var owner *record
	if hd != nil {
		owner = hd.rec
	}
	h.mu.Lock()
	for {
		rec, err := h.target(hd, id, uid, min)
		if err != nil {
			h.mu.Unlock()
			return nil, Ref{}, err
		}
		switch rec.state {
		case StateStarted:
			e := rec.entry(uid)
			ref := h.take(e, owner)
			h.mu.Unlock()
			return e.impl, ref, nil

		case StateAvailable:
			return h.startAndTake(ctx, owner, rec, uid) // unlocks

		default: // starting or stopping: wait for that to end
			if err := h.await(ctx, owner, rec); err != nil { // unlocks, relocks
				h.mu.Unlock()
				return nil, Ref{}, fmt.Errorf("dynop: acquire %s: %w", describe(rec, uid), err)
			}
		}
	}
}

// target finds the plugin to acquire from and checks what can be checked
// from its Info, before anything starts. h.mu is held.
func (h *Host) target(hd *handle, id string, uid iface.UID, min iface.Version) (*record, error) {
	var owner *record
	if hd != nil {
		owner = hd.rec
		if err := hd.usable("acquire from plugin " + id); err != nil {
			return nil, err
		}
		if owner.state == StateStopping {
			return nil, fmt.Errorf("dynop: plugin %q: acquire from plugin %q: %w: the plugin is stopping", owner.id, id, ErrState)
		}
	}
	if h.closed {
		return nil, fmt.Errorf("dynop: acquire from plugin %q: %w", id, ErrClosed)
	}
	rec, ok := h.plugins[id]
	if !ok {
		return nil, h.notFound(id)
	}
	if rec.unusable != nil {
		return nil, fmt.Errorf("dynop: plugin %q is unusable: %w", id, rec.unusable)
	}
	declared, ok := rec.info.Provides(uid)
	if !ok {
		return nil, fmt.Errorf("dynop: plugin %q: interface {%s}: %w; it provides %s", id, uid, ErrNotFound, listDescs(rec.info.Interfaces))
	}
	if !iface.Compatible(declared.Version, min) {
		what := fmt.Sprintf("plugin %q interface %q {%s}", id, declared.Name, uid)
		return nil, fmt.Errorf("dynop: %w", iface.CheckVersion(what, declared.Version, min))
	}
	if owner == rec {
		return nil, fmt.Errorf("dynop: plugin %q acquires its own interface %q: %w %s → %s", id, declared.Name, ErrCycle, id, id)
	}
	return rec, nil
}

func listDescs(ds []iface.Desc) string {
	if len(ds) == 0 {
		return "no interfaces"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ", ")
}

// describe names interface uid of rec for messages.
func describe(rec *record, uid iface.UID) string {
	if d, ok := rec.info.Provides(uid); ok {
		return fmt.Sprintf("plugin %q interface %q", rec.id, d.Name)
	}
	return fmt.Sprintf("plugin %q interface {%s}", rec.id, uid)
}

// await waits for rec's current start or stop to end. It is called with
// h.mu held, releases it while waiting and holds it again on return. A
// plugin that waits for a plugin that, through the chain of plugins waiting
// on each other, waits for it, gets ErrCycle. If the start it waited for
// failed (for a reason other than the starter's context), that error is
// returned to every waiter rather than each retrying the start.
func (h *Host) await(ctx context.Context, owner *record, rec *record) error {
	if owner != nil && rec.state == StateStarting {
		if path := cyclePath(owner, rec); path != nil {
			return fmt.Errorf("%w: %s", ErrCycle, strings.Join(path, " → "))
		}
	}
	if owner != nil {
		owner.waitingOn = rec
	}
	done, attempt, starting := rec.done, rec.attempt, rec.state == StateStarting
	h.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
	h.mu.Lock()
	if owner != nil {
		owner.waitingOn = nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if starting && rec.state == StateAvailable && rec.attempt == attempt && rec.lastErr != nil && !isContextErr(rec.lastErr) {
		return rec.lastErr
	}
	return nil
}

// cyclePath returns the IDs owner → rec → … → owner if rec, through the
// plugins it is waiting on, waits for owner; otherwise nil. h.mu is held.
func cyclePath(owner, rec *record) []string {
	path := []string{owner.id}
	for r := rec; r != nil; r = r.waitingOn {
		path = append(path, r.id)
		if r == owner {
			return path
		}
	}
	return nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// startAndTake starts rec, which is available, and takes a reference to
// interface uid for owner. It is called with h.mu held and returns with it
// released. The reference is taken in the same critical section that marks
// the plugin started, so no one can stop it in between.
func (h *Host) startAndTake(ctx context.Context, owner, rec *record, uid iface.UID) (any, Ref, error) {
	rec.state = StateStarting
	rec.done = make(chan struct{})
	rec.attempt++
	hd := &handle{h: h, rec: rec, log: h.log.With("plugin", rec.id)}
	rec.handle = hd
	if owner != nil {
		owner.waitingOn = rec
	}
	h.mu.Unlock()

	err := h.start(ctx, rec, hd)

	h.mu.Lock()
	if owner != nil {
		owner.waitingOn = nil
	}
	if err != nil {
		h.endTransition(rec, StateAvailable)
		rec.lastErr = err
		h.mu.Unlock()
		return nil, Ref{}, err
	}
	rec.lastErr = nil
	rec.starts++
	h.startSeq++
	rec.seq = h.startSeq
	h.endTransition(rec, StateStarted)
	if h.closed { // Close will stop it
		h.mu.Unlock()
		return nil, Ref{}, fmt.Errorf("dynop: acquire %s: %w", describe(rec, uid), ErrClosed)
	}
	e := rec.entry(uid)
	ref := h.take(e, owner)
	h.mu.Unlock()
	return e.impl, ref, nil
}

// entry returns rec's live interface uid, or nil. h.mu is held.
func (rec *record) entry(uid iface.UID) *entry {
	for _, e := range rec.live {
		if e.desc.UID == uid {
			return e
		}
	}
	return nil
}

// OnUnload registers fn to be called before plugin pluginID stops (any
// plugin, if pluginID is empty), before its Deregister runs: the program
// drops whatever it keeps that points into the plugin without holding a
// reference. fn receives the ID of the plugin that is stopping and must
// not acquire interfaces. cancel removes the callback.
func (h *Host) OnUnload(pluginID string, fn func(pluginID string)) (cancel func(), err error) {
	return h.addWatcher(nil, pluginID, fn)
}
