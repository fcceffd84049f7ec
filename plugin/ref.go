package plugin

import (
	"errors"

	"github.com/dynop/dynop/internal/friend"
)

// ErrNoRef reports a Release of the zero [Ref], which refers to nothing.
var ErrNoRef = errors.New("zero Ref refers to no interface")

// Ref is one counted reference to an acquired interface. It is a small
// value: copying it does not add a reference, and releasing it twice is an
// error (the second Release reports that the reference was already
// released), never a negative count.
type Ref struct {
	owner refOwner
	token uint64
}

// refOwner is the host that handed a Ref out, called back with the
// Ref's token on Release.
type refOwner = interface{ ReleaseRef(token uint64) error }

// newRef makes a Ref that releases by calling owner.ReleaseRef(token).
// Hosts need it and nothing outside this module does, so package friend
// hands it to them by its type:
//
//	friend.Get[func(interface{ ReleaseRef(uint64) error }, uint64) plugin.Ref]()
func newRef(owner refOwner, token uint64) Ref { return Ref{owner, token} }

func init() { friend.Set(newRef) }

// Release drops the reference. If it was the last one to the last
// interface of a plugin, the plugin stops on this goroutine before Release
// returns, then the plugins it alone kept alive, and any error from
// stopping them is returned (the reference is released all the same).
func (r Ref) Release() error {
	if r.owner == nil {
		return ErrNoRef
	}
	return r.owner.ReleaseRef(r.token)
}

// IsZero reports whether r is the zero Ref.
func (r Ref) IsZero() bool { return r.owner == nil }
