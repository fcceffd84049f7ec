/*
 * stats.h — the dynop.example.Stats interface: summary statistics of float
 * arrays. Provided by the C++ plugin dynop.plugin.stats (cpp/stats.cpp),
 * which computes them with the dynop.example.VecMath interface it acquires
 * from another plugin.
 */
#ifndef DYNOP_EXAMPLE_STATS_H
#define DYNOP_EXAMPLE_STATS_H

#include <dynop/dynop.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DYNOP_STATS_UID                                                       \
    DYNOP_UID(0x2C7E94B0, 0x5D13, 0x4A86, 0xB7, 0x4F, 0x0E, 0x61, 0x9A, 0x3D, 0xC5, 0x28)
#define DYNOP_STATS_NAME "dynop.example.Stats"
#define DYNOP_STATS_VERSION DYNOP_V(1, 0, 0)

/* Each function takes n > 0 elements; for n == 0 it returns 0. */
typedef struct dynop_stats {
    dynop_header header; /* DYNOP_STATS_UID, DYNOP_STATS_VERSION */
    /* the arithmetic mean */
    float (*mean)(const float *x, size_t n);
    /* the population variance: mean of squares minus squared mean */
    float (*variance)(const float *x, size_t n);
    /* the Euclidean norm, sqrt(x . x) */
    float (*norm)(const float *x, size_t n);
} dynop_stats;

#ifdef __cplusplus
}
#endif

#endif
