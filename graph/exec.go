package graph

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/kernel"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/tensor"
)

// Executor schedules the nodes of a graph: [Parallel] or [Serial]. It
// runs each node once, none before the nodes it depends on, and returns
// when every node has run, at the first error, or when the context is
// done.
type Executor interface {
	execute(ctx context.Context, s *schedule) error
}

// Span is one node execution, as [Graph.Observer] sees it.
type Span struct {
	Node *Node
	// Worker is the executor's worker that ran the node, from 0. Spans
	// of a subgraph's nodes add the number of the worker that runs the
	// subgraph's node, so a serial subgraph's spans nest in its node's.
	Worker   int
	Start    time.Time
	Duration time.Duration
	Err      error
}

// NodeError is the error of a node that failed: it names the node (its
// path through subgraphs), its kind and, for operators, the operator and
// the plugin that provides it. It names them once: the message of an
// [op.Error] of the same operator follows without its own operator and
// plugin ([op.Error.Detail]), which [errors.As] still finds in Err.
type NodeError struct {
	Node, Kind       string
	Operator, Plugin string
	Err              error
}

func (e *NodeError) Error() string {
	msg := e.Err.Error()
	if oe, ok := e.Err.(*op.Error); ok && e.Operator != "" && oe.Operator == e.Operator && oe.Plugin == e.Plugin {
		msg = oe.Detail()
	}
	var who []string
	if e.Operator != "" {
		who = append(who, "operator "+e.Operator)
		if e.Plugin != "" {
			who = append(who, "plugin "+e.Plugin)
		}
	} else if e.Kind != "" {
		who = append(who, "kind "+e.Kind)
	}
	if len(who) == 0 {
		return fmt.Sprintf("graph: node %q: %s", e.Node, msg)
	}
	return fmt.Sprintf("graph: node %q (%s): %s", e.Node, strings.Join(who, ", "), msg)
}

func (e *NodeError) Unwrap() error { return e.Err }

// schedule is one execution of a graph as an executor sees it: nodes
// 0..size()-1 in a topological order (every node's dependencies have
// smaller indices), their dependencies and successors.
type schedule struct {
	p      *plan
	inputs []*tensor.Batch
	vals   [][]*tensor.Batch
	inbuf  [][]*tensor.Batch
	done   []bool
	obs    func(Span)
	par    *parallelBuffers // Parallel's buffers, kept between executions
	// worker0 is added to worker numbers in spans: a subgraph's spans
	// carry the number of the worker that runs its node.
	worker0 int

	errMu sync.Mutex
	err   error
}

// size returns the number of nodes to run; graph inputs are not among
// them.
func (s *schedule) size() int { return len(s.p.nodes) }

// node returns node i.
func (s *schedule) node(i int) *Node { return s.p.nodes[i] }

func (s *schedule) value(sl slot) *tensor.Batch {
	if sl.node < 0 {
		return s.inputs[-1-sl.node]
	}
	outs := s.vals[sl.node]
	if int(sl.out) >= len(outs) {
		return nil
	}
	return outs[sl.out]
}

// run executes node i: it gathers the node's inputs, runs its
// definition (a subgraph with the subgraph's executor) and keeps its
// outputs for its successors. worker identifies the executor's worker,
// for observers. The first error of an execution is kept and returned by
// Execute whatever the executor returns; a panic in Go code becomes
// an error wrapping errdefs.ErrPanic.
func (s *schedule) run(ctx context.Context, worker, i int) error {
	n := s.p.nodes[i]
	for _, j := range s.p.preds[i] {
		if !s.done[j] {
			return s.fail(n, fmt.Errorf("%w: the executor ran it before node %q, which it depends on", ErrInvalid, s.p.nodes[j].name))
		}
	}
	in := s.inbuf[i]
	for k, sl := range s.p.ins[i] {
		in[k] = s.value(sl)
	}
	var start time.Time
	if s.obs != nil {
		start = time.Now()
	}
	outs, err := s.call(ctx, n, in, worker)
	if err == nil && s.p.nouts[i] >= 0 && len(outs) != s.p.nouts[i] {
		err = fmt.Errorf("%w: %s returned %d outputs, want %d", ErrInvalid, n.def.Name(), len(outs), s.p.nouts[i])
	}
	if s.obs != nil {
		s.obs(Span{Node: n, Worker: s.worker0 + worker, Start: start, Duration: time.Since(start), Err: err})
	}
	if err != nil {
		return s.fail(n, err)
	}
	s.vals[i] = outs
	s.done[i] = true
	return nil
}

// setOutputs gives node i its outputs without running it, for executors
// that compute nodes some other way (as a fused walk does); node i then
// counts as run.
func (s *schedule) setOutputs(i int, outs []*tensor.Batch) {
	s.vals[i] = outs
	s.done[i] = true
}

func (s *schedule) call(ctx context.Context, n *Node, in []*tensor.Batch, worker int) (outs []*tensor.Batch, err error) {
	defer recoverPanic(&err)
	if sub, ok := n.def.(*Graph); ok {
		return sub.execute(ctx, in, s.obs, s.worker0+worker)
	}
	return n.def.(NodeDef).Execute(ctx, in)
}

// recoverPanic turns a panic into *err, wrapping errdefs.ErrPanic. Deferred.
func recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v\n%s", errdefs.ErrPanic, r, debug.Stack())
	}
}

// fail records err as the execution's error if it is the first, and
// returns it as a *NodeError.
func (s *schedule) fail(n *Node, err error) error {
	var ne *NodeError
	if !errors.As(err, &ne) || !strings.HasPrefix(ne.Node, n.Path()+"/") {
		operator, plugin := origin(n.def)
		err = &NodeError{Node: n.Path(), Kind: n.kind, Operator: operator, Plugin: plugin, Err: err}
	}
	s.failRun(err)
	return err
}

// failRun records err as the execution's error if it is the first.
func (s *schedule) failRun(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
}

func (s *schedule) firstErr() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Execute runs the graph on inputs, one batch per graph input, with the
// graph's executor, and returns its outputs in order. Executions of one
// graph are serialized. The first node error stops the execution and is
// returned as a *NodeError; a done ctx stops it with ctx's error.
func (g *Graph) Execute(ctx context.Context, inputs ...*tensor.Batch) ([]*tensor.Batch, error) {
	return g.execute(ctx, inputs, g.Observer, 0)
}

func (g *Graph) execute(ctx context.Context, inputs []*tensor.Batch, obs func(Span), worker0 int) ([]*tensor.Batch, error) {
	g.exec.Lock()
	defer g.exec.Unlock()
	if g.closed {
		return nil, fmt.Errorf("graph %q: %w", g.name, errdefs.ErrClosed)
	}
	p, err := g.compile()
	if err != nil {
		return nil, err
	}
	if len(inputs) != len(g.inputs) {
		return nil, fmt.Errorf("graph %q: %w: %d inputs given, the graph has %d", g.name, ErrInvalid, len(inputs), len(g.inputs))
	}
	s := p.sched
	s.inputs, s.obs, s.err, s.worker0 = inputs, obs, nil, worker0
	defer s.reset()
	exec := g.Executor
	if exec == nil {
		exec = Parallel{}
	}
	if _, serial := exec.(Serial); serial && !p.sharedScratch {
		p.shareScratch()
	}
	err = runExecutor(ctx, exec, s)
	if first := s.firstErr(); first != nil {
		return nil, first
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if i := slices.Index(s.done, false); i >= 0 {
		return nil, fmt.Errorf("graph %q: %w: executor %T returned without running node %q", g.name, ErrInvalid, exec, s.p.nodes[i].name)
	}
	outs := make([]*tensor.Batch, len(p.outs))
	for k, sl := range p.outs {
		outs[k] = s.value(sl)
	}
	for i, ok := range p.recycle {
		if ok {
			recycle(s.p.nodes[i], s.vals[i])
		}
	}
	return outs, nil
}

// Recycle hands back the outputs of an Execute that the caller no longer
// uses, nor anything made from them: those an operator node computed go
// back to its instance (see op.Instance.Recycle), whose next execution
// fills them again instead of allocating, and those of a fused chain to
// its walk, if they are those of its last execution. It may be called
// from any goroutine, while the graph executes again.
func (g *Graph) Recycle(outs []*tensor.Batch) {
	p := g.plan
	if p == nil || len(outs) != len(p.outs) {
		return
	}
	for k, sl := range p.outs {
		if sl.node < 0 || outs[k] == nil {
			continue
		}
		n := p.nodes[sl.node]
		if !recycles(n) || p.nouts[sl.node] < 0 {
			continue
		}
		give := make([]*tensor.Batch, p.nouts[sl.node])
		give[sl.out] = outs[k]
		recycle(n, give)
	}
}

// shareScratch gives the plan's operator nodes one scratchpad, where
// operators that take scratch from the host (op.ScratchImpl) find it: a
// worker's arena, for nodes that Serial runs one at a time.
func (p *plan) shareScratch() {
	sp := kernel.NewScratchpad()
	for _, n := range p.nodes {
		if d, ok := n.def.(*OperatorDef); ok {
			d.Instance.ShareScratchpad(sp)
		}
	}
	p.sharedScratch = true
}

// runExecutor runs exec on s; a panic in the executor's own code
// becomes an error.
func runExecutor(ctx context.Context, exec Executor, s *schedule) (err error) {
	defer recoverPanic(&err)
	return exec.execute(ctx, s)
}

func (s *schedule) reset() {
	clear(s.vals)
	clear(s.done)
	for _, in := range s.inbuf {
		clear(in)
	}
	s.inputs, s.obs = nil, nil
}

// Serial runs nodes one at a time on the calling goroutine, in the
// schedule's order.
type Serial struct{}

func (Serial) execute(ctx context.Context, s *schedule) error {
	for i := range s.size() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.run(ctx, 0, i); err != nil {
			return err
		}
	}
	return nil
}
