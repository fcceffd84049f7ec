package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynop/dynop/tensor"
)

// plan is a graph compiled for execution.
type plan struct {
	nodes []*Node // executable nodes in topological order
	ins   [][]slot
	preds [][]int32 // the nodes each node waits for
	next  [][]int32
	nouts []int // outputs each node must return, -1 if unknown
	outs  []slot
	// recycle marks the operator nodes and fused chains whose outputs
	// only other operator nodes and fused chains read: once an execution
	// is over nothing holds them, and their instances (op.Instance.
	// Recycle) or fused walks (fused.recycle) may reuse the memory.
	recycle []bool
	sched   *schedule
	// sharedScratch is set once the operator nodes share one scratchpad,
	// which they may when Serial runs them one at a time.
	sharedScratch bool
}

// slot locates a value: output out of plan node node, or graph input
// -1-node when node < 0.
type slot struct {
	node int32
	out  int32
}

// check reports whether the graph can execute: every node has a
// definition, every edge meets a port that exists and there is no
// cycle, in the graph and in its subgraphs. Execute checks the same on
// first use.
func (g *Graph) check() error {
	if _, err := g.compile(); err != nil {
		return err
	}
	for _, n := range g.nodes {
		if sub, ok := n.def.(*Graph); ok {
			if err := sub.check(); err != nil {
				return fmt.Errorf("graph %q: node %q: %w", g.name, n.name, err)
			}
		}
	}
	return nil
}

func (g *Graph) compile() (*plan, error) {
	if g.plan != nil {
		return g.plan, nil
	}
	if err := g.checkPorts(); err != nil {
		return nil, err
	}
	order, err := g.topoOrder()
	if err != nil {
		return nil, err
	}
	p := &plan{nodes: order}
	pos := make(map[*Node]int32, len(g.nodes))
	for k, in := range g.inputs {
		pos[in] = int32(-1 - k)
	}
	for i, n := range order {
		pos[n] = int32(i)
	}
	at := func(port Port) slot { return slot{pos[port.Node], int32(port.Index)} }
	n := len(order)
	p.ins, p.preds, p.next, p.nouts = make([][]slot, n), make([][]int32, n), make([][]int32, n), make([]int, n)
	for i, node := range order {
		var preds []int32
		for _, port := range node.ins {
			p.ins[i] = append(p.ins[i], at(port))
			if j := pos[port.Node]; j >= 0 {
				preds = append(preds, j)
			}
		}
		for _, b := range node.after {
			if j := pos[b]; j >= 0 {
				preds = append(preds, j)
			}
		}
		slices.Sort(preds)
		preds = slices.Compact(preds)
		p.preds[i] = preds
		for _, j := range preds {
			p.next[j] = append(p.next[j], int32(i))
		}
		p.nouts[i] = -1
		if d, ok := node.def.(ports); ok {
			_, _, names := d.ports()
			p.nouts[i] = len(names)
		}
	}
	for _, o := range g.outputs {
		p.outs = append(p.outs, at(o.port))
	}
	p.recycle = make([]bool, n)
	for i, node := range p.nodes {
		p.recycle[i] = recycles(node)
	}
	for i, node := range p.nodes {
		if !recycles(node) {
			for _, sl := range p.ins[i] {
				if sl.node >= 0 {
					p.recycle[sl.node] = false // a Go function or subgraph may keep what it reads
				}
			}
		}
	}
	for _, sl := range p.outs {
		if sl.node >= 0 {
			p.recycle[sl.node] = false // the caller has it
		}
	}
	s := &schedule{p: p, vals: make([][]*tensor.Batch, n), inbuf: make([][]*tensor.Batch, n), done: make([]bool, n)}
	for i := range order {
		s.inbuf[i] = make([]*tensor.Batch, len(p.ins[i]))
	}
	p.sched = s
	g.plan = p
	return p, nil
}

// checkPorts checks definitions and ports.
func (g *Graph) checkPorts() error {
	var errs []string
	for _, n := range g.nodes {
		if n.input {
			continue
		}
		if n.def == nil {
			errs = append(errs, fmt.Sprintf("node %q (kind %q) has no definition: no pass attached one", n.name, n.kind))
			continue
		}
		if _, ok := n.def.(NodeDef); !ok {
			if _, ok := n.def.(*Graph); !ok {
				errs = append(errs, fmt.Sprintf("node %q: definition %T is neither a NodeDef nor a *Graph", n.name, n.def))
				continue
			}
		}
		if d, ok := n.def.(ports); ok {
			lo, hi, _ := d.ports()
			if len(n.ins) < lo || len(n.ins) > hi {
				errs = append(errs, fmt.Sprintf("node %q: %s takes %s, it is given %d", n.name, n.def.Name(), count(lo, hi), len(n.ins)))
			}
		}
		for k, port := range n.ins {
			if msg := checkPort(port); msg != "" {
				errs = append(errs, fmt.Sprintf("node %q: input %d: %s", n.name, k, msg))
			}
		}
	}
	for _, o := range g.outputs {
		if msg := checkPort(o.port); msg != "" {
			errs = append(errs, fmt.Sprintf("output %q: %s", o.name, msg))
		}
	}
	if errs != nil {
		return fmt.Errorf("graph %q: %w: %s", g.name, ErrInvalid, strings.Join(errs, "; "))
	}
	return nil
}

func count(lo, hi int) string {
	switch {
	case lo == hi && lo == 1:
		return "1 input"
	case lo == hi:
		return fmt.Sprintf("%d inputs", lo)
	}
	return fmt.Sprintf("%d to %d inputs", lo, hi)
}

// checkPort says what is wrong with a port, or "".
func checkPort(p Port) string {
	if p.Node.input {
		if p.Index != 0 {
			return fmt.Sprintf("graph input %q has one output, not %d", p.Node.name, p.Index+1)
		}
		return ""
	}
	if d, ok := p.Node.def.(ports); ok {
		if _, _, names := d.ports(); p.Index >= len(names) {
			return fmt.Sprintf("node %q (%s) has outputs [%s], no output %d", p.Node.name, p.Node.def.Name(), strings.Join(names, " "), p.Index)
		}
	}
	return ""
}

// topoOrder orders the graph's executable nodes so that each comes after
// its dependencies, ties in the order nodes were added; a cycle is an
// error that names it.
func (g *Graph) topoOrder() ([]*Node, error) {
	index := make(map[*Node]int, len(g.nodes))
	for i, n := range g.nodes {
		index[n] = i
	}
	indeg := make([]int, len(g.nodes))
	succ := make([][]int, len(g.nodes))
	for i, n := range g.nodes {
		for _, d := range deps(n) {
			indeg[i]++
			succ[index[d]] = append(succ[index[d]], i)
		}
	}
	// A min-heap would order ties exactly; a sorted ready list does the
	// same at the sizes graphs have, in O(n log n) per insertion batch.
	var ready, order []int
	for i := range g.nodes {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		grew := false
		for _, j := range succ[i] {
			if indeg[j]--; indeg[j] == 0 {
				ready = append(ready, j)
				grew = true
			}
		}
		if grew {
			slices.Sort(ready)
		}
	}
	if len(order) < len(g.nodes) {
		return nil, fmt.Errorf("graph %q: %w: cycle: %s", g.name, ErrInvalid, g.findCycle(indeg))
	}
	var nodes []*Node
	for _, i := range order {
		if !g.nodes[i].input {
			nodes = append(nodes, g.nodes[i])
		}
	}
	return nodes, nil
}

// deps returns the nodes n depends on, with repeats.
func deps(n *Node) []*Node {
	d := make([]*Node, 0, len(n.ins)+len(n.after))
	for _, p := range n.ins {
		d = append(d, p.Node)
	}
	return append(d, n.after...)
}

// findCycle names one cycle among the nodes left with a positive
// in-degree, as "a -> b -> a".
func (g *Graph) findCycle(indeg []int) string {
	left := make(map[*Node]bool)
	for i, n := range g.nodes {
		if indeg[i] > 0 {
			left[n] = true
		}
	}
	// Walk backwards along dependencies inside the remainder until a node
	// repeats: every remaining node has a remaining dependency.
	var start *Node
	for _, n := range g.nodes {
		if left[n] {
			start = n
			break
		}
	}
	seen := map[*Node]int{}
	var path []*Node
	for n := start; ; {
		if k, ok := seen[n]; ok {
			path = path[k:]
			break
		}
		seen[n] = len(path)
		path = append(path, n)
		for _, d := range deps(n) {
			if left[d] {
				n = d
				break
			}
		}
	}
	slices.Reverse(path)
	// Start at the node added first, so the same cycle reads the same.
	first := 0
	for i, n := range path {
		if slices.Index(g.nodes, n) < slices.Index(g.nodes, path[first]) {
			first = i
		}
	}
	path = append(path[first:], path[:first]...)
	names := make([]string, 0, len(path)+1)
	for _, n := range path {
		names = append(names, n.name)
	}
	return strings.Join(append(names, path[0].name), " -> ")
}

// recycles reports whether n is an operator node or a fused chain: a
// node that keeps none of its inputs, and whose outputs its definition
// may take back (see plan.recycle).
func recycles(n *Node) bool {
	switch d := n.def.(type) {
	case *OperatorDef:
		return true
	case *Graph:
		_, ok := d.Executor.(*fused)
		return ok
	}
	return false
}

// recycle hands outs, the outputs of node n, back to what made them: an
// operator instance or a fused walk.
func recycle(n *Node, outs []*tensor.Batch) {
	switch d := n.def.(type) {
	case *OperatorDef:
		d.Instance.Recycle(outs)
	case *Graph:
		if f, ok := d.Executor.(*fused); ok {
			f.recycle(outs)
		}
	}
}
