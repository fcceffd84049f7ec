// Package schema is the data of what a plugin declares: the plugin itself
// ([Plugin], which package plugin calls plugin.Info), the schemas of its
// operators ([Op], op.Schema) and the descriptors of its graph passes
// ([Pass], graph.PassDesc), with their validation, their JSON form and the
// checking of operator arguments against a schema ([Op.Check]).
//
// The package is at the bottom of dynop: it imports iface and tensor and
// no part of the runtime (no operator registry, graph, dispatch or machine
// detection) and not regexp, so that a plugin built for WebAssembly with
// the Go guest (loader/wasm/guest) declares itself without linking them.
// Packages op, graph and plugin give its types their familiar names, as
// aliases: op.Schema is [Op], graph.PassDesc is [Pass], plugin.Info is
// [Plugin], and so on; the sentinel errors are the same values
// (op.ErrSchema is [ErrOp], plugin.ErrInvalid is [ErrPlugin]).
//
// Checking a plugin's [Requirements] against a machine is package
// machine's Machine.Check.
package schema
