package op_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/friend"
	"github.com/dynop/dynop/internal/lazy"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// scaleSchema is a small operator used throughout: out = in * factor.
func scaleSchema() schema.Op {
	return schema.Op{
		Name: "test.Scale",
		Doc:  "Multiplies by factor.",
		Inputs: []schema.Input{
			{Name: "in", DTypes: []tensor.DType{tensor.Float32}, Layouts: []string{"HW", "HWC"}},
			{Name: "bias", DTypes: []tensor.DType{tensor.Float32}},
		},
		OptionalInputs: 1,
		Outputs:        []schema.Output{{Name: "out"}},
		Args: []schema.Arg{
			{Name: "factor", Type: schema.Float, Default: 1.0, Min: schema.Bounds(-10), Max: schema.Bounds(10), Deprecated: []string{"scale"}},
			{Name: "mode", Type: schema.String, Default: "fast", Allowed: []any{"fast", "exact"}},
			{Name: "axes", Type: schema.IntList},
			{Name: "count", Type: schema.Int, Required: true, Min: schema.Bounds(1)},
			{Name: "out_type", Type: schema.DType, Default: tensor.Float32},
		},
		Devices: []schema.Device{schema.CPU},
	}
}

type scaleImpl struct {
	factor float32
	panics string // "setup" or "run" to panic there
	runs   int
}

func (s *scaleImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	if s.panics == "setup" {
		panic("boom in setup")
	}
	return []op.OutputDesc{{DType: tensor.Float32, Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (s *scaleImpl) Run(ctx context.Context, out, in []*tensor.Batch) error {
	if s.panics == "run" {
		panic("boom in run")
	}
	s.runs++
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
			dst[j] = v * s.factor
		}
	}
	return nil
}

func scaleFactory(v *schema.Values) (op.Impl, error) {
	if v.String("mode") == "exact" && v.Float("factor") == 0 {
		return nil, errors.New("exact mode needs a non-zero factor")
	}
	return &scaleImpl{factor: float32(v.Float("factor"))}, nil
}

func newRegistry(t *testing.T) *op.Registry {
	t.Helper()
	r := op.NewRegistry(op.Options{})
	if err := r.Register(op.Operator{Schema: scaleSchema(), Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory}}); err != nil {
		t.Fatal(err)
	}
	return r
}

func batchOf(t *testing.T, layout string, shape []int64, vals ...float32) *tensor.Batch {
	t.Helper()
	x, err := tensor.FromSlice(vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	if x, err = x.WithLayout(layout); err != nil {
		t.Fatal(err)
	}
	b, err := tensor.NewBatch(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var wantErr = testutil.WantErr

// TestArgRanges: bounds are closed unless marked exclusive; the range
// reads in interval notation in messages and in Range; a schema whose
// range is empty or whose exclusive mark has no bound is invalid; and a
// required argument given a bad value is one error, not also "required
// but not given".
func TestArgRanges(t *testing.T) {
	s := scaleSchema()
	s.Args = append(s.Args,
		schema.Arg{Name: "sigma", Type: schema.Float, Default: 1.0, Min: schema.Bounds(0), MinExclusive: true, Max: schema.Bounds(256)},
		schema.Arg{Name: "frac", Type: schema.FloatList, Min: schema.Bounds(0), Max: schema.Bounds(1), MaxExclusive: true})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args schema.Args
		want string // "" for no error
	}{
		{schema.Args{"count": 1, "sigma": 0.001}, ""},
		{schema.Args{"count": 1, "sigma": 256}, ""},
		{schema.Args{"count": 1, "sigma": 0}, `argument "sigma": 0 is not above the minimum 0, which the range (0, 256] excludes`},
		{schema.Args{"count": 1, "sigma": -1}, `argument "sigma": -1 is below the minimum 0`},
		{schema.Args{"count": 1, "frac": []any{0, 0.5}}, ""},
		{schema.Args{"count": 1, "frac": []any{0.5, 1}}, `argument "frac": element 1: 1 is not below the maximum 1, which the range [0, 1) excludes`},
	} {
		_, err := s.Check(c.args, nil)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
			continue
		}
		wantErr(t, err, schema.ErrArgument, c.want)
	}
	_, err := s.Check(schema.Args{"count": 0}, nil)
	wantErr(t, err, schema.ErrArgument, "0 is below the minimum 1")
	if strings.Contains(err.Error(), "required") {
		t.Errorf("a required argument given a bad value: %v; says it was not given as well", err)
	}
	for _, c := range []struct {
		a    schema.Arg
		want string
	}{
		{schema.Arg{Min: schema.Bounds(0), Max: schema.Bounds(1)}, "[0, 1]"},
		{schema.Arg{Min: schema.Bounds(0), MinExclusive: true, Max: schema.Bounds(1), MaxExclusive: true}, "(0, 1)"},
		{schema.Arg{Min: schema.Bounds(0), MinExclusive: true}, "> 0"},
		{schema.Arg{Min: schema.Bounds(1)}, "≥ 1"},
		{schema.Arg{Max: schema.Bounds(9), MaxExclusive: true}, "< 9"},
		{schema.Arg{Max: schema.Bounds(9)}, "≤ 9"},
		{schema.Arg{}, ""},
	} {
		if got := c.a.Range(); got != c.want {
			t.Errorf("Range of %+v = %q, want %q", c.a, got, c.want)
		}
	}
	for _, c := range []struct {
		edit func(a *schema.Arg)
		want string
	}{
		{func(a *schema.Arg) { a.Min, a.Max, a.MinExclusive = schema.Bounds(1), schema.Bounds(1), true }, "the range (1, 1] is empty"},
		{func(a *schema.Arg) { a.Min, a.MinExclusive = nil, true }, "an exclusive bound without its min or max"},
	} {
		s := scaleSchema()
		s.Args[0].Default = nil
		c.edit(&s.Args[0])
		wantErr(t, s.Validate(), schema.ErrOp, `argument "factor"`, c.want)
	}
}

func TestSchemaValidate(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*schema.Op)
		expect []string
	}{
		{"no namespace", func(s *schema.Op) { s.Name = "Scale" }, []string{`"Scale"`, "CamelCase"}},
		{"lower-case op", func(s *schema.Op) { s.Name = "test.scale" }, []string{`"test.scale"`}},
		{"upper namespace", func(s *schema.Op) { s.Name = "Test.Scale" }, []string{`"Test.Scale"`}},
		{"optional inputs", func(s *schema.Op) { s.OptionalInputs = 3 }, []string{"optional_inputs 3"}},
		{"dup port", func(s *schema.Op) { s.Outputs[0].Name = "in" }, []string{`output name "in" used twice`}},
		{"bad layout", func(s *schema.Op) { s.Inputs[0].Layouts = []string{"HWW"} }, []string{`"HWW"`}},
		{"layout vs ndim", func(s *schema.Op) { s.Inputs[0].NDim = 2; s.Inputs[0].Layouts = []string{"HWC"} }, []string{"3 dimensions, ndim is 2"}},
		{"ndim above the ABI's", func(s *schema.Op) { s.Inputs[0].NDim = 1000; s.Inputs[0].Layouts = nil }, []string{`input "in": ndim 1000 is not between 0 (any) and 16 (DYNOP_MAX_NDIM)`}},
		{"negative ndim", func(s *schema.Op) { s.Inputs[0].NDim = -1; s.Inputs[0].Layouts = nil }, []string{"ndim -1 is not between"}},
		{"arg name", func(s *schema.Op) { s.Args[0].Name = "Factor" }, []string{`"Factor"`, "snake_case"}},
		{"dup arg", func(s *schema.Op) { s.Args[1].Name = "factor" }, []string{`argument name "factor" used twice`}},
		{"deprecated clash", func(s *schema.Op) { s.Args[1].Deprecated = []string{"scale"} }, []string{`"scale" used twice`}},
		{"bad type", func(s *schema.Op) { s.Args[0].Type = 99 }, []string{"unknown type 99"}},
		{"default type", func(s *schema.Op) { s.Args[1].Default = 3 }, []string{`argument "mode"`, "default", "want a string"}},
		{"default range", func(s *schema.Op) { s.Args[0].Default = 11.0 }, []string{`argument "factor"`, "above the maximum 10"}},
		{"default allowed", func(s *schema.Op) { s.Args[1].Default = "slow" }, []string{"slow", "not one of"}},
		{"required default", func(s *schema.Op) { s.Args[3].Default = 2 }, []string{`argument "count"`, "required, yet has a default"}},
		{"min max", func(s *schema.Op) { s.Args[0].Min = schema.Bounds(5); s.Args[0].Max = schema.Bounds(1) }, []string{"min 5 is above max 1"}},
		{"bounds on string", func(s *schema.Op) { s.Args[1].Min = schema.Bounds(0) }, []string{"min/max on a string argument"}},
		{"no devices", func(s *schema.Op) { s.Devices = nil }, []string{"lists no devices"}},
		{"unknown device", func(s *schema.Op) { s.Devices = []schema.Device{"tpu"} }, []string{`device "tpu"`}},
		{"device twice", func(s *schema.Op) { s.Devices = []schema.Device{schema.CPU, schema.CPU} }, []string{`device "cpu" listed twice`}},
	}
	good := scaleSchema()
	if err := good.Validate(); err != nil {
		t.Fatalf("valid schema: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scaleSchema()
			c.edit(&s)
			wantErr(t, s.Validate(), schema.ErrOp, c.expect...)
		})
	}
}

func TestCheckArgs(t *testing.T) {
	s := scaleSchema()
	v, err := s.Check(schema.Args{"count": 3, "axes": []any{0, 1.0}, "scale": float32(2.5), "out_type": "uint8"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("count") != 3 || v.Float("factor") != 2.5 || v.String("mode") != "fast" ||
		!reflect.DeepEqual(v.Ints("axes"), []int64{0, 1}) || v.DType("out_type") != tensor.Uint8 {
		t.Errorf("values: count %d factor %g mode %q axes %v out_type %v", v.Int("count"), v.Float("factor"), v.String("mode"), v.Ints("axes"), v.DType("out_type"))
	}
	if !v.Has("factor") || v.Has("mode") {
		t.Errorf("Has(factor) = %v (given by its deprecated name), Has(mode) = %v (defaulted)", v.Has("factor"), v.Has("mode"))
	}

	bad := []struct {
		name   string
		args   schema.Args
		expect []string
	}{
		{"unknown near", schema.Args{"count": 1, "facter": 2}, []string{`"test.Scale"`, `"facter"`, `did you mean "factor"?`}},
		{"unknown far", schema.Args{"count": 1, "zzzzzz": 2}, []string{`"zzzzzz"`, "known: factor, scale, mode"}},
		{"wrong type", schema.Args{"count": "three"}, []string{`argument "count"`, "want an int, got string three"}},
		{"fraction", schema.Args{"count": 2.5}, []string{`argument "count"`, "fraction 2.5"}},
		{"below min", schema.Args{"count": 0}, []string{`argument "count"`, "0 is below the minimum 1"}},
		{"above max", schema.Args{"count": 1, "factor": 11}, []string{`argument "factor"`, "above the maximum 10"}},
		{"nan", schema.Args{"count": 1, "factor": math.NaN()}, []string{`argument "factor"`, "NaN"}},
		{"not allowed", schema.Args{"count": 1, "mode": "slow"}, []string{`argument "mode"`, "slow is not one of [fast exact]"}},
		{"missing", schema.Args{}, []string{`argument "count"`, "required (int) but not given"}},
		{"list type", schema.Args{"count": 1, "axes": 3}, []string{`argument "axes"`, "want a list ([]int)"}},
		{"list element", schema.Args{"count": 1, "axes": []any{1, "x"}}, []string{`argument "axes"`, "element 1"}},
		{"dtype name", schema.Args{"count": 1, "out_type": "float33"}, []string{`argument "out_type"`, "float33"}},
		{"old and new", schema.Args{"count": 1, "factor": 1, "scale": 2}, []string{`argument "factor"`, "given twice"}},
		{"null", schema.Args{"count": nil}, []string{`argument "count"`, "nothing (null)"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Check(c.args, nil)
			wantErr(t, err, schema.ErrArgument, c.expect...)
		})
	}
	// A required argument is reported once: a bad value says what is
	// wrong with it and not also that it is missing; a missing one says
	// only that.
	for _, c := range []struct {
		name   string
		args   schema.Args
		want   string
		notSay string
	}{
		{"bad type", schema.Args{"count": "three"}, `operator "test.Scale": argument "count": want an int, got string three`, "not given"},
		{"null", schema.Args{"count": nil}, `argument "count": want an int, got nothing (null)`, "not given"},
		{"out of range", schema.Args{"count": 0}, `argument "count": 0 is below the minimum 1`, "not given"},
		{"missing", schema.Args{"factor": 2}, `operator "test.Scale": argument "count": required (int) but not given`, "want"},
	} {
		t.Run("required once/"+c.name, func(t *testing.T) {
			_, err := s.Check(c.args, nil)
			wantErr(t, err, schema.ErrArgument, c.want)
			if err != nil && (strings.Contains(err.Error(), c.notSay) || strings.Count(err.Error(), `argument "count"`) != 1) {
				t.Errorf("error %q: want one error about \"count\", not saying %q", err, c.notSay)
			}
		})
	}
	t.Run("all errors together", func(t *testing.T) {
		_, err := s.Check(schema.Args{"mode": "slow", "facter": 1}, nil)
		wantErr(t, err, schema.ErrArgument, `"mode"`, `"facter"`, `"count"`)
	})
}

func TestValuesGetterMisuse(t *testing.T) {
	s := scaleSchema()
	v, err := s.Check(schema.Args{"count": 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		get    func()
		expect string
	}{
		{func() { v.Int("factor") }, `reads argument "factor" as int; its schema says float`},
		{func() { v.Bool("nope") }, `reads argument "nope", which its schema does not have`},
	} {
		func() {
			defer func() {
				if p := fmt.Sprint(recover()); !strings.Contains(p, c.expect) {
					t.Errorf("panic %q, want one mentioning %q", p, c.expect)
				}
			}()
			c.get()
		}()
	}
}

func TestSchemaJSONRoundTrip(t *testing.T) {
	s := scaleSchema()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back schema.Op
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip changed the schema:\n got %+v\nwant %+v", back, s)
	}
	if !strings.Contains(string(b), `"type":"[]int"`) || !strings.Contains(string(b), `"dtypes":["float32"]`) {
		t.Errorf("JSON does not spell types as schemas do: %s", b)
	}
	var bad schema.Op
	err = json.Unmarshal([]byte(`{"name":"a.B","args":[{"name":"x","type":"int","default":"seven"}]}`), &bad)
	wantErr(t, err, schema.ErrOp, `argument "x"`, "default")
	err = json.Unmarshal([]byte(`{"name":"a.B","args":[{"name":"x","type":"integer"}]}`), &bad)
	wantErr(t, err, schema.ErrOp, `"integer"`, "known: int, float")
}

func TestRegisterErrors(t *testing.T) {
	r := newRegistry(t)
	wantErr(t, r.Register(op.Operator{Schema: scaleSchema(), Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory}}),
		errdefs.ErrDuplicate, `"test.Scale" is already registered`)

	s := scaleSchema()
	s.Name = "test.NoBackend"
	wantErr(t, r.Register(op.Operator{Schema: s}), schema.ErrOp, `"test.NoBackend"`, "no backends")
	s.Devices = []schema.Device{schema.CPU, schema.GPU}
	wantErr(t, r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory}}),
		schema.ErrOp, "schema lists device gpu, which has no backend")
	s.Devices = []schema.Device{schema.CPU}
	wantErr(t, r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory, schema.GPU: scaleFactory}}),
		schema.ErrOp, `backend for device "gpu", which its schema does not list`)
	s.Devices = nil // filled in from the backends
	if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory}}); err != nil {
		t.Fatal(err)
	}
	e, err := r.Lookup("test.NoBackend")
	if err != nil || !reflect.DeepEqual(e.Schema.Devices, []schema.Device{schema.CPU}) {
		t.Errorf("Lookup = %+v, %v; want devices [cpu]", e, err)
	}
	wantErr(t, declare(r, scaleSchema(), "acme.plugin.x", nil), schema.ErrOp, "without a provider")
}

func TestLookupAndList(t *testing.T) {
	r := newRegistry(t)
	_, err := r.Lookup("test.Scal")
	wantErr(t, err, errdefs.ErrNotFound, `"test.Scal"`, `did you mean "test.Scale"?`)
	_, err = r.Lookup("other.Thing")
	wantErr(t, err, errdefs.ErrNotFound, `"other.Thing"`)
	if strings.Contains(err.Error(), "did you mean") {
		t.Errorf("suggestion for a far name: %v", err)
	}
	list := r.List()
	if len(list) != 1 || list[0].Schema.Name != "test.Scale" || list[0].Plugin != "" {
		t.Errorf("List = %+v", list)
	}
}

// TestOperatorNotFound: an unknown name suggests the operators it may
// have meant (the same name under another prefix, or none; else the
// closest by spelling, of the whole name or of the part after the
// prefix), and says where the host looked for plugins when nothing is
// close or no operator has the name's prefix.
func TestOperatorNotFound(t *testing.T) {
	const searched = "the host looked for plugins in /p (given)"
	r := op.NewRegistry(op.Options{NotFound: searched})
	for _, name := range []string{"image.Resize", "imgproc.Resize", "image.Decode", "imgproc.GaussianBlur"} {
		s := scaleSchema()
		s.Name = name
		if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, want string
		suggested  []string
	}{
		{"Resize", `op: operator not found: "Resize"; did you mean "image.Resize" or "imgproc.Resize"?`, []string{"image.Resize", "imgproc.Resize"}},
		{"resize", `did you mean "image.Resize" or "imgproc.Resize"?`, []string{"image.Resize", "imgproc.Resize"}},
		{"Resze", `did you mean "image.Resize" or "imgproc.Resize"?`, []string{"image.Resize", "imgproc.Resize"}},
		{"image.Decod", `op: operator not found: "image.Decod"; did you mean "image.Decode"?`, []string{"image.Decode"}},
		{"GaussianBlur", `did you mean "imgproc.GaussianBlur"?`, []string{"imgproc.GaussianBlur"}},
		// A prefix no operator has: the plugin is likely missing.
		{"acme.Decode", `op: operator not found: "acme.Decode"; did you mean "image.Decode"?; ` + searched, []string{"image.Decode"}},
		{"acme.Sharpen", `op: operator not found: "acme.Sharpen"; ` + searched, nil},
		{"Sharpen", `op: operator not found: "Sharpen"; ` + searched, nil},
	} {
		_, err := r.Lookup(c.name)
		wantErr(t, err, errdefs.ErrNotFound, c.want)
		var nf *op.NotFoundError
		if !errors.As(err, &nf) || nf.Name != c.name || !slices.Equal(nf.Suggestions, c.suggested) {
			t.Errorf("%s: %+v, want suggestions %v", c.name, nf, c.suggested)
		}
		if err != nil && (strings.Contains(err.Error(), searched) != strings.Contains(c.want, searched)) {
			t.Errorf("%s: %v: says where the host looked where it should not, or the reverse", c.name, err)
		}
	}
}

func TestNewDevices(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	_, err := r.New(ctx, "test.Scale", schema.Args{"count": 1}, op.OnDevice(schema.GPU))
	wantErr(t, err, errdefs.ErrUnsupported, `operator "test.Scale" on device gpu`, "no gpu backend", "devices: cpu")

	s := scaleSchema()
	s.Name = "test.GPUOnly"
	s.Devices = []schema.Device{schema.GPU}
	if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.GPU: scaleFactory}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.New(ctx, "test.GPUOnly", schema.Args{"count": 1}, op.OnDevice(schema.GPU))
	wantErr(t, err, errdefs.ErrUnsupported, "this machine has no gpu device", "it has: cpu")
	_, err = r.New(ctx, "test.GPUOnly", schema.Args{"count": 1})
	wantErr(t, err, errdefs.ErrUnsupported, "no cpu backend")

	withGPU := op.NewRegistry(op.Options{Devices: []schema.Device{schema.CPU, schema.GPU}})
	if err := withGPU.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.GPU: scaleFactory}}); err != nil {
		t.Fatal(err)
	}
	in, err := withGPU.New(ctx, "test.GPUOnly", schema.Args{"count": 1}, op.OnDevice(schema.GPU))
	if err != nil {
		t.Fatal(err)
	}
	// CPU tensors cannot feed a GPU instance.
	_, err = in.Setup([]*tensor.Batch{batchOf(t, "HW", []int64{1, 2}, 1, 2)})
	wantErr(t, err, op.ErrInput, `input 0 "in"`, "data is on cpu; the operator runs on gpu")
}

func TestNewFactoryFailures(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	_, err := r.New(ctx, "test.Scale", schema.Args{"count": 1, "mode": "exact", "factor": 0})
	if err == nil || !strings.Contains(err.Error(), `operator "test.Scale": create: exact mode needs a non-zero factor`) {
		t.Errorf("factory error = %v", err)
	}
	s := scaleSchema()
	s.Name = "test.Panics"
	if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { panic("no way") }}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.New(ctx, "test.Panics", schema.Args{"count": 1})
	wantErr(t, err, errdefs.ErrPanic, `operator "test.Panics": create`, "no way")
	s.Name = "test.Nil"
	if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return nil, nil }}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.New(ctx, "test.Nil", schema.Args{"count": 1})
	wantErr(t, err, schema.ErrOp, "returned no implementation")
}

func TestInstanceChecksInputs(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	in, err := r.New(ctx, "test.Scale", schema.Args{"count": 1, "factor": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	good := batchOf(t, "HW", []int64{2, 2}, 1, 2, 3, 4)
	u8, _ := tensor.FromSlice([]uint8{1, 2})
	u8b, _ := tensor.NewBatch(u8)
	chw := batchOf(t, "CHW", []int64{1, 1, 2}, 1, 2)
	flat := batchOf(t, "", []int64{2}, 1, 2)
	two, _ := tensor.NewBatch(good.Sample(0), good.Sample(0))

	for _, c := range []struct {
		name   string
		inputs []*tensor.Batch
		expect []string
	}{
		{"none", nil, []string{"takes 1 to 2 input(s), got 0"}},
		{"three", []*tensor.Batch{good, good, good}, []string{"got 3"}},
		{"nil", []*tensor.Batch{nil}, []string{`input 0 "in"`, "batch is nil"}},
		{"dtype", []*tensor.Batch{u8b}, []string{`input 0 "in"`, "dtype uint8 is not allowed (want [float32])"}},
		{"layout", []*tensor.Batch{chw}, []string{`layout "CHW" is not allowed`}},
		{"ndim", []*tensor.Batch{flat}, []string{"samples have 1 dimension(s)"}},
		{"batch size", []*tensor.Batch{good, two}, []string{`input 1 "bias"`, "batch of 2 sample(s); input 0 has 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := in.Setup(c.inputs)
			wantErr(t, err, op.ErrInput, append([]string{`operator "test.Scale"`}, c.expect...)...)
		})
	}
	err = in.Run(ctx, nil, []*tensor.Batch{good})
	wantErr(t, err, op.ErrInput, "Setup has not succeeded")

	outs, err := in.Exec(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tensor.Values[float32](outs[0].Sample(0))
	if !reflect.DeepEqual(got, []float32{2, 4, 6, 8}) || outs[0].Layout() != "HW" {
		t.Errorf("Exec = %v layout %q, want [2 4 6 8] HW", got, outs[0].Layout())
	}
	// Run checks its batches against what Setup saw and answered.
	other := batchOf(t, "HW", []int64{1, 4}, 1, 2, 3, 4)
	wantErr(t, in.Run(ctx, outs, []*tensor.Batch{other}), op.ErrInput, "input 0 sample 0 has shape [1 4]; Setup saw [2 2]")
	small, _ := tensor.Alloc(tensor.Float32, "HW", [][]int64{{1, 1}})
	wantErr(t, in.Run(ctx, []*tensor.Batch{small}, []*tensor.Batch{good}), op.ErrInput, `output "out" sample 0 is float32 [1 1]; Setup asked for float32 [2 2]`)
	wantErr(t, in.Run(ctx, nil, []*tensor.Batch{good}), op.ErrInput, "0 output(s), want 1")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	wantErr(t, in.Run(canceled, outs, []*tensor.Batch{good}), context.Canceled, `operator "test.Scale": run`)
}

func TestInstancePanicsAndClose(t *testing.T) {
	ctx := context.Background()
	released := 0
	r := op.NewRegistry(op.Options{})
	impl := &scaleImpl{factor: 1}
	if err := declare(r, scaleSchema(), "acme.plugin.scale", provider(func(ctx context.Context, name string) (op.Operator, func() error, error) {
		return op.Operator{Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return impl, nil }}},
			func() error { released++; return nil }, nil
	})); err != nil {
		t.Fatal(err)
	}
	in, err := r.New(ctx, "test.Scale", schema.Args{"count": 1})
	if err != nil {
		t.Fatal(err)
	}
	if in.Plugin() != "acme.plugin.scale" || in.Name() != "test.Scale" || in.Device() != schema.CPU {
		t.Errorf("instance names %q %q %q", in.Plugin(), in.Name(), in.Device())
	}
	good := batchOf(t, "HW", []int64{1, 1}, 1)
	impl.panics = "setup"
	_, err = in.Setup([]*tensor.Batch{good})
	wantErr(t, err, errdefs.ErrPanic, `operator "test.Scale" (plugin "acme.plugin.scale"): setup`, "boom in setup")
	impl.panics = "run"
	outs, err := in.Setup([]*tensor.Batch{good})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := outs[0].Alloc()
	wantErr(t, in.Run(ctx, []*tensor.Batch{o}, []*tensor.Batch{good}), errdefs.ErrPanic, "run", "boom in run")
	if err := in.Close(); err != nil || released != 1 {
		t.Fatalf("Close = %v, released %d times", err, released)
	}
	wantErr(t, in.Close(), errdefs.ErrClosed, `operator "test.Scale"`)
	_, err = in.Setup([]*tensor.Batch{good})
	wantErr(t, err, errdefs.ErrClosed, "setup")
	if released != 1 {
		t.Errorf("released %d times after a second Close", released)
	}
}

func TestProviderFailure(t *testing.T) {
	r := op.NewRegistry(op.Options{})
	startErr := errors.New("register: libfoo.so: cannot open shared object")
	if err := declare(r, scaleSchema(), "acme.plugin.scale", provider(func(context.Context, string) (op.Operator, func() error, error) {
		return op.Operator{}, nil, startErr
	})); err != nil {
		t.Fatal(err)
	}
	// Arguments are checked before the provider runs.
	_, err := r.New(context.Background(), "test.Scale", schema.Args{})
	wantErr(t, err, schema.ErrArgument, `"count"`)
	_, err = r.New(context.Background(), "test.Scale", schema.Args{"count": 1})
	wantErr(t, err, startErr, `operator "test.Scale": plugin "acme.plugin.scale"`, "cannot open shared object")
	if e, _ := r.Lookup("test.Scale"); e.Plugin != "acme.plugin.scale" {
		t.Errorf("Lookup plugin = %q", e.Plugin)
	}
}

type provider func(ctx context.Context, name string) (op.Operator, func() error, error)

// declare declares an operator as a host does, through the hook package
// op hands hosts in package friend.
func declare(r *op.Registry, s schema.Op, plugin string, p lazy.Provider[op.Operator]) error {
	_, err := friend.Get[func(*op.Registry, schema.Op, string, lazy.Provider[op.Operator]) (func(), error)]()(r, s, plugin, p)
	return err
}

// TestDeclareRemove: the function a declaration returns removes the
// operator, and only that one: not another registered under the name
// since.
func TestDeclareRemove(t *testing.T) {
	r := op.NewRegistry(op.Options{})
	declareOp := friend.Get[func(*op.Registry, schema.Op, string, lazy.Provider[op.Operator]) (func(), error)]()
	never := provider(func(context.Context, string) (op.Operator, func() error, error) {
		return op.Operator{}, nil, errors.New("not started")
	})
	remove, err := declareOp(r, scaleSchema(), "acme.plugin.scale", never)
	if err != nil {
		t.Fatal(err)
	}
	_, err = declareOp(r, scaleSchema(), "acme.plugin.other", never)
	wantErr(t, err, errdefs.ErrDuplicate, `operator "test.Scale" is already registered by plugin "acme.plugin.scale"`)
	remove()
	_, err = r.Lookup("test.Scale")
	wantErr(t, err, errdefs.ErrNotFound, `"test.Scale"`)
	if err := r.Register(op.Operator{Schema: scaleSchema(), Backends: map[schema.Device]op.Factory{schema.CPU: scaleFactory}}); err != nil {
		t.Fatal(err)
	}
	remove()
	if e, err := r.Lookup("test.Scale"); err != nil || e.Plugin != "" {
		t.Errorf("a stale remove took the registered operator: %+v, %v", e, err)
	}
}

func (p provider) Provide(ctx context.Context, name string) (op.Operator, func() error, error) {
	return p(ctx, name)
}

func TestRunAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	in, err := newRegistry(t).New(ctx, "test.Scale", schema.Args{"count": 1, "factor": 3})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	inputs := []*tensor.Batch{batchOf(t, "HW", []int64{2, 2}, 1, 2, 3, 4)}
	descs, err := in.Setup(inputs)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := descs[0].Alloc()
	outputs := []*tensor.Batch{o}
	if n := testing.AllocsPerRun(100, func() {
		if err := in.Run(ctx, outputs, inputs); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Run allocates %v times per call", n)
	}
}

func TestReviewedEdges(t *testing.T) {
	ctx := context.Background()
	t.Run("defaults of another Go type are normalized", func(t *testing.T) {
		s := scaleSchema()
		s.Name = "test.Loose"
		s.Args = append(s.Args, schema.Arg{Name: "n", Type: schema.Int, Default: 3}, schema.Arg{Name: "d", Type: schema.DType, Default: "uint8"},
			schema.Arg{Name: "l", Type: schema.IntList, Default: []int{1, 2}})
		var got *schema.Values
		r := op.NewRegistry(op.Options{})
		if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: func(v *schema.Values) (op.Impl, error) {
			got = v
			return &scaleImpl{}, nil
		}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.New(ctx, "test.Loose", schema.Args{"count": 1}); err != nil {
			t.Fatal(err)
		}
		if got.Int("n") != 3 || got.DType("d") != tensor.Uint8 || !reflect.DeepEqual(got.Ints("l"), []int64{1, 2}) {
			t.Errorf("defaults reached the factory as %v %v %v", got.Int("n"), got.DType("d"), got.Ints("l"))
		}
	})
	t.Run("infinite bounds are refused", func(t *testing.T) {
		s := scaleSchema()
		s.Args[0].Max = schema.Bounds(math.Inf(1))
		wantErr(t, s.Validate(), schema.ErrOp, `argument "factor"`, "not a finite number")
	})
	t.Run("large integers keep their value through JSON", func(t *testing.T) {
		var a schema.Arg
		if err := json.Unmarshal([]byte(`{"name":"seed","type":"int","default":9007199254740993,"allowed":[9007199254740993]}`), &a); err != nil {
			t.Fatal(err)
		}
		if a.Default != int64(9007199254740993) || a.Allowed[0] != int64(9007199254740993) {
			t.Errorf("default %v allowed %v", a.Default, a.Allowed)
		}
	})
	t.Run("messages", func(t *testing.T) {
		s := scaleSchema()
		s.Args[0].Deprecated = []string{"scale", "mult"}
		_, err := s.Check(schema.Args{"count": 1, "scale": 1, "mult": 2}, nil)
		wantErr(t, err, schema.ErrArgument, `given twice, as "mult" and as "scale"`)
		_, err = s.Check(schema.Args{"count": 1, "scal": 1}, nil)
		wantErr(t, err, schema.ErrArgument, `did you mean "factor"?`)
		_, err = s.Check(schema.Args{"count": math.Inf(1)}, nil)
		wantErr(t, err, schema.ErrArgument, "want an int, got +Inf")
		_, err = s.Check(schema.Args{"count": 1e300}, nil)
		wantErr(t, err, schema.ErrArgument, "outside the int64 range")
	})
	t.Run("run with another dtype than setup", func(t *testing.T) {
		in, err := newRegistry(t).New(ctx, "test.Scale", schema.Args{"count": 1})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		f32 := batchOf(t, "HW", []int64{1, 2}, 1, 2)
		outs, err := in.Exec(ctx, f32)
		if err != nil {
			t.Fatal(err)
		}
		f64, _ := tensor.FromSlice([]float64{1, 2}, 1, 2)
		f64, _ = f64.WithLayout("HW")
		b, _ := tensor.NewBatch(f64)
		wantErr(t, in.Run(ctx, outs, []*tensor.Batch{b}), op.ErrInput, "input 0 is float64 cpu \"HW\"; Setup saw float32 cpu \"HW\"")
	})
	t.Run("absurd outputs are refused at setup", func(t *testing.T) {
		r := op.NewRegistry(op.Options{MaxSampleBytes: 1 << 20})
		s := scaleSchema()
		if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return &hugeImpl{}, nil }}}); err != nil {
			t.Fatal(err)
		}
		in, err := r.New(ctx, "test.Scale", schema.Args{"count": 1})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		_, err = in.Setup([]*tensor.Batch{batchOf(t, "HW", []int64{1, 1}, 1)})
		wantErr(t, err, schema.ErrOp, `output "out" sample 0 is float32 [1048576 1024]`, "limit of 1048576 bytes")
		_, err = in.Setup([]*tensor.Batch{batchOf(t, "HW", []int64{1, 2}, 1, 2)})
		wantErr(t, err, schema.ErrOp, "larger than the limit") // overflowing int64
	})
}

// hugeImpl asks for absurd outputs: 4 GiB, or more than int64 can count.
type hugeImpl struct{ scaleImpl }

func (hugeImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	shape := []int64{1 << 20, 1 << 10}
	if in[0].Sample(0).Shape()[1] == 2 {
		shape = []int64{1 << 40, 1 << 40}
	}
	return []op.OutputDesc{{DType: tensor.Float32, Shapes: [][]int64{shape}}}, nil
}

// TestRecycle: outputs handed back with Recycle are filled again by the
// next Exec of the same shapes, not allocated, and hold what that Exec
// computed; other shapes get new memory.
func TestRecycle(t *testing.T) {
	ctx := context.Background()
	in, err := newRegistry(t).New(ctx, "test.Scale", schema.Args{"count": 1, "factor": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	x := batchOf(t, "HW", []int64{1, 2}, 1, 2)
	first, err := in.Exec(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	in.Recycle(first)
	second, err := in.Exec(ctx, batchOf(t, "HW", []int64{1, 2}, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	if second[0] != first[0] {
		t.Error("Exec after Recycle allocated a new output of the same shape")
	}
	if got, _ := tensor.Values[float32](second[0].Sample(0)); !slices.Equal(got, []float32{6, 8}) {
		t.Errorf("the recycled output holds %v, want [6 8]", got)
	}
	in.Recycle(second)
	third, err := in.Exec(ctx, batchOf(t, "HW", []int64{1, 3}, 1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if third[0] == first[0] || !slices.Equal(third[0].Sample(0).Shape(), []int64{1, 3}) {
		t.Errorf("an output of another shape reused the recycled one: shape %v", third[0].Sample(0).Shape())
	}
	fourth, err := in.Exec(ctx, x) // nothing recycled since
	if err != nil {
		t.Fatal(err)
	}
	if fourth[0] == first[0] || fourth[0] == third[0] {
		t.Error("Exec reused an output nobody recycled")
	}
}

// TestRecycleOtherLengths: batches of alternating lengths (4 samples,
// then 2, as a run's last batch is smaller) reuse recycled memory sample
// by sample: the samples a short batch leaves wait for the next long
// one, so once warm no sample memory is new, and each holds what its
// Exec computed.
func TestRecycleOtherLengths(t *testing.T) {
	ctx := context.Background()
	in, err := newRegistry(t).New(ctx, "test.Scale", schema.Args{"count": 1, "factor": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	batch := func(n int) *tensor.Batch {
		var samples []*tensor.Tensor
		for j := range n {
			x, _ := tensor.FromSlice([]float32{float32(j), 1}, 1, 2)
			x, _ = x.WithLayout("HW")
			samples = append(samples, x)
		}
		b, _ := tensor.NewBatch(samples...)
		return b
	}
	seen := map[*byte]bool{} // the sample memory the first long batch got
	for k, n := range []int{4, 2, 4, 2, 4} {
		outs, err := in.Exec(ctx, batch(n))
		if err != nil {
			t.Fatal(err)
		}
		for j, x := range outs[0].Samples() {
			if got, _ := tensor.Values[float32](x); !slices.Equal(got, []float32{float32(2 * j), 2}) {
				t.Errorf("batch %d sample %d: %v, want [%d 2]", k, j, got, 2*j)
			}
			p := &x.Span()[0]
			if k == 0 {
				seen[p] = true
			} else if !seen[p] {
				t.Errorf("batch %d (%d samples) sample %d has new memory; recycled samples were waiting", k, n, j)
			}
		}
		in.Recycle(outs)
	}
}

// TestRecycleBytes: a recycled uint8 output serves a later, smaller one
// (an encoded file, say) over the same memory, cleared.
func TestRecycleBytes(t *testing.T) {
	ctx := context.Background()
	r := op.NewRegistry(op.Options{})
	s := schema.Op{Name: "test.Bytes", Inputs: []schema.Input{{Name: "n"}}, Outputs: []schema.Output{{Name: "b"}}, Devices: []schema.Device{schema.CPU}}
	if err := r.Register(op.Operator{Schema: s, Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return bytesImpl{}, nil }}}); err != nil {
		t.Fatal(err)
	}
	in, err := r.New(ctx, "test.Bytes", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	n := func(v int64) *tensor.Batch {
		x, _ := tensor.FromSlice([]int64{v}, 1)
		b, _ := tensor.NewBatch(x)
		return b
	}
	big, err := in.Exec(ctx, n(8))
	if err != nil {
		t.Fatal(err)
	}
	data8, _ := big[0].Sample(0).Bytes()
	in.Recycle(big)
	small, err := in.Exec(ctx, n(3))
	if err != nil {
		t.Fatal(err)
	}
	data3, _ := small[0].Sample(0).Bytes()
	if !slices.Equal(data3, []uint8{3, 3, 3}) || &data3[0] != &data8[0] {
		t.Errorf("the smaller output %v does not reuse the larger one's memory", data3)
	}
	in.Recycle(small)
	bigger, err := in.Exec(ctx, n(9))
	if err != nil {
		t.Fatal(err)
	}
	if data9, _ := bigger[0].Sample(0).Bytes(); len(data9) != 9 || &data9[0] == &data8[0] {
		t.Error("a larger output reused memory too small for it")
	}
}

// bytesImpl outputs n bytes of value n for an input n.
type bytesImpl struct{}

func (bytesImpl) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	v, _ := tensor.Values[int64](in[0].Sample(0))
	return []op.OutputDesc{{DType: tensor.Uint8, Shapes: [][]int64{{v[0]}}}}, nil
}

func (bytesImpl) Run(_ context.Context, out, in []*tensor.Batch) error {
	v, _ := tensor.Values[int64](in[0].Sample(0))
	data, err := out[0].Sample(0).Bytes()
	for i := range data {
		data[i] += uint8(v[0]) // += shows that the memory was cleared
	}
	return err
}
