/* review_probe.c: operators to probe the wasm host's tensor layout. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dynop/dynop.h>

static const dynop_host *host_table;
static dynop_result fail(dynop_result rc, const char *msg) {
    if (host_table != NULL) host_table->set_error(host_table, msg);
    return rc;
}
static int64_t numel(const dynop_tensor *t) {
    int64_t n = 1;
    int32_t d;
    for (d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}
static float *at(const dynop_tensor *t, int64_t i) {
    int64_t off = 0;
    int32_t d;
    for (d = t->ndim - 1; d >= 0; d--) {
        int64_t n = t->shape[d];
        off += (i % n) * t->strides[d];
        i /= n;
    }
    return (float *)(void *)((char *)t->data + t->byte_offset) + off;
}
static dynop_result create_none(void *user, const dynop_arg *args, uint32_t n, void **instance) {
    uint32_t i;
    int64_t *len = malloc(sizeof *len);
    (void)user;
    *len = 4;
    for (i = 0; i < n; i++)
        if (strcmp(args[i].name, "n") == 0 && args[i].count == 1) *len = *(const int64_t *)args[i].values;
    *instance = len;
    return DYNOP_OK;
}
static void destroy(void *instance) { free(instance); }

/* probe.Pair: s = a + b, d = a - b */
static dynop_result pair_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    int32_t d;
    (void)instance;
    if (nin != 2 || nout != 2) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "two inputs, two outputs");
    if (in[0].ndim != in[1].ndim) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "ndim");
    for (d = 0; d < in[0].ndim; d++)
        if (in[0].shape[d] != in[1].shape[d]) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "shape");
    out[0].dtype = out[1].dtype = in[0].dtype;
    out[0].ndim = out[1].ndim = in[0].ndim;
    for (d = 0; d < in[0].ndim; d++) out[0].shape[d] = out[1].shape[d] = in[0].shape[d];
    return DYNOP_OK;
}
static dynop_result pair_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    int64_t i, n = numel(&in[0]);
    (void)instance; (void)nout; (void)nin;
    if (n > 0 && *at(&in[0], 0) != *at(&in[0], 0)) __builtin_trap(); /* NaN: trap */
    for (i = 0; i < n; i++) {
        *at(&out[0], i) = *at(&in[0], i) + *at(&in[1], i);
        *at(&out[1], i) = *at(&in[0], i) - *at(&in[1], i);
    }
    return DYNOP_OK;
}
/* probe.Iota: no inputs, y[i] = i, n elements */
static dynop_result iota_setup(void *instance, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)in;
    if (nin != 0 || nout != 1) return fail(DYNOP_ERROR_INVALID_ARGUMENT, "no inputs, one output");
    out[0].dtype.code = DYNOP_DTYPE_FLOAT; out[0].dtype.bits = 32; out[0].dtype.lanes = 1;
    out[0].ndim = 1;
    out[0].shape[0] = *(int64_t *)instance;
    return DYNOP_OK;
}
static dynop_result iota_run(void *instance, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    int64_t i, n = numel(&out[0]);
    float *scratch = malloc((size_t)n * sizeof *scratch); /* temporary space, as real operators need */
    (void)instance; (void)nout; (void)nin; (void)in;
    if (scratch == NULL) return fail(DYNOP_ERROR_NO_MEMORY, "no memory for the scratch buffer");
    for (i = 0; i < n; i++) scratch[i] = (float)i;
    for (i = 0; i < n; i++) *at(&out[0], i) = scratch[i];
    free(scratch);
    return DYNOP_OK;
}

static const dynop_op_input ab_inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "a", "a", "float32", NULL, 0, NULL},
    {DYNOP_OP_INPUT_HEADER, "b", "b", "float32", NULL, 0, NULL},
};
static const dynop_op_output sd_outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "s", "a+b", NULL, NULL, NULL, NULL, 0, NULL, 0},
    {DYNOP_OP_OUTPUT_HEADER, "d", "a-b", NULL, NULL, NULL, NULL, 0, NULL, 0},
};
static const dynop_op_output y_output[] = {{DYNOP_OP_OUTPUT_HEADER, "y", "iota", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_arg iota_args[] = {
    {DYNOP_OP_ARG_HEADER, "n", "length", DYNOP_ARG_INT, 0, 0, 0, "4", NULL, NULL},
};
static const dynop_op_schema pair_schema = {DYNOP_OP_SCHEMA_HEADER, "probe.Pair", "sum and difference", "cpu", 2, 0, ab_inputs, 2, sd_outputs, 0, NULL};
static const dynop_op_schema iota_schema = {DYNOP_OP_SCHEMA_HEADER, "probe.Iota", "0..n-1", "cpu", 0, 0, NULL, 1, y_output, 1, iota_args};
static const dynop_operator pair_op = DYNOP_OPERATOR("probe.Pair", "cpu", NULL, create_none, pair_setup, pair_run, destroy);
static const dynop_operator iota_op = DYNOP_OPERATOR("probe.Iota", "cpu", NULL, create_none, iota_setup, iota_run, destroy);
static const dynop_op_schema *const operators[] = {&pair_schema, &iota_schema};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, PROBE_ID, DYNOP_V(1, 0, 0), "probe", "review", NULL, 0,
    0, NULL, 0, NULL, NULL, 2, operators, 0, NULL,
};
static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    const dynop_operator *p = &pair_op, *q = &iota_op;
    host_table = host;
#ifdef PROBE_HEAP
    /* A plugin may build its operator structs at run time (e.g. to give
     * each its own user_data): perfectly valid in the native ABI. */
    {
        dynop_operator *hp = malloc(sizeof *hp), *hq = malloc(sizeof *hq);
        memcpy(hp, &pair_op, sizeof *hp);
        memcpy(hq, &iota_op, sizeof *hq);
        p = hp;
        q = hq;
    }
#endif
    rc = host->register_operator(host, p);
    if (rc == DYNOP_OK) rc = host->register_operator(host, q);
    return rc;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
