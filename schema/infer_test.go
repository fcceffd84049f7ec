package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// castOp takes an HWC image of uint8 or float32 and a 1-D vector, and
// gives an output like the image, one of the dtype its argument names
// and one of fixed dtype and ndim.
func castOp() schema.Op {
	return schema.Op{
		Name: "test.Cast", Devices: []schema.Device{schema.CPU},
		Inputs: []schema.Input{
			{Name: "images", DTypes: []tensor.DType{tensor.Uint8, tensor.Float32}, Layouts: []string{"HWC"}},
			{Name: "weights", NDim: 1},
		},
		Outputs: []schema.Output{
			{Name: "same", Like: "images"},
			{Name: "cast", Like: "images", DTypeArg: "to"},
			{Name: "sums", DTypes: []tensor.DType{tensor.Float64}, NDim: 1},
		},
		Args: []schema.Arg{{Name: "to", Type: schema.DType, Default: tensor.Float32}},
	}
}

// TestInfer: outputs follow from what the inputs are given (like, a
// dtype argument, fixed dtypes and dimensions), unknowns stay unknown,
// and an input given what it cannot take is an InputTypeError naming
// both.
func TestInfer(t *testing.T) {
	s := castOp()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	vals, err := s.Check(schema.Args{"to": "uint8"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	img := schema.StaticType{DTypes: []tensor.DType{tensor.Float32}, Layout: "HWC"}
	outs, errs := s.Infer(vals, []schema.StaticType{img, {NDim: 1}})
	if errs != nil {
		t.Fatal(errs)
	}
	want := []string{"float32 HWC", "uint8 HWC", "float64 1-D"}
	for k, o := range outs {
		if o.String() != want[k] {
			t.Errorf("output %d is %s, want %s", k, o, want[k])
		}
	}
	// Unknown inputs and the argument's default.
	defaults, _ := s.Check(nil, nil)
	outs, errs = s.Infer(defaults, []schema.StaticType{{}, {}})
	if errs != nil || outs[0].String() != "any" || outs[1].String() != "float32" {
		t.Errorf("from unknown inputs: %v, %v; want any and float32", outs, errs)
	}
	for _, c := range []struct {
		given schema.StaticType
		input int
		want  string
	}{
		{schema.StaticType{DTypes: []tensor.DType{tensor.Int16}}, 0, `test.Cast input "images" is given int16: it takes uint8|float32`},
		{schema.StaticType{Layout: "CHW"}, 0, `test.Cast input "images" is given CHW: it takes layout HWC`},
		{schema.StaticType{NDim: 2}, 0, `test.Cast input "images" is given 2-D: it takes 3 dimensions, not 2`},
		{schema.StaticType{Layout: "HW"}, 1, `test.Cast input "weights" is given HW: it takes 1 dimension, not 2`},
	} {
		ins := []schema.StaticType{{}, {}}
		ins[c.input] = c.given
		_, errs := s.Infer(nil, ins)
		te, ok := errors.AsType[*schema.InputTypeError](errors.Join(errs...))
		if len(errs) != 1 || !ok || te.Input != c.input || !errors.Is(errs[0], schema.ErrInputType) || errs[0].Error() != c.want {
			t.Errorf("given %s on input %d: %v; want one InputTypeError %q", c.given, c.input, errs, c.want)
		}
	}
	// Overlapping dtype sets are not an error: the batch may fit.
	if _, errs := s.Infer(nil, []schema.StaticType{{DTypes: []tensor.DType{tensor.Int16, tensor.Uint8}}, {}}); errs != nil {
		t.Errorf("int16|uint8 into uint8|float32: %v", errs)
	}
	for _, c := range []struct {
		edit func(*schema.Op)
		want string
	}{
		{func(s *schema.Op) { s.Outputs[0].Like = "pixels" }, `output "same": like "pixels" names no input`},
		{func(s *schema.Op) { s.Outputs[1].DTypeArg = "nope" }, `output "cast": dtype_arg "nope" names no dtype argument`},
		{func(s *schema.Op) { s.Outputs[1].DTypes = []tensor.DType{tensor.Uint8} }, `output "cast": both dtypes and dtype_arg "to"`},
		{func(s *schema.Op) { s.Outputs[2].Layout = "HW" }, `output "sums": layout "HW" has 2 dimensions, ndim is 1`},
		{func(s *schema.Op) { s.Outputs[2].NDim = 99 }, `output "sums": ndim 99 is not between 0 (unknown) and 16`},
	} {
		s := castOp()
		c.edit(&s)
		err := s.Validate()
		if !errors.Is(err, schema.ErrOp) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
}

// channelsOp takes HWC images of 3 or 4 channels and gives one output of
// as many channels, one of 1 and one of as many as its argument says.
func channelsOp() schema.Op {
	return schema.Op{
		Name: "test.Channels", Devices: []schema.Device{schema.CPU},
		Inputs: []schema.Input{{Name: "images", Layouts: []string{"HWC"}, Channels: []int{3, 4}}},
		Outputs: []schema.Output{
			{Name: "same", Like: "images", Channels: schema.ChannelsLike},
			{Name: "gray", Like: "images", Channels: 1},
			{Name: "chosen", Like: "images", ChannelsArg: "channels"},
			{Name: "planes", Like: "images", Layout: "CHW", Channels: schema.ChannelsLike},
			{Name: "flat", Like: "images", Layout: "HW", Channels: schema.ChannelsLike},
			{Name: "unsaid", Like: "images"},
		},
		Args: []schema.Arg{{Name: "channels", Type: schema.Int, Default: int64(3)}},
	}
}

// TestInferChannels: the channel count flows along edges (like an input,
// fixed, from an argument, only into layouts with a C dimension, not
// through outputs that do not say), and an input given a count it does
// not take is an InputTypeError saying which counts it takes.
func TestInferChannels(t *testing.T) {
	s := channelsOp()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	vals, _ := s.Check(schema.Args{"channels": 4}, nil)
	outs, errs := s.Infer(vals, []schema.StaticType{{Layout: "HWC", Channels: 3}})
	if errs != nil {
		t.Fatal(errs)
	}
	for k, want := range []int{3, 1, 4, 3, 0, 0} {
		if outs[k].Channels != want {
			t.Errorf("output %q has %d channels, want %d", s.Outputs[k].Name, outs[k].Channels, want)
		}
	}
	if got := outs[0].String(); got != "HWC with 3 channels" {
		t.Errorf("String() = %q", got)
	}
	if got := outs[1].String(); got != "HWC with 1 channel" {
		t.Errorf("String() = %q", got)
	}
	_, errs = s.Infer(vals, []schema.StaticType{{Layout: "HWC", Channels: 1}})
	if len(errs) != 1 || errs[0].Error() != `test.Channels input "images" is given HWC with 1 channel: it takes 3 or 4 channels` {
		t.Errorf("one channel into 3 or 4: %v", errs)
	}
	if _, errs := s.Infer(vals, []schema.StaticType{{Layout: "HWC"}}); errs != nil {
		t.Errorf("unknown channels: %v", errs)
	}
	for _, c := range []struct {
		edit func(*schema.Op)
		want string
	}{
		{func(s *schema.Op) { s.Inputs[0].Channels = []int{0} }, `input "images": channel count 0 is not positive`},
		{func(s *schema.Op) { s.Outputs[2].ChannelsArg = "nope" }, `output "chosen": channels_arg "nope" names no int argument`},
		{func(s *schema.Op) { s.Outputs[2].Channels = 2 }, `output "chosen": both channels 2 and channels_arg "channels"`},
		{func(s *schema.Op) { s.Outputs[0].Channels = -2 }, `output "same": channels -2 is neither a count`},
		{func(s *schema.Op) { s.Outputs[0].Like = "" }, `output "same": channels -1 (like an input) names no input in like`},
	} {
		s := channelsOp()
		c.edit(&s)
		err := s.Validate()
		if !errors.Is(err, schema.ErrOp) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
}
