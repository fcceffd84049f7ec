package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/internal/lazy"
	"log/slog"
	"slices"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
)

// PopulatePass attaches definitions to nodes ([Builder.SetDefinition]).
type PopulatePass interface {
	Populate(ctx context.Context, b *Builder, n *Node) error
}

// PartitionPass groups nodes ([Builder.Group]); the groups are committed
// when it returns.
type PartitionPass interface {
	Partition(ctx context.Context, b *Builder, g *Graph) error
}

// GlobalPass sees the whole graph after partitioning.
type GlobalPass interface {
	Global(ctx context.Context, b *Builder, g *Graph) error
}

// PopulateFunc is a function as a PopulatePass.
type PopulateFunc func(ctx context.Context, b *Builder, n *Node) error

// Populate implements PopulatePass.
func (f PopulateFunc) Populate(ctx context.Context, b *Builder, n *Node) error { return f(ctx, b, n) }

// PartitionFunc is a function as a PartitionPass.
type PartitionFunc func(ctx context.Context, b *Builder, g *Graph) error

// Partition implements PartitionPass.
func (f PartitionFunc) Partition(ctx context.Context, b *Builder, g *Graph) error {
	return f(ctx, b, g)
}

// GlobalFunc is a function as a GlobalPass.
type GlobalFunc func(ctx context.Context, b *Builder, g *Graph) error

// Global implements GlobalPass.
func (f GlobalFunc) Global(ctx context.Context, b *Builder, g *Graph) error { return f(ctx, b, g) }

// PassEntry is what a registry knows about one pass.
type PassEntry struct {
	Desc schema.Pass `json:"desc"`
	// Plugin is the ID of the plugin that provides the pass, or "".
	Plugin string `json:"plugin,omitempty"`
}

// passEntry is one pass in a registry: registered with its code, or
// declared with a provider (a host starting the plugin that has it).
type passEntry = lazy.Entry[schema.Pass, any]

// Passes is a registry of passes. It is safe for concurrent use.
type Passes struct {
	r *lazy.Registry[schema.Pass, any]
}

// NewPasses returns an empty registry.
func NewPasses() *Passes {
	return &Passes{lazy.New(func(name string, old *passEntry) error {
		return fmt.Errorf("graph: pass %q: %w: registered twice (first by %s)", name, schema.ErrPass, cmp.Or(old.Plugin, "the host"))
	})}
}

// Register adds pass under desc; pass must implement the interface of
// desc.Kind. It returns a function that removes it.
func (r *Passes) Register(desc schema.Pass, pass any) (remove func(), err error) {
	if err := checkPass(desc, pass); err != nil {
		return nil, err
	}
	return r.r.Add(desc.Name, &passEntry{Desc: desc, Value: pass})
}

// declare adds a pass that p produces when a build needs it, provided
// by plugin, and returns a function that removes it. Only a host
// declares passes: it gets this method through package friend (see
// init), as
//
//	friend.Get[func(*graph.Passes, schema.Pass, string, lazy.Provider[any]) (func(), error)]()
func (r *Passes) declare(desc schema.Pass, plugin string, p lazy.Provider[any]) (remove func(), err error) {
	if p == nil {
		return nil, fmt.Errorf("graph: pass %q: %w: nil provider", desc.Name, schema.ErrPass)
	}
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	return r.r.Add(desc.Name, &passEntry{Desc: desc, Plugin: plugin, Provider: p})
}

func init() {
	friend.Set((*Passes).declare)
	friend.Set(checkPass) // a host checks what a plugin registers as Register would
}

// checkPass checks desc and that pass implements the interface of its
// kind.
func checkPass(desc schema.Pass, pass any) error {
	var ok bool
	switch desc.Kind {
	case schema.Populate:
		_, ok = pass.(PopulatePass)
	case schema.Partition:
		_, ok = pass.(PartitionPass)
	case schema.Global:
		_, ok = pass.(GlobalPass)
	}
	if err := desc.Validate(); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("graph: pass %q: %w: %T does not implement the %s pass interface", desc.Name, schema.ErrPass, pass, desc.Kind)
	}
	return nil
}

// List returns every pass: populate passes, then partition and global
// passes, each in the order a build runs them.
func (r *Passes) List() []PassEntry {
	var out []PassEntry
	for _, e := range r.sorted() {
		out = append(out, PassEntry{Desc: e.Desc, Plugin: e.Plugin})
	}
	return out
}

func (r *Passes) sorted() []*passEntry {
	es := r.r.Entries()
	kindRank := map[schema.PassKind]int{schema.Populate: 0, schema.Partition: 1, schema.Global: 2}
	slices.SortFunc(es, func(a, b *passEntry) int {
		return cmp.Or(
			cmp.Compare(kindRank[a.Desc.Kind], kindRank[b.Desc.Kind]),
			cmp.Compare(b.Desc.Priority, a.Desc.Priority),
			cmp.Compare(a.Desc.Name, b.Desc.Name))
	})
	return es
}

// BuildOptions configure a build.
type BuildOptions struct {
	// Passes are the registered passes; nil means none.
	Passes *Passes
	// Operators is the registry passes instantiate operators from
	// ([Builder.SetOperator]); nil means none.
	Operators *op.Registry
	// Default populates the nodes no registered pass attached a
	// definition to; [OperatorPopulate] attaches operators by kind.
	Default PopulatePass
	// Skip names passes not to run, such as "dynop.fuse-pointwise".
	Skip []string
	// Logger receives a debug line per pass run; nil discards them.
	Logger *slog.Logger
	// ShareWith is a graph built before from the same nodes (a pipeline
	// worker's copy): where [Builder.SetOperator] would instantiate an
	// operator that a node of the same name there already runs, on the
	// same device, and that operator declared itself safe for concurrent
	// calls, the two nodes share the instance's implementation
	// ([op.Instance.Share]) instead. Nil shares nothing.
	ShareWith *Graph
}

// Build runs the pass pipeline on g: populate passes on every node
// without a definition, then partition passes, then global passes, and
// checks that the result can execute, subgraphs included. Passes that a
// plugin provides start it; g keeps it started until g is closed. A
// partition or global pass whose plugin fails to start is skipped with a
// warning (every build runs them); a populate pass that cannot be had
// fails the build, since its node needs it. On error the graph
// should be closed and discarded.
func Build(ctx context.Context, g *Graph, opts BuildOptions) error {
	if opts.Passes == nil {
		opts.Passes = NewPasses()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Builder{g: g, opts: opts, impls: make(map[string]any)}
	entries := opts.Passes.sorted()
	entries = slices.DeleteFunc(entries, func(e *passEntry) bool { return slices.Contains(opts.Skip, e.Desc.Name) })
	if err := b.populate(ctx, entries); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Desc.Kind == schema.Populate {
			continue
		}
		if err := b.runWhole(ctx, e); err != nil {
			return err
		}
	}
	return g.check()
}

// Builder is how passes change a graph during a build.
type Builder struct {
	g      *Graph
	opts   BuildOptions
	impls  map[string]any   // passes provided so far, by name
	failed map[string]error // passes whose provider failed, by name
	pass   *passEntry       // the pass running
	groups []group
}

type group struct {
	name  string
	nodes []*Node
	exec  Executor
}

// passDesc returns the descriptor of the pass that is running.
func (b *Builder) passDesc() schema.Pass {
	if b.pass == nil {
		return schema.Pass{Name: "default", Kind: schema.Populate}
	}
	return b.pass.Desc
}

// SetDefinition attaches def to n, replacing any definition n has; the
// replaced definition is closed when the graph closes.
func (b *Builder) SetDefinition(n *Node, def Definition) error {
	if n == nil || def == nil {
		return fmt.Errorf("graph: pass %q: %w: SetDefinition with a nil node or definition", b.passDesc().Name, schema.ErrPass)
	}
	if n.input {
		return fmt.Errorf("graph: pass %q: %w: node %q is a graph input and takes no definition", b.passDesc().Name, schema.ErrPass, n.name)
	}
	if sub, ok := def.(*Graph); ok {
		if sub.parent != nil && sub.parent != n {
			return fmt.Errorf("graph: pass %q: %w: graph %q is already the definition of node %q", b.passDesc().Name, schema.ErrPass, sub.name, sub.parent.name)
		}
		for g := n.graph; g != nil; g = g.parentGraph() {
			if g == sub {
				return fmt.Errorf("graph: pass %q: %w: graph %q contains node %q: it cannot be its definition", b.passDesc().Name, schema.ErrPass, sub.name, n.name)
			}
		}
		if sub == b.g {
			return fmt.Errorf("graph: pass %q: %w: graph %q is the graph being built", b.passDesc().Name, schema.ErrPass, sub.name)
		}
		sub.parent = n
	}
	if old := n.def; old != nil && old != def {
		// The replaced definition is closed with the graph, not now: the
		// new one may wrap it. Closing it twice is not an error.
		b.g.onClose(func() error {
			if err := closeDefinition(old); err != nil && !errors.Is(err, errdefs.ErrClosed) {
				return fmt.Errorf("graph: node %q: closing a replaced definition: %w", n.name, err)
			}
			return nil
		})
		if sub, ok := old.(*Graph); ok && sub != def {
			sub.parent = nil
		}
	}
	n.def = def
	n.graph.changed()
	return nil
}

// SetOperator instantiates operator name with args from the build's
// operator registry, on n's device, and attaches it to n as an
// [OperatorDef]; the graph closes the instance when it closes.
func (b *Builder) SetOperator(ctx context.Context, n *Node, name string, args schema.Args) error {
	if b.opts.Operators == nil {
		return fmt.Errorf("graph: pass %q: %w: the build has no operator registry", b.passDesc().Name, schema.ErrPass)
	}
	var opts []op.Option
	if n.Device != "" {
		opts = append(opts, op.OnDevice(n.Device))
	}
	in, ok := b.shared(n, name)
	if !ok {
		var err error
		if in, err = b.opts.Operators.New(ctx, name, args, opts...); err != nil {
			return err
		}
	}
	if err := b.SetDefinition(n, &OperatorDef{in}); err != nil {
		return errors.Join(err, in.Close())
	}
	return nil
}

// shared returns an instance of operator name for n that shares the
// implementation of the node of n's name in BuildOptions.ShareWith (its
// subgraphs included), if that node runs name on n's device and the
// operator can be shared.
func (b *Builder) shared(n *Node, name string) (*op.Instance, bool) {
	if b.opts.ShareWith == nil {
		return nil, false
	}
	d, ok := b.opts.ShareWith.findNode(n.name).def.(*OperatorDef)
	if !ok || d.Instance.Name() != name || (n.Device != "" && d.Instance.Device() != n.Device) {
		return nil, false
	}
	return d.Instance.Share()
}

// findNode returns the node called name in g or its subgraphs, or an
// empty node if there is none.
func (g *Graph) findNode(name string) *Node {
	for _, n := range g.nodes {
		if n.name == name {
			return n
		}
		if sub, ok := n.def.(*Graph); ok {
			if found := sub.findNode(name); found.def != nil {
				return found
			}
		}
	}
	return &Node{}
}

// Group asks to replace nodes, all of one graph, by a single node called
// name whose definition is a subgraph of them run by exec (nil:
// [Serial]). Only partition passes may group; the groups are committed,
// in the order asked, when the pass returns. A group must be convex: no
// path may leave it and come back.
func (b *Builder) Group(name string, nodes []*Node, exec Executor) error {
	if b.pass == nil || b.pass.Desc.Kind != schema.Partition {
		return fmt.Errorf("graph: pass %q: %w: only partition passes group nodes", b.passDesc().Name, schema.ErrPass)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("graph: pass %q: %w: group %q has no nodes", b.passDesc().Name, schema.ErrPass, name)
	}
	b.groups = append(b.groups, group{name, slices.Clone(nodes), exec})
	return nil
}

// populate runs populate passes on every node that has no definition.
func (b *Builder) populate(ctx context.Context, entries []*passEntry) error {
	return b.populateGraph(ctx, b.g, entries, 0)
}

// maxDepth bounds the nesting of subgraphs populate passes attach.
const maxDepth = 32

// populateGraph populates g's nodes, then the nodes of its subgraphs,
// those a pass just attached included.
func (b *Builder) populateGraph(ctx context.Context, g *Graph, entries []*passEntry, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("graph %q: %w: subgraphs nested deeper than %d: does a populate pass attach subgraphs to the nodes of the subgraphs it attaches?", b.g.name, schema.ErrPass, maxDepth)
	}
	var errs []error
	for _, n := range g.nodes {
		if n.input || n.def != nil {
			continue
		}
		for _, key := range []string{n.name, n.kind} {
			for _, e := range entries {
				if e.Desc.Kind != schema.Populate || e.Desc.Match != key || n.def != nil {
					continue
				}
				if err := b.runOn(ctx, e, n); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if n.def == nil && b.opts.Default != nil {
			b.pass = nil
			if err := b.opts.Default.Populate(ctx, b, n); err != nil {
				errs = append(errs, fmt.Errorf("graph %q: node %q: %w", g.name, n.name, err))
			}
		}
	}
	if errs != nil {
		return errors.Join(errs...)
	}
	for _, n := range g.nodes {
		if sub, ok := n.def.(*Graph); ok {
			if err := b.populateGraph(ctx, sub, entries, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *Builder) runOn(ctx context.Context, e *passEntry, n *Node) error {
	impl, err := b.impl(ctx, e)
	if err != nil {
		return err
	}
	b.pass = e
	b.opts.Logger.Debug("populate pass", "pass", e.Desc.Name, "plugin", e.Plugin, "node", n.name)
	if err := impl.(PopulatePass).Populate(ctx, b, n); err != nil {
		return passError(e, fmt.Errorf("node %q: %w", n.name, err))
	}
	return nil
}

func (b *Builder) runWhole(ctx context.Context, e *passEntry) error {
	impl, err := b.impl(ctx, e)
	if err != nil && e.Declared() {
		// Every build runs every partition and global pass, so a plugin
		// that cannot start must not fail the builds that do not need it.
		b.opts.Logger.Warn("skipping a pass whose plugin cannot provide it", "pass", e.Desc.Name, "plugin", e.Plugin, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	b.pass, b.groups = e, nil
	b.opts.Logger.Debug(string(e.Desc.Kind)+" pass", "pass", e.Desc.Name, "plugin", e.Plugin)
	switch e.Desc.Kind {
	case schema.Partition:
		err = impl.(PartitionPass).Partition(ctx, b, b.g)
		if err == nil {
			err = b.commit()
		}
	case schema.Global:
		err = impl.(GlobalPass).Global(ctx, b, b.g)
	}
	b.pass, b.groups = nil, nil
	if err != nil {
		return passError(e, err)
	}
	return nil
}

func passError(e *passEntry, err error) error {
	if e.Plugin != "" {
		return fmt.Errorf("graph: %s pass %q of plugin %q: %w: %w", e.Desc.Kind, e.Desc.Name, e.Plugin, schema.ErrPass, err)
	}
	return fmt.Errorf("graph: %s pass %q: %w: %w", e.Desc.Kind, e.Desc.Name, schema.ErrPass, err)
}

// impl returns the implementation of e, asking its provider once per
// build and keeping what the provider returned until the graph closes.
func (b *Builder) impl(ctx context.Context, e *passEntry) (any, error) {
	if !e.Declared() {
		return e.Value, nil
	}
	if impl, ok := b.impls[e.Desc.Name]; ok {
		return impl, nil
	}
	if err, ok := b.failed[e.Desc.Name]; ok { // one start attempt per build
		return nil, err
	}
	impl, release, err := e.Get(ctx, e.Desc.Name)
	if err != nil {
		if b.failed == nil {
			b.failed = map[string]error{}
		}
		b.failed[e.Desc.Name] = passError(e, err)
		return nil, b.failed[e.Desc.Name]
	}
	if release != nil {
		b.g.onClose(release)
	}
	if err := checkPass(e.Desc, impl); err != nil {
		return nil, passError(e, err)
	}
	b.impls[e.Desc.Name] = impl
	return impl, nil
}
