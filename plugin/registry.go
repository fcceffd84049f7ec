package plugin

import (
	"slices"
	"sync"

	"github.com/dynop/dynop/schema"
)

var (
	registryMu sync.RWMutex
	registry   = make(map[string]Plugin)
)

// Register makes a Go plugin compiled into the program known to every host
// the program opens. It is meant to be called from an init function.
// Register panics if p is nil, if its ID is invalid (see
// [schema.ValidatePluginID]) or if a plugin with the same ID is already
// registered, as database/sql.Register does for drivers.
func Register(p Plugin) {
	if p == nil {
		panic("plugin: Register plugin is nil")
	}
	id := p.Info().ID
	if err := schema.ValidatePluginID(id); err != nil {
		panic("plugin: Register: " + err.Error())
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[id]; dup {
		panic("plugin: Register called twice for plugin " + id)
	}
	registry[id] = p
}

// Registered returns the plugins registered with [Register], sorted by ID.
func Registered() []Plugin {
	registryMu.RLock()
	defer registryMu.RUnlock()
	ids := make([]string, 0, len(registry))
	for id := range registry {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	list := make([]Plugin, len(ids))
	for i, id := range ids {
		list[i] = registry[id]
	}
	return list
}
