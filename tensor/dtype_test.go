package tensor_test

import (
	"encoding/json"
	"testing"

	"github.com/dynop/dynop/tensor"
)

func TestDTypeStringRoundTrip(t *testing.T) {
	tests := []struct {
		dt   tensor.DType
		name string
	}{
		{tensor.Int8, "int8"},
		{tensor.Int16, "int16"},
		{tensor.Int32, "int32"},
		{tensor.Int64, "int64"},
		{tensor.Uint8, "uint8"},
		{tensor.Uint16, "uint16"},
		{tensor.Uint32, "uint32"},
		{tensor.Uint64, "uint64"},
		{tensor.Float16, "float16"},
		{tensor.Float32, "float32"},
		{tensor.Float64, "float64"},
		{tensor.Boolean, "bool"},
		{tensor.DType{Code: tensor.Bfloat, Bits: 16, Lanes: 1}, "bfloat16"},
		{tensor.DType{Code: tensor.Complex, Bits: 64, Lanes: 1}, "complex64"},
		{tensor.DType{Code: tensor.Complex, Bits: 128, Lanes: 2}, "complex128x2"},
		{tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4}, "float32x4"},
		{tensor.DType{Code: tensor.Bool, Bits: 8, Lanes: 4}, "boolx4"},
		{tensor.DType{Code: tensor.Int, Bits: 4, Lanes: 1}, "int4"},
		{tensor.DType{Code: tensor.OpaqueHandle, Bits: 64, Lanes: 1}, "handle64"},
		{tensor.DType{Code: 9, Bits: 8, Lanes: 1}, "dtype(code=9,bits=8,lanes=1)"},
		{tensor.DType{Code: tensor.Bool, Bits: 1, Lanes: 1}, "dtype(code=6,bits=1,lanes=1)"},
		{tensor.DType{Code: tensor.Float, Bits: 0, Lanes: 1}, "dtype(code=2,bits=0,lanes=1)"},
		{tensor.DType{}, "dtype(code=0,bits=0,lanes=0)"},
	}
	for _, tt := range tests {
		if got := tt.dt.String(); got != tt.name {
			t.Errorf("%#v.String() = %q, want %q", tt.dt, got, tt.name)
		}
		got, err := tensor.ParseDType(tt.name)
		if err != nil || got != tt.dt {
			t.Errorf("ParseDType(%q) = %#v, %v; want %#v", tt.name, got, err, tt.dt)
		}
	}
}

func TestParseDTypeErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `unknown dtype ""`},
		{"float", `unknown dtype "float"`},
		{"double", `unknown dtype "double" (known: int8, int16`},
		{"int0", `unknown dtype "int0"`},
		{"int08", `unknown dtype "int08"`},
		{"int256", `unknown dtype "int256"`},
		{"bool8", `unknown dtype "bool8"`},
		{"Float32", `unknown dtype "Float32"`},
		{"float32x", `dtype "float32x" has malformed lanes ""`},
		{"float32x0", `malformed lanes "0"`},
		{"float32x65536", `malformed lanes "65536"`},
		{"dtype(code=300,bits=8,lanes=1)", `malformed dtype "dtype(code=300,bits=8,lanes=1)"`},
		{"dtype(code=1,bits=8,lanes=1)x", "malformed dtype"},
		{"dtype(code=1, bits=8, lanes=1)", "malformed dtype"},
	}
	for _, tt := range tests {
		_, err := tensor.ParseDType(tt.in)
		wantErr(t, err, tt.want)
	}
}

func TestDTypeJSON(t *testing.T) {
	type schema struct {
		Input tensor.DType `json:"input"`
	}
	b := must(json.Marshal(schema{tensor.Uint8}))
	if string(b) != `{"input":"uint8"}` {
		t.Errorf("json.Marshal = %s, want {\"input\":\"uint8\"}", b)
	}
	var s schema
	if err := json.Unmarshal([]byte(`{"input":"float32x4"}`), &s); err != nil {
		t.Fatal(err)
	}
	if want := (tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4}); s.Input != want {
		t.Errorf("json.Unmarshal = %v, want %v", s.Input, want)
	}
	err := json.Unmarshal([]byte(`{"input":"float31.5"}`), &s)
	wantErr(t, err, `unknown dtype "float31.5"`)
}

func TestDTypeSize(t *testing.T) {
	tests := []struct {
		dt   tensor.DType
		size int
	}{
		{tensor.Uint8, 1},
		{tensor.Boolean, 1},
		{tensor.Float16, 2},
		{tensor.Float32, 4},
		{tensor.Int64, 8},
		{tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4}, 16},
		{tensor.DType{Code: tensor.Int, Bits: 4, Lanes: 1}, 1},
		{tensor.DType{Code: tensor.Int, Bits: 4, Lanes: 3}, 2},
		{tensor.DType{Code: tensor.UInt, Bits: 255, Lanes: 0xffff}, 2088929},
		{tensor.DType{Code: tensor.Float, Bits: 32}, 0},
	}
	for _, tt := range tests {
		if got := tt.dt.Size(); got != tt.size {
			t.Errorf("%v.Size() = %d, want %d", tt.dt, got, tt.size)
		}
	}
}

type celsius float32

func TestDTypeOf(t *testing.T) {
	tests := []struct {
		got, want tensor.DType
	}{
		{tensor.DTypeOf[int8](), tensor.Int8},
		{tensor.DTypeOf[int16](), tensor.Int16},
		{tensor.DTypeOf[int32](), tensor.Int32},
		{tensor.DTypeOf[int64](), tensor.Int64},
		{tensor.DTypeOf[uint8](), tensor.Uint8},
		{tensor.DTypeOf[uint16](), tensor.Uint16},
		{tensor.DTypeOf[uint32](), tensor.Uint32},
		{tensor.DTypeOf[uint64](), tensor.Uint64},
		{tensor.DTypeOf[float32](), tensor.Float32},
		{tensor.DTypeOf[float64](), tensor.Float64},
		{tensor.DTypeOf[celsius](), tensor.Float32},
		{tensor.DTypeOf[rune](), tensor.Int32},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: DTypeOf = %v, want %v", i, tt.got, tt.want)
		}
	}
	intBits := uint8(32 << (^uint(0) >> 63))
	if got := tensor.DTypeOf[int](); got != (tensor.DType{Code: tensor.Int, Bits: intBits, Lanes: 1}) {
		t.Errorf("DTypeOf[int]() = %v", got)
	}
	if got := tensor.DTypeOf[uint](); got != (tensor.DType{Code: tensor.UInt, Bits: intBits, Lanes: 1}) {
		t.Errorf("DTypeOf[uint]() = %v", got)
	}
}

func TestDeviceString(t *testing.T) {
	tests := []struct {
		dev  tensor.Device
		want string
	}{
		{tensor.Device{Type: tensor.CPU}, "cpu"},
		{tensor.Device{Type: tensor.CPU, ID: 1}, "cpu:1"},
		{tensor.Device{Type: tensor.CUDA}, "cuda:0"},
		{tensor.Device{Type: tensor.CUDA, ID: 3}, "cuda:3"},
		{tensor.Device{Type: tensor.CUDAHost}, "cuda_host:0"},
		{tensor.Device{Type: 7}, "device(7):0"},
	}
	for _, tt := range tests {
		if got := tt.dev.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.dev, got, tt.want)
		}
	}
	if got := tensor.DeviceType(7).String(); got != "device(7)" {
		t.Errorf("DeviceType(7).String() = %q, want device(7)", got)
	}
}
