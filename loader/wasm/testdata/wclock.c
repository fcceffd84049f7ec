/*
 * wclock.c — dynop.plugin.wclock, a WebAssembly test plugin that asks for
 * the capability "clock" (build it with
 * -DDYNOP_WASM_CAPABILITIES='"clock"' and abi/wasm/dynop_wasm.c).
 *
 * It provides the interface dynop.wclock.Sleeper 1.0.0 and nothing else:
 *
 *   nap(ms)            sleeps ms milliseconds (nanosleep: WASI
 *                      poll_oneoff), and returns how many whole
 *                      milliseconds the monotonic clock says passed
 *   sum9(a, …, i)      returns a + … + i: a function of nine parameters,
 *                      one more than a Wasmtime call through dynop takes
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include <stdint.h>
#include <string.h>
#include <time.h>

#include <dynop/dynop.h>

#define WCLOCK_SLEEPER_UID DYNOP_UID(0x7A0F44C2, 0x1D93, 0x4B6E, 0x8C, 0x05, 0x3E, 0x91, 0x6A, 0x27, 0xB4, 0x10)
#define WCLOCK_SLEEPER_VERSION DYNOP_V(1, 0, 0)

typedef struct wclock_sleeper {
    dynop_header header;
    int32_t (*nap)(int32_t ms);
    int32_t (*sum9)(int32_t a, int32_t b, int32_t c, int32_t d, int32_t e, int32_t f, int32_t g, int32_t h,
                    int32_t i);
} wclock_sleeper;

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int32_t sleeper_nap(int32_t ms) {
    struct timespec d;
    int64_t start = now_ms();
    d.tv_sec = ms / 1000;
    d.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&d, NULL);
    return (int32_t)(now_ms() - start);
}

static int32_t sleeper_sum9(int32_t a, int32_t b, int32_t c, int32_t d, int32_t e, int32_t f, int32_t g, int32_t h,
                            int32_t i) {
    return a + b + c + d + e + f + g + h + i;
}

static const wclock_sleeper sleeper = {
    DYNOP_HEADER(WCLOCK_SLEEPER_UID, WCLOCK_SLEEPER_VERSION, wclock_sleeper),
    sleeper_nap,
    sleeper_sum9,
};

static const dynop_interface_desc sleeper_desc =
    DYNOP_INTERFACE_DESC(WCLOCK_SLEEPER_UID, WCLOCK_SLEEPER_VERSION, "dynop.wclock.Sleeper");
static const dynop_interface_desc *const provides[] = {&sleeper_desc};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    "dynop.plugin.wclock",
    DYNOP_V(1, 0, 0),
    "A WebAssembly test plugin: an interface that sleeps on the clock it is granted.",
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

static dynop_result register_plugin(const dynop_host *host) { return host->add_interface(host, &sleeper); }

static dynop_result deregister_plugin(const dynop_host *host) {
    (void)host;
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    if (strcmp(name, "deregister") == 0) return (dynop_function)deregister_plugin;
    return NULL;
}
