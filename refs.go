package dynop

import (
	"fmt"
	"github.com/dynop/dynop/internal/friend"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
)

// A slot records one outstanding reference. Slots are recycled through a
// free list, and a Ref names its slot by index and generation, so acquiring
// and releasing allocate nothing once the table has grown, and a stale Ref
// (released before, or from before Close) is recognised by its generation.
type slot struct {
	index      uint32
	gen        uint32
	entry      *entry  // nil while the slot is free
	owner      *record // the plugin holding the reference; nil for the host program
	prev, next *slot   // neighbours in the owner's list, or next in the free list
}

// slotList is an intrusive doubly linked list of the slots one owner holds.
type slotList struct {
	head *slot
}

func (l *slotList) push(s *slot) {
	s.prev, s.next = nil, l.head
	if l.head != nil {
		l.head.prev = s
	}
	l.head = s
}

func (l *slotList) remove(s *slot) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		l.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	}
	s.prev, s.next = nil, nil
}

// An entry is one live interface of a started plugin. The references to
// it are the slots that point at it; decisions need only their sum per
// plugin, record.refs.
type entry struct {
	rec  *record
	desc iface.Desc
	impl any
}

// refOwner adapts a Host to the owner a plugin.Ref calls back, without
// putting ReleaseRef in the Host's own method set.
type refOwner Host

func (o *refOwner) ReleaseRef(token uint64) error { return (*Host)(o).releaseToken(token) }

// newRef makes the plugin.Ref of a token (see package plugin).
var newRef = friend.Get[func(interface{ ReleaseRef(uint64) error }, uint64) plugin.Ref]()

func token(s *slot) uint64                 { return uint64(s.index)<<32 | uint64(s.gen) }
func splitToken(t uint64) (uint32, uint32) { return uint32(t >> 32), uint32(t) }

// take adds a reference to e held by owner (nil: the host program).
// h.mu is held.
func (h *Host) take(e *entry, owner *record) plugin.Ref {
	s := h.free
	if s != nil {
		h.free = s.next
		s.next = nil
	} else {
		s = &slot{index: uint32(len(h.slots))}
		h.slots = append(h.slots, s)
	}
	s.entry, s.owner = e, owner
	h.holders(owner).push(s)
	e.rec.refs++
	if e.rec.refused {
		e.rec.refused = false
		h.refusals--
	}
	return newRef((*refOwner)(h), token(s))
}

// holders returns the list of references that owner holds.
func (h *Host) holders(owner *record) *slotList {
	if owner == nil {
		return &h.appRefs
	}
	return &owner.held
}

// drop removes the reference in s and returns the plugins that must stop
// because of it, already marked as stopping. h.mu is held.
func (h *Host) drop(s *slot) []*record {
	rec := h.unref(s)
	var stop []*record
	if rec.refs == 0 && rec.state == StateStarted {
		h.markStopping(rec)
		stop = append(stop, rec)
	}
	if h.refusals > 0 { // ask the plugins that refused to unload again
		for _, r := range h.sorted {
			if r.refused && r.refs == 0 && r.state == StateStarted {
				h.markStopping(r)
				stop = append(stop, r)
			}
		}
	}
	return stop
}

// unref removes the reference in s without stopping anything and returns
// the plugin it referred to. h.mu is held.
func (h *Host) unref(s *slot) *record {
	e := s.entry
	e.rec.refs--
	h.holders(s.owner).remove(s)
	s.entry, s.owner = nil, nil
	s.gen++
	s.next = h.free
	h.free = s
	return e.rec
}

// releaseToken implements Ref.Release.
func (h *Host) releaseToken(t uint64) error {
	index, gen := splitToken(t)
	h.mu.Lock()
	if int(index) >= len(h.slots) {
		h.mu.Unlock()
		return fmt.Errorf("dynop: release: %w", ErrReleased)
	}
	s := h.slots[index]
	if s.gen != gen || s.entry == nil {
		closed := h.closed
		h.mu.Unlock()
		if closed {
			return fmt.Errorf("dynop: release: %w (Close revokes the references of operator instances and passes; or it was released before)", ErrClosed)
		}
		return fmt.Errorf("dynop: release: %w", ErrReleased)
	}
	stop := h.drop(s)
	h.mu.Unlock()
	return h.stopAll(stop)
}
