/*
 * results.c — dynop.plugin.results, a plugin that walks every dynop_result
 * code across the ABI, built as a native library and, linked with
 * abi/wasm/dynop_wasm.c, as a WebAssembly module (results_test.go in the
 * root package drives both).
 *
 * Plugin to host: the operator results.Return fails create with the code
 * in its argument "code" (and a set_error message naming it); code 0
 * creates an instance that does nothing.
 *
 * Host to plugin: register acquires the interface RESULTS_PROBE of the
 * plugins dynop.plugin.fail_1 to dynop.plugin.fail_11 (the test gives the
 * host Go plugins that fail to start with the host's sentinel for that
 * code, or gives none) and logs, for each, "acquire dynop.plugin.fail_N:
 * CODE" with the code acquire returned. References it got are released
 * at once.
 */
#include <stdio.h>
#include <string.h>

#include <dynop/dynop.h>

#define RESULTS_PROBE_UID DYNOP_UID(0x3F9A2C51, 0x7D0E, 0x4B6A, 0x8E, 0x21, 0x5C, 0x4D, 0x90, 0x1B, 0xA7, 0x36)

static const dynop_host *host_table;

static const dynop_op_arg code_arg = {
    DYNOP_HEADER(DYNOP_OP_ARG_TYPE, DYNOP_OP_ARG_VERSION, dynop_op_arg),
    "code", "the dynop_result create returns", DYNOP_ARG_INT, DYNOP_ARG_REQUIRED, 0, 0, NULL, NULL, NULL,
};

static const dynop_op_schema return_schema = {
    DYNOP_HEADER(DYNOP_OP_SCHEMA_TYPE, DYNOP_OP_SCHEMA_VERSION, dynop_op_schema),
    "results.Return", "Fails create with the code it is given.", "cpu", 0, 0, NULL, 0, NULL, 1, &code_arg,
};

static const dynop_op_schema *const schemas[] = {&return_schema};

static const dynop_plugin_info info = {
    DYNOP_HEADER(DYNOP_PLUGIN_INFO_TYPE, DYNOP_PLUGIN_INFO_VERSION, dynop_plugin_info),
    DYNOP_API_VERSION,
    "dynop.plugin.results",
    DYNOP_V(1, 0, 0),
    "Walks every dynop_result code across the ABI.",
    NULL,
    NULL,
    0,
    0,
    NULL,
    0,
    NULL,
    NULL,
    1,
    schemas,
    0,
    NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result op_create(void *user_data, const dynop_arg *args, uint32_t arg_count, void **instance) {
    static int dummy;
    char msg[64];
    int64_t code = 0;
    uint32_t i;
    (void)user_data;
    for (i = 0; i < arg_count; i++)
        if (strcmp(args[i].name, "code") == 0 && args[i].count == 1) code = *(const int64_t *)args[i].values;
    if (code == 0) {
        *instance = &dummy;
        return DYNOP_OK;
    }
    snprintf(msg, sizeof msg, "create returns code %d on purpose", (int)code);
    host_table->set_error(host_table, msg);
    return (dynop_result)code;
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

static const dynop_operator return_op = {
    DYNOP_HEADER(DYNOP_OPERATOR_TYPE, DYNOP_OPERATOR_VERSION, dynop_operator),
    "results.Return", "cpu", NULL, op_create, op_setup, op_run, op_destroy, 0, NULL, 0,
};

static dynop_result reg(const dynop_host *host) {
    static const dynop_uid probe = RESULTS_PROBE_UID;
    static const dynop_version v1 = DYNOP_V(1, 0, 0);
    char id[32], line[96];
    int k;
    host_table = host;
    for (k = 1; k <= 11; k++) {
        const void *iface = NULL;
        dynop_ref ref = 0;
        dynop_result rc;
        snprintf(id, sizeof id, "dynop.plugin.fail_%d", k);
        rc = host->acquire(host, id, &probe, v1, &iface, &ref);
        snprintf(line, sizeof line, "acquire %s: %d", id, (int)rc);
        host->log(host, DYNOP_LOG_INFO, line);
        if (rc == DYNOP_OK) host->release(host, ref);
    }
    return host->register_operator(host, &return_op);
}

static dynop_result dereg(const dynop_host *host) {
    (void)host;
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)reg;
    if (strcmp(name, "deregister") == 0) return (dynop_function)dereg;
    return NULL;
}
