// Package engines holds the cgo halves of BenchmarkWasmEngines and
// BenchmarkWasmCall16 (bench/wasmengines_test.go), which test files cannot
// hold: calls into the native build of bench/testdata/engines.c (imgproc's
// kernels as plain functions), C memory for their images, and Wasmtime's
// unchecked call path (wasmtime_func_call_unchecked), called from C with
// the store's epoch deadline set in the same cgo call.
package engines

/*
#include <stdint.h>
#include <stdlib.h>

typedef int32_t (*eng_img_fn)(const uint8_t *, uint8_t *, int32_t, int32_t, int32_t, int32_t);
typedef int32_t (*eng_blur_fn)(const uint8_t *, uint8_t *, int32_t, int32_t, int32_t, float, int32_t);
typedef int32_t (*eng_resize_fn)(const uint8_t *, uint8_t *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t);
typedef void (*eng_saxpy_fn)(float, const float *, const float *, float *, int32_t);

static int32_t eng_call_img(void *fn, const void *in, void *out, int32_t w, int32_t h, int32_t c, int32_t variant) {
    return ((eng_img_fn)fn)((const uint8_t *)in, (uint8_t *)out, w, h, c, variant);
}

static int32_t eng_call_blur(void *fn, const void *in, void *out, int32_t w, int32_t h, int32_t c, float sigma,
                             int32_t variant) {
    return ((eng_blur_fn)fn)((const uint8_t *)in, (uint8_t *)out, w, h, c, sigma, variant);
}

static int32_t eng_call_resize(void *fn, const void *in, void *out, int32_t w, int32_t h, int32_t c, int32_t ow,
                               int32_t oh, int32_t variant) {
    return ((eng_resize_fn)fn)((const uint8_t *)in, (uint8_t *)out, w, h, c, ow, oh, variant);
}

static void eng_call_saxpy(void *fn, float a, const void *x, const void *y, void *out, int32_t n) {
    ((eng_saxpy_fn)fn)(a, (const float *)x, (const float *)y, (float *)out, n);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/dynop/dynop/internal/rawcall"
)

// Variants of the native kernels: imgproc's scalar reference and its
// AVX2 and AVX-512 variants (call those only where the CPU has them).
const (
	Scalar = 0
	AVX2   = 1
	AVX512 = 2
)

// Native is the native build of engines.c, opened with dlopen.
type Native struct {
	gray, blur, sobel, resize, saxpy unsafe.Pointer
}

// OpenNative opens the shared library at path (it stays open) and finds
// its kernels.
func OpenNative(path string) (*Native, error) {
	n := &Native{}
	for _, s := range []struct {
		name string
		p    *unsafe.Pointer
	}{{"eng_gray_u8", &n.gray}, {"eng_blur_u8", &n.blur}, {"eng_sobel_u8", &n.sobel}, {"eng_resize_u8", &n.resize}, {"eng_saxpy", &n.saxpy}} {
		p, err := rawcall.Symbol(path, s.name)
		if err != nil {
			return nil, err
		}
		*s.p = p
	}
	return n, nil
}

// Gray, Blur, Sobel and Resize run imgproc's kernels on the compact uint8
// HWC image at in (w×h, c channels), writing out (in C memory, see
// [Alloc]); each returns a dynop_result, 0 for success.
func (n *Native) Gray(in, out unsafe.Pointer, w, h, c, variant int) int32 {
	return int32(C.eng_call_img(n.gray, in, out, C.int32_t(w), C.int32_t(h), C.int32_t(c), C.int32_t(variant)))
}

func (n *Native) Blur(in, out unsafe.Pointer, w, h, c int, sigma float32, variant int) int32 {
	return int32(C.eng_call_blur(n.blur, in, out, C.int32_t(w), C.int32_t(h), C.int32_t(c), C.float(sigma), C.int32_t(variant)))
}

func (n *Native) Sobel(in, out unsafe.Pointer, w, h, c, variant int) int32 {
	return int32(C.eng_call_img(n.sobel, in, out, C.int32_t(w), C.int32_t(h), C.int32_t(c), C.int32_t(variant)))
}

func (n *Native) Resize(in, out unsafe.Pointer, w, h, c, ow, oh, variant int) int32 {
	return int32(C.eng_call_resize(n.resize, in, out, C.int32_t(w), C.int32_t(h), C.int32_t(c), C.int32_t(ow), C.int32_t(oh), C.int32_t(variant)))
}

// Saxpy computes out = a·x + y on count float32 in C memory.
func (n *Native) Saxpy(a float32, x, y, out unsafe.Pointer, count int) {
	C.eng_call_saxpy(n.saxpy, C.float(a), x, y, out, C.int32_t(count))
}

// Alloc allocates n bytes of C memory (never moved by Go's collector,
// like a module's linear memory) and returns them as a slice; Free frees
// them.
func Alloc(n int) []byte {
	p := C.malloc(C.size_t(n))
	if p == nil {
		panic(fmt.Sprintf("engines: malloc(%d) failed", n))
	}
	return unsafe.Slice((*byte)(p), n)
}

// Free frees memory from [Alloc].
func Free(b []byte) { C.free(unsafe.Pointer(unsafe.SliceData(b))) }
