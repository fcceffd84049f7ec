package npy_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/plugins/npy"
	"github.com/dynop/dynop/tensor"
)

func TestHeader(t *testing.T) {
	for _, c := range []struct {
		dt    tensor.DType
		shape []int64
		dict  string
	}{
		{tensor.Float32, []int64{2, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
		{tensor.Uint8, []int64{5}, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"},
		{tensor.Int64, nil, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"},
		{tensor.Boolean, []int64{1, 1, 1}, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 1, 1), }"},
		{tensor.Float16, []int64{4}, "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }"},
	} {
		h, err := npy.Header(c.dt, c.shape)
		if err != nil {
			t.Fatalf("Header(%s, %v): %v", c.dt, c.shape, err)
		}
		n := int(binary.LittleEndian.Uint16(h[8:10]))
		if !bytes.HasPrefix(h, []byte("\x93NUMPY\x01\x00")) || len(h)%64 != 0 || n != len(h)-10 || h[len(h)-1] != '\n' {
			t.Errorf("Header(%s, %v) = %q: want the magic, version 1.0, a length to a multiple of 64 and a newline last", c.dt, c.shape, h)
		}
		if got := strings.TrimRight(string(h[10:]), " \n"); got != c.dict {
			t.Errorf("Header(%s, %v) dict %q, want %q", c.dt, c.shape, got, c.dict)
		}
	}
	bf16 := tensor.DType{Code: tensor.Bfloat, Bits: 16, Lanes: 1}
	if _, err := npy.Header(bf16, []int64{1}); !errors.Is(err, npy.ErrDType) {
		t.Errorf("Header(bfloat16): %v, want ErrDType", err)
	}
	if _, err := npy.Header(tensor.DType{Code: tensor.Float, Bits: 32, Lanes: 4}, []int64{1}); !errors.Is(err, npy.ErrDType) || !strings.Contains(err.Error(), "4 lanes") {
		t.Errorf("Header(float32x4): %v, want ErrDType naming the lanes", err)
	}
}

// encode runs npy.Encode on x and returns the file's bytes.
func encode(t *testing.T, x *tensor.Tensor) ([]byte, error) {
	t.Helper()
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{npy.New()}, NoRegistered: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	in, err := h.NewOperator(ctx, npy.Encode, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	b, _ := tensor.NewBatch(x)
	outs, err := in.Exec(ctx, b)
	if err != nil {
		return nil, err
	}
	return outs[0].Sample(0).Bytes()
}

// TestEncode: a strided view is written in C order, after its header;
// NumPy, where it is installed, loads the file back.
func TestEncode(t *testing.T) {
	x, err := tensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	xt, err := x.Permute(1, 0) // 3x2, not contiguous
	if err != nil {
		t.Fatal(err)
	}
	file, err := encode(t, xt)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := npy.Header(tensor.Float32, []int64{3, 2})
	want := append(h, le32(1, 4, 2, 5, 3, 6)...)
	if !bytes.Equal(file, want) {
		t.Fatalf("npy.Encode wrote %q, want %q", file, want)
	}
	python := "/usr/bin/python3"
	if exec.Command(python, "-c", "import numpy").Run() != nil {
		t.Skip("no NumPy (apt-get install python3-numpy): the file is not loaded back")
	}
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "-c", "import numpy, sys; a = numpy.load(sys.argv[1]); print(a.dtype, a.shape, a.tolist())", path).CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != "float32 (3, 2) [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]" {
		t.Errorf("numpy.load: %v, %q", err, got)
	}
}

func TestEncodeRefusesDTypes(t *testing.T) {
	x, err := tensor.New(tensor.DType{Code: tensor.Bfloat, Bits: 16, Lanes: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = encode(t, x)
	if !errors.Is(err, op.ErrInput) || !errors.Is(err, npy.ErrDType) || !strings.Contains(err.Error(), "sample 0") {
		t.Errorf("encoding bfloat16: %v", err)
	}
}

func le32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		x, _ := tensor.FromSlice([]float32{v}, 1)
		d, _ := x.Bytes()
		b = append(b, d...)
	}
	return b
}
