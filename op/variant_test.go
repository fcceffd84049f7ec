package op_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// addOne is an operator whose output is its input plus one. Each variant
// records that it ran; a variant can be made wrong (adds two to one
// element) or failing.
type addOne struct {
	name string
	ran  *[]string
	bug  string // "wrong", "fail" or ""
}

func (a *addOne) Setup(in []*tensor.Batch) ([]op.OutputDesc, error) {
	return []op.OutputDesc{{DType: in[0].DType(), Layout: in[0].Layout(), Shapes: in[0].Shapes()}}, nil
}

func (a *addOne) Run(_ context.Context, out, in []*tensor.Batch) error {
	*a.ran = append(*a.ran, a.name)
	if a.bug == "fail" {
		return fmt.Errorf("%s is broken", a.name)
	}
	for i, t := range in[0].Samples() {
		src, err := t.Bytes()
		if err != nil {
			return err
		}
		dst, _ := out[0].Sample(i).Bytes()
		for k := range src {
			dst[k] = src[k] + 1
		}
		if a.bug == "wrong" && len(dst) > 3 {
			dst[3]++
		}
	}
	return nil
}

var (
	avx512  = dispatch.Of(dispatch.AVX512F, dispatch.AVX512BW)
	avx2    = dispatch.Of(dispatch.AVX2)
	fullCPU = dispatch.CPU{Has: avx512.Closure()}
)

// addOneOperator returns test.AddOne with variants avx512, avx2 and
// scalar, with the bugs given per variant name.
func addOneOperator(ran *[]string, bugs map[string]string) op.Operator {
	variant := func(name string, needs dispatch.Features) op.Variant {
		return op.Variant{Name: name, Needs: needs, Factory: func(*schema.Values) (op.Impl, error) {
			return &addOne{name: name, ran: ran, bug: bugs[name]}, nil
		}}
	}
	return op.Operator{
		Schema: schema.Op{Name: "test.AddOne", Doc: "Adds one.", Inputs: []schema.Input{{Name: "in", DTypes: []tensor.DType{tensor.Uint8}}},
			Outputs: []schema.Output{{Name: "out"}}},
		Variants: map[schema.Device][]op.Variant{schema.CPU: {variant("avx512", avx512), variant("avx2", avx2), variant("scalar", 0)}},
	}
}

func registryWith(t *testing.T, cpu dispatch.CPU, verify bool, log *slog.Logger, o op.Operator) *op.Registry {
	t.Helper()
	if log == nil {
		log = testutil.Logger(t)
	}
	r := op.NewRegistry(op.Options{CPU: &cpu, VerifyVariants: verify, Logger: log})
	if err := r.Register(o); err != nil {
		t.Fatal(err)
	}
	return r
}

func bytesBatch(t *testing.T, n int) *tensor.Batch {
	t.Helper()
	data := make([]uint8, n)
	for i := range data {
		data[i] = uint8(i * 7)
	}
	x, err := tensor.FromSlice(data, int64(n))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tensor.NewBatch(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVariantChosenForTheCPU(t *testing.T) {
	for _, c := range []struct {
		off, want string
	}{
		{"", "avx512"},
		{"-avx512bw", "avx2"},
		{"-avx512f", "avx2"},
		{"-avx2", "scalar"},
		{"-sse2", "scalar"},
	} {
		cpu, err := fullCPU.TurnOff(c.off)
		if err != nil {
			t.Fatal(err)
		}
		var ran []string
		r := registryWith(t, cpu, false, nil, addOneOperator(&ran, nil))
		in, err := r.New(context.Background(), "test.AddOne", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Exec(context.Background(), bytesBatch(t, 5)); err != nil {
			t.Fatal(err)
		}
		if in.Variant() != c.want || len(ran) != 1 || ran[0] != c.want {
			t.Errorf("turned off %q: instance runs %q, ran %v; want %q", c.off, in.Variant(), ran, c.want)
		}
		in.Close()
	}
}

func TestVariantForced(t *testing.T) {
	var ran []string
	r := registryWith(t, dispatch.CPU{Has: avx2.Closure()}, false, nil, addOneOperator(&ran, nil))
	in, err := r.New(context.Background(), "test.AddOne", nil, op.WithVariant("scalar"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Variant() != "scalar" {
		t.Errorf("forced scalar, runs %q", in.Variant())
	}
	in.Close()
	_, err = r.New(context.Background(), "test.AddOne", nil, op.WithVariant("neon"))
	testutil.WantErr(t, err, op.ErrVariant, `operator "test.AddOne": no such variant: "neon" on cpu (it has avx512, avx2, scalar)`)
	_, err = r.New(context.Background(), "test.AddOne", nil, op.WithVariant("avx512"))
	testutil.WantErr(t, err, errdefs.ErrUnsupported, `variant "avx512" on cpu cannot run here`, "needs avx512bw,avx512f,f16c,fma (this CPU lacks them)")
}

func TestNoVariantRuns(t *testing.T) {
	var ran []string
	o := addOneOperator(&ran, nil)
	o.Variants[schema.CPU] = o.Variants[schema.CPU][:2] // no scalar reference
	r := registryWith(t, dispatch.CPU{Has: dispatch.SSE2.Set()}, false, nil, o)
	_, err := r.New(context.Background(), "test.AddOne", nil)
	testutil.WantErr(t, err, errdefs.ErrUnsupported, `operator "test.AddOne"`, `"avx2" needs avx,avx2,sse3,sse41,sse42,ssse3 (this CPU lacks them)`)
	if !errors.Is(err, dispatch.ErrNoVariant) {
		t.Errorf("%v does not wrap dispatch.ErrNoVariant", err)
	}
}

func TestVariantsReport(t *testing.T) {
	var ran []string
	cpu, _ := fullCPU.TurnOff("-avx512f")
	r := registryWith(t, cpu, false, nil, addOneOperator(&ran, nil))
	ch, err := r.Variants(context.Background(), "test.AddOne")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ch.Variants {
		got = append(got, s.Name+": "+s.Why())
	}
	want := []string{
		"avx512: needs avx512bw,avx512f (turned off for this host: DYNOP_CPU_FEATURES or Options.CPUFeatures)",
		"avx2: chosen: the best runnable variant",
		"scalar: runnable; a better variant runs",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Variants:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(ran) != 0 {
		t.Errorf("reporting variants ran %v", ran)
	}
	if r.CPU() != cpu {
		t.Errorf("CPU() = %v", r.CPU())
	}
	_, err = r.Variants(context.Background(), "test.AddOn")
	testutil.WantErr(t, err, errdefs.ErrNotFound, `did you mean "test.AddOne"?`)
}

func TestVerifyDisablesDisagreeingVariants(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var ran []string
	r := registryWith(t, fullCPU, true, log, addOneOperator(&ran, map[string]string{"avx512": "wrong", "avx2": "fail"}))
	in, err := r.New(context.Background(), "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Variant() != "avx512" {
		t.Fatalf("before verification the instance runs %q", in.Variant())
	}
	out, err := in.Exec(context.Background(), bytesBatch(t, 9))
	if err != nil {
		t.Fatal(err)
	}
	if in.Variant() != "scalar" {
		t.Errorf("after verification the instance runs %q, want scalar", in.Variant())
	}
	got, _ := out[0].Sample(0).Bytes()
	for k, v := range got {
		if v != uint8(k*7)+1 {
			t.Errorf("output[%d] = %d, want %d: a disabled variant ran", k, v, uint8(k*7)+1)
		}
	}
	// The reference, each runnable variant on random input, then the
	// real run on scalar.
	if want := "scalar avx512 avx2 scalar"; strings.Join(ran, " ") != want {
		t.Errorf("ran %v, want %s", ran, want)
	}
	for _, w := range []string{
		`variant disabled`, `variant=avx512`, `disagrees with the reference \"scalar\" on random input: output 0 sample 0: element [3] is`,
		`variant=avx2`, `avx2 is broken`,
	} {
		if !strings.Contains(logged.String(), w) {
			t.Errorf("log does not say %q:\n%s", w, logged.String())
		}
	}
	// Later instances start on the best variant left, and verify nothing.
	ran = nil
	in2, err := r.New(context.Background(), "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close()
	if _, err := in2.Exec(context.Background(), bytesBatch(t, 9)); err != nil {
		t.Fatal(err)
	}
	if in2.Variant() != "scalar" || strings.Join(ran, " ") != "scalar" {
		t.Errorf("second instance runs %q, ran %v", in2.Variant(), ran)
	}
	ch, _ := r.Variants(context.Background(), "test.AddOne")
	if ch.Variants[0].Disabled == "" || !strings.Contains(ch.Variants[0].Why(), "disabled: disagrees") {
		t.Errorf("avx512 status: %q", ch.Variants[0].Why())
	}
	// A forced variant is what the caller asked for, disabled or not.
	in3, err := r.New(context.Background(), "test.AddOne", nil, op.WithVariant("avx512"))
	testutil.WantErr(t, err, errdefs.ErrUnsupported, "disabled: disagrees")
	if in3 != nil {
		in3.Close()
	}
}

func TestVerifyAgreeingVariantsStay(t *testing.T) {
	var ran []string
	r := registryWith(t, fullCPU, true, nil, addOneOperator(&ran, nil))
	in, err := r.New(context.Background(), "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Exec(context.Background(), bytesBatch(t, 40)); err != nil {
		t.Fatal(err)
	}
	if in.Variant() != "avx512" || strings.Join(ran, " ") != "scalar avx512 avx2 avx512" {
		t.Errorf("runs %q, ran %v", in.Variant(), ran)
	}
}

func TestVerifyWithFailingReference(t *testing.T) {
	var logged bytes.Buffer
	var ran []string
	r := registryWith(t, fullCPU, true, slog.New(slog.NewTextHandler(&logged, nil)), addOneOperator(&ran, map[string]string{"scalar": "fail"}))
	in, err := r.New(context.Background(), "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Exec(context.Background(), bytesBatch(t, 4)); err != nil {
		t.Fatal(err)
	}
	if in.Variant() != "avx512" || !strings.Contains(logged.String(), "variants not verified: the reference variant failed on random input") {
		t.Errorf("runs %q; log:\n%s", in.Variant(), logged.String())
	}
}

func TestRegisterVariantErrors(t *testing.T) {
	var ran []string
	factory := func(*schema.Values) (op.Impl, error) { return &addOne{ran: &ran}, nil }
	for _, c := range []struct {
		variants map[schema.Device][]op.Variant
		want     string
	}{
		{map[schema.Device][]op.Variant{schema.CPU: {{"a", 0, factory}, {"a", 0, factory}}}, `"a" used twice`},
		{map[schema.Device][]op.Variant{schema.CPU: {{"a", 0, nil}}}, `variant "a" has no factory`},
		{map[schema.Device][]op.Variant{schema.CPU: {{"a b", 0, factory}}}, `name "a b"`},
		{map[schema.Device][]op.Variant{schema.CPU: {{"a", 0, factory}}, schema.GPU: {{"a", 0, factory}}}, `variants for device "gpu", which its schema does not list`},
	} {
		o := addOneOperator(&ran, nil)
		o.Schema.Devices = []schema.Device{schema.CPU}
		o.Variants = c.variants
		err := op.NewRegistry(op.Options{}).Register(o)
		testutil.WantErr(t, err, schema.ErrOp, c.want)
	}
}

func TestAgree(t *testing.T) {
	f32 := func(vs ...float32) []*tensor.Batch {
		x, _ := tensor.FromSlice(vs, int64(len(vs)))
		b, _ := tensor.NewBatch(x)
		return []*tensor.Batch{b}
	}
	u8 := func(vs ...uint8) []*tensor.Batch {
		x, _ := tensor.FromSlice(vs, 1, int64(len(vs)))
		b, _ := tensor.NewBatch(x)
		return []*tensor.Batch{b}
	}
	nan := float32(math.NaN())
	if err := op.Agree(f32(1, 2, nan, 1000), f32(1+0x1p-22, 2, nan, 1000+1000*0x1p-21)); err != nil {
		t.Errorf("within tolerance: %v", err)
	}
	testutil.WantErr(t, op.Agree(f32(1, 2.001), f32(1, 2)), nil, "output 0 sample 0: element [1] is 2.001, want 2")
	testutil.WantErr(t, op.Agree(f32(nan), f32(0)), nil, "element [0] is NaN, want 0")
	testutil.WantErr(t, op.Agree(u8(1, 2, 3), u8(1, 2, 4)), nil, "element [0 2] is 03, want 04")
	testutil.WantErr(t, op.Agree(u8(1, 2), u8(1, 2, 3)), nil, "uint8 [1 2], want uint8 [1 3]")
	testutil.WantErr(t, op.Agree(u8(1), nil), nil, "1 outputs, want 0")
	if err := op.Agree(u8(9, 8, 7), u8(9, 8, 7)); err != nil {
		t.Error(err)
	}
}
