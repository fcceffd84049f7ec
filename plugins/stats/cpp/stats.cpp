// stats.cpp — dynop.plugin.stats, an example native plugin in C++. It
// provides dynop.example.Stats (../stats.h) and computes it with the
// dynop.example.VecMath interface, which it acquires from another plugin in
// its register: the host starts that plugin first, and stops it only after
// this one. Build: see the Makefile's plugins target (-fno-gnu-unique keeps
// the library unloadable).
//
// Which plugin provides VecMath is fixed at build time:
// -DSTATS_VECMATH_PLUGIN='"dynop.plugin.vecmath.go"' builds a variant over
// the Go implementation; give it another -DSTATS_PLUGIN_ID too.
#include <cmath>
#include <cstring>

#include <dynop/dynop.h>
#include "../stats.h"
#include "../../vecmath/vecmath.h"

#ifndef STATS_PLUGIN_ID
#define STATS_PLUGIN_ID "dynop.plugin.stats"
#endif
#ifndef STATS_VECMATH_PLUGIN
#define STATS_VECMATH_PLUGIN DYNOP_VECMATH_PLUGIN
#endif

namespace {

// What one start of the plugin holds. The host never runs register and
// deregister concurrently, and the interface functions only read it.
struct State {
    const dynop_vecmath *vecmath = nullptr;
    dynop_ref vecmath_ref = 0;
};
State state;

float mean(const float *x, size_t n) {
    if (n == 0) return 0;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return static_cast<float>(s / static_cast<double>(n));
}

float variance(const float *x, size_t n) {
    if (n == 0) return 0;
    const float m = mean(x, n);
    const float meanSquare = state.vecmath->dot(x, x, n) / static_cast<float>(n);
    return meanSquare - m * m;
}

float norm(const float *x, size_t n) {
    return std::sqrt(state.vecmath->dot(x, x, n));
}

const dynop_stats stats = {
    DYNOP_HEADER(DYNOP_STATS_UID, DYNOP_STATS_VERSION, dynop_stats),
    mean, variance, norm,
};

const dynop_interface_desc stats_desc =
    DYNOP_INTERFACE_DESC(DYNOP_STATS_UID, DYNOP_STATS_VERSION, DYNOP_STATS_NAME);
const dynop_interface_desc *const provides[] = {&stats_desc};

const dynop_interface_desc vecmath_desc =
    DYNOP_INTERFACE_DESC(DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION, DYNOP_VECMATH_NAME);
const dynop_need vecmath_need = DYNOP_NEED(STATS_VECMATH_PLUGIN, &vecmath_desc);
const dynop_need *const needs[] = {&vecmath_need};

const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    STATS_PLUGIN_ID,
    DYNOP_V(1, 0, 0),
    "Example C++ plugin: mean, variance and norm, computed with " STATS_VECMATH_PLUGIN ".",
    "dynop",
    nullptr,
    0,
    1, provides,
    1, needs,
    nullptr,
    0, nullptr,
    0, nullptr,
};

const dynop_plugin_info *get_info() { return &info; }

// fail passes the host's explanation of a failed call on as this entry
// point's error.
dynop_result fail(const dynop_host *host, dynop_result rc) {
    host->set_error(host, host->last_error(host));
    return rc;
}

dynop_result register_plugin(const dynop_host *host) {
    const void *vm = nullptr;
    dynop_ref ref = 0;
    const dynop_version need = DYNOP_VECMATH_VERSION;
    dynop_result rc = host->acquire(host, STATS_VECMATH_PLUGIN, &vecmath_desc.uid, need, &vm, &ref);
    if (rc != DYNOP_OK) return fail(host, rc);
    const dynop_vecmath *table = static_cast<const dynop_vecmath *>(vm);
    // Read nothing past the header before checking that the table is
    // large enough (the host checked its UID and version).
    if (!DYNOP_HAS_MEMBER(dynop_vecmath, table, dot)) {
        host->release(host, ref);
        host->set_error(host, "the VecMath table has no dot");
        return DYNOP_ERROR_VERSION;
    }
    state.vecmath = table;
    state.vecmath_ref = ref;
    rc = host->add_interface(host, &stats);
    if (rc != DYNOP_OK) {
        rc = fail(host, rc);
        host->release(host, ref);
        state = State{};
        return rc;
    }
    host->log(host, DYNOP_LOG_DEBUG, "stats: registered over " STATS_VECMATH_PLUGIN);
    return DYNOP_OK;
}

dynop_result deregister_plugin(const dynop_host *host) {
    host->log(host, DYNOP_LOG_DEBUG, "stats: deregistering; releasing " STATS_VECMATH_PLUGIN);
    dynop_result rc = host->release(host, state.vecmath_ref);
    state = State{};
    return rc == DYNOP_OK ? DYNOP_OK : fail(host, rc);
}

} // namespace

extern "C" DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (std::strcmp(name, "get_info") == 0) return reinterpret_cast<dynop_function>(get_info);
    if (std::strcmp(name, "register") == 0) return reinterpret_cast<dynop_function>(register_plugin);
    if (std::strcmp(name, "deregister") == 0) return reinterpret_cast<dynop_function>(deregister_plugin);
    return nullptr;
}
