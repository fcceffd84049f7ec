/* A plugin that links against a library it ships (libmydot.so.0, found
 * through RUNPATH $ORIGIN) and calls its cblas_sdot from register, which
 * logs the result, the plugin's own path (dynop_host.plugin_path) and the
 * first line of the data file DOTPLUGIN_DATA beside it. DOTPLUGIN_ID and
 * DOTPLUGIN_FLAGS vary the plugin; built with -DDOTPLUGIN_HOST and
 * DYNOP_PLUGIN_GLOBAL_SYMBOLS it is the host's library instead: a plugin
 * whose cblas_sdot lands in the process's global scope. */
#include <stdio.h>
#include <string.h>

#include "dynop/dynop.h"

#ifndef DOTPLUGIN_ID
#define DOTPLUGIN_ID "test.plugin.dot"
#endif
#ifndef DOTPLUGIN_FLAGS
#define DOTPLUGIN_FLAGS 0
#endif
#define DOTPLUGIN_DATA "dotplugin.txt"

#define DOT_UID DYNOP_UID(0x5E7A11D0, 0x0D07, 0x4B1A, 0x9C, 0x25, 0x00, 0x00, 0x00, 0x00, 0xD0, 0x70)
typedef struct dot_iface {
    dynop_header header;
    float (*sdot)(int n, const float *x, const float *y);
} dot_iface;

float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);

#ifdef DOTPLUGIN_HOST
/* The host's copy of the symbol, exported from a global plugin. */
__attribute__((visibility("default"))) float cblas_sdot(int n, const float *x, int incx, const float *y, int incy) {
    float sum = 10;
    int i;
    for (i = 0; i < n; i++) sum += x[i * incx] * y[i * incy];
    return sum;
}
#endif

static float sdot(int n, const float *x, const float *y) { return cblas_sdot(n, x, 1, y, 1); }

static const dot_iface table = {DYNOP_HEADER(DOT_UID, DYNOP_V(1, 0, 0), dot_iface), sdot};
static const dynop_interface_desc desc = DYNOP_INTERFACE_DESC(DOT_UID, DYNOP_V(1, 0, 0), "test.Dot");
static const dynop_interface_desc *const provides[] = {&desc};
static const dynop_plugin_info info = {DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, DOTPLUGIN_ID, DYNOP_V(1, 0, 0),
                                       "calls a library it ships", NULL, NULL, DOTPLUGIN_FLAGS, 1, provides, 0, NULL,
                                       NULL, 0, NULL, 0, NULL};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result reg(const dynop_host *host) {
    static const float x[] = {1, 2, 3}, y[] = {4, 5, 6};
    char msg[1024], data[128] = "";
    const char *path = DYNOP_HOST_HAS_PLUGIN_PATH(host) ? host->plugin_path : NULL;
    if (path != NULL) {
        char beside[900];
        const char *slash = strrchr(path, '/');
        FILE *f;
        snprintf(beside, sizeof beside, "%.*s/%s", slash != NULL ? (int)(slash - path) : 0, path, DOTPLUGIN_DATA);
        f = fopen(beside, "r");
        if (f != NULL) {
            if (fgets(data, sizeof data, f) == NULL) data[0] = 0;
            data[strcspn(data, "\n")] = 0;
            fclose(f);
        }
    }
    snprintf(msg, sizeof msg, "sdot=%g path=%s data=%s", (double)sdot(3, x, y), path != NULL ? path : "(none)", data);
    host->log(host, DYNOP_LOG_INFO, msg);
    return host->add_interface(host, &table);
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)reg;
    return NULL;
}
