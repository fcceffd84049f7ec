/*
 * wregister.c — dynop.plugin.wregister, a WebAssembly test plugin whose
 * register asks the host what a module may not have, as the macro it is
 * built with says:
 *
 *   WREGISTER_GPU      registers wregister.Op for device "gpu"
 *   WREGISTER_AVX      registers it with variants whose last (the
 *                      reference) needs AVX2
 *   WREGISTER_BADTYPE  hands register_operator a struct whose header has
 *                      another type UID
 *   WREGISTER_SELECT   calls select_variant with [avx2, scalar] (and logs
 *                      "select ok: INDEX"), then with [avx2] alone, and
 *                      fails with what last_error says
 *
 * Without one it registers wregister.Op with run and starts.
 */
#include <stdio.h>
#include <string.h>

#include <dynop/dynop.h>

static const dynop_op_schema op_schema = {
    DYNOP_HEADER(DYNOP_OP_SCHEMA_TYPE, DYNOP_OP_SCHEMA_VERSION, dynop_op_schema),
    "wregister.Op", "Does nothing.", "cpu", 0, 0, NULL, 0, NULL, 0, NULL,
};
static const dynop_op_schema *const schemas[] = {&op_schema};
static const dynop_plugin_info info = {
    DYNOP_HEADER(DYNOP_PLUGIN_INFO_TYPE, DYNOP_PLUGIN_INFO_VERSION, dynop_plugin_info),
    DYNOP_API_VERSION, "dynop.plugin.wregister", DYNOP_V(1, 0, 0), "Asks the host for what a module may not have.",
    NULL, NULL, 0, 0, NULL, 0, NULL, NULL, 1, schemas, 0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result op_create(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    static int dummy;
    (void)user, (void)args, (void)n;
    *instance = &dummy;
    return DYNOP_OK;
}
static dynop_result op_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)instance, (void)in, (void)nin, (void)out, (void)nout;
    return DYNOP_OK;
}
static dynop_result op_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in,
                           uint32_t nin) {
    (void)instance, (void)in, (void)nin, (void)out, (void)nout;
    return DYNOP_OK;
}
static void op_destroy(void *instance) { (void)instance; }

static const dynop_variant variants[] __attribute__((unused)) = {
    {DYNOP_HEADER(DYNOP_VARIANT_TYPE, DYNOP_VARIANT_VERSION, dynop_variant), "avx2", DYNOP_CPU_AVX2,
     (dynop_function)op_run},
    {DYNOP_HEADER(DYNOP_VARIANT_TYPE, DYNOP_VARIANT_VERSION, dynop_variant), "scalar", 0, (dynop_function)op_run},
};

#if defined(WREGISTER_GPU)
#define DEVICE "gpu"
#else
#define DEVICE "cpu"
#endif

#if defined(WREGISTER_AVX)
static const dynop_operator the_op = {
    DYNOP_HEADER(DYNOP_OPERATOR_TYPE, DYNOP_OPERATOR_VERSION, dynop_operator),
    "wregister.Op", DEVICE, NULL, op_create, op_setup, NULL, op_destroy, 1, variants, 0,
};
#else
static const dynop_operator the_op = {
    DYNOP_HEADER(DYNOP_OPERATOR_TYPE, DYNOP_OPERATOR_VERSION, dynop_operator),
    "wregister.Op", DEVICE, NULL, op_create, op_setup, op_run, op_destroy, 0, NULL, 0,
};
#endif

static dynop_result reg(const dynop_host *host) {
#if defined(WREGISTER_SELECT)
    char line[64];
    int32_t i = host->select_variant(host, "wregister.fn", variants, 2);
    snprintf(line, sizeof line, "select ok: %d", (int)i);
    host->log(host, DYNOP_LOG_INFO, line);
    if (host->select_variant(host, "wregister.fast", variants, 1) < 0) {
        host->set_error(host, host->last_error(host));
        return DYNOP_ERROR_UNSUPPORTED;
    }
#endif
#if defined(WREGISTER_BADTYPE)
    {
        dynop_operator bad = the_op;
        bad.header.type.bytes[15] ^= 1;
        return host->register_operator(host, &bad);
    }
#else
    return host->register_operator(host, &the_op);
#endif
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)reg;
    return NULL;
}
