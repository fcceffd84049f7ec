/* cachepoison.c: one plugin built twice, with POISON_VALUE 1 and 2: the
 * two modules have the same info and differ only in what poison.Value
 * computes, so that only the compilation cache's check can tell which
 * code runs (cache_test.go). */
#include <stdint.h>
#include <string.h>
#include <dynop/dynop.h>

#ifndef POISON_VALUE
#error "build with -DPOISON_VALUE=N"
#endif

static dynop_result create(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    (void)user; (void)args; (void)n;
    *instance = NULL;
    return DYNOP_OK;
}
static void destroy(void *instance) { (void)instance; }
static dynop_result setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)instance; (void)in;
    if (nin != 0 || nout != 1) return DYNOP_ERROR_INVALID_ARGUMENT;
    out[0].dtype.code = DYNOP_DTYPE_FLOAT; out[0].dtype.bits = 32; out[0].dtype.lanes = 1;
    out[0].ndim = 1;
    out[0].shape[0] = 1;
    return DYNOP_OK;
}
static dynop_result run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    (void)instance; (void)nout; (void)in; (void)nin;
    *(float *)(void *)((char *)out[0].data + out[0].byte_offset) = (float)(POISON_VALUE);
    return DYNOP_OK;
}

static const dynop_op_output y_output[] = {{DYNOP_OP_OUTPUT_HEADER, "y", "the value", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_schema value_schema = {DYNOP_OP_SCHEMA_HEADER, "poison.Value", "the module's value", "cpu", 0, 0, NULL, 1, y_output, 0, NULL};
static const dynop_operator value_op = DYNOP_OPERATOR("poison.Value", "cpu", NULL, create, setup, run, destroy);
static const dynop_op_schema *const operators[] = {&value_schema};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "test.plugin.cachepoison", DYNOP_V(1, 0, 0), "cachepoison", "test", NULL, 0,
    0, NULL, 0, NULL, NULL, 1, operators, 0, NULL,
};
static const dynop_plugin_info *get_info(void) { return &info; }
static dynop_result register_plugin(const dynop_host *host) { return host->register_operator(host, &value_op); }

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
