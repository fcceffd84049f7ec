package graph

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/dynop/dynop/internal/errdefs"
)

// Parallel runs ready nodes on a bounded set of workers by dependency
// counting: each node has a count of the nodes it waits for, and the
// worker that finishes a node decrements the counts of its successors
// and runs those that reach zero. A worker keeps the nodes it made ready
// on a stack of its own and runs them next (the data they read is still
// in its cache); it hands half of them to a shared queue when another
// worker is idle. No goroutine is started per node.
type Parallel struct {
	// Workers bounds the goroutines that run nodes, the calling one
	// included; 0 means GOMAXPROCS.
	Workers int
}

func (p Parallel) execute(ctx context.Context, s *schedule) error {
	n := s.size()
	w := p.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = min(w, n)
	if w <= 1 {
		return Serial{}.execute(ctx, s)
	}
	// The buffers are the graph's, reused from its last execution (no
	// garbage per run); the control state is this execution's own, so a
	// cancellation callback of an earlier one cannot touch it.
	buf := s.par
	if buf == nil {
		buf = &parallelBuffers{counts: make([]atomic.Int32, n)}
		s.par = buf
	}
	for len(buf.stacks) < w {
		buf.stacks = append(buf.stacks, nil)
	}
	r := &parallelRun{s: s, buf: buf, workers: w, queue: buf.queue[:0]}
	r.cond.L = &r.mu
	for i := range n {
		d := int32(len(s.p.preds[i]))
		buf.counts[i].Store(d)
		if d == 0 {
			r.queue = append(r.queue, int32(i))
		}
	}
	r.remaining.Store(int64(n))
	stop := context.AfterFunc(ctx, r.finish)
	defer stop()
	var wg sync.WaitGroup
	for k := 1; k < w; k++ {
		wg.Go(func() { r.work(ctx, k) })
	}
	r.work(ctx, 0)
	wg.Wait()
	buf.queue = r.queue[:0]
	return ctx.Err()
}

// parallelBuffers are what Parallel keeps in a schedule between
// executions: dependency counts and the workers' stacks.
type parallelBuffers struct {
	counts []atomic.Int32
	stacks [][]int32
	queue  []int32
}

// parallelRun is the state of one Parallel execution.
type parallelRun struct {
	s         *schedule
	buf       *parallelBuffers
	workers   int
	remaining atomic.Int64
	stopped   atomic.Bool
	idle      atomic.Int32

	mu    sync.Mutex
	cond  sync.Cond
	queue []int32
	done  bool
}

func (r *parallelRun) work(ctx context.Context, worker int) {
	// run recovers panics in node code; this one is for the executor's
	// own: the execution fails instead of the process.
	defer func() {
		if p := recover(); p != nil {
			r.s.failRun(fmt.Errorf("%w: parallel executor: %v\n%s", errdefs.ErrPanic, p, debug.Stack()))
			r.finish()
		}
	}()
	next, counts := r.s.p.next, r.buf.counts
	done := ctx.Done()
	local := r.buf.stacks[worker][:0]
	defer func() { r.buf.stacks[worker] = local }()
	for {
		if len(local) == 0 {
			if local = r.take(local); len(local) == 0 {
				return
			}
		}
		i := local[len(local)-1]
		local = local[:len(local)-1]
		if r.stopped.Load() {
			return
		}
		select {
		case <-done:
			r.finish()
			return
		default:
		}
		if err := r.s.run(ctx, worker, int(i)); err != nil {
			r.finish()
			return
		}
		for _, j := range next[i] {
			if counts[j].Add(-1) == 0 {
				local = append(local, j)
			}
		}
		if r.remaining.Add(-1) == 0 {
			r.finish()
			return
		}
		if len(local) > 1 && r.idle.Load() > 0 {
			local = r.share(local)
		}
	}
}

// take waits for ready nodes in the shared queue and takes a fair share
// of them; it returns none when the execution is over.
func (r *parallelRun) take(local []int32) []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) == 0 && !r.done {
		r.idle.Add(1)
		r.cond.Wait()
		r.idle.Add(-1)
	}
	if r.done {
		return local[:0]
	}
	k := (len(r.queue) + r.workers - 1) / r.workers
	local = append(local, r.queue[len(r.queue)-k:]...)
	r.queue = r.queue[:len(r.queue)-k]
	return local
}

// share moves the older half of a worker's stack to the shared queue.
func (r *parallelRun) share(local []int32) []int32 {
	half := len(local) / 2
	r.mu.Lock()
	r.queue = append(r.queue, local[:half]...)
	r.cond.Signal()
	r.mu.Unlock()
	return append(local[:0], local[half:]...)
}

// finish ends the execution: every node ran, one failed, or ctx is done.
func (r *parallelRun) finish() {
	r.stopped.Store(true)
	r.mu.Lock()
	r.done = true
	r.cond.Broadcast()
	r.mu.Unlock()
}
