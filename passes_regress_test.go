package dynop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// brokenPartition declares a partition pass but its Start fails (a
// missing library, a bad config): a plugin nobody's graph uses.
type brokenPartition struct{}

func (brokenPartition) Info() schema.Plugin {
	return schema.Plugin{ID: "test.plugin.unused", Version: iface.V(1, 0, 0),
		Passes: []schema.Pass{{Name: "unused.tile", Kind: schema.Partition}}}
}
func (brokenPartition) Start(context.Context, plugin.Registrar) error {
	return errors.New("cannot find libtiling.so")
}

// Regression: one plugin that fails to start, with a partition pass,
// fails every build on the host, and every build retries starting it.
func TestRegressionBrokenPartitionPluginFailsEveryBuild(t *testing.T) {
	ctx := context.Background()
	h := open(t, &passPlugin{id: "test.plugin.passes"}, brokenPartition{})
	defer h.Close(ctx)
	for range 3 {
		g := graph.New("g")
		in, _ := g.AddInput("in")
		n, _ := g.AddNode("x2", "test.Twice", nil, in.Out(0))
		g.AddOutput("out", n.Out(0))
		err := graph.Build(ctx, g, graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate()})
		g.Close()
		if err != nil {
			t.Errorf("build of a graph that does not involve test.plugin.unused: %v", err)
		}
	}
	st, _ := h.Plugin("test.plugin.unused")
	t.Logf("unused plugin: state %v, starts %d", st.State, st.Starts)
	_ = dynop.StateAvailable
}
