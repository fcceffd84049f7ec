package dynop

import (
	"fmt"

	"github.com/dynop/dynop/schema"
)

// State is where a plugin is in its lifecycle.
type State uint8

// The states of a plugin. A plugin moves Available → Starting → Started →
// Stopping → Available, and may do so many times. The host never starts a
// plugin in one of the other states; [PluginStatus.Err] says why.
const (
	// StateAvailable: enumerated, not running; the next acquisition starts it.
	StateAvailable State = iota
	// StateStarting: its Start is running.
	StateStarting
	// StateStarted: its interfaces are live.
	StateStarted
	// StateStopping: its clear-callbacks, Stop or Unload are running.
	StateStopping
	// StateBroken: the plugin cannot be used: its file cannot be read,
	// its scan failed, its info breaks the rules or conflicts with
	// another plugin's.
	StateBroken
	// StateUnsupported: this machine does not meet its requirements (OS,
	// architecture, CPU features, GPU, plugin API).
	StateUnsupported
	// StateUntrusted: the signature policy requires a signature, and its
	// signature does not verify.
	StateUntrusted
	// StateDuplicate: another plugin with its ID came first on the search
	// path; [PluginStatus.DuplicateOf] says which.
	StateDuplicate
	// StateNotFound: the host knows no plugin of that ID. Only the status
	// [Host.Plugin] returns with its error has it; [PluginStatus.Err]
	// wraps [ErrNotFound].
	StateNotFound
)

var stateNames = [...]string{"available", "starting", "started", "stopping", "broken", "unsupported", "untrusted", "duplicate", "not found"}

// Usable reports whether the host may start a plugin in state s.
func (s State) Usable() bool { return s <= StateStopping }

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
	Info schema.Plugin
	// Path is the file the plugin was loaded from; empty for Go plugins
	// compiled into the program.
	Path string
	// State is where the plugin is in its lifecycle.
	State State
	// Refs counts the references held to its interfaces.
	Refs int
	// Starts and Stops count completed starts and stops.
	Starts, Stops int
	// Err says why the plugin is broken, unsupported, untrusted or a
	// duplicate, or why its last start failed.
	Err error
	// DuplicateOf is, for a plugin whose ID another plugin has and is
	// used for, the path of that plugin's file ("compiled in" for a Go
	// plugin compiled into the program). A usable plugin passed over so is
	// a duplicate; one that cannot be used anyway keeps its state.
	DuplicateOf string
	// Signer is the id of the key whose signature on the plugin file
	// verified; empty if the policy is off or it is unsigned.
	Signer string
	// Bundled are the files the plugin ships and loads with it (shared
	// libraries beside it), as absolute paths, in load order; their
	// digests are in its manifest.
	Bundled []string
	// Engine names what runs a sandboxed plugin: the WebAssembly engine,
	// "wasmtime" or "wazero"; empty for others. A plugin says by having
	// a method Engine() string.
	Engine string
}
