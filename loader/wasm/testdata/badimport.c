/*
 * badimport.c — dynop.plugin.badimport, a plugin (linked with
 * abi/wasm/dynop_wasm.c) whose register calls an import the host does not
 * provide, dynop.teleport: instantiating the module fails.
 */
#include <stdint.h>
#include <string.h>

#include <dynop/dynop.h>

__attribute__((import_module("dynop"), import_name("teleport"))) int32_t badimport_teleport(int32_t where);

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER,
    DYNOP_API_VERSION,
    "dynop.plugin.badimport",
    DYNOP_V(1, 0, 0),
    "A WebAssembly test plugin that imports a function no host provides.",
    NULL,
    NULL,
    0,
    0, NULL,
    0, NULL,
    NULL,
    0, NULL,
    0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    (void)host;
    return badimport_teleport(1) == 0 ? DYNOP_OK : DYNOP_ERROR;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
