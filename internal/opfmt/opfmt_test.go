package opfmt

import (
	"testing"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// TestPhrases: each phrase as dynop inspect has always printed it.
func TestPhrases(t *testing.T) {
	s := schema.Op{
		Name:           "x.Op",
		Inputs:         []schema.Input{{Name: "images", DTypes: []tensor.DType{tensor.Uint8, tensor.Float32}, Layouts: []string{"HWC", "HW"}}, {Name: "mask", NDim: 2}},
		OptionalInputs: 1,
		Devices:        []schema.Device{schema.CPU, schema.GPU},
	}
	for _, c := range []struct{ got, want string }{
		{Devices(s.Devices), "cpu, gpu"},
		{Input(&s, 0), "uint8|float32, layout HWC|HW"},
		{Input(&s, 1), "2 dims, optional"},
		{Output(schema.Output{DTypes: []tensor.DType{tensor.Float32}, Like: "images"}), "float32, like images"},
		{Output(schema.Output{DTypeArg: "out_type", Layout: "HWC", NDim: 3}), "dtype of out_type, layout HWC, 3 dims"},
		{Arg(schema.Arg{Name: "width", Type: schema.Int, Required: true, Min: schema.Bounds(1), Max: schema.Bounds(65536)}), "width int (required) [range [1, 65536]]"},
		{Arg(schema.Arg{Name: "sigma", Type: schema.Float, Default: 1.5, Min: schema.Bounds(0), MinExclusive: true, Deprecated: []string{"s"}}), "sigma float = 1.5 [range > 0; formerly s]"},
		{Arg(schema.Arg{Name: "format", Type: schema.String, Allowed: []any{"png", "jpeg"}}), "format string [one of [png jpeg]]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
