package dynop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
)

// Acquire returns the implementation of interface uid provided by plugin
// pluginID, and a reference to release when done with it. The plugin must
// provide a version of the interface [iface.Compatible] with min. If the
// plugin is not started, Acquire starts it (and the plugins it acquires in
// its Start) before returning; if another goroutine is starting or
// stopping it, Acquire waits, for as long as ctx allows.
//
// Errors wrap [ErrNotFound] (unknown plugin or interface), [ErrVersion],
// [ErrCycle], [ErrInvalid] (broken plugin), [ErrUnsupported], [ErrSignature], [ErrClosed], or the error
// of the plugin's Start, and name the plugin and the interface.
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
	h.mu.Lock()
	for {
		rec, err := h.target(hd, id, uid, min)
		if err != nil {
			h.mu.Unlock()
			return nil, Ref{}, err
		}
		switch rec.state {
		case StateStarted:
			impl, ref, err := h.takeLive(hd, rec, uid)
			h.mu.Unlock()
			return impl, ref, err

		case StateAvailable:
			return h.startAndTake(ctx, hd, rec, uid) // unlocks

		default: // starting or stopping: wait for that to end
			if err := h.await(ctx, hd, rec); err != nil { // unlocks, relocks
				h.mu.Unlock()
				return nil, Ref{}, fmt.Errorf("dynop: acquire %s: %w", describe(rec, uid), err)
			}
		}
	}
}

// target finds the plugin to acquire from and checks what can be checked
// from its Info, before anything starts. h.mu is held.
func (h *Host) target(hd *handle, id string, uid iface.UID, min iface.Version) (*record, error) {
	if err := h.requesterGone(hd, id, uid); err != nil {
		return nil, err
	}
	rec, ok := h.plugins[id]
	if !ok {
		return nil, h.notFound(id)
	}
	if rec.unusable != nil {
		return nil, fmt.Errorf("dynop: acquire plugin %q interface {%s}: plugin is %v: %w", id, uid, rec.state, rec.unusable)
	}
	declared, ok := rec.info.Provides(uid)
	if !ok {
		return nil, fmt.Errorf("dynop: plugin %q: interface {%s}: %w; it provides %s", id, uid, ErrNotFound, listDescs(rec.info.Interfaces))
	}
	if !iface.Compatible(declared.Version, min) {
		what := fmt.Sprintf("plugin %q interface %q {%s}", id, declared.Name, uid)
		return nil, fmt.Errorf("dynop: %w", iface.CheckVersion(what, declared.Version, min))
	}
	if hd != nil && hd.rec == rec {
		return nil, fmt.Errorf("dynop: plugin %q acquires its own interface %q: %w %s → %s", id, declared.Name, ErrCycle, id, id)
	}
	return rec, nil
}

// requesterGone returns why whoever asks (the program, or the plugin whose
// handle hd is) can no longer be given a reference: the host closed, or the
// plugin is stopping or stopped. h.mu is held.
func (h *Host) requesterGone(hd *handle, id string, uid iface.UID) error {
	if hd != nil {
		if err := hd.usable(fmt.Sprintf("acquire plugin %q interface {%s}", id, uid)); err != nil {
			return err
		}
		if hd.rec.state == StateStopping {
			return fmt.Errorf("dynop: plugin %q: acquire plugin %q interface {%s}: %w: the plugin is stopping", hd.rec.id, id, uid, ErrState)
		}
	}
	if h.closed {
		return fmt.Errorf("dynop: acquire plugin %q interface {%s}: %w", id, uid, ErrClosed)
	}
	return nil
}

// takeLive takes a reference to live interface uid of started plugin rec.
// h.mu is held.
func (h *Host) takeLive(hd *handle, rec *record, uid iface.UID) (any, Ref, error) {
	e := rec.entry(uid)
	if e == nil { // Start and Info agree (checked at start), so this is a host bug
		return nil, Ref{}, fmt.Errorf("dynop: acquire %s: %w: the started plugin has no such live interface", describe(rec, uid), ErrNotFound)
	}
	var owner *record
	if hd != nil {
		owner = hd.rec
	}
	return e.impl, h.take(e, owner), nil
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

// startingKey is the context key under which a plugin's Start finds the
// record of the plugin being started, so that acquisitions made with that
// context, even through the program's *Host, count as made by its start.
type startingKey struct{}

// waiter returns the plugin whose start a wait by this request would hold
// up: the requesting plugin if it is starting, else the plugin whose
// Start's context ctx is. nil if none. h.mu is held.
func waiter(ctx context.Context, hd *handle) *record {
	if hd != nil && hd.rec.state == StateStarting {
		return hd.rec
	}
	if rec, ok := ctx.Value(startingKey{}).(*record); ok && rec.state == StateStarting {
		return rec
	}
	return nil
}

// await waits for rec's current start or stop to end. It is called with
// h.mu held, releases it while waiting and holds it again on return. If the
// wait would hold up the start of a plugin that rec's start, through the
// plugins starting plugins wait for, itself waits for, it returns ErrCycle
// instead. If the start it waited for failed (for a reason other than the
// starter's context), that error is returned to every waiter rather than
// each retrying the start.
func (h *Host) await(ctx context.Context, hd *handle, rec *record) error {
	w := waiter(ctx, hd)
	if w != nil {
		if path := cyclePath(w, rec); path != nil {
			return fmt.Errorf("%w: %s", ErrCycle, strings.Join(path, " → "))
		}
		w.waitingOn = append(w.waitingOn, rec)
	}
	done, attempt, starting := rec.done, rec.attempt, rec.state == StateStarting
	h.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
	h.mu.Lock()
	if w != nil {
		w.stopWaiting(rec)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if starting && rec.state == StateAvailable && rec.attempt == attempt && rec.lastErr != nil && !isContextErr(rec.lastErr) {
		return rec.lastErr
	}
	return nil
}

// stopWaiting removes one wait for target. h.mu is held.
func (rec *record) stopWaiting(target *record) {
	if i := slices.Index(rec.waitingOn, target); i >= 0 {
		rec.waitingOn = slices.Delete(rec.waitingOn, i, i+1)
	}
}

// cyclePath returns the IDs w → rec → … → w if rec, through the plugins
// that starting plugins wait for, waits for w; otherwise nil. h.mu is held.
func cyclePath(w, rec *record) []string {
	visited := make(map[*record]bool)
	var path []string
	var reaches func(r *record) bool
	reaches = func(r *record) bool {
		path = append(path, r.id)
		if r == w {
			return true
		}
		if !visited[r] {
			visited[r] = true
			for _, next := range r.waitingOn {
				if reaches(next) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if !reaches(rec) {
		return nil
	}
	return append([]string{w.id}, path...)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// startAndTake starts rec, which is available, and takes a reference to
// interface uid for the requester. It is called with h.mu held and returns
// with it released. The reference is taken in the same critical section
// that marks the plugin started, so no one can stop it in between. If the
// requester went away meanwhile (the host closed, or the requesting plugin
// stopped), the plugin is stopped again instead.
func (h *Host) startAndTake(ctx context.Context, hd *handle, rec *record, uid iface.UID) (any, Ref, error) {
	w := waiter(ctx, hd)
	rec.state = StateStarting
	rec.done = make(chan struct{})
	rec.attempt++
	rec.handle = &handle{h: h, rec: rec}
	if w != nil {
		w.waitingOn = append(w.waitingOn, rec)
	}
	h.mu.Unlock()

	err := h.start(context.WithValue(ctx, startingKey{}, rec), rec)

	h.mu.Lock()
	if w != nil {
		w.stopWaiting(rec)
	}
	if err != nil {
		rec.lastErr = err
		h.endTransition(rec, StateAvailable)
		h.mu.Unlock()
		return nil, Ref{}, fmt.Errorf("dynop: acquire %s: %w", describe(rec, uid), err)
	}
	rec.lastErr = nil
	rec.starts++
	h.startSeq++
	rec.seq = h.startSeq
	h.endTransition(rec, StateStarted)
	if gone := h.requesterGone(hd, rec.id, uid); gone != nil {
		h.markStopping(rec)
		h.mu.Unlock()
		return nil, Ref{}, errors.Join(gone, h.stop(ctx, rec, false))
	}
	impl, ref, err := h.takeLive(hd, rec, uid)
	h.mu.Unlock()
	return impl, ref, err
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
// plugin, if pluginID is empty), before its Stop runs: the program
// drops whatever it keeps that points into the plugin without holding a
// reference. fn receives the ID of the plugin that is stopping. It runs on
// the goroutine that stops the plugin, so it must not acquire interfaces.
// cancel removes the callback.
func (h *Host) OnUnload(pluginID string, fn func(pluginID string)) (cancel func(), err error) {
	return h.addWatcher(nil, pluginID, fn)
}
