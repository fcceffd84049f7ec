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

// ports is implemented by definitions that know how many inputs and
// outputs they have (operators and subgraphs); a build checks every
// edge against it.
type ports interface {
	// ports returns the fewest and most inputs the definition takes and
	// the names of its outputs.
	ports() (minInputs, maxInputs int, outputs []string)
}

// funcDef is a Go function as a definition; see [Func].
type funcDef struct {
	name string
	fn   func(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error)
}

// Func returns a definition called name that runs fn. A panic in fn
// becomes an error wrapping [dynop.ErrPanic].
func Func(name string, fn func(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error)) NodeDef {
	return &funcDef{name, fn}
}

func (f *funcDef) Name() string { return f.name }

func (f *funcDef) Execute(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error) {
	return f.fn(ctx, inputs)
}

// OperatorDef is an operator instance as a definition: Execute runs
// Setup, allocates the outputs and runs it ([op.Instance.Exec]). It owns
// the instance and closes it with the graph.
type OperatorDef struct {
	Instance *op.Instance
}

// Name implements Definition: the operator's name.
func (d *OperatorDef) Name() string { return d.Instance.Name() }

// Execute implements NodeDef.
func (d *OperatorDef) Execute(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error) {
	return d.Instance.Exec(ctx, inputs...)
}

// ports implements ports from the operator's schema.
func (d *OperatorDef) ports() (minInputs, maxInputs int, outputs []string) {
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
	if d, ok := def.(ports); ok {
		_, _, names := d.ports()
		return names
	}
	return nil
}

// ports implements ports: a subgraph takes one input per graph input and
// has the graph's outputs.
func (g *Graph) ports() (minInputs, maxInputs int, outputs []string) {
	names, _ := g.Outputs()
	return len(g.inputs), len(g.inputs), names
}
