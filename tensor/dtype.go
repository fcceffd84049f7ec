package tensor

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// DeviceType is the kind of memory a tensor lives in. Its values are those
// of DLPack's DLDeviceType.
type DeviceType int32

// Device types. CUDA exists as a device type on every machine, with or
// without a GPU: this package records where memory lives and never
// dereferences memory that is not on the CPU.
const (
	CPU      DeviceType = 1 // host memory (kDLCPU)
	CUDA     DeviceType = 2 // CUDA device memory (kDLCUDA)
	CUDAHost DeviceType = 3 // page-locked host memory from cudaMallocHost (kDLCUDAHost)
)

// String returns "cpu", "cuda" or "cuda_host", and "device(N)" for a type
// this package does not name.
func (t DeviceType) String() string {
	switch t {
	case CPU:
		return "cpu"
	case CUDA:
		return "cuda"
	case CUDAHost:
		return "cuda_host"
	}
	return "device(" + strconv.Itoa(int(t)) + ")"
}

// Device is where a tensor's memory lives: a type of memory and, for
// types a machine may have several of, which one. It has the memory layout
// of DLPack's DLDevice.
type Device struct {
	Type DeviceType
	ID   int32
}

// cpu is the device of memory allocated by Go.
var cpu = Device{Type: CPU}

// String returns "cpu" for the CPU and type:id for anything else, as in
// "cuda:0".
func (d Device) String() string {
	if d == cpu {
		return "cpu"
	}
	return d.Type.String() + ":" + strconv.Itoa(int(d.ID))
}

// Code is the kind of number an element holds. Its values are those of
// DLPack's DLDataTypeCode.
type Code uint8

// Type codes.
const (
	Int          Code = 0 // signed integer
	UInt         Code = 1 // unsigned integer
	Float        Code = 2 // IEEE 754 floating point
	OpaqueHandle Code = 3 // opaque handle, such as a pointer
	Bfloat       Code = 4 // bfloat16: float32 with a 7-bit mantissa
	Complex      Code = 5 // complex: real and imaginary floating-point parts
	Bool         Code = 6 // boolean
)

// codeNames are the names String gives each code, followed by the bits.
var codeNames = [...]string{
	Int:          "int",
	UInt:         "uint",
	Float:        "float",
	OpaqueHandle: "handle",
	Bfloat:       "bfloat",
	Complex:      "complex",
	Bool:         "bool",
}

// DType is the type of a tensor's elements: a code, the number of bits of
// one lane and the number of lanes of a vector element (1 for scalars). It
// has the memory layout of DLPack's DLDataType.
type DType struct {
	Code  Code
	Bits  uint8
	Lanes uint16
}

// The predeclared scalar types.
var (
	Int8    = DType{Int, 8, 1}
	Int16   = DType{Int, 16, 1}
	Int32   = DType{Int, 32, 1}
	Int64   = DType{Int, 64, 1}
	Uint8   = DType{UInt, 8, 1}
	Uint16  = DType{UInt, 16, 1}
	Uint32  = DType{UInt, 32, 1}
	Uint64  = DType{UInt, 64, 1}
	Float16 = DType{Float, 16, 1}
	Float32 = DType{Float, 32, 1}
	Float64 = DType{Float, 64, 1}
	Boolean = DType{Bool, 8, 1} // DLPack's bool: one byte per element
)

// knownDTypes lists the names ParseDType suggests when it fails.
const knownDTypes = "int8, int16, int32, int64, uint8, uint16, uint32, uint64, " +
	"float16, float32, float64, bfloat16, complex64, complex128, bool; " +
	"xN appended for N lanes, as in float32x4"

// genericDType is the form String uses for types it has no name for.
const genericDType = "dtype(code=%d,bits=%d,lanes=%d)"

// Size returns the number of bytes one element takes: Bits*Lanes rounded
// up to whole bytes. It is 0 for a type without bits or lanes.
func (d DType) Size() int {
	return (int(d.Bits)*int(d.Lanes) + 7) / 8
}

// Known reports whether d is a type this package names: a DLPack type
// code it knows, with bits that code has and at least one lane. Data of
// another type cannot be sized, read or converted, so loaders refuse it
// where it enters.
func (d DType) Known() bool {
	return int(d.Code) < len(codeNames) && d.Lanes > 0 && namedBits(d.Code, d.Bits)
}

// String returns the type's name: the code's name and the bits, as in
// "uint8", "float32", "bfloat16" and "complex64", or just "bool" for
// booleans; vectors append their lanes, as in "float32x4". A type without
// a name reads as in "dtype(code=9,bits=8,lanes=1)".
func (d DType) String() string {
	if int(d.Code) >= len(codeNames) || d.Lanes == 0 || !namedBits(d.Code, d.Bits) {
		return fmt.Sprintf(genericDType, d.Code, d.Bits, d.Lanes)
	}
	s := codeNames[d.Code]
	if d.Code != Bool {
		s += strconv.Itoa(int(d.Bits))
	}
	if d.Lanes > 1 {
		s += "x" + strconv.Itoa(int(d.Lanes))
	}
	return s
}

// ParseDType returns the type String names s, accepting every form String
// returns.
func ParseDType(s string) (DType, error) {
	if strings.HasPrefix(s, "dtype(") {
		var c, b, l int
		_, err := fmt.Sscanf(s, genericDType, &c, &b, &l)
		if err == nil && fmt.Sprintf(genericDType, c, b, l) == s &&
			c >= 0 && c <= 0xff && b >= 0 && b <= 0xff && l >= 0 && l <= 0xffff {
			return DType{Code(c), uint8(b), uint16(l)}, nil
		}
		return DType{}, invalidf("malformed dtype %q, want the form %q", s, genericDType)
	}
	name, lanes := s, uint64(1)
	if i := strings.LastIndexByte(s, 'x'); i > 0 && (isDigit(s[i-1]) || s[:i] == "bool") {
		n, ok := parseCount(s[i+1:], 16)
		if !ok {
			return DType{}, invalidf("dtype %q has malformed lanes %q", s, s[i+1:])
		}
		name, lanes = s[:i], n
	}
	digits := strings.IndexAny(name, "0123456789")
	if digits < 0 {
		digits = len(name)
	}
	for c, cn := range codeNames {
		if cn != name[:digits] {
			continue
		}
		if Code(c) == Bool {
			if digits == len(name) {
				return DType{Bool, 8, uint16(lanes)}, nil
			}
			break
		}
		if bits, ok := parseCount(name[digits:], 8); ok && namedBits(Code(c), uint8(bits)) {
			return DType{Code(c), uint8(bits), uint16(lanes)}, nil
		}
		break
	}
	return DType{}, invalidf("unknown dtype %q (known: %s)", s, knownDTypes)
}

// MarshalText returns the type's String, so that the type reads as "uint8"
// in JSON and other text encodings.
func (d DType) MarshalText() ([]byte, error) {
	return []byte(d.String()), nil
}

// UnmarshalText sets d to the type ParseDType reads from text.
func (d *DType) UnmarshalText(text []byte) error {
	v, err := ParseDType(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// namedBits reports whether a type of code with bits has a name: the
// widths machines have (int4…int64, float8…float64, bfloat16, complex64
// and complex128, bool as a byte). Other widths read in the generic form.
func namedBits(c Code, bits uint8) bool {
	switch c {
	case Int, UInt:
		return bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64
	case Float:
		return bits == 8 || bits == 16 || bits == 32 || bits == 64
	case Bfloat:
		return bits == 16
	case Complex:
		return bits == 64 || bits == 128
	case OpaqueHandle:
		return bits == 64
	case Bool:
		return bits == 8
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseCount parses a positive decimal number of at most bitSize bits,
// written without sign or leading zeros.
func parseCount(s string, bitSize int) (uint64, bool) {
	if s == "" || s[0] == '0' || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, bitSize)
	return n, err == nil
}

// Number is the set of Go element types with a DType; see [DTypeOf].
type Number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint |
		~float32 | ~float64
}

// DTypeOf returns the DType of Go's T, as in DTypeOf[float32]() ==
// Float32. int and uint map by their size: to Int64 and Uint64 on 64-bit
// targets.
func DTypeOf[T Number]() DType {
	var zero T
	one := T(1)
	bits := uint8(8 * unsafe.Sizeof(zero))
	switch {
	case one/2 != 0: // only floating-point division keeps the half
		return DType{Float, bits, 1}
	case zero-one < zero: // only signed subtraction goes below zero
		return DType{Int, bits, 1}
	}
	return DType{UInt, bits, 1}
}
