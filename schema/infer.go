package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynop/dynop/tensor"
)

// A StaticType is what validation knows of a batch before anything runs:
// the dtypes it may have (nil: any), its layout ("": unknown), its
// number of dimensions (0: unknown, or what Layout says) and the size of
// its dimension named C (0: unknown). The inputs of a pipeline read from
// files are 1-D uint8; what operators make follows from their schemas
// ([Op.Infer]).
type StaticType struct {
	DTypes   []tensor.DType
	Layout   string
	NDim     int
	Channels int
}

// ndim returns t's number of dimensions, from Layout if NDim is 0.
func (t StaticType) ndim() int {
	if t.NDim == 0 && t.Layout != "" {
		return len(t.Layout)
	}
	return t.NDim
}

// String describes t as messages name it: "uint8 HWC", "float32 3-D",
// "uint8|float32", "any".
func (t StaticType) String() string {
	var parts []string
	if len(t.DTypes) > 0 {
		names := make([]string, len(t.DTypes))
		for i, dt := range t.DTypes {
			names[i] = dt.String()
		}
		parts = append(parts, strings.Join(names, "|"))
	}
	switch {
	case t.Layout != "":
		parts = append(parts, t.Layout)
	case t.NDim > 0:
		parts = append(parts, fmt.Sprintf("%d-D", t.NDim))
	}
	if parts == nil && t.Channels == 0 {
		return "any"
	}
	s := strings.Join(parts, " ")
	switch {
	case t.Channels == 1:
		s += " with 1 channel"
	case t.Channels > 1:
		s += fmt.Sprintf(" with %d channels", t.Channels)
	}
	return strings.TrimSpace(s)
}

// channelList says "1, 3 or 4".
func channelList(cs []int) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = fmt.Sprint(c)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// InputTypeError says that what an operator's input is given cannot be
// what the input takes.
type InputTypeError struct {
	Op    string
	Input int    // the input's index
	Name  string // and name
	Given StaticType
	Why   string
}

func (e *InputTypeError) Error() string {
	return fmt.Sprintf("%s input %q is given %s: %s", e.Op, e.Name, e.Given, e.Why)
}

// Unwrap makes the error an [ErrInputType].
func (e *InputTypeError) Unwrap() error { return ErrInputType }

// Infer checks the static types of the inputs an operator is given
// against its inputs' dtypes, layouts and dimensions, and returns what it
// knows of its outputs. vals are the operator's argument values, for
// outputs whose dtype an argument sets (nil: unknown). Where a type is
// unknown nothing is checked: only what cannot work is an error, one
// [*InputTypeError] per input, in order.
func (s *Op) Infer(vals *Values, ins []StaticType) ([]StaticType, []error) {
	var errs []error
	for i, t := range ins {
		if i >= len(s.Inputs) {
			break
		}
		in := s.Inputs[i]
		fail := func(format string, args ...any) {
			errs = append(errs, &InputTypeError{Op: s.Name, Input: i, Name: in.Name, Given: t, Why: fmt.Sprintf(format, args...)})
		}
		if len(in.DTypes) > 0 && len(t.DTypes) > 0 && !slices.ContainsFunc(t.DTypes, func(dt tensor.DType) bool { return slices.Contains(in.DTypes, dt) }) {
			fail("it takes %s", StaticType{DTypes: in.DTypes})
			continue
		}
		want := in.NDim
		if want == 0 && len(in.Layouts) > 0 && t.Layout == "" {
			if n := len(in.Layouts[0]); !slices.ContainsFunc(in.Layouts, func(l string) bool { return len(l) != n }) {
				want = n // every layout it takes has n dimensions
			}
		}
		switch n := t.ndim(); {
		case len(in.Layouts) > 0 && t.Layout != "" && !slices.Contains(in.Layouts, t.Layout):
			fail("it takes layout %s", strings.Join(in.Layouts, " or "))
		case len(in.Channels) > 0 && t.Channels > 0 && !slices.Contains(in.Channels, t.Channels):
			unit := "channels"
			if len(in.Channels) == 1 && in.Channels[0] == 1 {
				unit = "channel"
			}
			fail("it takes %s %s", channelList(in.Channels), unit)
		case want > 0 && n > 0 && n != want:
			unit := "dimensions"
			if want == 1 {
				unit = "dimension"
			}
			fail("it takes %d %s, not %d", want, unit, n)
		}
	}
	outs := make([]StaticType, len(s.Outputs))
	for k, o := range s.Outputs {
		var t StaticType
		if o.Like != "" {
			if i := slices.IndexFunc(s.Inputs, func(in Input) bool { return in.Name == o.Like }); i >= 0 && i < len(ins) {
				t = ins[i]
				t.DTypes = slices.Clone(t.DTypes)
			}
		}
		switch a := s.argIndex(o.DTypeArg); {
		case o.DTypeArg != "":
			t.DTypes = nil // unknown, unless the argument has a value
			if vals != nil && a >= 0 && (vals.Has(o.DTypeArg) || s.Args[a].Default != nil) {
				t.DTypes = []tensor.DType{vals.DType(o.DTypeArg)}
			}
		case len(o.DTypes) > 0:
			t.DTypes = slices.Clone(o.DTypes)
		}
		switch a := s.argIndex(o.ChannelsArg); {
		case o.ChannelsArg != "":
			t.Channels = 0 // unknown, unless the argument has a value
			if vals != nil && a >= 0 && (vals.Has(o.ChannelsArg) || s.Args[a].Default != nil) {
				t.Channels = int(vals.Int(o.ChannelsArg))
			}
		case o.Channels > 0:
			t.Channels = o.Channels
		case o.Channels != ChannelsLike:
			t.Channels = 0 // Like gives the channels only where the output says so
		}
		if o.Layout != "" {
			t.Layout, t.NDim = o.Layout, len(o.Layout)
		}
		if t.Layout != "" && !strings.Contains(t.Layout, "C") {
			t.Channels = 0
		}
		if o.NDim != 0 {
			t.NDim = o.NDim
			if t.Layout != "" && len(t.Layout) != o.NDim {
				t.Layout = ""
			}
		}
		outs[k] = t
	}
	return outs, errs
}

// validateOutputType checks what an output says of its type: a Like that
// names an input, a DTypeArg that names a dtype argument, an NDim that is
// possible and agrees with Layout, not both DTypes and DTypeArg.
func (s *Op) validateOutputType(o Output) error {
	switch {
	case o.Like != "" && !slices.ContainsFunc(s.Inputs, func(in Input) bool { return in.Name == o.Like }):
		return fmt.Errorf("like %q names no input", o.Like)
	case o.DTypeArg != "" && (s.argIndex(o.DTypeArg) < 0 || s.Args[s.argIndex(o.DTypeArg)].Type != DType):
		return fmt.Errorf("dtype_arg %q names no dtype argument", o.DTypeArg)
	case o.DTypeArg != "" && len(o.DTypes) > 0:
		return fmt.Errorf("both dtypes and dtype_arg %q", o.DTypeArg)
	case o.ChannelsArg != "" && (s.argIndex(o.ChannelsArg) < 0 || s.Args[s.argIndex(o.ChannelsArg)].Type != Int):
		return fmt.Errorf("channels_arg %q names no int argument", o.ChannelsArg)
	case o.ChannelsArg != "" && o.Channels != 0:
		return fmt.Errorf("both channels %d and channels_arg %q", o.Channels, o.ChannelsArg)
	case o.Channels < ChannelsLike:
		return fmt.Errorf("channels %d is neither a count, 0 (unknown) nor -1 (like %q)", o.Channels, o.Like)
	case o.Channels == ChannelsLike && o.Like == "":
		return fmt.Errorf("channels -1 (like an input) names no input in like")
	case o.NDim < 0 || o.NDim > tensor.MaxNDim:
		return fmt.Errorf("ndim %d is not between 0 (unknown) and %d", o.NDim, tensor.MaxNDim)
	case o.NDim != 0 && o.Layout != "" && len(o.Layout) != o.NDim:
		return fmt.Errorf("layout %q has %d dimensions, ndim is %d", o.Layout, len(o.Layout), o.NDim)
	}
	return nil
}
