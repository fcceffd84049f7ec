// Package rawcall makes raw cgo calls, the floor that benchmarks of calls
// through native plugins are measured against. Nop is compiled from the
// same source as the nop of the example plugin dynop.plugin.vecmath; Gray
// calls a grayscale kernel of the example plugin dynop.plugin.imgproc
// directly, found with dlsym; Sgemm calls OpenBLAS's cblas_sgemm, which the
// example plugin dynop.plugin.blas wraps, found the same way.
package rawcall

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

static void nop(void) {}
static void nop2(void *a, void *b) { (void)a; (void)b; }

typedef void (*gray_u8_fn)(const uint8_t *, int64_t, int64_t, int64_t, int64_t, int64_t, uint8_t *, int64_t, int64_t);

static void call_gray_u8(void *fn, const uint8_t *src, int64_t h, int64_t w, int64_t sy, int64_t sx, int64_t sc,
                         uint8_t *dst, int64_t dy, int64_t dx) {
    ((gray_u8_fn)fn)(src, h, w, sy, sx, sc, dst, dy, dx);
}

// cblas_sgemm's type, CBLAS's enums as the ints they are: 101 is
// CblasRowMajor, 111 CblasNoTrans, 112 CblasTrans.
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                         int);

static void call_sgemm(void *fn, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                       const float *b, int ldb, float beta, float *c, int ldc) {
    ((sgemm_fn)fn)(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void *symbol(const char *path, const char *name) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    return lib ? dlsym(lib, name) : NULL;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Nop calls an empty C function directly through cgo.
func Nop() { C.nop() }

// Nop2 calls an empty C function with two pointers, as an operator's
// call must pass its input's and output's data: with cgo's pointer checks
// on (GODEBUG=cgocheck=1, the default), each Go pointer is checked.
func Nop2(a, b unsafe.Pointer) { C.nop2(a, b) }

// Symbol opens the shared library at path (it stays open) and returns the
// address of its exported symbol name.
func Symbol(path, name string) (unsafe.Pointer, error) {
	cpath, cname := C.CString(path), C.CString(name)
	defer C.free(unsafe.Pointer(cpath))
	defer C.free(unsafe.Pointer(cname))
	p := C.symbol(cpath, cname)
	if p == nil {
		return nil, fmt.Errorf("rawcall: no symbol %s in %s", name, path)
	}
	return p, nil
}

// GrayU8 calls the kernel dynop_imgproc_gray_u8 at fn on an h×w image with
// c channels stored compactly in src, writing h×w bytes to dst.
func GrayU8(fn unsafe.Pointer, src []uint8, h, w, c int, dst []uint8) {
	C.call_gray_u8(fn, (*C.uint8_t)(&src[0]), C.int64_t(h), C.int64_t(w), C.int64_t(w*c), C.int64_t(c), 1,
		(*C.uint8_t)(&dst[0]), C.int64_t(w), 1)
}

// Sgemm calls cblas_sgemm at fn (see [Symbol]) row-major, C = alpha·op(A)·op(B)
// + beta·C, with op(X) X or its transpose as transA and transB say. The
// caller checks the sizes: they go to OpenBLAS as they are.
func Sgemm(fn unsafe.Pointer, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := C.int(0), C.int(0)
	if transA {
		ta = 1
	}
	if transB {
		tb = 1
	}
	C.call_sgemm(fn, ta, tb, C.int(m), C.int(n), C.int(k), C.float(alpha), (*C.float)(unsafe.SliceData(a)), C.int(lda),
		(*C.float)(unsafe.SliceData(b)), C.int(ldb), C.float(beta), (*C.float)(unsafe.SliceData(c)), C.int(ldc))
}
