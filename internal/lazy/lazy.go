// Package lazy is the registry behind op.Registry and graph.Passes: a
// map from names to entries, each either registered with its value or
// declared by a plugin that provides the value when it is first needed
// (starting the plugin), with a release function that lets the plugin
// stop again. Operators and passes are the same idea with different
// descriptions and values, so they share this one generic type.
//
// The public registries keep their own checks and messages; a host
// declares entries through the hooks they hand over in package friend.
package lazy

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// Provider produces the value of a declared entry on demand: a host
// starts the plugin that provides it. release drops what keeps the
// value's code loaded.
type Provider[V any] interface {
	Provide(ctx context.Context, name string) (v V, release func() error, err error)
}

// Entry is one name in a Registry.
type Entry[D, V any] struct {
	// Desc describes the entry: a schema, a pass description, and
	// whatever the registry keeps with it.
	Desc D
	// Plugin is the ID of the plugin that declared the entry; "" for a
	// registered one.
	Plugin string
	// Value is a registered entry's value.
	Value V
	// Provider gives a declared entry's value; nil for a registered one.
	Provider Provider[V]
}

// Declared reports whether the entry's value comes from a provider.
func (e *Entry[D, V]) Declared() bool { return e.Provider != nil }

// Get returns the entry's value, called name: the registered one, with a
// release that does nothing, or the one its provider gives.
func (e *Entry[D, V]) Get(ctx context.Context, name string) (V, func() error, error) {
	if e.Provider == nil {
		return e.Value, func() error { return nil }, nil
	}
	return e.Provider.Provide(ctx, name)
}

// Registry maps names to entries. It is safe for concurrent use.
type Registry[D, V any] struct {
	dup func(name string, old *Entry[D, V]) error

	mu sync.RWMutex
	m  map[string]*Entry[D, V]
}

// New returns an empty registry; adding a name that it holds fails with
// dup's error about the entry already there.
func New[D, V any](dup func(name string, old *Entry[D, V]) error) *Registry[D, V] {
	return &Registry[D, V]{dup: dup, m: make(map[string]*Entry[D, V])}
}

// Add adds e under name and returns a function that removes it (and does
// nothing once another entry has taken the name), or dup's error.
func (r *Registry[D, V]) Add(name string, e *Entry[D, V]) (remove func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.m[name]; ok {
		return nil, r.dup(name, old)
	}
	r.m[name] = e
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.m[name] == e {
			delete(r.m, name)
		}
	}, nil
}

// Get returns the entry called name.
func (r *Registry[D, V]) Get(name string) (*Entry[D, V], bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.m[name]
	return e, ok
}

// Names returns every name, sorted.
func (r *Registry[D, V]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.m))
}

// Entries returns every entry, sorted by name.
func (r *Registry[D, V]) Entries() []*Entry[D, V] {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Entry[D, V], 0, len(r.m))
	for _, name := range slices.Sorted(maps.Keys(r.m)) {
		out = append(out, r.m[name])
	}
	return out
}
