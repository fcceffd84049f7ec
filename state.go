package dynop

import (
	"fmt"

	"github.com/dynop/dynop/plugin"
)

// State is where a plugin is in its lifecycle.
type State uint8

// The states of a plugin. A plugin moves Available → Starting → Started →
// Stopping → Available, and may do so many times; Unusable is final.
const (
	// StateAvailable: enumerated, not running; the next acquisition starts it.
	StateAvailable State = iota
	// StateStarting: its Register is running.
	StateStarting
	// StateStarted: its interfaces are live.
	StateStarted
	// StateStopping: its clear-callbacks, Deregister or Unload are running.
	StateStopping
	// StateUnusable: the host will not start it; PluginStatus.Err says why.
	StateUnusable
)

var stateNames = [...]string{"available", "starting", "started", "stopping", "unusable"}

// String returns the state's lower-case name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler with the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// PluginStatus is a snapshot of one plugin as the host sees it.
type PluginStatus struct {
	// Info is the plugin's information as enumerated. Its slices are
	// shared with the host and must not be modified.
	Info plugin.Info
	// Path is the file the plugin was loaded from; empty for Go plugins
	// compiled into the program.
	Path string
	// State is where the plugin is in its lifecycle.
	State State
	// Refs counts the references held to its interfaces.
	Refs int
	// Starts and Stops count completed starts and stops.
	Starts, Stops int
	// Err says why the plugin is unusable, or why its last start failed.
	Err error
}
