/*
 * blas.h — the dynop.blas.BLAS interface: three BLAS routines on float32
 * (single precision) as a table of function pointers, chosen at run time
 * the way numpy chooses its BLAS: callers name the interface, and whichever
 * plugin provides it does the work.
 *
 * Provider: the C plugin dynop.plugin.blas (c/blas.c), which calls
 * OpenBLAS through its CBLAS interface (cblas.h). Users: Go code through
 * the binding in blas.go, and any native plugin that acquires the table.
 *
 * Matrices are row-major, as in CBLAS with CblasRowMajor: element (i, j)
 * of a matrix with leading dimension ld is at p[i*ld + j]. Sizes are
 * int32_t, as CBLAS's int (OpenBLAS built without INTERFACE64).
 */
#ifndef DYNOP_BLAS_BLAS_H
#define DYNOP_BLAS_BLAS_H

#include <dynop/dynop.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interface UID, name and version. Version 1.0 has every member below;
 * members added later bump the minor version and go at the end. */
#define DYNOP_BLAS_UID                                                        \
    DYNOP_UID(0x4B1A5C0E, 0x7D39, 0x4E82, 0x9F, 0x16, 0x2A, 0x8C, 0x3B, 0x5D, 0x7E, 0x91)
#define DYNOP_BLAS_NAME "dynop.blas.BLAS"
#define DYNOP_BLAS_VERSION DYNOP_V(1, 0, 0)

/* The ID of the C plugin that provides it. */
#define DYNOP_BLAS_PLUGIN "dynop.plugin.blas"

/* The functions are thread-safe. Arrays must not overlap, except that x
 * and y of sdot may be the same array. */
typedef struct dynop_blas {
    dynop_header header; /* DYNOP_BLAS_UID, DYNOP_BLAS_VERSION */
    /* C = alpha * op(A) * op(B) + beta * C, row-major, where op(X) is X, or
     * its transpose if trans_x is 1. op(A) is m x k, op(B) k x n, C m x n:
     * A is stored m x k with lda >= max(1, k), or k x m with lda >= max(1, m)
     * if trans_a; B is k x n with ldb >= max(1, n), or n x k with
     * ldb >= max(1, k) if trans_b; ldc >= max(1, n). Returns DYNOP_OK, or
     * DYNOP_ERROR_INVALID_ARGUMENT without touching C where a trans flag is
     * not 0 or 1, a size is negative or a leading dimension too small: the
     * cases in which CBLAS itself would print an error and return. */
    dynop_result (*sgemm)(int32_t trans_a, int32_t trans_b, int32_t m, int32_t n, int32_t k, float alpha,
                          const float *a, int32_t lda, const float *b, int32_t ldb, float beta, float *c,
                          int32_t ldc);
    /* y[i] = alpha * x[i] + y[i] for i < n; nothing if n <= 0. */
    void (*saxpy)(int32_t n, float alpha, const float *x, float *y);
    /* returns the sum of x[i] * y[i] for i < n; 0 if n <= 0. */
    float (*sdot)(int32_t n, const float *x, const float *y);
} dynop_blas;

#ifdef __cplusplus
}
#endif

#endif
