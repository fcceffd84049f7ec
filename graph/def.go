package graph

import (
	"context"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/tensor"
)

// Definition is what a node runs: a [NodeDef] (opaque code) or a
// [*Graph] (a subgraph with its own executor).
type Definition interface {
	// Name names the definition, such as an operator name.
	Name() string
}

// NodeDef is opaque code: it computes a node's outputs from its inputs.
// A node executes once per graph execution, so Execute is never called
// concurrently for one node; a NodeDef shared by several nodes must be
// safe for concurrent use. A NodeDef that implements io.Closer is
// closed with its graph.
type NodeDef interface {
	Definition
	Execute(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error)
}

// Ports is implemented by definitions that know how many inputs and
// outputs they have; a build checks every edge against it.
type Ports interface {
	// Ports returns the fewest and most inputs the definition takes and
	// the names of its outputs.
	Ports() (minInputs, maxInputs int, outputs []string)
}

// FuncDef is a Go function as a definition; see [Func].
type FuncDef struct {
	name string
	fn   func(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error)
}

// Func returns a definition called name that runs fn. A panic in fn
// becomes an error wrapping [dynop.ErrPanic].
func Func(name string, fn func(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error)) *FuncDef {
	return &FuncDef{name, fn}
}

// Name implements Definition.
func (f *FuncDef) Name() string { return f.name }

// Execute implements NodeDef.
func (f *FuncDef) Execute(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error) {
	return f.fn(ctx, inputs)
}

// OperatorDef is an operator instance as a definition: Execute runs
// Setup, allocates the outputs and runs it ([op.Instance.Exec]). It owns
// the instance and closes it with the graph.
type OperatorDef struct {
	Instance *op.Instance
}

// Operator returns a definition that runs in; the graph closes in when
// it closes.
func Operator(in *op.Instance) *OperatorDef { return &OperatorDef{in} }

// Name implements Definition: the operator's name.
func (d *OperatorDef) Name() string { return d.Instance.Name() }

// Execute implements NodeDef.
func (d *OperatorDef) Execute(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error) {
	return d.Instance.Exec(ctx, inputs...)
}

// Ports implements Ports from the operator's schema.
func (d *OperatorDef) Ports() (minInputs, maxInputs int, outputs []string) {
	s := d.Instance.Schema()
	for _, o := range s.Outputs {
		outputs = append(outputs, o.Name)
	}
	return len(s.Inputs) - s.OptionalInputs, len(s.Inputs), outputs
}

// Close closes the instance.
func (d *OperatorDef) Close() error { return d.Instance.Close() }

// origin names the operator and plugin behind a definition, for errors.
func origin(def Definition) (operator, plugin string) {
	if d, ok := def.(*OperatorDef); ok {
		return d.Instance.Name(), d.Instance.Plugin()
	}
	return "", ""
}

// outputNames returns the names of def's outputs, if it knows them.
func outputNames(def Definition) []string {
	if d, ok := def.(Ports); ok {
		_, _, names := d.Ports()
		return names
	}
	return nil
}

// Ports implements Ports: a subgraph takes one input per graph input and
// has the graph's outputs.
func (g *Graph) Ports() (minInputs, maxInputs int, outputs []string) {
	names, _ := g.Outputs()
	return len(g.inputs), len(g.inputs), names
}
