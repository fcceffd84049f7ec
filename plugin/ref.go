package plugin

import (
	"errors"
)

// ErrNoRef reports a Release of the zero [Ref], which refers to nothing.
var ErrNoRef = errors.New("zero Ref refers to no interface")

// Ref is one counted reference to an acquired interface. It is a small
// value: copying it does not add a reference, and releasing it twice is an
// error (the second Release reports that the reference was already
// released), never a negative count.
type Ref struct {
	owner RefOwner
	token uint64
}

// RefOwner is implemented by hosts; plugin authors never need it. A host
// hands out references as [NewRef](host, token) and is called back with
// the same token on Release.
type RefOwner interface {
	ReleaseRef(token uint64) error
}

// NewRef returns a Ref that releases by calling owner.ReleaseRef(token).
// It is for host implementations.
func NewRef(owner RefOwner, token uint64) Ref { return Ref{owner, token} }

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
