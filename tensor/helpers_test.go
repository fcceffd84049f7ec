package tensor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynop/dynop/tensor"
)

// wantErr fails t unless err wraps tensor.ErrInvalid and its text contains
// every one of wants.
func wantErr(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", wants)
	}
	if !errors.Is(err, tensor.ErrInvalid) {
		t.Errorf("error %q does not wrap ErrInvalid", err)
	}
	if !strings.HasPrefix(err.Error(), "tensor: ") {
		t.Errorf("error %q does not start with \"tensor: \"", err)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// must returns v, and panics if err is not nil: for calls a test expects
// to succeed.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// values returns the elements of x in row-major order, copying if x is
// not contiguous.
func values[T tensor.Number](t *testing.T, x *tensor.Tensor) []T {
	t.Helper()
	c, err := x.Contiguous()
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensor.Values[T](c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// iota returns n bytes 0, 1, 2, ... (mod 256).
func iota(n int) []uint8 {
	b := make([]uint8, n)
	for i := range b {
		b[i] = uint8(i)
	}
	return b
}
