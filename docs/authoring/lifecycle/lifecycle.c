/*
 * lifecycle.c — the native plugin acme.plugin.counter, which provides
 * acme.example.Counter (counter.h) on top of dynop.example.VecMath from
 * the plugin dynop.plugin.vecmath.
 *
 * The host reads get_info without starting the plugin. The first request
 * for the counter loads the library and calls register, which acquires
 * VecMath (starting its plugin first). When the last reference goes, the
 * host calls deregister, unloads the library, and only then lets VecMath go.
 */
#include <string.h>

#include "counter.h"
#include "vecmath.h" /* dynop.example.VecMath: plugins/vecmath/vecmath.h */

/* Static data lives while the library is loaded: every start begins
 * afresh, because the host unloads the library when the plugin stops. */
static uint64_t calls;
static const dynop_vecmath *vecmath; /* valid while vecmath_ref is held */
static dynop_ref vecmath_ref;

/* Interface functions run on many threads at once: no unguarded state. */
static uint64_t next(void) { return __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED); }
static float norm2(const float *x, size_t n) { return vecmath->dot(x, x, n); }

/* What the host may read until the library is unloaded: static const. */
static const acme_counter counter = {
    DYNOP_HEADER(ACME_COUNTER_UID, ACME_COUNTER_VERSION, acme_counter), next, norm2,
};
static const dynop_interface_desc counter_desc =
    DYNOP_INTERFACE_DESC(ACME_COUNTER_UID, ACME_COUNTER_VERSION, ACME_COUNTER_NAME);
static const dynop_interface_desc vecmath_desc =
    DYNOP_INTERFACE_DESC(DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION, DYNOP_VECMATH_NAME);
static const dynop_need vecmath_need = DYNOP_NEED(DYNOP_VECMATH_PLUGIN, &vecmath_desc);
static const dynop_interface_desc *const provides[] = {&counter_desc};
static const dynop_need *const needs[] = {&vecmath_need};
static const dynop_plugin_info info = {
    .header = DYNOP_PLUGIN_INFO_HEADER,
    .api_version = DYNOP_API_VERSION,
    .id = ACME_COUNTER_PLUGIN,
    .plugin_version = DYNOP_V(1, 0, 0),
    .description = "Counts calls: the lifecycle example of docs/authoring.md.",
    .interface_count = 1, .interfaces = provides, /* what register adds */
    .need_count = 1, .needs = needs,               /* what register acquires */
};

/* get_info: cheap, and never calls into the host. */
static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    const void *table = NULL;
    dynop_result rc;
    host->log(host, DYNOP_LOG_INFO, "register");
    rc = host->acquire(host, DYNOP_VECMATH_PLUGIN, &vecmath_desc.uid, vecmath_desc.version, &table, &vecmath_ref);
    if (rc != DYNOP_OK) {
        /* Say why and fail: the host undoes what register did, and
         * unloads the library without calling deregister. */
        host->set_error(host, host->last_error(host));
        return rc;
    }
    vecmath = (const dynop_vecmath *)table;
    return host->add_interface(host, &counter);
}

static dynop_result deregister_plugin(const dynop_host *host) {
    host->log(host, DYNOP_LOG_INFO, "deregister");
    /* Takes effect once the library is unloaded: VecMath outlives our code. */
    return host->release(host, vecmath_ref);
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    if (strcmp(name, "deregister") == 0) return (dynop_function)deregister_plugin;
    return NULL;
}
