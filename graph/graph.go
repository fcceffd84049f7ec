// Package graph builds and runs execution graphs, after NVIDIA Omniverse's
// Execution Framework: a graph of graphs.
//
// A [Graph] holds nodes joined by typed edges: a data edge carries a
// [tensor.Batch] from one node's output to another's input, an order
// edge only says that one node runs after another. A node asks for a
// definition by name (its kind, typically an operator name) and gets one
// from the pass pipeline ([Build]):
//
//   - populate passes, registered under a name, attach definitions to
//     nodes; a pass registered under a node's name wins over one
//     registered under its kind, and a default pass (the operator
//     registry, [OperatorPopulate]) covers the rest;
//   - partition passes, in order of priority, may group nodes into one
//     node whose definition is a subgraph, only through the [Builder],
//     which commits the groups when the pass returns (as EF requires);
//     [FusePass] fuses chains of pointwise operators so the data is
//     walked once;
//   - global passes see the whole graph last.
//
// A definition is either opaque code, a [NodeDef] (a Go function,
// [Func], or an operator instance, [OperatorDef]), or a [*Graph]: a
// subgraph with its own [Executor]. [Parallel] runs ready nodes on a
// bounded set of workers by dependency counting; [Serial] runs them one
// by one.
//
// Passes come from a [Passes] registry. Plugins contribute passes through
// the host like operators; a plugin's pass starts the plugin when a build
// needs it, and the graph keeps the plugin started until [Graph.Close].
package graph

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
)

// ErrInvalid: the graph is malformed (unknown node, duplicate name, a
// port that does not exist, a cycle, a node without a definition). A
// pass that fails or breaks the rules of passes is reported with
// [schema.ErrPass], which [schema.Pass.Validate] reports too.
var ErrInvalid = errors.New("invalid graph")

// Graph is a set of nodes joined by edges, with named inputs and outputs.
// Building a graph (adding nodes and edges, running passes) is not safe
// for concurrent use; executing one is, one execution at a time.
type Graph struct {
	// Executor schedules the graph's nodes: [Parallel] or [Serial]; nil
	// means Parallel with GOMAXPROCS workers.
	Executor Executor
	// Observer, if set, sees every node execution when it ends,
	// subgraphs' included. Executors call it from their workers, so it
	// must be safe for concurrent use.
	Observer func(Span)

	name    string
	nodes   []*Node
	byName  map[string]*Node
	inputs  []*Node
	outputs []namedPort
	parent  *Node // the node whose definition this graph is, if any

	closers []func() error
	closed  bool

	exec sync.Mutex // one execution at a time
	plan *plan      // compiled on first execution; nil after a change
}

type namedPort struct {
	name string
	port Port
}

// New returns an empty graph called name.
func New(name string) *Graph {
	return &Graph{name: name, byName: make(map[string]*Node)}
}

// Name returns the graph's name. A *Graph is a [Definition]: attached
// to a node, it runs as a subgraph, its inputs fed by the node's inputs
// and its outputs the node's outputs.
func (g *Graph) Name() string { return g.name }

// Node is one vertex of a graph.
type Node struct {
	name   string
	kind   string
	graph  *Graph
	input  bool // a graph input: its value is given to Execute
	def    Definition
	ins    []Port
	after  []*Node
	Args   schema.Args   // arguments for the definition, for populate passes
	Device schema.Device // the device to run on; "" means the default
}

// Name returns the node's name, unique in its graph.
func (n *Node) Name() string { return n.name }

// Kind returns the name of the definition the node asks for, such as an
// operator name; populate passes registered under it attach one.
func (n *Node) Kind() string { return n.kind }

// Definition returns the node's definition, nil until a pass attaches
// one. Graph inputs have none.
func (n *Node) Definition() Definition { return n.def }

// Inputs returns the ports that feed the node's inputs, in order.
func (n *Node) Inputs() []Port { return slices.Clone(n.ins) }

// After returns the nodes the node must run after, besides those that
// feed it.
func (n *Node) After() []*Node { return slices.Clone(n.after) }

// IsInput reports whether the node is one of its graph's inputs.
func (n *Node) IsInput() bool { return n.input }

// Graph returns the graph the node belongs to.
func (n *Node) Graph() *Graph { return n.graph }

// Path returns the node's name qualified by the nodes whose subgraphs
// contain it, such as "adjust+gamma/gamma".
func (n *Node) Path() string {
	if p := n.graph.parent; p != nil {
		return p.Path() + "/" + n.name
	}
	return n.name
}

// Out returns the node's output port i.
func (n *Node) Out(i int) Port { return Port{n, i} }

// Port is one output of a node.
type Port struct {
	Node  *Node
	Index int
}

func (p Port) String() string {
	if p.Node == nil {
		return "<nil>"
	}
	if p.Node.input && p.Index == 0 {
		return p.Node.name
	}
	if names := outputNames(p.Node.def); p.Index < len(names) {
		return p.Node.name + "." + names[p.Index]
	}
	return fmt.Sprintf("%s.%d", p.Node.name, p.Index)
}

// AddInput adds a graph input called name: a node without a definition
// whose only output is the batch given to Execute in its place.
func (g *Graph) AddInput(name string) (*Node, error) {
	n, err := g.add(name, "")
	if err != nil {
		return nil, err
	}
	n.input = true
	g.inputs = append(g.inputs, n)
	return n, nil
}

// AddNode adds a node called name that asks for a definition of kind,
// fed by inputs in order. Populate passes see args.
func (g *Graph) AddNode(name, kind string, args schema.Args, inputs ...Port) (*Node, error) {
	if kind == "" {
		return nil, fmt.Errorf("graph %q: node %q: %w: empty kind", g.name, name, ErrInvalid)
	}
	for i, p := range inputs {
		if err := g.owns(p.Node); err != nil {
			return nil, fmt.Errorf("graph %q: node %q: input %d: %w", g.name, name, i, err)
		}
		if p.Index < 0 {
			return nil, fmt.Errorf("graph %q: node %q: input %d: %w: negative output index", g.name, name, i, ErrInvalid)
		}
	}
	n, err := g.add(name, kind)
	if err != nil {
		return nil, err
	}
	n.Args = args
	n.ins = slices.Clone(inputs)
	return n, nil
}

// AddOrder adds an order edge: n runs after before.
func (g *Graph) AddOrder(before, n *Node) error {
	if err := g.owns(before); err != nil {
		return err
	}
	if err := g.owns(n); err != nil {
		return err
	}
	if !slices.Contains(n.after, before) {
		n.after = append(n.after, before)
		g.changed()
	}
	return nil
}

// AddOutput makes port p a graph output called name.
func (g *Graph) AddOutput(name string, p Port) error {
	if err := g.owns(p.Node); err != nil {
		return fmt.Errorf("graph %q: output %q: %w", g.name, name, err)
	}
	for _, o := range g.outputs {
		if o.name == name {
			return fmt.Errorf("graph %q: %w: two outputs called %q", g.name, ErrInvalid, name)
		}
	}
	g.outputs = append(g.outputs, namedPort{name, p})
	g.changed()
	return nil
}

func (g *Graph) add(name, kind string) (*Node, error) {
	if name == "" {
		return nil, fmt.Errorf("graph %q: %w: a node needs a name", g.name, ErrInvalid)
	}
	if _, dup := g.byName[name]; dup {
		return nil, fmt.Errorf("graph %q: %w: two nodes called %q", g.name, ErrInvalid, name)
	}
	n := &Node{name: name, kind: kind, graph: g}
	g.nodes = append(g.nodes, n)
	g.byName[name] = n
	g.changed()
	return n, nil
}

func (g *Graph) owns(n *Node) error {
	if n == nil {
		return fmt.Errorf("%w: nil node", ErrInvalid)
	}
	if n.graph != g {
		return fmt.Errorf("%w: node %q belongs to graph %q, not %q", ErrInvalid, n.name, n.graph.name, g.name)
	}
	return nil
}

func (g *Graph) changed() { g.plan = nil }

// Node returns the node called name, or nil.
func (g *Graph) Node(name string) *Node { return g.byName[name] }

// Nodes returns the graph's nodes (inputs included) in the order they
// were added; a group committed by a partition pass takes the place of
// its first member.
func (g *Graph) Nodes() []*Node { return slices.Clone(g.nodes) }

// Inputs returns the graph's input nodes in order.
func (g *Graph) Inputs() []*Node { return slices.Clone(g.inputs) }

// Outputs returns the names of the graph's outputs and their ports.
func (g *Graph) Outputs() (names []string, ports []Port) {
	for _, o := range g.outputs {
		names = append(names, o.name)
		ports = append(ports, o.port)
	}
	return names, ports
}

// Parent returns the node whose definition g is, or nil.
func (g *Graph) Parent() *Node { return g.parent }

// onClose registers fn to run when the graph closes, after the
// definitions close, latest first: what a pass acquired for the graph
// (a plugin reference, a replaced definition).
func (g *Graph) onClose(fn func() error) { g.closers = append(g.closers, fn) }

// Close closes every definition that is an io.Closer, subgraphs
// included, then releases what the build's passes acquired for the
// graph, such as the plugins that provide them. It waits for an
// execution in progress. A second Close returns errdefs.ErrClosed.
func (g *Graph) Close() error {
	g.exec.Lock()
	defer g.exec.Unlock()
	if g.closed {
		return fmt.Errorf("graph %q: %w", g.name, errdefs.ErrClosed)
	}
	g.closed = true
	var errs []error
	for _, n := range g.nodes {
		if err := closeDefinition(n.def); err != nil && !errors.Is(err, errdefs.ErrClosed) {
			errs = append(errs, fmt.Errorf("graph %q: node %q: close: %w", g.name, n.name, err))
		}
	}
	for i := len(g.closers) - 1; i >= 0; i-- {
		if err := g.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	g.closers = nil
	return errors.Join(errs...)
}

// closeDefinition closes def if it holds resources: a subgraph, or a
// definition with a Close method.
func closeDefinition(def Definition) error {
	if c, ok := def.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// parentGraph returns the graph that holds the node g is the definition
// of, or nil.
func (g *Graph) parentGraph() *Graph {
	if g.parent == nil {
		return nil
	}
	return g.parent.graph
}
