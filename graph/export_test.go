package graph

import "context"

// Schedule is the schedule of an execution as the package's external
// tests see it: their executors check how Execute copes with executors
// that misbehave.
type Schedule = schedule

func (s *schedule) Len() int                                     { return s.size() }
func (s *schedule) Node(i int) *Node                             { return s.node(i) }
func (s *schedule) Deps(i int) int                               { return len(s.p.preds[i]) }
func (s *schedule) Next(i int) []int32                           { return s.p.next[i] }
func (s *schedule) Run(ctx context.Context, worker, i int) error { return s.run(ctx, worker, i) }

// ExecutorFunc makes an Executor of a function.
type ExecutorFunc func(ctx context.Context, s *Schedule) error

func (f ExecutorFunc) execute(ctx context.Context, s *schedule) error { return f(ctx, s) }
