package dynop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// opPlugin is a Go plugin that declares operators; by default its
// Start registers each with a backend that doubles float32 input.
type opPlugin struct {
	id       string
	schemas  []schema.Op
	register func(h plugin.Registrar) error // replaces the default body
}

func doubleSchema(name string) schema.Op {
	return schema.Op{
		Name:    name,
		Doc:     "Doubles.",
		Inputs:  []schema.Input{{Name: "x", DTypes: []tensor.DType{tensor.Float32}}},
		Outputs: []schema.Output{{Name: "y"}},
		Args:    []schema.Arg{{Name: "times", Type: schema.Int, Default: int64(2)}},
		Devices: []schema.Device{schema.CPU},
	}
}

func (p *opPlugin) Info() schema.Plugin {
	return schema.Plugin{ID: p.id, Version: iface.V(1, 0, 0), Operators: p.schemas}
}

func (p *opPlugin) Start(ctx context.Context, h plugin.Registrar) error {
	if p.register != nil {
		return p.register(h)
	}
	for _, s := range p.schemas {
		if err := h.RegisterOperator(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: newDouble}}); err != nil {
			return err
		}
	}
	return nil
}

type double struct{ times float32 }

func newDouble(v *schema.Values) (op.Impl, error) { return &double{float32(v.Int("times"))}, nil }

func (d *double) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: tensor.Float32, Shapes: in[0].Shapes()}}, nil
}

func (d *double) Run(ctx context.Context, out, in []*tensor.Batch) error {
	for i, t := range in[0].Samples() {
		src, _ := tensor.Values[float32](t)
		dst, _ := tensor.Values[float32](out[0].Sample(i))
		for j, v := range src {
			dst[j] = v * d.times
		}
	}
	return nil
}

func TestOperatorStartsPlugin(t *testing.T) {
	ctx := context.Background()
	p := &opPlugin{id: "test.plugin.ops", schemas: []schema.Op{doubleSchema("test.Double"), doubleSchema("test.Triple")}}
	h := open(t, p)
	defer h.Close(ctx)

	st, _ := h.Plugin(p.id)
	if _, ok := st.Info.Provides(dynop.OperatorsInterfaceForTest.UID); !ok {
		t.Errorf("Info of a plugin with operators lacks %s: %v", dynop.OperatorsInterfaceForTest, st.Info.Interfaces)
	}
	list := h.Operators().List()
	if len(list) != 2 || list[0].Schema.Name != "test.Double" || list[0].Plugin != p.id {
		t.Fatalf("operators: %+v", list)
	}
	wantState(t, h, "ops", dynop.StateAvailable, 0)

	a, err := h.NewOperator(ctx, "test.Double", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, h, "ops", dynop.StateStarted, 1)
	b, err := h.NewOperator(ctx, "test.Triple", schema.Args{"times": 3})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, h, "ops", dynop.StateStarted, 2)

	x, _ := tensor.FromSlice([]float32{1, 2})
	in, _ := tensor.NewBatch(x)
	outs, err := b.Exec(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tensor.Values[float32](outs[0].Sample(0)); got[0] != 3 || got[1] != 6 {
		t.Errorf("test.Triple = %v", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wantState(t, h, "ops", dynop.StateStarted, 1)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wantState(t, h, "ops", dynop.StateAvailable, 0)
	if err := h.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	_, err = h.NewOperator(ctx, "test.Double", nil)
	wantErr(t, err, dynop.ErrClosed, `operator "test.Double"`)
}

func TestRegisterOperatorErrors(t *testing.T) {
	ctx := context.Background()
	s := doubleSchema("test.Double")
	backends := map[schema.Device]op.Factory{schema.CPU: newDouble}
	changed := doubleSchema("test.Double")
	changed.Doc = "Something else."
	changed.Args[0].Default = int64(4)

	for _, c := range []struct {
		name     string
		register func(h plugin.Registrar) error
		target   error
		expect   []string
	}{
		{"undeclared", func(h plugin.Registrar) error {
			return h.RegisterOperator(op.Operator{Schema: doubleSchema("test.Ghost"), Backends: backends})
		}, dynop.ErrInvalid, []string{`RegisterOperator "test.Ghost"`, "a backend without a schema", "declares test.Double"}},
		{"schema differs", func(h plugin.Registrar) error {
			return h.RegisterOperator(op.Operator{Schema: changed, Backends: backends})
		}, dynop.ErrInvalid, []string{"schema differs", `doc: "Doubles." ≠ "Something else."`, "args:"}},
		{"no backend", func(h plugin.Registrar) error {
			return h.RegisterOperator(op.Operator{Schema: s})
		}, schema.ErrOp, []string{"no backends"}},
		{"missing", func(h plugin.Registrar) error { return nil },
			dynop.ErrNotFound, []string{"a schema without a backend", "did not register: test.Double"}},
		{"twice", func(h plugin.Registrar) error {
			if err := h.RegisterOperator(op.Operator{Schema: s, Backends: backends}); err != nil {
				return err
			}
			return h.RegisterOperator(op.Operator{Schema: s, Backends: backends})
		}, dynop.ErrDuplicate, []string{"already registered"}},
		{"operators interface", func(h plugin.Registrar) error {
			return h.AddInterface(dynop.OperatorsInterfaceForTest, "mine")
		}, dynop.ErrInvalid, []string{"the host provides it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &opPlugin{id: "test.plugin.ops", schemas: []schema.Op{s}, register: c.register}
			h := open(t, p)
			defer h.Close(ctx)
			_, err := h.NewOperator(ctx, "test.Double", nil)
			wantErr(t, err, c.target, append(c.expect, `plugin "test.plugin.ops"`)...)
			wantState(t, h, "ops", dynop.StateAvailable, 0)
		})
	}

	t.Run("after register", func(t *testing.T) {
		var host plugin.Registrar
		p := &opPlugin{id: "test.plugin.ops", schemas: []schema.Op{s}}
		p.register = func(h plugin.Registrar) error {
			host = h
			return h.RegisterOperator(op.Operator{Schema: s, Backends: backends})
		}
		h := open(t, p)
		defer h.Close(ctx)
		in, err := h.NewOperator(ctx, "test.Double", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		wantErr(t, host.RegisterOperator(op.Operator{Schema: s, Backends: backends}), dynop.ErrState, "allowed only during Start")
	})
}

func TestOperatorDeclaredTwice(t *testing.T) {
	ctx := context.Background()
	first := &opPlugin{id: "test.plugin.a", schemas: []schema.Op{doubleSchema("test.Double")}}
	second := &opPlugin{id: "test.plugin.b", schemas: []schema.Op{doubleSchema("test.Double")}}
	h := open(t, second, first)
	defer h.Close(ctx)
	e, err := h.Operators().Lookup("test.Double")
	if err != nil || e.Plugin != "test.plugin.a" {
		t.Errorf("Lookup = %+v, %v; want the plugin whose ID sorts first", e, err)
	}
}

func TestOperatorPluginFailsToStart(t *testing.T) {
	ctx := context.Background()
	p := &opPlugin{id: "test.plugin.ops", schemas: []schema.Op{doubleSchema("test.Double")},
		register: func(plugin.Registrar) error { return errors.New("no frobnicator on this machine") }}
	h := open(t, p)
	defer h.Close(ctx)
	_, err := h.NewOperator(ctx, "test.Double", nil)
	wantErr(t, err, nil, `operator "test.Double": plugin "test.plugin.ops"`, "no frobnicator on this machine")
	_, err = h.NewOperator(ctx, "test.Duble", nil)
	wantErr(t, err, dynop.ErrNotFound, `did you mean "test.Double"?`)
}

func TestOperatorInstanceLeaked(t *testing.T) {
	ctx := context.Background()
	p := &opPlugin{id: "test.plugin.ops", schemas: []schema.Op{doubleSchema("test.Double")}}
	h := open(t, p)
	if _, err := h.NewOperator(ctx, "test.Double", nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.Close(ctx), dynop.ErrLeaked, "test.plugin.ops")
}

// TestOperatorNotFoundSaysWhereTheHostLooked: the error of an operator
// that no plugin found provides names each entry of the host's search
// path and where it came from, in search order.
func TestOperatorNotFoundSaysWhereTheHostLooked(t *testing.T) {
	ctx := context.Background()
	given, env := t.TempDir(), t.TempDir()
	t.Setenv("DYNOP_PLUGIN_PATH", env)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for _, c := range []struct {
		opts dynop.Options
		want string
	}{
		{dynop.Options{Paths: []string{given}, NoDefaultPaths: true},
			`op: operator not found: "acme.Blur"; the host looked for plugins in ` + given + ` (given); DYNOP_PLUGIN_PATH adds files and directories`},
		{dynop.Options{Paths: []string{given}},
			`the host looked for plugins in ` + given + ` (given), ` + env + ` ($DYNOP_PLUGIN_PATH), `},
		{dynop.Options{NoDefaultPaths: true}, `op: operator not found: "acme.Blur"; the host looked for no plugin files (no Paths given, and NoDefaultPaths)`},
	} {
		c.opts.NoRegistered, c.opts.CacheDir, c.opts.Logger = true, t.TempDir(), testLogger(t)
		h, err := dynop.Open(ctx, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.NewOperator(ctx, "acme.Blur", nil)
		wantErr(t, err, dynop.ErrNotFound, c.want)
		if !c.opts.NoDefaultPaths {
			wantErr(t, err, dynop.ErrNotFound, "(the user's plugin directory)")
		}
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}
}

// Each kind of search path entry is named for what it is in the error of
// an operator no plugin provides: the installation's plugin directory
// is not "given".
func TestSearchedNamesEverySource(t *testing.T) {
	got := dynop.SearchedInForTest([]discover.Entry{
		{Path: "/a", Source: discover.SourceOptions},
		{Path: "/b", Source: discover.SourceEnv},
		{Path: "/opt/dynop/bin/plugins", Source: discover.SourceExeDir},
		{Path: "/opt/dynop/lib/dynop/plugins", Source: discover.SourcePrefixDir},
		{Path: "/home/u/.local/share/dynop/plugins", Source: discover.SourceUserDir},
	})
	want := "the host looked for plugins in /a (given), /b ($DYNOP_PLUGIN_PATH), /opt/dynop/bin/plugins (next to the program), " +
		"/opt/dynop/lib/dynop/plugins (installed with the program), /home/u/.local/share/dynop/plugins (the user's plugin directory); " +
		"DYNOP_PLUGIN_PATH adds files and directories"
	if got != want {
		t.Errorf("searched:\n got %s\nwant %s", got, want)
	}
}
