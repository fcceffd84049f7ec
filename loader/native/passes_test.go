package native_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynop/dynop/abi"
	"reflect"
	"sync"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/loader/native"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

const passesID = "dynop.plugin.passes"

// passesPlugin builds testdata/passes.c with the given -D switches.
func passesPlugin(t testing.TB, defines ...string) string {
	t.Helper()
	return cbuild.Plugin(t, "libpasses.so", "loader/native/testdata/passes.c",
		append([]string{"-Wno-unused-function", "-Wno-unused-const-variable"}, defines...)...)
}

// passesHost opens a host over the plugin file lib and registers the Go
// operator test.Scale, which the fixture's populate pass attaches.
func passesHost(t testing.TB, lib string) *dynop.Host {
	t.Helper()
	h := openHost(t, []string{lib})
	scale := op.Operator{
		Schema: schema.Op{
			Name:    "test.Scale",
			Doc:     "Multiplies by factor.",
			Inputs:  []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Float32}}},
			Outputs: []schema.Output{{Name: "y"}},
			Args:    []schema.Arg{{Name: "factor", Type: schema.Float, Default: 1.0}},
		},
		Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) {
			return scaleImpl(float32(v.Float("factor"))), nil
		}},
	}
	if err := h.Operators().Register(scale); err != nil {
		t.Fatal(err)
	}
	return h
}

type scaleImpl float32

func (scaleImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: tensor.Float32, Shapes: in[0].Shapes()}}, nil
}

func (f scaleImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	for i, t := range in[0].Samples() {
		src, err := tensor.Values[float32](t)
		if err != nil {
			return err
		}
		dst, err := tensor.Values[float32](out[0].Sample(i))
		if err != nil {
			return err
		}
		for j, v := range src {
			dst[j] = v * float32(f)
		}
	}
	return nil
}

// node is a node of a test graph: its name, kind, args and the names of
// the nodes that feed it ("in", the graph input, by default).
type node struct {
	name, kind string
	args       schema.Args
	inputs     []string
}

// build makes a graph with the input "in" and nodes, whose last node is
// the output "out", and builds it with h's passes and operators.
func build(t testing.TB, h *dynop.Host, nodes []node, skip ...string) (*graph.Graph, error) {
	t.Helper()
	g := graph.New("test")
	in, err := g.AddInput("in")
	if err != nil {
		t.Fatal(err)
	}
	var last *graph.Node = in
	for _, n := range nodes {
		var ports []graph.Port
		for _, from := range n.inputs {
			ports = append(ports, g.Node(from).Out(0))
		}
		if n.inputs == nil {
			ports = []graph.Port{in.Out(0)}
		}
		if last, err = g.AddNode(n.name, n.kind, n.args, ports...); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.AddOutput("out", last.Out(0)); err != nil {
		t.Fatal(err)
	}
	return g, graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate(), Skip: skip})
}

// chain is in -> a -> b -> own-args: three fixture.Double nodes, the last
// with args of its own that the pass passes on.
var chain = []node{
	{name: "a", kind: "fixture.Double"},
	{name: "b", kind: "fixture.Double", inputs: []string{"a"}},
	{name: "own-args", kind: "fixture.Double", args: schema.Args{"factor": 3}, inputs: []string{"b"}},
}

func execute(t testing.TB, g *graph.Graph, x ...float32) []float32 {
	t.Helper()
	in, err := tensor.FromSlice(x, int64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := g.Execute(ctx, mustBatch(t, in))
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensor.Values[float32](outs[0].Sample(0))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNativePassesStartLazily: the passes are known without starting the
// plugin; a build that does not need them leaves it alone; one that does
// starts it, each pass does its work through the builder, and closing the
// graph stops the plugin and unloads its library.
func TestNativePassesStartLazily(t *testing.T) {
	lib := passesPlugin(t)
	h := passesHost(t, lib)
	want := map[string]schema.Pass{
		"fixture.double": {Name: "fixture.double", Kind: schema.Populate, Match: "fixture.Double", Doc: "Runs fixture.Double nodes as test.Scale by 2."},
		"fixture.pair":   {Name: "fixture.pair", Kind: schema.Partition, Priority: 5, Doc: "Groups the first two fixture nodes."},
		"fixture.guard":  {Name: "fixture.guard", Kind: schema.Global, Doc: "Refuses graphs with a node called forbidden."},
	}
	for _, e := range h.Passes().List() {
		if e.Plugin != passesID {
			continue
		}
		if !reflect.DeepEqual(e.Desc, want[e.Desc.Name]) {
			t.Errorf("pass read from C: %+v, want %+v", e.Desc, want[e.Desc.Name])
		}
		delete(want, e.Desc.Name)
	}
	if len(want) > 0 {
		t.Errorf("passes missing from the host: %v", want)
	}
	wantStatus(t, h, passesID, dynop.StateAvailable, 0, 0)

	// No node for the populate pass, partition and global passes skipped:
	// the build does not need the plugin.
	g, err := build(t, h, []node{{name: "s", kind: "test.Scale", args: schema.Args{"factor": 5}}}, "fixture.pair", "fixture.guard")
	if err != nil {
		t.Fatal(err)
	}
	if got := execute(t, g, 1); got[0] != 5 {
		t.Errorf("test.Scale by 5 of 1 = %v", got)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, h, passesID, dynop.StateAvailable, 0, 0)

	for round := 1; round <= 2; round++ {
		g, err := build(t, h, chain)
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, h, passesID, dynop.StateStarted, round, round-1)
		if !cbuild.Mapped(t, lib) {
			t.Errorf("%s is not mapped while a graph uses its passes", lib)
		}
		var names []string
		for _, n := range g.Nodes() {
			names = append(names, n.Name())
		}
		if want := []string{"in", "fixture.pair", "own-args"}; !reflect.DeepEqual(names, want) {
			t.Errorf("nodes after the partition pass: %v, want %v", names, want)
		}
		if sub, ok := g.Node("fixture.pair").Definition().(*graph.Graph); !ok || sub.Node("a") == nil || sub.Node("b") == nil {
			t.Errorf("fixture.pair is not the subgraph of a and b: %v", g.Node("fixture.pair").Definition())
		} else if d := sub.Node("a").Definition(); d == nil || d.Name() != "test.Scale" {
			t.Errorf("node a's definition: %v", d)
		}
		// 2 (a) * 2 (b) * 3 (own-args, with its own factor).
		if got := execute(t, g, 1, 2); !reflect.DeepEqual(got, []float32{12, 24}) {
			t.Errorf("outputs %v, want [12 24]", got)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, h, passesID, dynop.StateAvailable, round, round)
		if cbuild.Mapped(t, lib) {
			t.Errorf("%s is still mapped after the graph closed", lib)
		}
	}
}

// TestNativePassSeesTheGraph: the graph as the global pass sees it, which
// it describes in its error: every node with its kind, definition,
// producers (index:output) and args, after populating and partitioning.
func TestNativePassSeesTheGraph(t *testing.T) {
	h := passesHost(t, passesPlugin(t))
	g, err := build(t, h, []node{
		{name: "a", kind: "fixture.Double", args: schema.Args{"note": "hi"}},
		{name: "own-args", kind: "fixture.Double", args: schema.Args{"factor": 3}, inputs: []string{"a"}},
		{name: "describe", kind: "test.Scale", args: schema.Args{"factor": 0.5}, inputs: []string{"own-args", "in"}},
	})
	t.Cleanup(func() { g.Close() })
	wantErr(t, err, schema.ErrPass, `global pass "fixture.guard" of plugin "dynop.plugin.passes"`,
		`native plugin "dynop.plugin.passes": pass "fixture.guard" returned DYNOP_ERROR: `+
			`node=none; in||-||{}; fixture.pair|fixture.pair|fixture.pair|0:0|{}; `+
			`describe|test.Scale|test.Scale|1:0,0:0|{"factor":0.5}; `)
}

// TestNativePassBuilderErrors: a pass that misuses the builder gets an
// error code, and the builder's message becomes the pass's error even if
// the pass gives none itself.
func TestNativePassBuilderErrors(t *testing.T) {
	h := passesHost(t, passesPlugin(t))
	for _, c := range []struct {
		node   string
		target error
		want   []string
	}{
		{"bad-index", dynop.ErrInvalid, []string{"returned DYNOP_ERROR_INVALID_ARGUMENT", `set_operator(99, "test.Scale"): node 99 is out of range: the graph has 2 node(s)`}},
		{"bad-op", dynop.ErrNotFound, []string{"returned DYNOP_ERROR_NOT_FOUND", `set_operator(1, "test.Nope") on node "bad-op"`, "test.Nope"}},
		{"bad-args", dynop.ErrInvalid, []string{"returned DYNOP_ERROR_INVALID_ARGUMENT", `set_operator(1, "test.Scale"): args_json [2] is not a JSON object`}},
		{"grouper", dynop.ErrState, []string{"returned DYNOP_ERROR_STATE", `group("g"): only partition passes group nodes; pass "fixture.double" is a populate pass`}},
		{"input", dynop.ErrInvalid, []string{`set_operator(0, "test.Scale") on node "in"`, "is a graph input and takes no definition"}},
		{"late-register", dynop.ErrState, []string{"returned DYNOP_ERROR_STATE", `RegisterPass "fixture.double"`, "allowed only during Start"}},
		{"forbidden", dynop.ErrInvalid, []string{`global pass "fixture.guard"`, `a node called "forbidden" is not allowed`}},
	} {
		t.Run(c.node, func(t *testing.T) {
			g, err := build(t, h, []node{{name: c.node, kind: "fixture.Double"}})
			var re *abi.ResultError
			if !errors.As(err, &re) || re.Plugin != passesID {
				t.Errorf("error %v is not the plugin's ResultError", err)
			}
			pass := "fixture.double"
			if c.node == "forbidden" {
				pass = "fixture.guard"
			}
			wantErr(t, err, c.target, append(c.want, fmt.Sprintf(`pass %q of plugin %q`, pass, passesID), fmt.Sprintf("pass %q returned", pass))...)
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			if st, _ := h.Plugin(passesID); st.State != dynop.StateAvailable {
				t.Errorf("plugin %v after its graph closed", st.State)
			}
		})
	}
}

// TestNativePassBadPlugins: descriptors C gets wrong make the file broken,
// naming the file and the field; registrations that go wrong fail the
// plugin's start, and with it the build that needed it.
func TestNativePassBadPlugins(t *testing.T) {
	for _, c := range []struct {
		define string
		want   []string
	}{
		{"-DNULL_NAME", []string{"passes[1]: name is NULL"}},
		{"-DBAD_KIND", []string{`passes[1] (pass "fixture.pair"): kind is 7, not DYNOP_PASS_POPULATE (1)`}},
		{"-DSMALL_DESC", []string{"passes[0] says it is 40 bytes, but its version 1.0.0 needs at least"}},
	} {
		t.Run(c.define, func(t *testing.T) {
			lib := passesPlugin(t, c.define)
			h := openHost(t, []string{lib})
			broken := broken(h)
			if len(broken) != 1 {
				t.Fatalf("broken %v, want one", broken)
			}
			wantErr(t, broken[0].Err, native.ErrABI, append(c.want, lib)...)
		})
	}
	t.Run("-DNO_MATCH", func(t *testing.T) {
		// The reader validates the whole info, so the file is broken
		// before its plugin is known.
		lib := passesPlugin(t, "-DNO_MATCH")
		h := openHost(t, []string{lib})
		broken := broken(h)
		if len(broken) != 1 {
			t.Fatalf("broken %v, want one", broken)
		}
		wantErr(t, broken[0].Err, dynop.ErrInvalid, lib, "invalid info", `pass "fixture.double"`, "a populate pass needs Match")
	})
	for _, c := range []struct {
		define string
		target error
		want   []string
	}{
		{"-DUNDECLARED", dynop.ErrInvalid, []string{`RegisterPass "fixture.ghost"`, "its Info does not declare the pass (declares fixture.double, fixture.pair, fixture.guard)"}},
		{"-DNULL_RUN", native.ErrABI, []string{`register_pass "fixture.guard"`, "run is NULL"}},
	} {
		t.Run(c.define, func(t *testing.T) {
			h := passesHost(t, passesPlugin(t, c.define))
			g, err := build(t, h, chain)
			t.Cleanup(func() { g.Close() })
			wantErr(t, err, c.target, append(c.want, `plugin "dynop.plugin.passes"`, "register returned")...)
			if st, _ := h.Plugin(passesID); st.State != dynop.StateAvailable {
				t.Errorf("a failed start left the plugin %v", st.State)
			}
		})
	}
	// An info of version 1.1 ends before pass_count: the host reads no
	// passes from it, whatever lies beyond.
	t.Run("-DOLD_INFO", func(t *testing.T) {
		p, err := native.Load(ctx, passesPlugin(t, "-DOLD_INFO"), native.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ps := p.Info().Passes; len(ps) != 0 {
			t.Errorf("passes read from a 1.1 info: %v", ps)
		}
	})
}

// TestNativePassesConcurrentBuilds: builds on several goroutines run the
// plugin's passes at once, each with its own view of its graph, and the
// plugin stops once the last graph closes.
func TestNativePassesConcurrentBuilds(t *testing.T) {
	h := passesHost(t, passesPlugin(t))
	x, _ := tensor.FromSlice([]float32{1}, 1)
	in := mustBatch(t, x)
	round := func() error {
		g := graph.New("concurrent")
		prev, _ := g.AddInput("in")
		for _, n := range chain {
			var err error
			if prev, err = g.AddNode(n.name, n.kind, n.args, prev.Out(0)); err != nil {
				return err
			}
		}
		g.AddOutput("out", prev.Out(0))
		err := graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate()})
		if err == nil {
			var outs []*tensor.Batch
			if outs, err = g.Execute(ctx, in); err == nil {
				if v, _ := tensor.Values[float32](outs[0].Sample(0)); v[0] != 12 {
					err = fmt.Errorf("output %v, want 12", v)
				}
			}
		}
		return errors.Join(err, g.Close())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if err := round(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st, _ := h.Plugin(passesID); st.State != dynop.StateAvailable || st.Starts != st.Stops || st.Starts == 0 {
		t.Errorf("plugin %v after %d starts, %d stops", st.State, st.Starts, st.Stops)
	}
}
