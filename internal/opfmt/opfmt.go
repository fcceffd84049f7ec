// Package opfmt spells out operator schemas in words, one phrase per
// input, output or argument: what dynop inspect prints (package cli) and
// what docs/operators.md shows (internal/tools/opdocs), written once so
// the two say the same.
package opfmt

import (
	"fmt"
	"strings"

	"github.com/dynop/dynop/schema"
)

// Devices lists devices separated by commas: "cpu, gpu".
func Devices(ds []schema.Device) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = string(d)
	}
	return strings.Join(parts, ", ")
}

// Input says what input i of s takes: "uint8|float32, layout HWC|HW",
// "3 dims", ", optional" where it may be left out; "" for anything.
func Input(s *schema.Op, i int) string {
	in := s.Inputs[i]
	var parts []string
	if len(in.DTypes) > 0 {
		parts = append(parts, schema.StaticType{DTypes: in.DTypes}.String())
	}
	if len(in.Layouts) > 0 {
		parts = append(parts, "layout "+strings.Join(in.Layouts, "|"))
	}
	if in.NDim > 0 {
		parts = append(parts, fmt.Sprintf("%d dims", in.NDim))
	}
	if len(in.Channels) > 0 {
		cs := make([]string, len(in.Channels))
		for k, c := range in.Channels {
			cs[k] = fmt.Sprint(c)
		}
		parts = append(parts, "channels "+strings.Join(cs, "|"))
	}
	if i >= s.MinInputs() {
		parts = append(parts, "optional")
	}
	return strings.Join(parts, ", ")
}

// Output says what a schema says an output is before anything runs:
// "float32, like images", "uint8, layout HWC", "dtype of out_type"; ""
// for nothing.
func Output(o schema.Output) string {
	var parts []string
	if len(o.DTypes) > 0 {
		parts = append(parts, schema.StaticType{DTypes: o.DTypes}.String())
	}
	if o.DTypeArg != "" {
		parts = append(parts, "dtype of "+o.DTypeArg)
	}
	if o.Layout != "" {
		parts = append(parts, "layout "+o.Layout)
	}
	if o.NDim > 0 {
		parts = append(parts, fmt.Sprintf("%d dims", o.NDim))
	}
	if o.Like != "" {
		parts = append(parts, "like "+o.Like)
	}
	switch {
	case o.ChannelsArg != "":
		parts = append(parts, "channels from "+o.ChannelsArg)
	case o.Channels == schema.ChannelsLike:
		parts = append(parts, "channels like "+o.Like)
	case o.Channels == 1:
		parts = append(parts, "1 channel")
	case o.Channels > 1:
		parts = append(parts, fmt.Sprintf("%d channels", o.Channels))
	}
	return strings.Join(parts, ", ")
}

// ArgValue says whether an argument must be given: "(required)", its
// default "= 3", or "" for an optional argument without one.
func ArgValue(a schema.Arg) string {
	switch {
	case a.Required:
		return "(required)"
	case a.Default != nil:
		return fmt.Sprintf("= %v", a.Default)
	}
	return ""
}

// ArgLimits lists what bounds an argument's values and names: "range
// (0, 256]" (interval notation, [schema.Arg.Range]), "one of [png jpeg]",
// "formerly size"; nil for nothing.
func ArgLimits(a schema.Arg) []string {
	var extra []string
	if r := a.Range(); r != "" {
		extra = append(extra, "range "+r)
	}
	if len(a.Allowed) > 0 {
		extra = append(extra, fmt.Sprintf("one of %v", a.Allowed))
	}
	if len(a.Deprecated) > 0 {
		extra = append(extra, "formerly "+strings.Join(a.Deprecated, ", "))
	}
	return extra
}

// Arg describes an argument in one line: name, type, [ArgValue] and,
// in brackets, [ArgLimits]: "width int (required) [range [1, 65536]]".
func Arg(a schema.Arg) string {
	line := a.Name + " " + a.Type.String()
	if v := ArgValue(a); v != "" {
		line += " " + v
	}
	if extra := ArgLimits(a); extra != nil {
		line += " [" + strings.Join(extra, "; ") + "]"
	}
	return line
}
