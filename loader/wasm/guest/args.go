package guest

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// Args are the arguments of an operator instance, as the host passes
// them to create: every argument of the schema, given or defaulted,
// copied into Go memory. The getters panic if the operator asks for an
// argument its schema does not have, or with the wrong type: that is a
// bug in the plugin. An optional argument without a default that was not
// given reads as the zero value (nil for lists).
type Args struct {
	vals  map[string]argValue
	names []string // in the host's order
}

type argValue struct {
	typ   schema.Type
	given bool
	v     any // nil, or the Go type of typ as schema.Values has it
}

// Names returns the names of the arguments, in the schema's order.
func (a Args) Names() []string { return append([]string(nil), a.names...) }

// Given reports whether the caller gave argument name, rather than its
// default applying; false for an argument the operator does not have.
func (a Args) Given(name string) bool { return a.vals[name].given }

// Has reports whether argument name has a value, given or defaulted.
func (a Args) Has(name string) bool { return a.vals[name].v != nil }

// Int returns int argument name.
func (a Args) Int(name string) int64 { return get[int64](a, name, schema.Int) }

// Float returns float argument name.
func (a Args) Float(name string) float64 { return get[float64](a, name, schema.Float) }

// Bool returns bool argument name.
func (a Args) Bool(name string) bool { return get[bool](a, name, schema.Bool) }

// String returns string argument name.
func (a Args) String(name string) string { return get[string](a, name, schema.String) }

// DType returns dtype argument name.
func (a Args) DType(name string) tensor.DType { return get[tensor.DType](a, name, schema.DType) }

// IntList returns []int argument name.
func (a Args) IntList(name string) []int64 { return get[[]int64](a, name, schema.IntList) }

// FloatList returns []float argument name.
func (a Args) FloatList(name string) []float64 { return get[[]float64](a, name, schema.FloatList) }

// BoolList returns []bool argument name.
func (a Args) BoolList(name string) []bool { return get[[]bool](a, name, schema.BoolList) }

// StringList returns []string argument name.
func (a Args) StringList(name string) []string { return get[[]string](a, name, schema.StringList) }

// DTypeList returns []dtype argument name.
func (a Args) DTypeList(name string) []tensor.DType {
	return get[[]tensor.DType](a, name, schema.DTypeList)
}

// get returns argument name, which must be of type t. Lists are returned
// as copies, so that an operator may keep and change them.
func get[T any](a Args, name string, t schema.Type) T {
	v, ok := a.vals[name]
	if !ok {
		panic(fmt.Sprintf("guest: no argument %q; the operator's arguments are %s", name, strings.Join(a.names, ", ")))
	}
	if v.typ != t {
		panic(fmt.Sprintf("guest: argument %q is of type %s, asked for as %s", name, v.typ, t))
	}
	x, _ := v.v.(T)
	switch l := any(x).(type) {
	case []int64:
		return any(slices.Clone(l)).(T)
	case []float64:
		return any(slices.Clone(l)).(T)
	case []bool:
		return any(slices.Clone(l)).(T)
	case []string:
		return any(slices.Clone(l)).(T)
	case []tensor.DType:
		return any(slices.Clone(l)).(T)
	}
	return x
}

// decodeArgs reads count dynop_arg structs at off.
func decodeArgs(m memory, off, count uint32) (Args, error) {
	a := Args{vals: make(map[string]argValue, count)}
	if count == 0 {
		return a, nil
	}
	b, err := elems(m, off, count, argSize)
	if err != nil {
		return a, fmt.Errorf("arguments: %v", err)
	}
	for i := range count {
		e := b[i*argSize : (i+1)*argSize]
		name, err := m.cstring(le.Uint32(e[0:]))
		if err != nil {
			return a, fmt.Errorf("argument %d: name: %v", i, err)
		}
		typ := int32(le.Uint32(e[4:]))
		if typ < int32(schema.Int) || typ > int32(schema.DTypeList) {
			return a, fmt.Errorf("argument %q: unknown type %d", name, typ)
		}
		v := argValue{typ: schema.Type(typ), given: le.Uint32(e[8:]) != 0}
		if v.v, err = decodeValue(m, v.typ, le.Uint32(e[12:]), le.Uint32(e[16:])); err != nil {
			return a, fmt.Errorf("argument %q (%s): %v", name, v.typ, err)
		}
		if _, dup := a.vals[name]; dup {
			return a, fmt.Errorf("argument %q passed twice", name)
		}
		a.vals[name] = v
		a.names = append(a.names, name)
	}
	return a, nil
}

// decodeValue reads count elements of type t at off: for a scalar type
// the value itself, or nil if count is 0; for a list type a slice.
func decodeValue(m memory, t schema.Type, count, off uint32) (any, error) {
	if !t.IsList() && count > 1 {
		return nil, fmt.Errorf("%d values for a scalar", count)
	}
	if count == 0 {
		return nil, nil
	}
	size := map[schema.Type]uint64{schema.Int: 8, schema.Float: 8, schema.Bool: 4, schema.String: 4, schema.DType: 4}[t.Elem()]
	b, err := elems(m, off, count, size)
	if err != nil {
		return nil, err
	}
	var v any
	switch t.Elem() {
	case schema.Int:
		v = decodeList(b, count, func(e []byte) (int64, error) { return int64(le.Uint64(e)), nil })
	case schema.Float:
		v = decodeList(b, count, func(e []byte) (float64, error) { return math.Float64frombits(le.Uint64(e)), nil })
	case schema.Bool:
		v = decodeList(b, count, func(e []byte) (bool, error) { return le.Uint32(e) != 0, nil })
	case schema.DType:
		v = decodeList(b, count, func(e []byte) (tensor.DType, error) {
			return tensor.DType{Code: tensor.Code(e[0]), Bits: e[1], Lanes: le.Uint16(e[2:])}, nil
		})
	case schema.String:
		v = decodeList(b, count, func(e []byte) (string, error) { return m.cstring(le.Uint32(e)) })
	}
	if err, ok := v.(error); ok {
		return nil, err
	}
	if !t.IsList() {
		v = first(v)
	}
	return v, nil
}

// decodeList decodes count elements of b with f, returning the slice or
// f's first error.
func decodeList[T any](b []byte, count uint32, f func([]byte) (T, error)) any {
	size := len(b) / int(count)
	out := make([]T, count)
	for i := range out {
		x, err := f(b[i*size : (i+1)*size])
		if err != nil {
			return fmt.Errorf("element %d: %v", i, err)
		}
		out[i] = x
	}
	return out
}

// first returns the only element of a one-element slice.
func first(v any) any {
	switch v := v.(type) {
	case []int64:
		return v[0]
	case []float64:
		return v[0]
	case []bool:
		return v[0]
	case []string:
		return v[0]
	case []tensor.DType:
		return v[0]
	}
	panic(fmt.Sprintf("guest: argument value %T", v))
}
