package plugin

import (
	"github.com/dynop/dynop/schema"
)

// APIVersion is the version of the dynop plugin API that this module
// implements, the same as [schema.APIVersion]. A plugin records the API
// version it was built against in [Info.APIVersion]; the host refuses a
// plugin whose API version is not [iface.Compatible] with its own, that
// is a plugin built for a newer API.
var APIVersion = schema.APIVersion

// ErrInvalid reports plugin information that breaks the rules of [Info].
// It is [schema.ErrPlugin].
var ErrInvalid = schema.ErrPlugin

// Info describes a plugin: who it is, which versions it has, what it
// provides, what it needs and where it can run. A host reads Info when it
// enumerates plugins, before any plugin starts, so Info must be cheap to
// produce and must not change while the plugin is registered.
//
// Info is [schema.Plugin], defined in package schema with the operator
// schemas and pass descriptors it holds, so that a WebAssembly guest can
// declare itself without linking the runtime that package plugin's
// [Host] brings in.
type Info = schema.Plugin

// Need is an interface that a plugin acquires from another plugin:
// [schema.Need].
type Need = schema.Need

// Requirements is what a machine must offer for a plugin to run:
// [schema.Requirements]. machine.Machine.Check checks them.
type Requirements = schema.Requirements

// GPURequirements is the GPU a plugin needs: [schema.GPURequirements].
type GPURequirements = schema.GPURequirements

// ValidateID reports whether id follows dynop's (and NVIGI's) naming
// convention vendor.plugin.name[.backend], for example
// "acme.plugin.blur" or "acme.plugin.blur.cuda". The error wraps
// [ErrInvalid] and quotes the rule. It is [schema.ValidatePluginID].
func ValidateID(id string) error { return schema.ValidatePluginID(id) }

// MaxIDLen is the longest plugin ID, in bytes. IDs name plugins in
// manifests, file names, logs and terminals; a longer one is a mistake or
// an attack, not a name.
const MaxIDLen = schema.MaxPluginIDLen
