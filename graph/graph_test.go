package graph_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/internal/lazy"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// TestExecutorsAgreeOnRandomDAGs runs random DAGs with the serial
// executor and with the parallel one at several worker counts: the
// outputs must be identical and every node must run after its
// dependencies, exactly once.
func TestExecutorsAgreeOnRandomDAGs(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(200)
		log := &runLog{}
		g, deps := randomDAG(t, rng, n, log)
		x, y := scalar(t, int64(seed)), scalar(t, 3)
		run := func(exec graph.Executor) []int64 {
			t.Helper()
			log.order = nil
			g.Executor = exec
			outs, err := g.Execute(context.Background(), x, y)
			if err != nil {
				t.Fatalf("seed %d, %T: %v", seed, exec, err)
			}
			checkOrder(t, g, log.order, deps)
			var vals []int64
			for _, o := range outs {
				vals = append(vals, value(t, o))
			}
			return vals
		}
		want := run(graph.Serial{})
		for _, w := range []int{0, 2, 3, 8} {
			if got := run(graph.Parallel{Workers: w}); !slices.Equal(got, want) {
				t.Fatalf("seed %d: parallel with %d workers gives %v, serial %v", seed, w, got, want)
			}
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkOrder checks that every node ran once, after its dependencies.
func checkOrder(t *testing.T, g *graph.Graph, order []int64, deps map[string][]string) {
	t.Helper()
	ran := map[string]int{}
	for i, id := range order {
		ran[fmt.Sprintf("n%d", id-1)] = i + 1
	}
	for _, n := range g.Nodes() {
		if n.IsInput() {
			continue
		}
		at := ran[n.Name()]
		if at == 0 {
			t.Fatalf("node %s did not run", n.Name())
		}
		for _, d := range deps[n.Name()] {
			if d == "x" || d == "y" {
				continue
			}
			if ran[d] >= at {
				t.Fatalf("node %s ran before its dependency %s", n.Name(), d)
			}
		}
	}
	if len(order) != len(ran) {
		t.Fatalf("%d runs for %d nodes: a node ran twice", len(order), len(ran))
	}
}

// build makes a graph of named operator nodes in a chain from input
// "in": each spec is "name=kind".
func chain(t *testing.T, specs ...string) (*graph.Graph, []*graph.Node) {
	t.Helper()
	g := graph.New("chain")
	in, err := g.AddInput("in")
	if err != nil {
		t.Fatal(err)
	}
	p := in.Out(0)
	var nodes []*graph.Node
	for _, s := range specs {
		name, kind, _ := strings.Cut(s, "=")
		n, err := g.AddNode(name, kind, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
		p = n.Out(0)
	}
	if err := g.AddOutput("out", p); err != nil {
		t.Fatal(err)
	}
	return g, nodes
}

func TestOperatorNodesAndDefaultPopulate(t *testing.T) {
	reg := testRegistry(t)
	g, nodes := chain(t, "double=test.Scale", "triple=test.Scale")
	nodes[1].Args = schema.Args{"by": 3}
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	for _, exec := range []graph.Executor{graph.Serial{}, graph.Parallel{}} {
		g.Executor = exec
		outs, err := g.Execute(context.Background(), scalar(t, 7))
		if err != nil {
			t.Fatal(err)
		}
		if got := value(t, outs[0]); got != 42 {
			t.Errorf("%T: 7*2*3 = %d", exec, got)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); !errors.Is(err, errdefs.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if _, err := g.Execute(context.Background(), scalar(t, 1)); !errors.Is(err, errdefs.ErrClosed) {
		t.Errorf("Execute after Close: %v, want ErrClosed", err)
	}
}

func TestPopulateByNodeNameBeforeKind(t *testing.T) {
	g, nodes := chain(t, "special=thing", "plain=thing", "other=unknown")
	passes := graph.NewPasses()
	attach := func(label string) graph.PopulatePass {
		return graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
			return b.SetDefinition(n, graph.Func(label, func(ctx context.Context, in []*tensor.Batch) ([]*tensor.Batch, error) { return in, nil }))
		})
	}
	mustRegister(t, passes, schema.Pass{Name: "by-kind", Kind: schema.Populate, Match: "thing"}, attach("from-kind"))
	mustRegister(t, passes, schema.Pass{Name: "by-name", Kind: schema.Populate, Match: "special"}, attach("from-name"))
	// A pass that attaches nothing leaves the node to the next one.
	mustRegister(t, passes, schema.Pass{Name: "a-declines", Kind: schema.Populate, Match: "thing", Priority: 5},
		graph.PopulateFunc(func(context.Context, *graph.Builder, *graph.Node) error { return nil }))
	err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes})
	if !errors.Is(err, graph.ErrInvalid) || !strings.Contains(err.Error(), `node "other" (kind "unknown") has no definition`) {
		t.Fatalf("Build with an unpopulated node: %v", err)
	}
	for n, want := range map[*graph.Node]string{nodes[0]: "from-name", nodes[1]: "from-kind"} {
		if d := n.Definition(); d == nil || d.Name() != want {
			t.Errorf("node %s has definition %v, want %s", n.Name(), d, want)
		}
	}
}

func mustRegister(t *testing.T, r *graph.Passes, d schema.Pass, pass any) {
	t.Helper()
	if _, err := r.Register(d, pass); err != nil {
		t.Fatal(err)
	}
}

func TestPassRegistryErrors(t *testing.T) {
	r := graph.NewPasses()
	noop := graph.PopulateFunc(func(context.Context, *graph.Builder, *graph.Node) error { return nil })
	for _, c := range []struct {
		desc schema.Pass
		pass any
		want string
	}{
		{schema.Pass{Name: "", Kind: schema.Populate, Match: "x"}, noop, "a pass name starts with a letter"},
		{schema.Pass{Name: "p", Kind: "later", Match: "x"}, noop, `kind "later" is not one of populate, partition, global`},
		{schema.Pass{Name: "p", Kind: schema.Populate}, noop, "a populate pass needs Match"},
		{schema.Pass{Name: "p", Kind: schema.Global, Match: "x"}, graph.GlobalFunc(nil), "Match is for populate passes"},
		{schema.Pass{Name: "p", Kind: schema.Partition}, noop, "does not implement the partition pass interface"},
	} {
		if _, err := r.Register(c.desc, c.pass); !errors.Is(err, schema.ErrPass) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%+v): %v, want %q", c.desc, err, c.want)
		}
	}
	remove, err := r.Register(schema.Pass{Name: "p", Kind: schema.Populate, Match: "x"}, noop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(schema.Pass{Name: "p", Kind: schema.Populate, Match: "y"}, noop); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("duplicate pass: %v", err)
	}
	remove()
	if got := r.List(); len(got) != 0 {
		t.Errorf("after remove: %v", got)
	}
}

// TestPartitionPriorityAndGroups: the higher-priority partition pass runs
// first and its group is committed when it returns, so the next pass
// sees the grouped node; the result still computes the same.
func TestPartitionPriorityAndGroups(t *testing.T) {
	reg := testRegistry(t)
	g, _ := chain(t, "a=test.Scale", "b=test.Scale", "c=test.Scale", "d=test.Scale")
	passes := graph.NewPasses()
	var seen [][]string
	group := func(members ...string) graph.PartitionPass {
		return graph.PartitionFunc(func(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
			seen = append(seen, names(g.Nodes()))
			var nodes []*graph.Node
			for _, m := range members {
				nodes = append(nodes, g.Node(m))
			}
			err := b.Group(strings.Join(members, "_"), nodes, nil)
			if g.Node(members[0]) == nil {
				t.Error("the group was committed before the pass returned")
			}
			return err
		})
	}
	mustRegister(t, passes, schema.Pass{Name: "low", Kind: schema.Partition, Priority: 1}, group("a_b", "c"))
	mustRegister(t, passes, schema.Pass{Name: "high", Kind: schema.Partition, Priority: 9}, group("a", "b"))
	var global []string
	mustRegister(t, passes, schema.Pass{Name: "look", Kind: schema.Global},
		graph.GlobalFunc(func(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
			global = names(g.Nodes())
			return nil
		}))
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes, Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want := [][]string{{"in", "a", "b", "c", "d"}, {"in", "a_b", "c", "d"}}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("partition passes saw %v, want %v", seen, want)
	}
	if fmt.Sprint(global) != "[in a_b_c d]" {
		t.Errorf("global pass saw %v", global)
	}
	outer := g.Node("a_b_c").Definition().(*graph.Graph)
	inner := outer.Node("a_b").Definition().(*graph.Graph)
	if got := names(inner.Nodes()); fmt.Sprint(got) != "[in a b]" {
		t.Errorf("inner subgraph nodes %v", got)
	}
	if p := inner.Node("b").Path(); p != "a_b_c/a_b/b" {
		t.Errorf("path %q", p)
	}
	outs, err := g.Execute(context.Background(), scalar(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, outs[0]); got != 16 {
		t.Errorf("grouped chain gives %d, want 16", got)
	}
}

func TestGroupMustBeConvex(t *testing.T) {
	// in -> a -> b -> c, and a -> c: grouping a and c leaves through b.
	g := graph.New("g")
	in, _ := g.AddInput("in")
	a, _ := g.AddNode("a", "k", nil, in.Out(0))
	b, _ := g.AddNode("b", "k", nil, a.Out(0))
	c, _ := g.AddNode("c", "k", nil, b.Out(0))
	if err := g.AddOrder(a, c); err != nil {
		t.Fatal(err)
	}
	passes := graph.NewPasses()
	mustRegister(t, passes, schema.Pass{Name: "bad-group", Kind: schema.Partition},
		graph.PartitionFunc(func(ctx context.Context, bd *graph.Builder, g *graph.Graph) error {
			return bd.Group("ac", []*graph.Node{a, c}, nil)
		}))
	err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes, Default: identity()})
	if !errors.Is(err, schema.ErrPass) || !strings.Contains(err.Error(), `partition pass "bad-group"`) ||
		!strings.Contains(err.Error(), "not convex, a path leaves the group and comes back: a -> b -> c") {
		t.Fatalf("non-convex group: %v", err)
	}
	// A populate pass may not group.
	g2, _ := chain(t, "x=k")
	err = graph.Build(context.Background(), g2, graph.BuildOptions{Default: graph.PopulateFunc(func(ctx context.Context, bd *graph.Builder, n *graph.Node) error {
		return bd.Group("g", []*graph.Node{n}, nil)
	})})
	if err == nil || !strings.Contains(err.Error(), "only partition passes group nodes") {
		t.Fatalf("populate pass grouping: %v", err)
	}
}

// identity populates every node with a function that passes its first
// input through.
func identity() graph.PopulatePass {
	return graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		return b.SetDefinition(n, graph.Func("id", func(ctx context.Context, in []*tensor.Batch) ([]*tensor.Batch, error) {
			return in[:1], nil
		}))
	})
}

// declarePass declares a pass as a host does, through the hook package
// graph hands hosts in package friend.
func declarePass(r *graph.Passes, desc schema.Pass, plugin string, p lazy.Provider[any]) (func(), error) {
	return friend.Get[func(*graph.Passes, schema.Pass, string, lazy.Provider[any]) (func(), error)]()(r, desc, plugin, p)
}

// provider stands for a plugin: it counts starts and releases.
type provider struct {
	pass              any
	started, released atomic.Int32
	failWith          error
}

func (p *provider) Provide(ctx context.Context, name string) (any, func() error, error) {
	if p.failWith != nil {
		return nil, nil, p.failWith
	}
	p.started.Add(1)
	return p.pass, func() error { p.released.Add(1); return nil }, nil
}

func TestDeclaredPassStartsItsProviderOnlyWhenNeeded(t *testing.T) {
	reg := testRegistry(t)
	passes := graph.NewPasses()
	pop := &provider{pass: graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		in, err := reg.New(ctx, "test.Scale", schema.Args{"by": 10})
		if err != nil {
			return err
		}
		return b.SetDefinition(n, &graph.OperatorDef{Instance: in})
	})}
	if _, err := declarePass(passes, schema.Pass{Name: "tenfold", Kind: schema.Populate, Match: "test.Tenfold"}, "acme.plugin.ten", pop); err != nil {
		t.Fatal(err)
	}
	// A graph without test.Tenfold nodes does not start the provider.
	g, _ := chain(t, "a=test.Scale")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes, Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if pop.started.Load() != 0 {
		t.Fatal("the pass's provider started for a graph that does not need it")
	}
	g, _ = chain(t, "a=test.Tenfold", "b=test.Tenfold")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes, Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	if s, r := pop.started.Load(), pop.released.Load(); s != 1 || r != 0 {
		t.Fatalf("after build: started %d, released %d; want 1, 0", s, r)
	}
	outs, err := g.Execute(context.Background(), scalar(t, 2))
	if err != nil || value(t, outs[0]) != 200 {
		t.Fatalf("Execute: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if r := pop.released.Load(); r != 1 {
		t.Fatalf("after Close: released %d, want 1", r)
	}
	if got := passes.List(); len(got) != 1 || got[0].Plugin != "acme.plugin.ten" {
		t.Errorf("List: %+v", got)
	}

	pop.failWith = errors.New("plugin is broken")
	g, _ = chain(t, "a=test.Tenfold")
	err = graph.Build(context.Background(), g, graph.BuildOptions{Passes: passes})
	if !errors.Is(err, schema.ErrPass) || !strings.Contains(err.Error(), `populate pass "tenfold" of plugin "acme.plugin.ten"`) ||
		!strings.Contains(err.Error(), "plugin is broken") {
		t.Errorf("failing provider: %v", err)
	}
}

func TestNodeErrorNamesNodeOperatorAndPlugin(t *testing.T) {
	reg := testRegistry(t)
	g, _ := chain(t, "first=test.Scale", "boom=test.Fail", "after=test.Scale")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ran := atomic.Int32{}
	g.Observer = func(s graph.Span) { ran.Add(1) }
	for _, exec := range []graph.Executor{graph.Serial{}, graph.Parallel{Workers: 2}} {
		ran.Store(0)
		g.Executor = exec
		_, err := g.Execute(context.Background(), scalar(t, 1))
		var ne *graph.NodeError
		if !errors.As(err, &ne) || ne.Node != "boom" || ne.Operator != "test.Fail" {
			t.Fatalf("%T: %v", exec, err)
		}
		// The operator is named once: the op.Error inside says the step
		// and what went wrong, not the operator again.
		if want := `graph: node "boom" (operator test.Fail): run: the kernel ran out of patience`; err.Error() != want {
			t.Errorf("message: %v, want %s", err, want)
		}
		var oe *op.Error
		if !errors.As(err, &oe) || oe.Operator != "test.Fail" || oe.Step != "run" {
			t.Errorf("errors.As(*op.Error): %+v", oe)
		}
		if ran.Load() != 2 {
			t.Errorf("%T: %d nodes ran; the node after the failure must not", exec, ran.Load())
		}
	}
}

func TestPanickingNodeBecomesError(t *testing.T) {
	g := graph.New("p")
	in, _ := g.AddInput("in")
	n, _ := g.AddNode("bad", "panics", nil, in.Out(0))
	b := graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		return b.SetDefinition(n, graph.Func("panics", func(context.Context, []*tensor.Batch) ([]*tensor.Batch, error) {
			var m map[string]int
			//lint:ignore SA5000 the node must panic as real code does
			m["x"] = 1
			return nil, nil
		}))
	})
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: b}); err != nil {
		t.Fatal(err)
	}
	_ = n
	for _, exec := range []graph.Executor{graph.Serial{}, graph.Parallel{Workers: 2}} {
		g.Executor = exec
		_, err := g.Execute(context.Background(), scalar(t, 1))
		if !errors.Is(err, errdefs.ErrPanic) || !strings.Contains(err.Error(), `node "bad" (kind panics)`) || !strings.Contains(err.Error(), "assignment to entry in nil map") {
			t.Errorf("%T: %v", exec, err)
		}
	}
}

func TestCancellationStopsTheRun(t *testing.T) {
	for _, exec := range []graph.Executor{graph.Serial{}, graph.Parallel{Workers: 2}} {
		ctx, cancel := context.WithCancel(context.Background())
		g := graph.New("wide")
		in, _ := g.AddInput("in")
		var ran atomic.Int32
		def := graph.Func("tick", func(ctx context.Context, _ []*tensor.Batch) ([]*tensor.Batch, error) {
			if ran.Add(1) == 10 {
				cancel()
			}
			return nil, nil
		})
		for i := range 1000 {
			n, _ := g.AddNode(fmt.Sprint(i), "tick", nil)
			if err := g.AddOrder(in, n); err != nil {
				t.Fatal(err)
			}
		}
		if err := graph.Build(ctx, g, graph.BuildOptions{Default: graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
			return b.SetDefinition(n, def)
		})}); err != nil {
			t.Fatal(err)
		}
		g.Executor = exec
		_, err := g.Execute(ctx, scalar(t, 0))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%T: %v, want context.Canceled", exec, err)
		}
		if r := ran.Load(); r >= 1000 {
			t.Errorf("%T: all %d nodes ran after cancellation", exec, r)
		}
	}
}

// lazyExecutor skips the last node: Execute must notice.
type lazyExecutor struct{}

func (lazyExecutor) Execute(ctx context.Context, s *graph.Schedule) error {
	for i := range s.Len() - 1 {
		if err := s.Run(ctx, 0, i); err != nil {
			return err
		}
	}
	return nil
}

// reverseReady is a custom executor: it runs the ready node added last
// first, by dependency counting, on the calling goroutine.
type reverseReady struct{ ran []string }

func (r *reverseReady) Execute(ctx context.Context, s *graph.Schedule) error {
	counts := make([]int, s.Len())
	var ready []int
	for i := range s.Len() {
		if counts[i] = s.Deps(i); counts[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		if err := s.Run(ctx, 0, i); err != nil {
			return err
		}
		r.ran = append(r.ran, s.Node(i).Name())
		for _, j := range s.Next(i) {
			if counts[j]--; counts[j] == 0 {
				ready = append(ready, int(j))
			}
		}
	}
	return nil
}

func TestCustomExecutors(t *testing.T) {
	reg := testRegistry(t)
	g := graph.New("fan")
	in, _ := g.AddInput("in")
	a, _ := g.AddNode("a", "test.Scale", nil, in.Out(0))
	b, _ := g.AddNode("b", "test.Scale", schema.Args{"by": 3}, in.Out(0))
	g.AddOutput("a", a.Out(0))
	g.AddOutput("b", b.Out(0))
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := &reverseReady{}
	g.Executor = graph.ExecutorFunc(r.Execute)
	outs, err := g.Execute(context.Background(), scalar(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	if value(t, outs[0]) != 10 || value(t, outs[1]) != 15 || fmt.Sprint(r.ran) != "[b a]" {
		t.Errorf("custom executor: %d %d, ran %v", value(t, outs[0]), value(t, outs[1]), r.ran)
	}
	g.Executor = graph.ExecutorFunc(lazyExecutor{}.Execute)
	if _, err := g.Execute(context.Background(), scalar(t, 5)); !errors.Is(err, graph.ErrInvalid) ||
		!strings.Contains(err.Error(), `returned without running node "b"`) {
		t.Errorf("lazy executor: %v", err)
	}
}

func TestMalformedGraphs(t *testing.T) {
	reg := testRegistry(t)
	g := graph.New("bad")
	in, _ := g.AddInput("in")
	if _, err := g.AddInput("in"); !errors.Is(err, graph.ErrInvalid) || !strings.Contains(err.Error(), `two nodes called "in"`) {
		t.Errorf("duplicate name: %v", err)
	}
	other := graph.New("other")
	foreign, _ := other.AddInput("f")
	if _, err := g.AddNode("x", "k", nil, foreign.Out(0)); err == nil || !strings.Contains(err.Error(), `belongs to graph "other"`) {
		t.Errorf("foreign port: %v", err)
	}
	a, _ := g.AddNode("a", "test.Scale", nil, in.Out(0))
	b, _ := g.AddNode("b", "test.Scale", nil, a.Out(0), a.Out(1))
	c, _ := g.AddNode("c", "test.Scale", nil, b.Out(0))
	g.AddOrder(c, a)
	err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg})
	if !errors.Is(err, graph.ErrInvalid) {
		t.Fatalf("Build: %v", err)
	}
	for _, want := range []string{`node "b": test.Scale takes 1 input, it is given 2`, `node "b": input 1: node "a" (test.Scale) has outputs [y], no output 1`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	g.Close()

	g = graph.New("cyclic")
	in, _ = g.AddInput("in")
	a, _ = g.AddNode("a", "test.Scale", nil, in.Out(0))
	b, _ = g.AddNode("b", "test.Scale", nil, a.Out(0))
	c, _ = g.AddNode("c", "test.Scale", nil, b.Out(0))
	g.AddOrder(c, a)
	err = graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg})
	if !errors.Is(err, graph.ErrInvalid) || !strings.Contains(err.Error(), "cycle: a -> b -> c -> a") {
		t.Errorf("cycle: %v", err)
	}
	g.Close()
}

func TestWrongInputCount(t *testing.T) {
	g, _ := chain(t, "a=k")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: identity()}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Execute(context.Background()); !errors.Is(err, graph.ErrInvalid) || !strings.Contains(err.Error(), "0 inputs given, the graph has 1") {
		t.Errorf("no inputs: %v", err)
	}
}

// TestRecycledIntermediates: the outputs of operator nodes that only
// operators read are recycled between executions, and every execution
// still computes its own values; a graph output is never recycled.
func TestRecycledIntermediates(t *testing.T) {
	reg := testRegistry(t)
	g, _ := chain(t, "a=test.Scale", "b=test.Scale", "c=test.Scale")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var outs []*tensor.Batch
	for v := range int64(6) {
		out, err := g.Execute(context.Background(), scalar(t, v))
		if err != nil {
			t.Fatal(err)
		}
		if got := value(t, out[0]); got != 8*v {
			t.Errorf("execution %d: %d, want %d", v, got, 8*v)
		}
		outs = append(outs, out[0])
	}
	for i, o := range outs { // an earlier output is not overwritten by later executions
		if got := value(t, o); got != 8*int64(i) {
			t.Errorf("output of execution %d reads %d after later executions, want %d", i, got, 8*i)
		}
	}
	allocs := testing.AllocsPerRun(20, func() { g.Execute(context.Background(), scalar(t, 1)) })
	g2, _ := chain(t, "a=test.Scale", "b=test.Scale", "c=test.Scale")
	if err := graph.Build(context.Background(), g2, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: reg}); err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	g2.AddOutput("middle", g2.Node("b").Out(0)) // b's outputs now reach the caller: not recycled
	more := testing.AllocsPerRun(20, func() { g2.Execute(context.Background(), scalar(t, 1)) })
	if allocs >= more {
		t.Errorf("%v allocations per execution with intermediates recycled, %v with one of them an output: want fewer", allocs, more)
	}
}

// TestRecycleOutputs: outputs handed back with Graph.Recycle are reused
// by the next execution of the same shapes; outputs kept are not.
func TestRecycleOutputs(t *testing.T) {
	g, _ := chain(t, "a=test.Scale")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: testRegistry(t)}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	first, err := g.Execute(context.Background(), scalar(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	second, err := g.Execute(context.Background(), scalar(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	if second[0] == first[0] || value(t, first[0]) != 6 {
		t.Fatalf("an output not handed back was reused: %d", value(t, first[0]))
	}
	g.Recycle(first)
	third, err := g.Execute(context.Background(), scalar(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	if third[0] != first[0] || value(t, third[0]) != 10 || value(t, second[0]) != 8 {
		t.Errorf("after Recycle: reused %t, values %d and %d; want reused, 10 and 8", third[0] == first[0], value(t, third[0]), value(t, second[0]))
	}
	g.Recycle(nil) // not the graph's outputs: nothing happens
}

// TestSteadyStateAllocatesNoOutputs: a chain of three operators over a
// 4 MiB input, its outputs handed back after each execution, allocates
// none of its 12 MiB of outputs once warm: what an execution allocates
// is a small fraction of one output.
func TestSteadyStateAllocatesNoOutputs(t *testing.T) {
	g, _ := chain(t, "a=test.Scale", "b=test.Scale", "c=test.Scale")
	if err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.OperatorPopulate(), Operators: testRegistry(t)}); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x, err := tensor.FromSlice(make([]int64, 512<<10), 512<<10) // 4 MiB
	if err != nil {
		t.Fatal(err)
	}
	in, _ := tensor.NewBatch(x)
	run := func() {
		outs, err := g.Execute(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		g.Recycle(outs)
	}
	run() // warm up: the outputs are allocated once
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 10
	for range n {
		run()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 64<<10 {
		t.Errorf("%d bytes allocated per execution once warm; want under 64 KiB, none of the 4 MiB outputs", per)
	}
}
