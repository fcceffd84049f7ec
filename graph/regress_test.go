package graph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// panicky registers test.Boom: pointwise, whose uint8 element function
// panics (as a buggy Go operator's would).
func panickyRegistry(t testing.TB) *op.Registry {
	r := testRegistry(t)
	boom := op.PointwiseFuncs{
		Uint8:   func(v []uint8) { panic("element function bug") },
		Float32: func(v []float32) { panic("element function bug") },
	}
	err := r.Register(op.Operator{
		Schema: schema.Op{Name: "test.Boom", Doc: "panics", Inputs: []schema.Input{{Name: "x"}}, Outputs: []schema.Output{{Name: "y"}},
			Args: []schema.Arg{{Name: "k", Type: schema.Float, Default: 1.0}}, Devices: []schema.Device{schema.CPU}},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) { return &pointwiseImpl{f: boom}, nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Regression: a panicking element function is an error when the chain runs
// unfused, but escapes Execute as a panic when the chain is fused.
func TestRegressionFusedPanicEscapes(t *testing.T) {
	reg := panickyRegistry(t)
	rng := rand.New(rand.NewPCG(1, 2))
	in := randomBatch[uint8](t, rng, 2)
	plain := fuseGraph(t, reg, false, false, "test.AddK", "test.Boom")
	plain.Executor = graph.Serial{}
	if _, err := plain.Execute(context.Background(), in); !errors.Is(err, errdefs.ErrPanic) {
		t.Fatalf("unfused: %v", err)
	}
	fused := fuseGraph(t, reg, true, false, "test.AddK", "test.Boom")
	fused.Executor = graph.Serial{}
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_, err := fused.Execute(context.Background(), in)
		t.Logf("fused Execute returned %v", err)
	}()
	if recovered != nil {
		t.Errorf("fused chain: the panic escaped Execute: %v", recovered)
	}
}

// Regression: with the parallel executor the panic is on a worker
// goroutine: it kills the process.
func TestRegressionFusedPanicKillsProcess(t *testing.T) {
	if os.Getenv("DYNOP_TEST_CHILD") == "1" {
		reg := panickyRegistry(t)
		g := graph.New("two")
		in, _ := g.AddInput("in")
		for c := range 4 {
			a, _ := g.AddNode(fmt.Sprintf("a%d", c), "test.AddK", nil, in.Out(0))
			b, _ := g.AddNode(fmt.Sprintf("b%d", c), "test.Boom", nil, a.Out(0))
			g.AddOutput(fmt.Sprint(c), b.Out(0))
		}
		passes := graph.NewPasses()
		mustRegister(t, passes, graph.FuseDesc, graph.FusePass())
		if err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes, Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
			t.Fatal(err)
		}
		g.Executor = graph.Parallel{Workers: 4}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 50 {
			func() {
				defer func() { recover() }() // recovers only worker 0's panics
				g.Execute(context.Background(), randomBatch[uint8](t, rng, 1))
			}()
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRegressionFusedPanicKillsProcess$")
	cmd.Env = append(os.Environ(), "DYNOP_TEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(string(out), "\n")
		t.Errorf("child died: %v\n%s", err, strings.Join(lines[:min(len(lines), 6)], "\n"))
	}
}

// Regression: a cancelled parallel execution's context.AfterFunc may run
// finish after Execute returned, stopping the graph's next execution
// (which reuses the parallelRun) and racing on its fields.
func TestRegressionStaleCancelStopsNextExecution(t *testing.T) {
	g := graph.New("wide")
	in, _ := g.AddInput("in")
	var cancelNow atomic.Pointer[context.CancelFunc]
	def := graph.Func("tick", func(ctx context.Context, _ []*tensor.Batch) ([]*tensor.Batch, error) {
		if c := cancelNow.Swap(nil); c != nil {
			(*c)()
		}
		return nil, nil
	})
	for i := range 64 {
		n, _ := g.AddNode(fmt.Sprint(i), "tick", nil)
		g.AddOrder(in, n)
	}
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		return b.SetDefinition(n, def)
	})}); err != nil {
		t.Fatal(err)
	}
	g.Executor = graph.Parallel{Workers: 4}
	bad := 0
	var first error
	for range 20000 {
		ctx, cancel := context.WithCancel(context.Background())
		cancelNow.Store(&cancel)
		g.Execute(ctx, scalar(t, 0))
		if _, err := g.Execute(context.Background(), scalar(t, 0)); err != nil {
			bad++
			if first == nil {
				first = err
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 20000 executions with a live context failed after a cancelled one; first: %v", bad, first)
	}
}

// closeCounter is an Impl that counts its Close calls.
type closeCounter struct {
	scaleImpl
	closed *atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// Regression: SetDefinition/SetOperator replacing a node's operator
// definition drops the old instance without closing it (its plugin
// reference leaks).
func TestRegressionReplacedOperatorIsNeverClosed(t *testing.T) {
	reg := testRegistry(t)
	var made, closed atomic.Int32
	if err := reg.Register(op.Operator{
		Schema:   schema.Op{Name: "test.Counted", Doc: "counts", Inputs: []schema.Input{{Name: "x"}}, Outputs: []schema.Output{{Name: "y"}}, Devices: []schema.Device{schema.CPU}},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) { made.Add(1); return &closeCounter{scaleImpl{2}, &closed}, nil }},
	}); err != nil {
		t.Fatal(err)
	}
	g, nodes := chain(t, "a=test.Counted")
	passes := graph.NewPasses()
	// A global pass that swaps the operator for a better-tuned instance.
	mustRegister(t, passes, schema.Pass{Name: "retune", Kind: schema.Global}, graph.GlobalFunc(func(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
		return b.SetOperator(ctx, nodes[0], "test.Counted", nil)
	}))
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes, Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if made.Load() != closed.Load() {
		t.Errorf("%d instances made, %d closed", made.Load(), closed.Load())
	}
}

// Regression: SetDefinition accepts a node's own graph as its definition;
// Build succeeds and Execute then deadlocks on g.exec.
func TestRegressionSelfSubgraphDeadlocks(t *testing.T) {
	g, nodes := chain(t, "a=k")
	passes := graph.NewPasses()
	mustRegister(t, passes, schema.Pass{Name: "self", Kind: schema.Global}, graph.GlobalFunc(func(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
		return b.SetDefinition(nodes[0], g)
	}))
	err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes})
	if err != nil {
		t.Logf("Build refused: %v", err)
		return
	}
	done := make(chan error, 1)
	go func() { _, err := g.Execute(context.Background(), scalar(t, 1)); done <- err }()
	select {
	case err := <-done:
		t.Logf("Execute: %v", err)
	case <-time.After(2 * time.Second):
		t.Errorf("Build accepted a graph that is its own node's definition, and Execute hangs")
	}
}

// Regression: grouping random convex node sets must not change results or
// the order constraints; nested grouping too.
func TestRegressionRandomGroupsKeepResults(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 99))
		n := 2 + rng.IntN(30)
		log := &runLog{}
		g, deps := randomDAG(t, rng, n, log)
		x, y := scalar(t, int64(seed)), scalar(t, 3)
		g.Executor = graph.Serial{}
		outs, err := g.Execute(context.Background(), x, y)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, o := range outs {
			want = append(want, value(t, o))
		}
		// Group random contiguous ranges in topological order (always
		// convex? no: try, and skip non-convex), twice (nesting).
		for round := range 3 {
			nodes := slices.DeleteFunc(g.Nodes(), (*graph.Node).IsInput)
			// nested: sometimes group inside an existing subgraph
			target := nodes
			for _, nd := range nodes {
				if sub, ok := nd.Definition().(*graph.Graph); ok && rng.IntN(2) == 0 {
					target = slices.DeleteFunc(sub.Nodes(), (*graph.Node).IsInput)
					break
				}
			}
			if len(target) == 0 {
				continue
			}
			lo := rng.IntN(len(target))
			hi := lo + 1 + rng.IntN(len(target)-lo)
			pick := slices.Clone(target[lo:hi])
			rng.Shuffle(len(pick), func(i, j int) { pick[i], pick[j] = pick[j], pick[i] })
			passes := graph.NewPasses()
			name := fmt.Sprintf("grp%d", round)
			mustRegister(t, passes, schema.Pass{Name: "grp", Kind: schema.Partition}, graph.PartitionFunc(func(ctx context.Context, b *graph.Builder, _ *graph.Graph) error {
				return b.Group(name, pick, graph.Parallel{Workers: 3})
			}))
			err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes})
			if err != nil {
				if strings.Contains(err.Error(), "not convex") {
					continue
				}
				t.Fatalf("seed %d round %d: %v", seed, round, err)
			}
			log.order = nil
			for _, exec := range []graph.Executor{graph.Serial{}, graph.Parallel{Workers: 4}} {
				g.Executor = exec
				log.order = nil
				outs, err := g.Execute(context.Background(), x, y)
				if err != nil {
					t.Fatalf("seed %d round %d: %v", seed, round, err)
				}
				var got []int64
				for _, o := range outs {
					got = append(got, value(t, o))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d round %d: grouped outputs %v, want %v", seed, round, got, want)
				}
				checkOrderAll(t, log.order, deps, n)
			}
		}
		g.Close()
	}
}

func checkOrderAll(t *testing.T, order []int64, deps map[string][]string, n int) {
	t.Helper()
	ran := map[string]int{}
	for i, id := range order {
		ran[fmt.Sprintf("n%d", id-1)] = i + 1
	}
	if len(order) != n || len(ran) != n {
		t.Fatalf("%d runs, %d distinct, for %d nodes", len(order), len(ran), n)
	}
	for name, ds := range deps {
		for _, d := range ds {
			if d == "x" || d == "y" {
				continue
			}
			if ran[d] >= ran[name] {
				t.Fatalf("node %s ran before its dependency %s", name, d)
			}
		}
	}
}

// Regression: fused vs unfused on edge-case batches.
func TestRegressionFusedEdgeBatches(t *testing.T) {
	reg := testRegistry(t)
	fused, plain := fuseGraph(t, reg, true, false), fuseGraph(t, reg, false, false)
	mk := func(shape ...int64) *tensor.Tensor {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%17) / 3
		}
		s, err := tensor.FromSlice(v, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	big := mk(40, 50, 3)
	col, err := big.Slice(1, 7, 9) // strided, non-contiguous
	if err != nil {
		t.Fatal(err)
	}
	rows, err := big.Slice(0, 3, 5) // contiguous view at an offset
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]*tensor.Tensor{
		"empty sample first": {mk(0, 5, 3), mk(2, 5, 3)},
		"strided+offset":     {col, rows, mk(1, 1, 3)},
		"large":              {mk(100, 100, 3)},
	}
	for name, samples := range cases {
		b, err := tensor.NewBatch(samples...)
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		want, werr := plain.Execute(context.Background(), b)
		got, gerr := fused.Execute(context.Background(), b)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: unfused err %v, fused err %v", name, werr, gerr)
			continue
		}
		if werr != nil {
			continue
		}
		if string(bytesOf(t, got[0])) != string(bytesOf(t, want[0])) {
			t.Errorf("%s: fused differs", name)
		}
	}
}

// backwards runs nodes in reverse order, ignoring dependencies.
type backwards struct{}

func (backwards) Execute(ctx context.Context, s *graph.Schedule) error {
	for i := s.Len() - 1; i >= 0; i-- {
		if err := s.Run(ctx, 0, i); err != nil {
			return err
		}
	}
	return nil
}

// Regression: Schedule.Run runs a node whose dependencies have not run,
// feeding it nil batches.
func TestRegressionRunBeforeDepsNotCaught(t *testing.T) {
	g, _ := chain(t, "a=k", "b=k")
	var sawNil atomic.Bool
	pass := graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		return b.SetDefinition(n, graph.Func("id", func(ctx context.Context, in []*tensor.Batch) ([]*tensor.Batch, error) {
			if in[0] == nil {
				sawNil.Store(true)
			}
			return in[:1], nil
		}))
	})
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: pass}); err != nil {
		t.Fatal(err)
	}
	g.Executor = graph.ExecutorFunc(backwards{}.Execute)
	outs, err := g.Execute(context.Background(), scalar(t, 1))
	if err == nil {
		t.Errorf("an executor that ignores dependencies: no error; node saw nil input %v; outputs %v", sawNil.Load(), outs)
	}
}

// Regression: Build does not populate or check subgraphs that a populate
// pass attaches: a subgraph with a node lacking a definition builds, and
// fails only when executed.
func TestRegressionBuildDoesNotCheckSubgraphs(t *testing.T) {
	g, _ := chain(t, "a=sub")
	pass := graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		if n.Kind() != "sub" {
			return nil // leaves the inner node without a definition
		}
		sub := graph.New("inner")
		in, _ := sub.AddInput("x")
		m, _ := sub.AddNode("m", "test.Unknown", nil, in.Out(0))
		sub.AddOutput("y", m.Out(0))
		return b.SetDefinition(n, sub)
	})
	err := graph.Build(context.Background(), g, graph.BuildOptions{Default: pass, Operators: testRegistry(t)})
	if err == nil || !strings.Contains(err.Error(), `node "a": graph "inner": invalid graph: node "m" (kind "test.Unknown") has no definition`) {
		t.Errorf("Build of a subgraph whose node has no definition: %v", err)
	}
	g.Close()

	// A populate pass that keeps attaching subgraphs is stopped.
	g, _ = chain(t, "a=sub")
	forever := graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		sub := graph.New("inner")
		in, _ := sub.AddInput("x")
		m, _ := sub.AddNode("m", "sub", nil, in.Out(0))
		sub.AddOutput("y", m.Out(0))
		return b.SetDefinition(n, sub)
	})
	err = graph.Build(context.Background(), g, graph.BuildOptions{Default: forever})
	if !errors.Is(err, schema.ErrPass) || !strings.Contains(err.Error(), "subgraphs nested deeper than 32") {
		t.Errorf("endless nesting: %v", err)
	}
	g.Close()
}
