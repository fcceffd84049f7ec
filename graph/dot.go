package graph

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteDOT writes g as a Graphviz DOT digraph: inputs and outputs as
// ellipses, nodes as boxes labelled with their name, definition and the
// plugin that provides it, data edges labelled with the output they
// carry, order edges dashed, and subgraphs as clusters.
func (g *Graph) WriteDOT(w io.Writer) error {
	d := &dotWriter{w: bufio.NewWriter(w), ids: map[*Node]string{}}
	d.printf("digraph %s {\n", strconv.Quote(g.name))
	d.printf("  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, in := range g.inputs {
		d.printf("  %s [shape=ellipse, label=%s];\n", d.id(in), strconv.Quote(in.name))
	}
	d.nodes(g, "  ")
	d.edges(g)
	for k, o := range g.outputs {
		id := fmt.Sprintf("out%d", k)
		d.printf("  %s [shape=ellipse, style=bold, label=%s];\n", id, strconv.Quote(o.name))
		src, label := d.source(o.port)
		d.printf("  %s -> %s [label=%s];\n", src, id, strconv.Quote(label))
	}
	d.printf("}\n")
	if d.err != nil {
		return d.err
	}
	return d.w.Flush()
}

type dotWriter struct {
	w   *bufio.Writer
	ids map[*Node]string
	err error
}

func (d *dotWriter) printf(format string, a ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, a...)
	}
}

func (d *dotWriter) id(n *Node) string {
	id, ok := d.ids[n]
	if !ok {
		id = fmt.Sprintf("n%d", len(d.ids))
		d.ids[n] = id
	}
	return id
}

// nodes declares g's nodes, a cluster for each subgraph.
func (d *dotWriter) nodes(g *Graph, indent string) {
	for _, n := range g.nodes {
		if n.input {
			continue
		}
		if sub, ok := n.def.(*Graph); ok {
			d.printf("%ssubgraph %s {\n", indent, strconv.Quote("cluster_"+d.id(n)))
			d.printf("%s  label=%s; style=\"rounded,dashed\";\n", indent, strconv.Quote(n.name+" ("+executorName(sub.Executor)+")"))
			d.nodes(sub, indent+"  ")
			d.printf("%s}\n", indent)
			continue
		}
		lines := []string{n.name}
		if n.def != nil && n.def.Name() != n.name {
			lines = append(lines, n.def.Name())
		} else if n.def == nil {
			lines = append(lines, n.kind+" (no definition)")
		}
		if _, plugin := origin(n.def); plugin != "" {
			lines = append(lines, plugin)
		}
		d.printf("%s%s [label=%s];\n", indent, d.id(n), strconv.Quote(strings.Join(lines, "\n")))
	}
}

// edges draws the edges into g's nodes, subgraphs' included.
func (d *dotWriter) edges(g *Graph) {
	for _, n := range g.nodes {
		for _, b := range n.after {
			d.printf("  %s -> %s [style=dashed];\n", d.inner(b, true), d.inner(n, false))
		}
		if sub, ok := n.def.(*Graph); ok {
			d.edges(sub)
			continue
		}
		for _, p := range n.ins {
			src, label := d.source(p)
			d.printf("  %s -> %s [label=%s];\n", src, d.id(n), strconv.Quote(label))
		}
	}
}

// source resolves a port to the drawn node that produces it, looking
// through subgraph inputs and subgraph nodes, with the output's label.
func (d *dotWriter) source(p Port) (id, label string) {
	for {
		n := p.Node
		if n.input && n.graph.parent != nil {
			k := slices.Index(n.graph.inputs, n)
			p = n.graph.parent.ins[k]
			continue
		}
		if sub, ok := n.def.(*Graph); ok && p.Index < len(sub.outputs) {
			p = sub.outputs[p.Index].port
			continue
		}
		names := outputNames(n.def)
		if p.Index < len(names) {
			return d.id(n), names[p.Index]
		}
		if n.input {
			return d.id(n), ""
		}
		return d.id(n), strconv.Itoa(p.Index)
	}
}

// inner resolves a subgraph node to the drawn node inside it where
// order edges end (its first node) or start (last, its last node).
func (d *dotWriter) inner(n *Node, last bool) string {
	for {
		sub, ok := n.def.(*Graph)
		var members []*Node
		if ok {
			members = slices.DeleteFunc(slices.Clone(sub.nodes), (*Node).IsInput)
		}
		if len(members) == 0 {
			return d.id(n)
		}
		if n = members[0]; last {
			n = members[len(members)-1]
		}
	}
}

func executorName(e Executor) string {
	switch e.(type) {
	case nil:
		return "parallel"
	case Serial:
		return "serial"
	case Parallel:
		return "parallel"
	case *fused:
		return "fused"
	}
	return fmt.Sprintf("%T", e)
}
