/*
 * vecmath.h — the dynop.example.VecMath interface: vector math on float
 * arrays as a table of function pointers.
 *
 * Providers: the C plugin dynop.plugin.vecmath (c/vecmath.c) and the Go
 * plugin dynop.plugin.vecmath.go (govecmath/). Users: the C++ plugin
 * dynop.plugin.stats, and Go code through the binding in vecmath.go.
 */
#ifndef DYNOP_EXAMPLE_VECMATH_H
#define DYNOP_EXAMPLE_VECMATH_H

#include <dynop/dynop.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interface UID, name and version. Version 1.0 has every member below;
 * members added later bump the minor version and go at the end. */
#define DYNOP_VECMATH_UID                                                     \
    DYNOP_UID(0x9A3C5E71, 0x0B2D, 0x4F68, 0x8A, 0x1E, 0x3C, 0x5D, 0x7F, 0x90, 0xA2, 0xB4)
#define DYNOP_VECMATH_NAME "dynop.example.VecMath"
#define DYNOP_VECMATH_VERSION DYNOP_V(1, 0, 0)

/* The ID of the C plugin that provides it. */
#define DYNOP_VECMATH_PLUGIN "dynop.plugin.vecmath"

/* The functions take n elements; the arrays must not overlap, except that
 * x and y of dot may be the same array. All are thread-safe. */
typedef struct dynop_vecmath {
    dynop_header header; /* DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION */
    /* y[i] = a * x[i] + y[i] */
    void (*saxpy)(float a, const float *x, float *y, size_t n);
    /* returns the sum of x[i] * y[i] */
    float (*dot)(const float *x, const float *y, size_t n);
    /* x[i] = a * x[i] */
    void (*scale)(float a, float *x, size_t n);
    /* does nothing: a call through the table costs what this costs */
    void (*nop)(void);
} dynop_vecmath;

#ifdef __cplusplus
}
#endif

#endif
