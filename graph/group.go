package graph

import (
	"fmt"
	"slices"
	"strings"
)

// commit applies the groups the running partition pass asked for, in
// order.
func (b *Builder) commit() error {
	for _, gr := range b.groups {
		if err := groupNodes(gr); err != nil {
			return err
		}
	}
	return nil
}

// groupNodes replaces gr's nodes in their graph by one node whose
// definition is a subgraph of them.
func groupNodes(gr group) error {
	g := gr.nodes[0].graph
	members := make(map[*Node]bool, len(gr.nodes))
	for _, n := range gr.nodes {
		switch {
		case n.graph != g:
			return fmt.Errorf("group %q: %w: node %q is in graph %q, node %q in graph %q (grouped already?)",
				gr.name, ErrInvalid, gr.nodes[0].name, g.name, n.name, n.graph.name)
		case n.input:
			return fmt.Errorf("group %q: %w: node %q is a graph input", gr.name, ErrInvalid, n.name)
		case members[n]:
			return fmt.Errorf("group %q: %w: node %q listed twice", gr.name, ErrInvalid, n.name)
		}
		members[n] = true
	}
	if other := g.byName[gr.name]; other != nil && !members[other] {
		return fmt.Errorf("group %q: %w: the graph has another node of that name", gr.name, ErrInvalid)
	}
	if path := g.escape(members); path != "" {
		return fmt.Errorf("group %q: %w: not convex, a path leaves the group and comes back: %s", gr.name, ErrInvalid, path)
	}

	sub := New(gr.name)
	sub.Executor = gr.exec
	if sub.Executor == nil {
		sub.Executor = Serial{}
	}
	node := &Node{name: gr.name, kind: gr.name, graph: g, def: sub}
	sub.parent = node
	inputs := map[Port]*Node{}
	for _, m := range g.nodes { // graph order, so the subgraph keeps it
		if !members[m] {
			continue
		}
		for k, p := range m.ins {
			if members[p.Node] {
				continue
			}
			in, ok := inputs[p]
			if !ok {
				in = &Node{name: uniqueName(sub, p.String()), graph: sub, input: true}
				sub.nodes = append(sub.nodes, in)
				sub.byName[in.name] = in
				sub.inputs = append(sub.inputs, in)
				inputs[p] = in
				node.ins = append(node.ins, p)
			}
			m.ins[k] = Port{in, 0}
		}
		m.after = slices.DeleteFunc(m.after, func(d *Node) bool {
			if !members[d] && !slices.Contains(node.after, d) {
				node.after = append(node.after, d)
			}
			return !members[d]
		})
		m.graph = sub
		sub.nodes = append(sub.nodes, m)
		sub.byName[m.name] = m
	}

	outputs := map[Port]int{}
	export := func(p Port) Port {
		k, ok := outputs[p]
		if !ok {
			k = len(sub.outputs)
			sub.outputs = append(sub.outputs, namedPort{p.String(), p})
			outputs[p] = k
		}
		return Port{node, k}
	}
	var kept []*Node
	placed := false
	for _, n := range g.nodes {
		if members[n] { // the group takes the place of its first member
			if !placed {
				kept = append(kept, node)
				placed = true
			}
			delete(g.byName, n.name)
			continue
		}
		kept = append(kept, n)
		for k, p := range n.ins {
			if members[p.Node] {
				n.ins[k] = export(p)
			}
		}
		replaced := false
		n.after = slices.DeleteFunc(n.after, func(d *Node) bool {
			if members[d] {
				replaced = true
				return true
			}
			return false
		})
		if replaced {
			n.after = append(n.after, node)
		}
	}
	for k, o := range g.outputs {
		if members[o.port.Node] {
			g.outputs[k].port = export(o.port)
		}
	}
	g.nodes = kept
	g.byName[node.name] = node
	g.changed()
	return nil
}

// uniqueName returns name, or name with a suffix, that no node of g has.
func uniqueName(g *Graph, name string) string {
	for i, n := 1, name; ; i++ {
		if g.byName[n] == nil {
			return n
		}
		n = fmt.Sprintf("%s#%d", name, i)
	}
}

// escape returns a path that leaves the member set and re-enters it, as
// "a -> x -> b", or "" if there is none.
func (g *Graph) escape(members map[*Node]bool) string {
	succ := map[*Node][]*Node{}
	for _, n := range g.nodes {
		for _, d := range deps(n) {
			succ[d] = append(succ[d], n)
		}
	}
	for _, m := range g.nodes {
		if !members[m] {
			continue
		}
		// Depth-first from m through non-members, remembering parents.
		parent := map[*Node]*Node{}
		stack := []*Node{m}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, s := range succ[n] {
				if members[s] {
					if members[n] {
						continue // an edge inside the group
					}
					path := []string{s.name}
					for x := n; x != m; x = parent[x] {
						path = append(path, x.name)
					}
					path = append(path, m.name)
					slices.Reverse(path)
					return strings.Join(path, " -> ")
				}
				if _, seen := parent[s]; seen {
					continue
				}
				parent[s] = n
				stack = append(stack, s)
			}
		}
	}
	return ""
}
