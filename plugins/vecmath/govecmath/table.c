/* table.c — the C face of the Go implementation: a dynop_vecmath table
 * whose functions call the Go functions exported in export.go. */
#include "../vecmath.h"
#include "_cgo_export.h"

static void saxpy(float a, const float *x, float *y, size_t n) { govecmathSaxpy(a, (float *)x, y, n); }
static float dot(const float *x, const float *y, size_t n) { return govecmathDot((float *)x, (float *)y, n); }
static void scale(float a, float *x, size_t n) { govecmathScale(a, x, n); }
static void nop(void) { govecmathNop(); }

const dynop_vecmath govecmath_table = {
    DYNOP_HEADER(DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION, dynop_vecmath),
    saxpy, dot, scale, nop,
};
