// Package schema is the data of what a plugin declares: the plugin itself
// ([Plugin], what a plugin's Info method returns), the schemas of its
// operators ([Op]) and the descriptors of its graph passes ([Pass]), with
// their validation, their JSON form and the checking of operator arguments
// against a schema ([Op.Check]).
//
// The package is at the bottom of dynop: it imports iface and tensor and
// no part of the runtime (no operator registry, graph, dispatch or machine
// detection) and not regexp, so that a plugin built for WebAssembly with
// the Go guest (loader/wasm/guest) declares itself without linking them.
// Packages op, graph and plugin use its types and sentinel errors as they
// are: an operator registry checks [Op] schemas and reports [ErrOp] and
// [ErrArgument], a graph build runs [Pass]es and reports [ErrPass], and a
// host checks a plugin's [Plugin] info and reports [ErrPlugin] (which is
// dynop.ErrInvalid).
//
// Checking a plugin's [Requirements] against a machine is package
// machine's Machine.Check.
package schema
