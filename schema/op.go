package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dynop/dynop/tensor"
)

// Sentinel errors of operator schemas; test for them with [errors.Is].
// Package op's registry and instances report them too.
var (
	// ErrOp: a schema breaks the rules of [Op.Validate], or backends do
	// not match it.
	ErrOp = errors.New("invalid operator schema")
	// ErrArgument: an argument is unknown, of the wrong type, out of
	// range, not allowed, or missing.
	ErrArgument = errors.New("invalid operator argument")
	// ErrInputType: an operator's input is given what it cannot take
	// (see [InputTypeError]).
	ErrInputType = errors.New("input of the wrong type")
)

// Device names where an operator backend runs.
type Device string

// The devices an operator can have backends for.
const (
	CPU Device = "cpu"
	GPU Device = "gpu"
)

var knownDevices = []Device{CPU, GPU}

// Type is the type of an operator argument.
type Type uint8

// Argument types. Lists hold elements of the matching scalar type.
const (
	Int Type = iota + 1
	Float
	Bool
	String
	DType
	IntList
	FloatList
	BoolList
	StringList
	DTypeList
)

var typeNames = [...]string{"", "int", "float", "bool", "string", "dtype", "[]int", "[]float", "[]bool", "[]string", "[]dtype"}

// String returns the type as schemas spell it: "int", "[]float".
func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// IsList reports whether t is a list type.
func (t Type) IsList() bool { return t >= IntList && t <= DTypeList }

// Elem returns the element type of a list type, or t itself.
func (t Type) Elem() Type {
	if t.IsList() {
		return t - IntList + Int
	}
	return t
}

func (t Type) valid() bool { return t >= Int && t <= DTypeList }

// MarshalText implements encoding.TextMarshaler.
func (t Type) MarshalText() ([]byte, error) {
	if !t.valid() {
		return nil, fmt.Errorf("%w: argument type %d", ErrOp, uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Type) UnmarshalText(b []byte) error {
	i := slices.Index(typeNames[:], string(b))
	if i <= 0 {
		return fmt.Errorf("%w: unknown argument type %q (known: %s)", ErrOp, b, strings.Join(typeNames[1:], ", "))
	}
	*t = Type(i)
	return nil
}

// Op describes an operator: its name, what it does, its inputs and
// outputs, its arguments and the devices it has backends for.
type Op struct {
	// Name is namespaced: lower-case namespaces and a CamelCase name,
	// separated by dots, for example "image.Decode".
	Name string `json:"name"`
	// Doc says what the operator does.
	Doc string `json:"doc"`
	// Inputs describes each input in order.
	Inputs []Input `json:"inputs,omitempty"`
	// OptionalInputs is how many of the last inputs may be left out: the
	// operator takes len(Inputs)-OptionalInputs to len(Inputs) inputs.
	OptionalInputs int `json:"optional_inputs,omitempty"`
	// Outputs describes each output in order.
	Outputs []Output `json:"outputs,omitempty"`
	// Args are the arguments the operator accepts.
	Args []Arg `json:"args,omitempty"`
	// Devices lists the devices the operator has backends for. Registering
	// backends fills it in when empty; a declared schema must set it.
	Devices []Device `json:"devices"`
}

// Input describes one input of an operator: a batch of tensors.
type Input struct {
	Name string `json:"name"`
	Doc  string `json:"doc,omitempty"`
	// DTypes the input may have; empty means any.
	DTypes []tensor.DType `json:"dtypes,omitempty"`
	// Layouts the input may have, such as "HWC"; empty means any. A layout
	// fixes the number of dimensions.
	Layouts []string `json:"layouts,omitempty"`
	// NDim is the number of dimensions each sample must have; 0 means any
	// (or what Layouts imply).
	NDim int `json:"ndim,omitempty"`
	// Channels lists the sizes the dimension named C of its layout may
	// have, such as [1 3 4]; empty means any.
	Channels []int `json:"channels,omitempty"`
}

// Output describes one output of an operator.
type Output struct {
	Name string `json:"name"`
	Doc  string `json:"doc,omitempty"`
	// Layout names the output's dimensions, such as "HWC", if it always
	// has that layout. Go operators set OutputDesc.Layout themselves; the
	// outputs of native operators get this one.
	Layout string `json:"layout,omitempty"`
	// What validation knows of the output before anything runs, to check
	// the operators it feeds (see [Op.Infer]); none of it is required.
	// DTypes lists the dtypes the output may have (one: it has that
	// dtype); DTypeArg names a dtype argument whose value it has; Like
	// names an input whose dtype, and whose layout and number of
	// dimensions where Layout and NDim say nothing, it has; NDim is its
	// number of dimensions (0: unknown, or what Layout says).
	DTypes   []tensor.DType `json:"dtypes,omitempty"`
	DTypeArg string         `json:"dtype_arg,omitempty"`
	Like     string         `json:"like,omitempty"`
	NDim     int            `json:"ndim,omitempty"`
	// Channels is the size of the output's dimension named C: a count,
	// [ChannelsLike] for that of the Like input, or 0 for unknown;
	// ChannelsArg names an int argument whose value it is instead.
	Channels    int    `json:"channels,omitempty"`
	ChannelsArg string `json:"channels_arg,omitempty"`
}

// ChannelsLike is [Output.Channels] for an output with as many channels
// as its Like input.
const ChannelsLike = -1

// Arg describes one argument of an operator.
type Arg struct {
	Name string `json:"name"`
	Doc  string `json:"doc,omitempty"`
	Type Type   `json:"type"`
	// Required arguments must be given and have no default.
	Required bool `json:"required,omitempty"`
	// Default is the value of an optional argument that is not given, of
	// the Go type that [Values] returns for Type (int64, float64, bool,
	// string, tensor.DType or a slice of them). Nil means none: the
	// operator sees the zero value and [Values.Has] is false.
	Default any `json:"default,omitempty"`
	// Min and Max bound numeric arguments (each element of a list),
	// closed bounds unless MinExclusive or MaxExclusive says the bound
	// itself is outside the range: a sigma that must be positive has Min
	// 0 and MinExclusive.
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	MinExclusive bool     `json:"min_exclusive,omitempty"`
	MaxExclusive bool     `json:"max_exclusive,omitempty"`
	// Allowed, if not empty, lists every value the argument (each element
	// of a list) may take.
	Allowed []any `json:"allowed,omitempty"`
	// Deprecated lists former names of the argument. They are still
	// accepted, with a warning, and mean this argument.
	Deprecated []string `json:"deprecated,omitempty"`
}

// UnmarshalJSON decodes an Arg, converting Default and Allowed to the Go
// types that Type calls for (JSON numbers decode as float64 otherwise).
// The type is required: an argument without one (or with a null one)
// is an error wrapping [ErrOp], for it would be an Arg that cannot
// be encoded again.
func (a *Arg) UnmarshalJSON(b []byte) error {
	type plain Arg
	var p plain
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // integers beyond 2^53 keep their value
	if err := d.Decode(&p); err != nil {
		return err
	}
	if p.Type == 0 {
		return fmt.Errorf("%w: argument %q: missing type (known: %s)", ErrOp, p.Name, strings.Join(typeNames[1:], ", "))
	}
	*a = Arg(p)
	return a.Normalize()
}

// Normalize converts Default and Allowed to the Go types that Type calls
// for, as decoded JSON or C plugins give them (numbers as float64, lists
// as []any). Errors wrap [ErrOp].
func (a *Arg) Normalize() error {
	if a.Default != nil {
		v, err := convert(a.Type, a.Default)
		if err != nil {
			return fmt.Errorf("%w: argument %q: default: %v", ErrOp, a.Name, err)
		}
		a.Default = v
	}
	for i, x := range a.Allowed {
		v, err := convert(a.Type.Elem(), x)
		if err != nil {
			return fmt.Errorf("%w: argument %q: allowed[%d]: %v", ErrOp, a.Name, i, err)
		}
		a.Allowed[i] = v
	}
	return nil
}

// Bounds returns a *float64 for Arg.Min and Arg.Max literals.
func Bounds(v float64) *float64 { return &v }

// bound formats a bound as a number is written: 1048576, 0.5, 1e+30.
func bound(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Range describes the values Min and Max allow in interval notation,
// "[0, 256]", "(0, 256]", "> 0" or "≤ 100"; "" when there is no bound.
func (a *Arg) Range() string {
	switch {
	case a.Min != nil && a.Max != nil:
		lo, hi := "[", "]"
		if a.MinExclusive {
			lo = "("
		}
		if a.MaxExclusive {
			hi = ")"
		}
		return fmt.Sprintf("%s%s, %s%s", lo, bound(*a.Min), bound(*a.Max), hi)
	case a.Min != nil && a.MinExclusive:
		return "> " + bound(*a.Min)
	case a.Min != nil:
		return "≥ " + bound(*a.Min)
	case a.Max != nil && a.MaxExclusive:
		return "< " + bound(*a.Max)
	case a.Max != nil:
		return "≤ " + bound(*a.Max)
	}
	return ""
}

// MinInputs is the least number of inputs the operator takes.
func (s *Op) MinInputs() int { return len(s.Inputs) - s.OptionalInputs }

// Arg returns the argument called name, or called so formerly, and
// whether there is one.
func (s *Op) Arg(name string) (*Arg, bool) {
	if i := s.argIndex(name); i >= 0 {
		return &s.Args[i], true
	}
	return nil, false
}

func (s *Op) argIndex(name string) int {
	return slices.IndexFunc(s.Args, func(a Arg) bool { return a.Name == name || slices.Contains(a.Deprecated, name) })
}

// HasDevice reports whether the schema lists device d.
func (s *Op) HasDevice(d Device) bool { return slices.Contains(s.Devices, d) }

const nameRule = `want lower-case namespaces and a CamelCase name separated by dots, such as "image.Decode"`

// validateOpName reports whether name is a valid operator name.
func validateOpName(name string) error {
	parts := strings.Split(name, ".")
	ok := len(parts) >= 2
	for i, p := range parts {
		if !ok {
			break
		}
		if i == len(parts)-1 {
			ok = p != "" && p[0] >= 'A' && p[0] <= 'Z' && identChars(p, true)
		} else {
			ok = p != "" && p[0] >= 'a' && p[0] <= 'z' && identChars(p, false)
		}
	}
	if !ok {
		return fmt.Errorf("%w: operator name %q: %s", ErrOp, name, nameRule)
	}
	return nil
}

// identChars reports whether p has only letters (upper case only if
// upper), digits and '_'.
func identChars(p string, upper bool) bool {
	for _, c := range []byte(p) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || upper && c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func validArgName(n string) bool {
	return n != "" && n[0] >= 'a' && n[0] <= 'z' && identChars(n, false)
}

// Validate checks the schema's rules: a valid name; input, output and
// argument names unique and well formed (arguments in snake_case); layouts
// consistent with NDim; argument types known; defaults, bounds and allowed
// values of the argument's type and consistent with each other; required
// arguments without default; known devices, each once. All problems are
// reported together; each wraps [ErrOp] and names the operator.
func (s *Op) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: operator %q: "+format, append([]any{ErrOp, s.Name}, args...)...))
	}
	if err := validateOpName(s.Name); err != nil {
		errs = append(errs, err)
	}
	if s.OptionalInputs < 0 || s.OptionalInputs > len(s.Inputs) {
		add("optional_inputs %d is not between 0 and the %d input(s)", s.OptionalInputs, len(s.Inputs))
	}
	ports := map[string]bool{}
	port := func(kind, name string) {
		switch {
		case name == "":
			add("%s has no name", kind)
		case ports[name]:
			add("%s name %q used twice", kind, name)
		}
		ports[name] = true
	}
	for _, in := range s.Inputs {
		port("input", in.Name)
		for _, l := range in.Layouts {
			if err := tensor.ValidateLayout(l); err != nil {
				add("input %q: %v", in.Name, err)
			} else if in.NDim != 0 && len(l) != in.NDim {
				add("input %q: layout %q has %d dimensions, ndim is %d", in.Name, l, len(l), in.NDim)
			}
		}
		if in.NDim < 0 || in.NDim > tensor.MaxNDim {
			add("input %q: ndim %d is not between 0 (any) and %d (DYNOP_MAX_NDIM)", in.Name, in.NDim, tensor.MaxNDim)
		}
		for _, c := range in.Channels {
			if c < 1 {
				add("input %q: channel count %d is not positive", in.Name, c)
			}
		}
	}
	for _, out := range s.Outputs {
		port("output", out.Name)
		if err := tensor.ValidateLayout(out.Layout); err != nil {
			add("output %q: %v", out.Name, err)
		}
		if err := s.validateOutputType(out); err != nil {
			add("output %q: %v", out.Name, err)
		}
	}
	names := map[string]bool{}
	for i := range s.Args {
		a := &s.Args[i]
		for _, n := range append([]string{a.Name}, a.Deprecated...) {
			if !validArgName(n) {
				add("argument name %q: want snake_case: lower-case letters, digits and '_', starting with a letter", n)
			} else if names[n] {
				add("argument name %q used twice", n)
			}
			names[n] = true
		}
		if err := a.validate(); err != nil {
			add("argument %q: %v", a.Name, err)
		}
	}
	if len(s.Devices) == 0 {
		add("lists no devices")
	}
	for i, d := range s.Devices {
		if !slices.Contains(knownDevices, d) {
			add("device %q is not one of %v", d, knownDevices)
		} else if slices.Contains(s.Devices[:i], d) {
			add("device %q listed twice", d)
		}
	}
	return errors.Join(errs...)
}

// validate checks one argument's type, default, bounds and allowed values.
func (a *Arg) validate() error {
	if !a.Type.valid() {
		return fmt.Errorf("unknown type %d", uint8(a.Type))
	}
	numeric := a.Type.Elem() == Int || a.Type.Elem() == Float
	switch {
	case (a.Min != nil || a.Max != nil) && !numeric:
		return fmt.Errorf("min/max on a %s argument", a.Type)
	case a.Min != nil && a.Max != nil && *a.Min > *a.Max:
		return fmt.Errorf("min %g is above max %g", *a.Min, *a.Max)
	case a.MinExclusive && a.Min == nil, a.MaxExclusive && a.Max == nil:
		return errors.New("an exclusive bound without its min or max")
	case a.Min != nil && a.Max != nil && *a.Min == *a.Max && (a.MinExclusive || a.MaxExclusive):
		return fmt.Errorf("the range %s is empty", a.Range())
	case a.Min != nil && (math.IsNaN(*a.Min) || math.IsInf(*a.Min, 0)), a.Max != nil && (math.IsNaN(*a.Max) || math.IsInf(*a.Max, 0)):
		return errors.New("min or max is not a finite number (leave it unset for no bound)")
	case a.Required && a.Default != nil:
		return errors.New("required, yet has a default")
	}
	for i, v := range a.Allowed {
		if _, err := convert(a.Type.Elem(), v); err != nil {
			return fmt.Errorf("allowed[%d]: %v", i, err)
		}
	}
	if a.Default != nil {
		v, err := convert(a.Type, a.Default)
		if err != nil {
			return fmt.Errorf("default: %v", err)
		}
		if err := a.check(v); err != nil {
			return fmt.Errorf("default: %v", err)
		}
	}
	return nil
}
