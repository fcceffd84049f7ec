// Package schema is the data of what a plugin declares: the schemas of its
// operators ([Op], op.Schema) and the descriptors of its graph passes
// ([Pass], graph.PassDesc), with their validation, their JSON form and the
// checking of operator arguments against a schema ([Op.Check]).
//
// The package is at the bottom of dynop: it imports iface and tensor and
// no part of the runtime (no operator registry, graph, dispatch or machine
// detection) and not regexp. Packages op and graph give its types their
// familiar names, as aliases: op.Schema is [Op], graph.PassDesc is
// [Pass], and so on; the sentinel errors are the same values (op.ErrSchema
// is [ErrOp], graph.ErrPass is [ErrPass]).
package schema
