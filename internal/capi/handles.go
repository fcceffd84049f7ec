package capi

import (
	"fmt"
	"sync"

	"github.com/dynop/dynop/internal/errdefs"
)

// kind is what a handle stands for. It is the handle value's low two bits,
// so that a handle of one kind passed for another, or a closed one, is
// told apart without remembering closed handles.
type kind uintptr

const (
	kindHost kind = iota + 1
	kindOperator
	kindRef
	kindPipeline
)

const kindBits = 3

func (k kind) String() string {
	switch k {
	case kindHost:
		return "host"
	case kindOperator:
		return "operator"
	case kindRef:
		return "interface reference"
	case kindPipeline:
		return "pipeline"
	}
	return fmt.Sprintf("kind(%d)", uintptr(k))
}

// a returns the kind's name with its indefinite article.
func (k kind) a() string {
	if k == kindHost || k == kindPipeline {
		return "a " + k.String()
	}
	return "an " + k.String()
}

// kindOf returns the kind handle id says it is.
func kindOf(id uintptr) kind { return kind(id & (1<<kindBits - 1)) }

// handles maps the handle values C holds to the Go values they stand for.
// C never holds a Go pointer: a handle is a number, n<<kindBits | kind,
// with n counting up from 1 and never reused, so a handle that was closed
// is never mistaken for a live one.
type handles struct {
	mu   sync.Mutex
	next uintptr
	live map[uintptr]any
}

func newHandles() *handles { return &handles{next: 1, live: make(map[uintptr]any)} }

// add returns a new handle of kind k for v.
func (t *handles) add(k kind, v any) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := t.next<<kindBits | uintptr(k)
	t.next++
	t.live[id] = v
	return id
}

// get returns the value of handle id of kind k. Its error says whether id
// is NULL, closed, of another kind, or was never a handle; it wraps
// [errdefs.ErrClosed] for a closed one and errInvalid otherwise.
func (t *handles) get(id uintptr, k kind) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lookup(id, k)
}

func (t *handles) lookup(id uintptr, k kind) (any, error) {
	if id == 0 {
		return nil, fmt.Errorf("%w: the %s handle is NULL", errInvalid, k)
	}
	if v, ok := t.live[id]; ok && kindOf(id) == k {
		return v, nil
	}
	got := kindOf(id)
	if id>>kindBits == 0 || id>>kindBits >= t.next || got < kindHost || got > kindPipeline {
		return nil, fmt.Errorf("%w: %#x is not %s handle of this library", errInvalid, id, k.a())
	}
	if got != k {
		return nil, fmt.Errorf("%w: %#x is %s handle, not %s handle", errInvalid, id, got.a(), k.a())
	}
	return nil, fmt.Errorf("the %s handle %#x is %w (used after it was closed or released)", k, id, errdefs.ErrClosed)
}

// remove removes handle id of kind k and returns its value, with get's
// errors.
func (t *handles) remove(id uintptr, k kind) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, err := t.lookup(id, k)
	if err == nil {
		delete(t.live, id)
	}
	return v, err
}
