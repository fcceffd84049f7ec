package graph

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/tensor"
)

// Executor runs the nodes of a [Schedule], each once, none before the
// nodes it depends on. It returns when every node has run, or at the
// first error, or when ctx is done (with ctx's error).
type Executor interface {
	Execute(ctx context.Context, s *Schedule) error
}

// Observer sees every node execution when it ends. Executors call it from
// their workers, so it must be safe for concurrent use.
type Observer func(Span)

// Span is one node execution.
type Span struct {
	Node *Node
	// Exec identifies the graph execution the span belongs to; a
	// subgraph's execution has its own.
	Exec uint64
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
// the plugin that provides it.
type NodeError struct {
	Node, Kind       string
	Operator, Plugin string
	Err              error
}

func (e *NodeError) Error() string {
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
		return fmt.Sprintf("graph: node %q: %v", e.Node, e.Err)
	}
	return fmt.Sprintf("graph: node %q (%s): %v", e.Node, strings.Join(who, ", "), e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// Schedule is one execution of a graph as an executor sees it: nodes
// 0..Len()-1 in a topological order (every node's dependencies have
// smaller indices), their dependency counts and successors.
type Schedule struct {
	p      *plan
	inputs []*tensor.Batch
	vals   [][]*tensor.Batch
	inbuf  [][]*tensor.Batch
	done   []bool
	obs    Observer
	id     uint64
	par    *parallelBuffers // Parallel's buffers, kept between executions
	// worker0 is added to worker numbers in spans: a subgraph's spans
	// carry the number of the worker that runs its node.
	worker0 int

	errMu sync.Mutex
	err   error
}

var execIDs atomic.Uint64

// Len returns the number of nodes to run; graph inputs are not among
// them.
func (s *Schedule) Len() int { return len(s.p.nodes) }

// Node returns node i.
func (s *Schedule) Node(i int) *Node { return s.p.nodes[i] }

// Deps returns how many nodes node i waits for.
func (s *Schedule) Deps(i int) int { return len(s.p.preds[i]) }

// Next returns the nodes that wait for node i. The caller must not
// modify the slice.
func (s *Schedule) Next(i int) []int32 { return s.p.next[i] }

// Inputs returns the batches given to the graph's inputs.
func (s *Schedule) Inputs() []*tensor.Batch { return s.inputs }

func (s *Schedule) value(sl slot) *tensor.Batch {
	if sl.node < 0 {
		return s.inputs[-1-sl.node]
	}
	outs := s.vals[sl.node]
	if int(sl.out) >= len(outs) {
		return nil
	}
	return outs[sl.out]
}

// Run executes node i: it gathers the node's inputs, runs its
// definition (a subgraph with the subgraph's executor) and keeps its
// outputs for its successors. worker identifies the executor's worker,
// for observers. The first error of an execution is kept and returned by
// Execute whatever the executor returns; a panic in Go code becomes
// an error wrapping errdefs.ErrPanic.
func (s *Schedule) Run(ctx context.Context, worker, i int) error {
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
		s.obs(Span{Node: n, Exec: s.id, Worker: s.worker0 + worker, Start: start, Duration: time.Since(start), Err: err})
	}
	if err != nil {
		return s.fail(n, err)
	}
	s.vals[i] = outs
	s.done[i] = true
	return nil
}

// SetOutputs gives node i its outputs without running it, for executors
// that compute nodes some other way (as a fused walk does); node i then
// counts as run.
func (s *Schedule) SetOutputs(i int, outs []*tensor.Batch) {
	s.vals[i] = outs
	s.done[i] = true
}

func (s *Schedule) call(ctx context.Context, n *Node, in []*tensor.Batch, worker int) (outs []*tensor.Batch, err error) {
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
func (s *Schedule) fail(n *Node, err error) error {
	var ne *NodeError
	if !errors.As(err, &ne) || !strings.HasPrefix(ne.Node, n.Path()+"/") {
		operator, plugin := origin(n.def)
		err = &NodeError{Node: n.Path(), Kind: n.kind, Operator: operator, Plugin: plugin, Err: err}
	}
	s.failRun(err)
	return err
}

// failRun records err as the execution's error if it is the first.
func (s *Schedule) failRun(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
}

func (s *Schedule) firstErr() error {
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

func (g *Graph) execute(ctx context.Context, inputs []*tensor.Batch, obs Observer, worker0 int) ([]*tensor.Batch, error) {
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
	s.inputs, s.obs, s.id, s.err, s.worker0 = inputs, obs, execIDs.Add(1), nil, worker0
	defer s.reset()
	exec := g.Executor
	if exec == nil {
		exec = Parallel{}
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
	return outs, nil
}

// runExecutor runs exec on s; a panic in the executor's own code
// becomes an error.
func runExecutor(ctx context.Context, exec Executor, s *Schedule) (err error) {
	defer recoverPanic(&err)
	return exec.Execute(ctx, s)
}

func (s *Schedule) reset() {
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

// Execute implements Executor.
func (Serial) Execute(ctx context.Context, s *Schedule) error {
	for i := range s.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.Run(ctx, 0, i); err != nil {
			return err
		}
	}
	return nil
}
