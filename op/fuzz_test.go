package op_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// quiet drops the warnings about deprecated argument names.
var quiet = slog.New(slog.DiscardHandler)

// FuzzSchemaJSON checks the JSON of operator schemas, which manifests,
// the registry cache and WebAssembly plugins carry, on any bytes: no
// panic; a decoding error from the schema's own rules wraps ErrSchema; a
// schema that decodes marshals again (an argument without a type did
// not); one that also validates reads back equal and valid, and accepts
// each of its defaults as a value of its argument.
func FuzzSchemaJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"image.Resize","doc":"bilinear","inputs":[{"name":"images","dtypes":["uint8","float32"],"layouts":["HWC"],"ndim":3}],` +
			`"outputs":[{"name":"resized","layout":"HWC"}],"args":[{"name":"width","type":"int","required":true,"min":1},` +
			`{"name":"height","type":"int","required":true,"min":1,"max":65535},{"name":"interp","type":"string","default":"linear","allowed":["linear","nearest"]}],"devices":["cpu"]}`,
		`{"name":"imgproc.GaussianBlur","inputs":[{"name":"in"}],"outputs":[{"name":"out"}],"args":[{"name":"sigma","type":"float","default":1.5,"min":0,"deprecated":["radius"]}],"devices":["cpu","gpu"]}`,
		`{"name":"x.Y","args":[{"name":"axes","type":"[]int","default":[0,1,9007199254740993]},{"name":"out","type":"[]dtype","default":["float32","uint8x4"]},{"name":"flags","type":"[]bool","allowed":[true]}],"devices":["cpu"]}`,
		`{"name":"x.Y","args":[{"name":"t","type":"dtype","default":"float33"}],"devices":["cpu"]}`,
		`{"name":"x.Y","args":[{"name":"n","type":"int","default":1.5}],"devices":["cpu"]}`,
		`{"name":"x.Y","args":[{"name":"n","type":"complex"}],"devices":["tpu"]}`,
		`{"name":"x.Y","optional_inputs":2,"inputs":[{"name":"a","ndim":-1}],"devices":[]}`,
		`{"name":"x.Y","args":[{"name":"n","type":"int","required":true,"default":3,"min":5,"max":1}],"devices":["cpu","cpu"]}`,
		`{"name":"x.Y","args":[{"name":"n"}],"devices":["cpu"]}`,
		`{"name":"x.Y","args":[{"name":"n","type":null}],"devices":["cpu"]}`,
		`[]`, `{"args":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s schema.Op
		if err := json.Unmarshal(data, &s); err != nil {
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &syn) && !errors.As(err, &typ) && !errors.Is(err, schema.ErrOp) && !errors.Is(err, tensor.ErrInvalid) {
				t.Errorf("decoding %q: error %q (%T) is neither JSON's nor ErrSchema", data, err, err)
			}
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("a schema decoded from %q does not marshal: %v", data, err)
		}
		if err := s.Validate(); err != nil {
			if !errors.Is(err, schema.ErrOp) || !strings.Contains(err.Error(), "operator name") && !strings.Contains(err.Error(), strconv.Quote(s.Name)) {
				t.Errorf("Validate of %q: error %q does not wrap ErrSchema and name the operator", data, err)
			}
			return
		}
		var back schema.Op
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("the JSON %s of a valid schema does not decode: %v", out, err)
		}
		if !reflect.DeepEqual(canonical(t, back), canonical(t, s)) {
			t.Errorf("round trip of %q:\n got %s\nwant %s", data, canonical(t, back), canonical(t, s))
		}
		if err := back.Validate(); err != nil {
			t.Errorf("the schema read back from %s is invalid: %v", out, err)
		}
		for _, a := range s.Args {
			if a.Default == nil {
				continue
			}
			one := s
			one.Args = []schema.Arg{a}
			v, err := one.Check(schema.Args{a.Name: a.Default}, quiet)
			if err != nil {
				t.Errorf("argument %q: its default %#v is refused: %v", a.Name, a.Default, err)
			} else if !reflect.DeepEqual(v.Value(a.Name), a.Default) {
				t.Errorf("argument %q: default %#v checks as %#v", a.Name, a.Default, v.Value(a.Name))
			}
		}
	})
}

// canonical returns s's JSON with defaults and allowed values in their
// Go types, for comparing schemas whose nil and empty slices differ.
func canonical(t *testing.T, s schema.Op) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("marshal %+v: %v", s, err)
	}
	return string(b)
}

// FuzzTypeText checks the argument type names of schemas on any text: no
// panic; an error wraps ErrSchema, quotes the text and lists the known
// types; a type that parses prints as the text and marshals back to it.
func FuzzTypeText(f *testing.F) {
	for _, s := range []string{"int", "[]float", "dtype", "[]dtype", "", "type(99)", "[]", "Int", "list"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var typ schema.Type
		if err := typ.UnmarshalText([]byte(s)); err != nil {
			if !errors.Is(err, schema.ErrOp) || !strings.Contains(err.Error(), strconv.Quote(s)) || !strings.Contains(err.Error(), "[]dtype") {
				t.Errorf("UnmarshalText(%q): error %q does not wrap ErrSchema, quote the text and list the types", s, err)
			}
			if typ != 0 {
				t.Errorf("UnmarshalText(%q) failed but set %v", s, typ)
			}
			return
		}
		if typ.String() != s {
			t.Errorf("UnmarshalText(%q) = %v", s, typ)
		}
		if text, err := typ.MarshalText(); err != nil || string(text) != s {
			t.Errorf("%v.MarshalText() = %q, %v; want %q", typ, text, err, s)
		}
	})
}

// TestTypeTextAll checks every Type value, of which there are 256: String
// never panics and names undefined values by number; MarshalText fails
// exactly for them, naming the number and wrapping ErrSchema, and
// otherwise reads back with UnmarshalText.
func TestTypeTextAll(t *testing.T) {
	for i := range 256 {
		typ := schema.Type(i)
		name := typ.String()
		text, err := typ.MarshalText()
		defined := i >= int(schema.Int) && i <= int(schema.DTypeList)
		switch {
		case !defined && (err == nil || !errors.Is(err, schema.ErrOp) || !strings.Contains(err.Error(), "argument type "+strconv.Itoa(i))):
			t.Errorf("Type(%d).MarshalText() = %q, %v; want an error naming %d", i, text, err, i)
		case !defined && name != "type("+strconv.Itoa(i)+")":
			t.Errorf("Type(%d).String() = %q", i, name)
		case defined:
			var back schema.Type
			if err != nil || string(text) != name || back.UnmarshalText(text) != nil || back != typ {
				t.Errorf("Type(%d): MarshalText = %q, %v; String = %q; read back as %v", i, text, err, name, back)
			}
		}
	}
}

// argSchema has an argument of every type, with bounds and allowed values,
// for FuzzCheck.
var argSchema = schema.Op{
	Name: "fuzz.Args",
	Args: []schema.Arg{
		{Name: "n", Type: schema.Int, Min: schema.Bounds(-5), Max: schema.Bounds(1 << 40)},
		{Name: "x", Type: schema.Float, Default: 0.5, Min: schema.Bounds(0), Max: schema.Bounds(1), Deprecated: []string{"alpha"}},
		{Name: "b", Type: schema.Bool},
		{Name: "s", Type: schema.String, Allowed: []any{"linear", "nearest"}},
		{Name: "d", Type: schema.DType, Default: tensor.Float32},
		{Name: "ns", Type: schema.IntList, Allowed: []any{int64(0), int64(1), int64(2)}},
		{Name: "xs", Type: schema.FloatList, Min: schema.Bounds(-1)},
		{Name: "bs", Type: schema.BoolList},
		{Name: "ss", Type: schema.StringList},
		{Name: "ds", Type: schema.DTypeList, Allowed: []any{"uint8", "float32x4"}},
		{Name: "req", Type: schema.Int, Required: true},
	},
	Devices: []schema.Device{schema.CPU},
}

// FuzzCheck checks argument values as pipeline files and the CLI give
// them (a JSON object of numbers, strings, booleans, nulls and lists,
// decoded as YAML gives them: int64 where integral) against a schema
// with an argument of every type: no panic; each error wraps ErrArgument
// and names the operator and an argument; values that pass have the Go
// type of their argument, keep to its bounds and allowed values, and
// check again to themselves.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"req":3,"n":7,"x":0.25,"b":true,"s":"linear","d":"uint8","ns":[0,2],"xs":[-1,3.5],"bs":[false],"ss":["a",""],"ds":["float32x4"]}`,
		`{"req":1,"alpha":1}`,
		`{"req":1,"x":1,"alpha":0}`,
		`{"req":1.0,"n":-6,"x":2,"s":"linaer","d":"float33","ns":[3],"ds":["int8"]}`,
		`{"req":1,"n":1e300,"xs":[null],"bs":[1],"ss":"a","d":7}`,
		`{"req":9223372036854775807,"n":9223372036854775808}`,
		`{"wdith":3}`,
		`{}`,
	} {
		f.Add(s)
	}
	if err := argSchema.Validate(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		args, ok := decodeArgs(data)
		if !ok {
			return
		}
		v, err := argSchema.Check(args, quiet)
		if err != nil {
			for _, e := range unjoin(err) {
				msg := e.Error()
				if !errors.Is(e, schema.ErrArgument) || !strings.Contains(msg, `operator "fuzz.Args": argument "`) {
					t.Errorf("Check(%s): error %q does not wrap ErrArgument and name operator and argument", data, msg)
				}
			}
			return
		}
		again := schema.Args{}
		for _, a := range argSchema.Args {
			val := v.Value(a.Name)
			if val == nil {
				if a.Default != nil || v.Has(a.Name) {
					t.Errorf("Check(%s): argument %q is nil", data, a.Name)
				}
				continue
			}
			if want := goTypes[a.Type]; reflect.TypeOf(val) != want {
				t.Errorf("Check(%s): argument %q is a %T, want %v", data, a.Name, val, want)
			}
			if v.Has(a.Name) {
				again[a.Name] = val
			}
			for _, x := range elems(val) {
				if n, ok := asFloat(x); ok && (math.IsNaN(n) || a.Min != nil && n < *a.Min || a.Max != nil && n > *a.Max) {
					t.Errorf("Check(%s): argument %q = %v is out of bounds", data, a.Name, val)
				}
			}
		}
		w, err := argSchema.Check(again, quiet)
		if err != nil {
			t.Fatalf("Check(%s) passed; checking its values %v again fails: %v", data, again, err)
		}
		for _, a := range argSchema.Args {
			if !reflect.DeepEqual(w.Value(a.Name), v.Value(a.Name)) {
				t.Errorf("argument %q: %#v checks again as %#v", a.Name, v.Value(a.Name), w.Value(a.Name))
			}
		}
	})
}

// goTypes are the Go types of the values of each argument type.
var goTypes = map[schema.Type]reflect.Type{
	schema.Int: reflect.TypeFor[int64](), schema.Float: reflect.TypeFor[float64](), schema.Bool: reflect.TypeFor[bool](),
	schema.String: reflect.TypeFor[string](), schema.DType: reflect.TypeFor[tensor.DType](),
	schema.IntList: reflect.TypeFor[[]int64](), schema.FloatList: reflect.TypeFor[[]float64](), schema.BoolList: reflect.TypeFor[[]bool](),
	schema.StringList: reflect.TypeFor[[]string](), schema.DTypeList: reflect.TypeFor[[]tensor.DType](),
}

// decodeArgs decodes a JSON object into Args the way the pipeline parser
// gives them: integral numbers as int64, others as float64, lists as []any.
func decodeArgs(data string) (schema.Args, bool) {
	d := json.NewDecoder(bytes.NewReader([]byte(data)))
	d.UseNumber()
	var raw map[string]any
	if d.Decode(&raw) != nil {
		return nil, false
	}
	var conv func(any) any
	conv = func(x any) any {
		switch x := x.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return f
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
		case map[string]any:
			return strings.Repeat("m", len(x)) // a mapping is no argument value; make it a string
		}
		return x
	}
	args := schema.Args{}
	for k, v := range raw {
		args[k] = conv(v)
	}
	return args, true
}

// elems returns the elements of a list value, or the value alone.
func elems(v any) []any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return []any{v}
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out
}

func asFloat(x any) (float64, bool) {
	switch x := x.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// unjoin returns the errors err joins, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
