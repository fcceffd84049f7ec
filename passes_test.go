package dynop_test

import (
	"context"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// passPlugin is a Go plugin that declares a populate pass attaching its
// operator test.Double to nodes of kind "test.Twice".
type passPlugin struct {
	id       string
	register func(h plugin.Registrar) error // replaces the default body
}

var twiceDesc = schema.Pass{Name: "test.twice", Kind: schema.Populate, Match: "test.Twice", Doc: "Runs test.Twice nodes as test.Double."}

func (p *passPlugin) Info() schema.Plugin {
	return schema.Plugin{ID: p.id, Version: iface.V(1, 0, 0), Operators: []schema.Op{doubleSchema("test.Double")},
		Passes: []schema.Pass{twiceDesc}}
}

func (p *passPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	if p.register != nil {
		return p.register(h)
	}
	if err := h.RegisterOperator(op.Operator{Schema: doubleSchema("test.Double"), Backends: map[schema.Device]op.Factory{schema.CPU: newDouble}}); err != nil {
		return err
	}
	return h.RegisterPass(twiceDesc.Name, graph.PopulateFunc(func(ctx context.Context, b *graph.Builder, n *graph.Node) error {
		return b.SetOperator(ctx, n, "test.Double", n.Args)
	}))
}

func twiceGraph(t *testing.T, h *dynop.Host) *graph.Graph {
	t.Helper()
	g := graph.New("twice")
	in, _ := g.AddInput("in")
	n, err := g.AddNode("x2", "test.Twice", schema.Args{"times": 3}, in.Out(0))
	if err != nil {
		t.Fatal(err)
	}
	g.AddOutput("out", n.Out(0))
	err = graph.Build(context.Background(), g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPluginPassStartsPluginAndGoesWithIt: the pass is known before the
// plugin starts; a build that needs it starts the plugin, which stays
// started until the graph closes, then stops; the next build starts it
// again.
func TestPluginPassStartsPluginAndGoesWithIt(t *testing.T) {
	ctx := context.Background()
	p := &passPlugin{id: "test.plugin.passes"}
	h := open(t, p)
	defer h.Close(ctx)

	st, _ := h.Plugin(p.id)
	if _, ok := st.Info.Provides(dynop.PassesInterfaceForTest.UID); !ok {
		t.Errorf("Info of a plugin with passes lacks %s", dynop.PassesInterfaceForTest)
	}
	var found bool
	for _, e := range h.Passes().List() {
		found = found || (e.Desc.Name == twiceDesc.Name && e.Plugin == p.id)
	}
	if !found {
		t.Fatalf("host passes %v lack the plugin's", h.Passes().List())
	}
	wantState(t, h, "passes", dynop.StateAvailable, 0)

	for round := range 2 {
		g := twiceGraph(t, h)
		if s, _ := state(t, h, "passes"); s != dynop.StateStarted {
			t.Fatalf("round %d: plugin %v after a build that ran its pass", round, s)
		}
		x, _ := tensor.FromSlice([]float32{1, 2}, 2)
		b, _ := tensor.NewBatch(x)
		outs, err := g.Execute(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := tensor.Values[float32](outs[0].Sample(0)); v[1] != 6 {
			t.Errorf("output %v, want 2*3 = 6", v)
		}
		if d := g.Node("x2").Definition(); d.Name() != "test.Double" {
			t.Errorf("definition %q", d.Name())
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		wantState(t, h, "passes", dynop.StateAvailable, 0)
	}
	if st, _ := h.Plugin(p.id); st.Starts != 2 || st.Stops != 2 {
		t.Errorf("starts %d, stops %d; want 2, 2", st.Starts, st.Stops)
	}
}

func TestRegisterPassErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		register func(h plugin.Registrar) error
		want     []string
	}{
		{"undeclared", func(h plugin.Registrar) error { return h.RegisterPass("test.other", graph.PopulateFunc(nil)) },
			[]string{`RegisterPass "test.other"`, "its Info does not declare the pass (declares test.twice)"}},
		{"wrong kind", func(h plugin.Registrar) error {
			return h.RegisterPass(twiceDesc.Name, graph.PartitionFunc(nil))
		}, []string{"does not implement the populate pass interface"}},
		{"missing", func(h plugin.Registrar) error {
			return h.RegisterOperator(op.Operator{Schema: doubleSchema("test.Double"), Backends: map[schema.Device]op.Factory{schema.CPU: newDouble}})
		}, []string{"Info declares pass(es) that Start did not register: test.twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &passPlugin{id: "test.plugin.passes", register: c.register}
			h := open(t, p)
			defer h.Close(ctx)
			g := graph.New("g")
			in, _ := g.AddInput("in")
			g.AddNode("x2", "test.Twice", nil, in.Out(0))
			err := graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators()})
			wantErr(t, err, schema.ErrPass, append([]string{`populate pass "test.twice" of plugin "test.plugin.passes"`}, c.want...)...)
			g.Close()
		})
	}
}

func TestPassInfoValidation(t *testing.T) {
	info := schema.Plugin{ID: "test.plugin.bad", Version: iface.V(1, 0, 0), Passes: []schema.Pass{
		{Name: "p", Kind: schema.Populate}, {Name: "q", Kind: schema.Global}, {Name: "q", Kind: schema.Global},
	}}
	wantErr(t, info.Validate(), schema.ErrPlugin, "a populate pass needs Match", `provides pass "q" twice`)
}
