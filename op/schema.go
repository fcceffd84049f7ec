// Package op is dynop's operator model, after NVIDIA DALI's: an operator is
// a [schema.Op] (what it is called, what it takes, which arguments it
// accepts) plus a factory per device ([Operator]). Schemas are data: they
// travel in a plugin's info, the CLI prints them, and pipeline files are
// checked against them before any plugin code runs. They are defined, with
// their validation and argument checking ([schema.Op.Check], which returns
// the [schema.Values] a factory reads), in package schema, which imports
// no part of the runtime, so that a WebAssembly guest can declare
// operators without linking it.
//
// A [Registry] maps names to operators. An operator may be registered with
// its backends ([Registry.Register]); a host also declares the operators of
// plugins that are not started yet, by their schemas alone, so that asking
// for an operator by name starts the plugin that provides it (the first
// [Registry.New] does, and the instance keeps the plugin started).
//
// [Registry.New] validates arguments against the schema and returns an
// [Instance]: Setup computes output shapes for a batch of inputs, Run fills
// outputs, Close releases the instance and with it the plugin behind it.
package op

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dynop/dynop/schema"
)

// Sentinel errors; test for them with [errors.Is]. Messages name the
// operator and, where there is one, the argument or input. A schema that
// breaks the rules, or backends that do not match it, are reported with
// [schema.ErrOp], and a bad argument with [schema.ErrArgument].
var (
	// ErrInput: inputs or outputs do not fit the schema (count, dtype,
	// layout, ndim, batch size).
	ErrInput = errors.New("invalid operator input")
	// ErrVariant: a variant asked for by name ([WithVariant]) that the
	// operator does not have.
	ErrVariant = errors.New("no such variant")
)

// normalized returns a copy of s whose argument defaults and allowed values
// have the Go types their Type calls for (see [schema.Arg.Normalize]).
func normalized(s schema.Op) (schema.Op, error) {
	s.Args = slices.Clone(s.Args)
	for i := range s.Args {
		a := &s.Args[i]
		a.Allowed = slices.Clone(a.Allowed)
		if err := a.Normalize(); err != nil {
			return s, fmt.Errorf("operator %q: %w", s.Name, err)
		}
	}
	return s, nil
}
