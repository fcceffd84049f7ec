/*
 * nop.c — dynop.plugin.bench_nop, the plugin of the call benchmarks: one operator,
 * bench.Nop, whose run does nothing, so that what a call costs is the
 * host's overhead. The benchmarks build it as a native library and, with
 * the shim of abi/wasm, as a WebAssembly module.
 */
#include <string.h>

#include <dynop/dynop.h>

static dynop_result nop_create(void *user, const dynop_arg *args, uint32_t nargs, void **inst) {
    (void)user, (void)args, (void)nargs;
    *inst = NULL;
    return DYNOP_OK;
}

static dynop_result nop_setup(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    int32_t i;
    (void)inst, (void)nin, (void)nout;
    out->dtype = in->dtype;
    out->ndim = in->ndim;
    for (i = 0; i < in->ndim; i++) out->shape[i] = in->shape[i];
    return DYNOP_OK;
}

static dynop_result nop_run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    (void)inst, (void)out, (void)nout, (void)in, (void)nin;
    return DYNOP_OK;
}

static const dynop_op_input inputs[] = {{DYNOP_OP_INPUT_HEADER, "in", "Any tensor.", NULL, NULL, 0, NULL}};
static const dynop_op_output outputs[] = {{DYNOP_OP_OUTPUT_HEADER, "out", "A tensor like the input, untouched.", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_schema nop_schema = {
    DYNOP_OP_SCHEMA_HEADER, "bench.Nop", "Does nothing.", "cpu", 1, 0, inputs, 1, outputs, 0, NULL,
};
static const dynop_op_schema *const schemas[] = {&nop_schema};
static const dynop_operator nop_op = DYNOP_OPERATOR("bench.Nop", "cpu", NULL, nop_create, nop_setup, nop_run, NULL);

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "dynop.plugin.bench_nop", DYNOP_V(1, 0, 0), "The empty operator of the call benchmarks.",
    "dynop", NULL, 0, 0, NULL, 0, NULL, NULL, 1, schemas, 0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc = host->register_operator(host, &nop_op);
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
