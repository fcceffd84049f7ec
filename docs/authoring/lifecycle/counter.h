/*
 * counter.h — the interface acme.example.Counter, version 1.0: what the
 * plugin acme.plugin.counter (lifecycle.c) provides and its callers use.
 */
#ifndef ACME_COUNTER_H
#define ACME_COUNTER_H

#include <stddef.h>
#include <stdint.h>

#include <dynop/dynop.h>

#define ACME_COUNTER_PLUGIN "acme.plugin.counter"
#define ACME_COUNTER_UID                                                      \
    DYNOP_UID(0x438EC2C4, 0x66CF, 0x445A, 0xAE, 0x02, 0xD4, 0x0A, 0x73, 0x2A, 0x05, 0xC3)
#define ACME_COUNTER_NAME "acme.example.Counter"
#define ACME_COUNTER_VERSION DYNOP_V(1, 0, 0)

/* Both functions are safe to call from several threads at once. */
typedef struct acme_counter {
    dynop_header header; /* ACME_COUNTER_UID, ACME_COUNTER_VERSION */
    /* returns 1, 2, 3, ...: how often it was called since the plugin started */
    uint64_t (*next)(void);
    /* returns the sum of x[i] * x[i], computed by dynop.example.VecMath */
    float (*norm2)(const float *x, size_t n);
} acme_counter;

#endif
