package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// exBatch returns a batch of one 1-D int64 sample holding vs.
func exBatch(vs ...int64) *tensor.Batch {
	t, err := tensor.FromSlice(vs)
	if err != nil {
		panic(err)
	}
	b, err := tensor.NewBatch(t)
	if err != nil {
		panic(err)
	}
	return b
}

// exValues returns the elements of b's first sample.
func exValues(b *tensor.Batch) []int64 {
	v, err := tensor.Values[int64](b.Sample(0))
	if err != nil {
		panic(err)
	}
	return v
}

// exFunc returns a node definition called name that adds its inputs
// element by element and applies f to each sum.
func exFunc(name string, f func(int64) int64) graph.NodeDef {
	return graph.Func(name, func(ctx context.Context, inputs []*tensor.Batch) ([]*tensor.Batch, error) {
		out := make([]int64, len(exValues(inputs[0])))
		for _, in := range inputs {
			for i, v := range exValues(in) {
				out[i] += v
			}
		}
		for i, v := range out {
			if v < 0 {
				return nil, fmt.Errorf("element %d is negative", i)
			}
			out[i] = f(v)
		}
		return []*tensor.Batch{exBatch(out...)}, nil
	})
}

// exKinds attaches a Go function to every node by its kind, as the
// default populate pass of a build.
var exKinds = graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
	switch n.Kind() {
	case "double":
		return b.SetDefinition(n, exFunc("double", func(v int64) int64 { return 2 * v }))
	case "inc":
		return b.SetDefinition(n, exFunc("inc", func(v int64) int64 { return v + 1 }))
	case "add":
		return b.SetDefinition(n, exFunc("add", func(v int64) int64 { return v }))
	}
	return fmt.Errorf("no function for kind %q", n.Kind())
})

// exGraph builds y = (2x + 1) + x:
//
//	x --> d (double) --> i (inc) --> s (add) --> y
//	|                                ^
//	+--------------------------------+
func exGraph() (*graph.Graph, error) {
	g := graph.New("example")
	x, err := g.AddInput("x")
	if err != nil {
		return nil, err
	}
	d, err := g.AddNode("d", "double", nil, x.Out(0))
	if err != nil {
		return nil, err
	}
	i, err := g.AddNode("i", "inc", nil, d.Out(0))
	if err != nil {
		return nil, err
	}
	s, err := g.AddNode("s", "add", nil, i.Out(0), x.Out(0))
	if err != nil {
		return nil, err
	}
	return g, g.AddOutput("y", s.Out(0))
}

// A graph is built in two steps: nodes and edges first, each node asking
// for a definition by kind, then Build, whose populate passes attach the
// definitions. Execute runs it with its Executor.
func Example() {
	ctx := context.Background()
	g, err := exGraph()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := graph.Build(ctx, g, graph.BuildOptions{Default: exKinds}); err != nil {
		fmt.Println(err)
		return
	}

	g.Executor = graph.Serial{}
	outs, err := g.Execute(ctx, exBatch(1, 2, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exValues(outs[0]))
	// Output:
	// [4 7 10]
}

// Parallel runs independent nodes at the same time on a bounded set of
// workers. An Observer sees every node execution, from whichever worker
// ran it.
func ExampleParallel() {
	ctx := context.Background()
	g := graph.New("fan")
	x, _ := g.AddInput("x")
	var branches []graph.Port
	for _, name := range []string{"a", "b", "c", "d"} {
		n, err := g.AddNode(name, "double", nil, x.Out(0))
		if err != nil {
			fmt.Println(err)
			return
		}
		branches = append(branches, n.Out(0))
	}
	sum, _ := g.AddNode("sum", "add", nil, branches...)
	if err := g.AddOutput("y", sum.Out(0)); err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := graph.Build(ctx, g, graph.BuildOptions{Default: exKinds}); err != nil {
		fmt.Println(err)
		return
	}

	var ran atomic.Int64
	g.Observer = func(s graph.Span) { ran.Add(1) }
	g.Executor = graph.Parallel{Workers: 4}
	outs, err := g.Execute(ctx, exBatch(1, 10))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exValues(outs[0]), "from", ran.Load(), "node executions")
	// Output:
	// [8 80] from 5 node executions
}

// WriteDOT draws a graph for Graphviz: `dot -Tsvg` turns it into a
// picture.
func ExampleGraph_WriteDOT() {
	g, err := exGraph()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: exKinds}); err != nil {
		fmt.Println(err)
		return
	}
	if err := g.WriteDOT(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// digraph "example" {
	//   rankdir=LR;
	//   node [shape=box, style=rounded, fontname="Helvetica"];
	//   edge [fontname="Helvetica", fontsize=10];
	//   n0 [shape=ellipse, label="x"];
	//   n1 [label="d\ndouble"];
	//   n2 [label="i\ninc"];
	//   n3 [label="s\nadd"];
	//   n0 -> n1 [label=""];
	//   n1 -> n2 [label="0"];
	//   n2 -> n3 [label="0"];
	//   n0 -> n3 [label=""];
	//   out0 [shape=ellipse, style=bold, label="y"];
	//   n3 -> out0 [label="0"];
	// }
}

// Passes are registered under a name; a populate pass registered under
// a node's name wins over one registered under its kind, and a default
// pass covers the rest.
func ExamplePasses_Register() {
	ctx := context.Background()
	passes := graph.NewPasses()
	_, err := passes.Register(schema.Pass{Name: "example.triple-i", Kind: schema.Populate, Match: "i", Doc: "Makes node i triple."},
		graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
			return b.SetDefinition(n, exFunc("triple", func(v int64) int64 { return 3 * v }))
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range passes.List() {
		fmt.Printf("%s (%s %q): %s\n", e.Desc.Name, e.Desc.Kind, e.Desc.Match, e.Desc.Doc)
	}

	g, err := exGraph()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := graph.Build(ctx, g, graph.BuildOptions{Passes: passes, Default: exKinds}); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range g.Nodes() {
		if !n.IsInput() {
			fmt.Printf("%s asks for %s, runs %s\n", n.Name(), n.Kind(), n.Definition().Name())
		}
	}
	outs, err := g.Execute(ctx, exBatch(1, 2, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exValues(outs[0]))
	// Output:
	// example.triple-i (populate "i"): Makes node i triple.
	// d asks for double, runs double
	// i asks for inc, runs triple
	// s asks for add, runs add
	// [7 14 21]
}

// A partition pass may group nodes into one node whose definition is a
// subgraph with an executor of its own.
func ExampleBuilder_Group() {
	ctx := context.Background()
	passes := graph.NewPasses()
	_, err := passes.Register(schema.Pass{Name: "example.group", Kind: schema.Partition},
		graph.PartitionFunc(func(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
			return b.Group("d+i", []*graph.Node{g.Node("d"), g.Node("i")}, graph.Serial{})
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := exGraph()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := graph.Build(ctx, g, graph.BuildOptions{Passes: passes, Default: exKinds}); err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range g.Nodes() {
		fmt.Println(n.Name())
	}
	sub := g.Node("d+i").Definition().(*graph.Graph)
	fmt.Println(sub.Node("i").Path())
	outs, err := g.Execute(ctx, exBatch(1, 2, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exValues(outs[0]))
	// Output:
	// x
	// d+i
	// s
	// d+i/i
	// [4 7 10]
}

// A node that fails stops the execution with a *NodeError naming it.
func ExampleNodeError() {
	ctx := context.Background()
	g, err := exGraph()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	if err := graph.Build(ctx, g, graph.BuildOptions{Default: exKinds}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = g.Execute(ctx, exBatch(1, -2, 3))
	var ne *graph.NodeError
	if errors.As(err, &ne) {
		fmt.Println(ne.Node, ne.Kind)
	}
	fmt.Println(err)
	// Output:
	// d double
	// graph: node "d" (kind double): element 1 is negative
}

// exMul is an operator that multiplies int64 elements by its argument
// "by".
var exMul = op.Operator{
	Schema: schema.Op{
		Name:    "example.Mul",
		Doc:     "Multiplies every element by by.",
		Inputs:  []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Int64}}},
		Outputs: []schema.Output{{Name: "y"}},
		Args:    []schema.Arg{{Name: "by", Type: schema.Int, Default: int64(1)}},
	},
	Backends: map[schema.Device]op.Factory{schema.CPU: func(args *schema.Values) (op.Impl, error) {
		return exMulImpl(args.Int("by")), nil
	}},
}

// exMulImpl is an instance of example.Mul.
type exMulImpl int64

// Setup implements op.Impl.
func (m exMulImpl) Setup(inputs []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: tensor.Int64, Shapes: inputs[0].Shapes()}}, nil
}

// Run implements op.Impl.
func (m exMulImpl) Run(ctx context.Context, outputs, inputs []*tensor.Batch) error {
	for i, t := range inputs[0].Samples() {
		x, err := tensor.Values[int64](t)
		if err != nil {
			return err
		}
		y, err := tensor.Values[int64](outputs[0].Sample(i))
		if err != nil {
			return err
		}
		for j, v := range x {
			y[j] = v * int64(m)
		}
	}
	return nil
}

// Nodes whose kind is an operator name get an instance of that operator,
// made with the node's Args, from OperatorPopulate: the default populate
// pass of hosts.
func ExampleOperatorPopulate() {
	ctx := context.Background()
	reg := op.NewRegistry(op.Options{})
	if err := reg.Register(exMul); err != nil {
		fmt.Println(err)
		return
	}

	g := graph.New("ops")
	x, _ := g.AddInput("x")
	times3, _ := g.AddNode("times3", "example.Mul", schema.Args{"by": 3}, x.Out(0))
	times5, _ := g.AddNode("times5", "example.Mul", schema.Args{"by": 5}, times3.Out(0))
	if err := g.AddOutput("y", times5.Out(0)); err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close() // closes the operator instances
	if err := graph.Build(ctx, g, graph.BuildOptions{Operators: reg, Default: graph.OperatorPopulate()}); err != nil {
		fmt.Println(err)
		return
	}
	outs, err := g.Execute(ctx, exBatch(1, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(exValues(outs[0]))
	// Output:
	// [15 30]
}
