// Package blas declares the dynop.blas.BLAS interface — sgemm, saxpy and
// sdot on float32 — binds native implementations of it to Go, and
// describes the example native plugin dynop.plugin.blas, which provides
// it by wrapping OpenBLAS. The plugin is built from c/blas.c into
// libdynop_blas.so (make plugins, where OpenBLAS's cblas.h is installed:
// apt-get install libopenblas-dev) and links libopenblas.so.0.
//
// The interface is a C struct of function pointers, defined in blas.h:
// numpy's idea of a BLAS chosen at run time, behind a table its callers
// name rather than link. Go code acquires it as a [BLAS]:
//
//	m, ref, err := dynop.Acquire(ctx, host, blas.PluginID, blas.Interface)
//
// A call is one cgo call to a C trampoline that calls through the table,
// which calls OpenBLAS: no reflection, no allocation. Every size is
// checked in Go first, and a bad one is an error that says what is wrong;
// none reaches OpenBLAS, which would print to stderr and return. Matrices
// are row-major, as CBLAS's CblasRowMajor: element (i, j) of a matrix with
// leading dimension ld is at index i*ld + j.
//
// [MatMul] (transpose_a and transpose_b, default false; alpha, default 1,
// a finite float32; activation, "none" or "relu", default "none")
// multiplies float32 matrices: out = act(alpha·op(a)·op(b) + bias), where
// op(x) is x, or its transpose where transpose_x is set, op(a) is M×K and
// op(b) K×N, and the optional third input bias is a vector of N values
// added to each row. The product is OpenBLAS's cblas_sgemm (beta 0; an
// empty sum, K = 0, is 0); the epilogue, which BLAS has no routine for, is
// the plugin's own, per element act(p + bias[j]) with one float32
// addition, and relu(x) = x < 0 ? 0 : x (NaN and -0 kept). The epilogue
// comes in three variants, "avx512" (AVX-512 F), "avx2" and "scalar", the
// reference, which compute the same bits; on other architectures than x86
// only "scalar" is built. Inputs of any strides are taken: BLAS reads
// row-major and column-major matrices in place, and run copies any other
// into compact memory first. Against a float64 triple loop of the same
// float32 values, each element is within (K+5)·2⁻²⁴·(Σ_k |alpha·a_ik·b_kj|
// + |bias_j|), the bound of any float32 summation order
// (TestMatMulMatchesReference), and within twice that bound of NumPy's
// float32 matmul and of OpenCV's cv2.gemm (TestMatMulMatchesOpenCV).
package blas

/*
#cgo CFLAGS: -I${SRCDIR}/../../abi/include
#include "blas.h"

static dynop_result blas_sgemm(const dynop_blas *t, int32_t ta, int32_t tb, int32_t m, int32_t n, int32_t k,
                               float alpha, const float *a, int32_t lda, const float *b, int32_t ldb, float beta,
                               float *c, int32_t ldc) {
    return t->sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
static void blas_saxpy(const dynop_blas *t, int32_t n, float alpha, const float *x, float *y) { t->saxpy(n, alpha, x, y); }
static float blas_sdot(const dynop_blas *t, int32_t n, const float *x, const float *y) { return t->sdot(n, x, y); }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/loader/native"
)

// PluginID is the ID of the C plugin that provides the interface.
const PluginID = "dynop.plugin.blas"

// MatMul is the plugin's operator: act(alpha·op(a)·op(b) + bias) on
// float32 matrices, the product by OpenBLAS.
const MatMul = "blas.MatMul"

// BLAS is single-precision BLAS on float32 slices. Implementations are
// safe for concurrent use. A method that returns an error has done
// nothing.
type BLAS interface {
	// Sgemm sets C = alpha·op(A)·op(B) + beta·C, row-major, where op(X)
	// is X, or its transpose if transX; op(A) is m×k, op(B) k×n, C m×n.
	// A is stored m×k with lda ≥ max(1, k), or k×m with lda ≥ max(1, m) if
	// transA; B is k×n with ldb ≥ max(1, n), or n×k with ldb ≥ max(1, k)
	// if transB; ldc ≥ max(1, n). Each slice must hold its matrix:
	// (rows-1)·ld + columns elements, none for an empty matrix.
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error
	// Saxpy sets y[i] = alpha·x[i] + y[i]; x and y must have the same
	// length.
	Saxpy(alpha float32, x, y []float32) error
	// Sdot returns the sum of x[i]·y[i]; x and y must have the same
	// length.
	Sdot(x, y []float32) (float32, error)
}

// Interface is the dynop.blas.BLAS interface, version 1.0.
var Interface = iface.Define[BLAS]("4B1A5C0E-7D39-4E82-9F16-2A8C3B5D7E91", "dynop.blas.BLAS", iface.V(1, 0, 0))

// ErrArgument is what every error of a [BLAS] method wraps: an argument
// the routine cannot take.
var ErrArgument = errors.New("blas: bad argument")

func init() { native.RegisterBinding(Interface.UID, Bind) }

// Bind returns the BLAS that calls the functions of table t, after
// checking its type, version, size and that no function is NULL. The
// native loader calls it for every plugin that adds the interface.
func Bind(t native.Table) (any, error) {
	if err := t.Check(Interface.Desc, C.sizeof_dynop_blas); err != nil {
		return nil, err
	}
	if err := t.CheckFunctions(Interface.Desc, "sgemm", "saxpy", "sdot"); err != nil {
		return nil, err
	}
	return table{(*C.dynop_blas)(t.Pointer())}, nil
}

// table is a native implementation of BLAS.
type table struct{ t *C.dynop_blas }

var _ native.Exported = table{}

func (v table) NativeTable() native.Table { return native.TableAt(unsafe.Pointer(v.t)) }

func (v table) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if err := checkSgemm(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return err
	}
	return v.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemm calls the table's sgemm without Sgemm's checks: the table's own
// must refuse what they would.
func (v table) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	rc := C.blas_sgemm(v.t, cBool(transA), cBool(transB), C.int32_t(m), C.int32_t(n), C.int32_t(k), C.float(alpha),
		cFloats(a), C.int32_t(lda), cFloats(b), C.int32_t(ldb), C.float(beta), cFloats(c), C.int32_t(ldc))
	if rc != 0 {
		return fmt.Errorf("%w: Sgemm: the plugin refused the sizes (result %d)", ErrArgument, int(rc))
	}
	return nil
}

func (v table) Saxpy(alpha float32, x, y []float32) error {
	if err := checkVectors("Saxpy", len(x), len(y)); err != nil {
		return err
	}
	C.blas_saxpy(v.t, C.int32_t(len(x)), C.float(alpha), cFloats(x), cFloats(y))
	return nil
}

func (v table) Sdot(x, y []float32) (float32, error) {
	if err := checkVectors("Sdot", len(x), len(y)); err != nil {
		return 0, err
	}
	return float32(C.blas_sdot(v.t, C.int32_t(len(x)), cFloats(x), cFloats(y))), nil
}

// cFloats passes a Go slice's array to C for the duration of one call,
// which cgo's pointer rules allow: float32s hold no Go pointers.
func cFloats(x []float32) *C.float { return (*C.float)(unsafe.SliceData(x)) }

func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// checkVectors checks the lengths of op's x and y.
func checkVectors(op string, nx, ny int) error {
	if nx != ny {
		return fmt.Errorf("%w: %s: len(x) = %d, len(y) = %d: want the same length", ErrArgument, op, nx, ny)
	}
	if nx > math.MaxInt32 {
		return fmt.Errorf("%w: %s: %d elements; BLAS takes at most %d", ErrArgument, op, nx, math.MaxInt32)
	}
	return nil
}

// checkSgemm checks Sgemm's sizes as CBLAS would, and the slices'
// lengths (na, nb, nc), which CBLAS cannot.
func checkSgemm(transA, transB bool, m, n, k, na, lda, nb, ldb, nc, ldc int) error {
	for _, s := range []struct {
		name string
		v    int
	}{{"m", m}, {"n", n}, {"k", k}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}} {
		if s.v < 0 {
			return fmt.Errorf("%w: Sgemm: %s = %d is negative", ErrArgument, s.name, s.v)
		}
		if s.v > math.MaxInt32 {
			return fmt.Errorf("%w: Sgemm: %s = %d; BLAS takes at most %d", ErrArgument, s.name, s.v, math.MaxInt32)
		}
	}
	ar, ac, adesc := m, k, "m×k"
	if transA {
		ar, ac, adesc = k, m, "k×m (transA)"
	}
	br, bc, bdesc := k, n, "k×n"
	if transB {
		br, bc, bdesc = n, k, "n×k (transB)"
	}
	if err := checkMatrix("a", adesc, ar, ac, na, "lda", lda); err != nil {
		return err
	}
	if err := checkMatrix("b", bdesc, br, bc, nb, "ldb", ldb); err != nil {
		return err
	}
	return checkMatrix("c", "m×n", m, n, nc, "ldc", ldc)
}

// checkMatrix checks that a slice of length have holds a rows×cols
// row-major matrix with leading dimension ld.
func checkMatrix(name, desc string, rows, cols, have int, ldName string, ld int) error {
	if ld < max(1, cols) {
		return fmt.Errorf("%w: Sgemm: %s = %d is less than max(1, %d), the columns of %s, stored %s = %dx%d", ErrArgument, ldName, ld, cols, name, desc, rows, cols)
	}
	need := 0
	if rows > 0 && cols > 0 {
		need = (rows-1)*ld + cols
	}
	if have < need {
		return fmt.Errorf("%w: Sgemm: len(%s) = %d, want at least %d for %s = %dx%d with %s = %d", ErrArgument, name, have, need, desc, rows, cols, ldName, ld)
	}
	return nil
}
