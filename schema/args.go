package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/tensor"
)

// Args are the arguments given to an operator, by name. Values may be of
// any Go type that converts without loss to the argument's type: any
// integer type (or an integral float) for int, any number for float,
// tensor.DType or its name for dtype, and []any or typed slices for lists,
// which is what YAML and JSON decoders produce.
type Args map[string]any

// Values are an operator's arguments after validation: every argument of
// the schema, given or defaulted, as the Go type its [Type] calls for.
// Operator factories read them with the typed getters, which panic if the
// operator asks for an argument its schema does not have, or with the
// wrong type: that is a bug in the operator, and the panic is recovered
// into an error naming it.
type Values struct {
	schema *Op
	vals   []any  // by argument index; nil: not given and no default
	given  []bool // by argument index
}

// Check validates args against the schema and returns the argument
// values: unknown names (with a "did you mean"), values of the wrong type,
// out of range or not allowed, and missing required arguments are errors
// wrapping [ErrArgument] that name the operator and the argument; all are
// reported together. A deprecated name is accepted with a warning on log
// (nil: slog.Default()).
func (s *Op) Check(args Args, log *slog.Logger) (*Values, error) {
	v := &Values{schema: s, vals: make([]any, len(s.Args)), given: make([]bool, len(s.Args))}
	usedAs := make([]string, len(s.Args)) // the name each given argument was given by
	var errs []error
	fail := func(arg, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: operator %q: argument %q: "+format, append([]any{ErrArgument, s.Name, arg}, a...)...))
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic messages
	for _, name := range names {
		i := s.argIndex(name)
		if i < 0 {
			fail(name, "%s", s.unknownArg(name))
			continue
		}
		a := &s.Args[i]
		if v.given[i] {
			fail(a.Name, "given twice, as %q and as %q (names of one argument)", usedAs[i], name)
			continue
		}
		usedAs[i] = name
		if name != a.Name {
			if log == nil {
				log = slog.Default()
			}
			log.Warn("deprecated operator argument", "operator", s.Name, "argument", name, "use", a.Name)
		}
		val, err := convert(a.Type, args[name])
		if err == nil {
			err = a.check(val)
		}
		if err != nil {
			fail(a.Name, "%v", err)
			v.given[i] = true // given, if wrongly: not also "required but not given"
			continue
		}
		v.vals[i], v.given[i] = val, true
	}
	for i := range s.Args {
		a := &s.Args[i]
		switch {
		case v.given[i]:
		case a.Required:
			fail(a.Name, "required (%s) but not given", a.Type)
		default:
			v.vals[i] = a.Default
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return v, nil
}

// unknownArg says that name is no argument of s, suggesting the nearest.
func (s *Op) unknownArg(name string) string {
	var known []string
	current := map[string]string{} // every name to the argument's current name
	for _, a := range s.Args {
		known = append(known, a.Name)
		current[a.Name] = a.Name
		for _, d := range a.Deprecated {
			known = append(known, d)
			current[d] = a.Name
		}
	}
	msg := "unknown argument"
	if near := suggest.Nearest(name, known); near != "" {
		return fmt.Sprintf("%s; did you mean %q?", msg, current[near])
	}
	if len(known) == 0 {
		return msg + "; the operator takes no arguments"
	}
	return fmt.Sprintf("%s; known: %s", msg, strings.Join(known, ", "))
}

// check verifies bounds and allowed values of a converted value.
func (a *Arg) check(v any) error {
	each := func(x any) error {
		if f, ok := number(x); ok {
			if math.IsNaN(f) {
				return errors.New("is NaN")
			}
			switch {
			case a.Min != nil && f < *a.Min:
				return fmt.Errorf("%v is below the minimum %g", x, *a.Min)
			case a.Min != nil && a.MinExclusive && f == *a.Min:
				return fmt.Errorf("%v is not above the minimum %g, which the range %s excludes", x, *a.Min, a.Range())
			case a.Max != nil && f > *a.Max:
				return fmt.Errorf("%v is above the maximum %g", x, *a.Max)
			case a.Max != nil && a.MaxExclusive && f == *a.Max:
				return fmt.Errorf("%v is not below the maximum %g, which the range %s excludes", x, *a.Max, a.Range())
			}
		}
		if len(a.Allowed) > 0 && !slices.ContainsFunc(a.Allowed, func(y any) bool {
			c, err := convert(a.Type.Elem(), y)
			return err == nil && reflect.DeepEqual(c, x)
		}) {
			return fmt.Errorf("%v is not one of %v", x, a.Allowed)
		}
		return nil
	}
	if !a.Type.IsList() {
		return each(v)
	}
	rv := reflect.ValueOf(v)
	for i := range rv.Len() {
		if err := each(rv.Index(i).Interface()); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

func number(x any) (float64, bool) {
	switch x := x.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// convert returns v as the Go type t calls for, or says why it cannot.
func convert(t Type, v any) (any, error) {
	if t.IsList() {
		rv := reflect.ValueOf(v)
		if v == nil || rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return nil, fmt.Errorf("want a list (%s), got %s", t, describe(v))
		}
		out := reflect.MakeSlice(reflect.SliceOf(goType(t.Elem())), rv.Len(), rv.Len())
		for i := range rv.Len() {
			e, err := convert(t.Elem(), rv.Index(i).Interface())
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out.Index(i).Set(reflect.ValueOf(e))
		}
		return out.Interface(), nil
	}
	if n, ok := v.(json.Number); ok { // from JSON decoded with UseNumber
		switch t {
		case Int:
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
			f, err := n.Float64()
			if err != nil {
				return nil, fmt.Errorf("want an int, got %s", n)
			}
			v = f
		case Float:
			f, err := n.Float64()
			if err != nil {
				return nil, fmt.Errorf("want a float, got %s", n)
			}
			return f, nil
		}
	}
	switch t {
	case Int:
		switch rv := reflect.ValueOf(v); rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return rv.Int(), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			if rv.Uint() > math.MaxInt64 {
				return nil, fmt.Errorf("%d overflows int64", rv.Uint())
			}
			return int64(rv.Uint()), nil
		case reflect.Float32, reflect.Float64:
			f := rv.Float()
			switch {
			case math.IsNaN(f) || math.IsInf(f, 0):
				return nil, fmt.Errorf("want an int, got %v", f)
			case f < -(1<<63) || f >= 1<<63:
				return nil, fmt.Errorf("%v is outside the int64 range", v)
			case f != math.Trunc(f):
				return nil, fmt.Errorf("want an int, got the fraction %v", v)
			}
			return int64(f), nil
		}
	case Float:
		switch rv := reflect.ValueOf(v); rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return float64(rv.Int()), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return float64(rv.Uint()), nil
		case reflect.Float32, reflect.Float64:
			return rv.Float(), nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case DType:
		switch d := v.(type) {
		case tensor.DType:
			return d, nil
		case string:
			dt, err := tensor.ParseDType(d)
			if err != nil {
				return nil, err
			}
			return dt, nil
		}
	}
	return nil, fmt.Errorf("want %s, got %s", article(t), describe(v))
}

func goType(t Type) reflect.Type {
	switch t {
	case Int:
		return reflect.TypeFor[int64]()
	case Float:
		return reflect.TypeFor[float64]()
	case Bool:
		return reflect.TypeFor[bool]()
	case String:
		return reflect.TypeFor[string]()
	}
	return reflect.TypeFor[tensor.DType]()
}

func article(t Type) string {
	if t == Int {
		return "an int"
	}
	return "a " + t.String()
}

func describe(v any) string {
	if v == nil {
		return "nothing (null)"
	}
	return fmt.Sprintf("%T %v", v, v)
}

// Schema returns the schema the values were checked against.
func (v *Values) Schema() *Op { return v.schema }

// Has reports whether argument name was given, rather than defaulted.
func (v *Values) Has(name string) bool { return v.given[v.index(name, 0)] }

// Int returns int argument name.
func (v *Values) Int(name string) int64 { return get[int64](v, name, Int) }

// Float returns float argument name.
func (v *Values) Float(name string) float64 { return get[float64](v, name, Float) }

// Bool returns bool argument name.
func (v *Values) Bool(name string) bool { return get[bool](v, name, Bool) }

// String returns string argument name.
func (v *Values) String(name string) string { return get[string](v, name, String) }

// DType returns dtype argument name.
func (v *Values) DType(name string) tensor.DType { return get[tensor.DType](v, name, DType) }

// Ints returns []int argument name.
func (v *Values) Ints(name string) []int64 { return get[[]int64](v, name, IntList) }

// Floats returns []float argument name.
func (v *Values) Floats(name string) []float64 { return get[[]float64](v, name, FloatList) }

// Bools returns []bool argument name.
func (v *Values) Bools(name string) []bool { return get[[]bool](v, name, BoolList) }

// Strings returns []string argument name.
func (v *Values) Strings(name string) []string { return get[[]string](v, name, StringList) }

// DTypes returns []dtype argument name.
func (v *Values) DTypes(name string) []tensor.DType {
	return get[[]tensor.DType](v, name, DTypeList)
}

// Value returns argument name as its Go type, or nil if it was neither
// given nor defaulted.
func (v *Values) Value(name string) any { return v.vals[v.index(name, 0)] }

// index returns the index of argument name, checking its type unless t is
// zero; a mismatch is the operator's bug and panics.
func (v *Values) index(name string, t Type) int {
	for i := range v.schema.Args {
		if a := &v.schema.Args[i]; a.Name == name {
			if t != 0 && a.Type != t {
				panic(fmt.Sprintf("op: operator %q reads argument %q as %s; its schema says %s", v.schema.Name, name, t, a.Type))
			}
			return i
		}
	}
	panic(fmt.Sprintf("op: operator %q reads argument %q, which its schema does not have", v.schema.Name, name))
}

func get[T any](v *Values, name string, t Type) T {
	x, _ := v.vals[v.index(name, t)].(T)
	return x
}
