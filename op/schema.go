// Package op is dynop's operator model, after NVIDIA DALI's: an operator is
// a [Schema] (what it is called, what it takes, which arguments it accepts)
// plus a factory per device ([Operator]). Schemas are data: they travel in a
// plugin's Info, the CLI prints them, and pipeline files are checked against
// them before any plugin code runs. They are defined, with their
// validation and argument checking, in package schema, which imports no
// part of the runtime, so that a WebAssembly guest can declare operators
// without linking it; Schema and the other names here are aliases of
// schema's.
//
// A [Registry] maps names to operators. An operator may be registered with
// its backends ([Registry.Register]), or only declared with its schema and a
// [Provider] that produces the backends on demand ([Registry.Declare]); the
// host declares the operators of plugins that are not started yet, so that
// asking for an operator by name starts the plugin that provides it.
//
// [Registry.New] validates arguments against the schema and returns an
// [Instance]: Setup computes output shapes for a batch of inputs, Run fills
// outputs, Close releases the instance and, through the provider, the
// plugin behind it.
package op

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dynop/dynop/schema"
)

// Sentinel errors; test for them with [errors.Is]. Messages name the
// operator and, where there is one, the argument or input.
var (
	// ErrSchema: a schema breaks the rules of [Schema.Validate], or
	// backends do not match it. It is [schema.ErrOp].
	ErrSchema = schema.ErrOp
	// ErrArgument: an argument is unknown, of the wrong type, out of
	// range, not allowed, or missing. It is [schema.ErrArgument].
	ErrArgument = schema.ErrArgument
	// ErrInput: inputs or outputs do not fit the schema (count, dtype,
	// layout, ndim, batch size).
	ErrInput = errors.New("invalid operator input")
	// ErrVariant: a variant asked for by name ([WithVariant]) that the
	// operator does not have.
	ErrVariant = errors.New("no such variant")
)

// Device names where an operator backend runs: [schema.Device].
type Device = schema.Device

// The devices an operator can have backends for.
const (
	CPU = schema.CPU
	GPU = schema.GPU
)

// Type is the type of an operator argument: [schema.Type].
type Type = schema.Type

// Argument types. Lists hold elements of the matching scalar type.
const (
	Int        = schema.Int
	Float      = schema.Float
	Bool       = schema.Bool
	String     = schema.String
	DType      = schema.DType
	IntList    = schema.IntList
	FloatList  = schema.FloatList
	BoolList   = schema.BoolList
	StringList = schema.StringList
	DTypeList  = schema.DTypeList
)

// Schema describes an operator: its name, what it does, its inputs and
// outputs, its arguments and the devices it has backends for. It is
// [schema.Op].
type Schema = schema.Op

// Input describes one input of an operator: [schema.Input].
type Input = schema.Input

// Output describes one output of an operator: [schema.Output].
type Output = schema.Output

// Arg describes one argument of an operator: [schema.Arg].
type Arg = schema.Arg

// Args are the arguments given to an operator, by name: [schema.Args].
type Args = schema.Args

// Values are an operator's arguments after validation: [schema.Values].
type Values = schema.Values

// Bounds returns a *float64 for Arg.Min and Arg.Max literals.
func Bounds(v float64) *float64 { return schema.Bounds(v) }

// ValidateName reports whether name is a valid operator name
// ([schema.ValidateOpName]).
func ValidateName(name string) error { return schema.ValidateOpName(name) }

// normalized returns a copy of s whose argument defaults and allowed
// values have the Go types their Type calls for (see [Arg.Normalize]).
func normalized(s Schema) (Schema, error) {
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
