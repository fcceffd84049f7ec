package tensor_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dynop/dynop/tensor"
)

// FuzzParseDType checks ParseDType, which reads dtypes from pipeline
// files, plugin schemas and C plugins, on any text: no panic; an error
// wraps ErrInvalid and quotes the text; a type that parses has a name
// (its String) that parses back to it, and UnmarshalText agrees.
func FuzzParseDType(f *testing.F) {
	for _, s := range []string{
		"uint8", "float32", "float32x4", "bfloat16", "complex128", "bool", "boolx4", "handle64",
		"int4", "dtype(code=9,bits=8,lanes=1)", "dtype(code=2,bits=32,lanes=0)", "dtype(code=256,bits=8,lanes=1)",
		"float32x0", "float32x01", "float33", "uint08", "x4", "", "dtype(", "int8x65536",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := tensor.ParseDType(s)
		var u tensor.DType
		uerr := u.UnmarshalText([]byte(s))
		if (err == nil) != (uerr == nil) || u != d {
			t.Fatalf("ParseDType(%q) = %v, %v but UnmarshalText gives %v, %v", s, d, err, u, uerr)
		}
		if err != nil {
			if !errors.Is(err, tensor.ErrInvalid) {
				t.Errorf("ParseDType(%q): error %q does not wrap ErrInvalid", s, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Errorf("ParseDType(%q): error %q does not quote the text", s, err)
			}
			return
		}
		checkDTypeName(t, d)
	})
}

// FuzzDTypeString checks that every DType, named or not, reads back from
// its String and its MarshalText.
func FuzzDTypeString(f *testing.F) {
	for _, d := range []tensor.DType{tensor.Uint8, tensor.Float32, tensor.Boolean, {Code: 2, Bits: 32, Lanes: 4},
		{Code: 9, Bits: 8, Lanes: 1}, {Code: 1, Bits: 8, Lanes: 0}, {Code: 6, Bits: 16, Lanes: 1}} {
		f.Add(uint8(d.Code), d.Bits, d.Lanes)
	}
	f.Fuzz(func(t *testing.T, code, bits uint8, lanes uint16) {
		checkDTypeName(t, tensor.DType{Code: tensor.Code(code), Bits: bits, Lanes: lanes})
	})
}

// checkDTypeName fails t unless d's String and MarshalText parse back to d.
func checkDTypeName(t *testing.T, d tensor.DType) {
	t.Helper()
	name := d.String()
	back, err := tensor.ParseDType(name)
	if err != nil || back != d {
		t.Errorf("%#v: ParseDType(%q) = %#v, %v", d, name, back, err)
	}
	text, err := d.MarshalText()
	if err != nil || string(text) != name {
		t.Errorf("%#v: MarshalText = %q, %v; String = %q", d, text, err, name)
	}
}
