/*
 * vecmath.c — dynop.plugin.vecmath, an example native plugin in C99. It
 * provides the dynop.example.VecMath interface (../vecmath.h) and depends
 * on nothing. Build: see the Makefile's plugins target.
 */
#include <stddef.h>
#include <string.h>

#include <dynop/dynop.h>
#include "../vecmath.h"

static void saxpy(float a, const float *x, float *y, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

static float dot(const float *x, const float *y, size_t n) {
    /* Four partial sums: lets the compiler keep four lanes busy. */
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    for (; i < n; i++) s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}

static void scale(float a, float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) x[i] *= a;
}

static void nop(void) {}

static const dynop_vecmath vecmath = {
    DYNOP_HEADER(DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION, dynop_vecmath),
    saxpy, dot, scale, nop,
};

static const dynop_interface_desc vecmath_desc =
    DYNOP_INTERFACE_DESC(DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION, DYNOP_VECMATH_NAME);
static const dynop_interface_desc *const provides[] = {&vecmath_desc};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    DYNOP_VECMATH_PLUGIN,
    DYNOP_V(1, 0, 0),
    "Example C plugin: saxpy, dot and scale on float arrays.",
    "dynop",
    NULL,
    0,
    1, provides,
    0, NULL,
    NULL,
    0, NULL,
    0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc = host->add_interface(host, &vecmath);
    if (rc != DYNOP_OK) {
        host->set_error(host, host->last_error(host));
        return rc;
    }
    host->log(host, DYNOP_LOG_DEBUG, "vecmath: registered");
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
