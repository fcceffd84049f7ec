/*
 * threshold.c — the native plugin acme.plugin.threshold, whose operator
 * acme.Threshold turns uint8 tensors into masks; annotated with the ABI's
 * rules: who owns which memory, which threads call what, and how to read
 * a struct that grew.
 */
#include <stdlib.h>
#include <string.h>

#include <dynop/dynop.h>

/* The host's table: valid from register until deregister returns. */
static const dynop_host *host_table;

/* One operator instance. The host runs different instances on several
 * threads at once, one instance on one thread at a time: its state lives
 * here, never in globals. */
typedef struct threshold {
    int64_t level;
    int below; /* mode "below": x < level passes, else x >= level */
} threshold;

static dynop_result create(void *user, const dynop_arg *args, uint32_t count, void **instance) {
    threshold *t = calloc(1, sizeof *t);
    uint32_t i;
    (void)user;
    if (t == NULL) return DYNOP_ERROR_NO_MEMORY;
    for (i = 0; i < count; i++) { /* the host's memory, valid during create: copy what you keep */
        if (strcmp(args[i].name, "level") == 0) t->level = *(const int64_t *)args[i].values;
        if (strcmp(args[i].name, "mode") == 0) t->below = strcmp(*(const char *const *)args[i].values, "below") == 0;
    }
    *instance = t;
    return DYNOP_OK;
}

static void destroy(void *instance) { free(instance); }

/* The output is like the input. outputs[0].shape is the host's array. */
static dynop_result setup(void *instance, const dynop_tensor *in, uint32_t n_in, dynop_tensor *out, uint32_t n_out) {
    int32_t d;
    (void)instance, (void)n_in, (void)n_out;
    out[0].dtype = in[0].dtype;
    out[0].ndim = in[0].ndim;
    for (d = 0; d < in[0].ndim; d++) out[0].shape[d] = in[0].shape[d];
    return DYNOP_OK;
}

/* Tensors are the host's, valid for this call; outputs are compact. */
static dynop_result run(void *instance, const dynop_tensor *out, uint32_t n_out, const dynop_tensor *in, uint32_t n_in) {
    const threshold *t = (const threshold *)instance;
    const uint8_t *x = (const uint8_t *)in->data + in->byte_offset;
    uint8_t *y = (uint8_t *)out->data + out->byte_offset;
    int64_t i, n = 1;
    int32_t d;
    (void)n_out, (void)n_in;
    for (d = in->ndim - 1; d >= 0; d--) {
        if (in->shape[d] > 1 && in->strides[d] != n) { /* a strided view, such as a crop */
            host_table->set_error(host_table, "acme.Threshold takes compact tensors only"); /* copied */
            return DYNOP_ERROR_INVALID_ARGUMENT;
        }
        n *= in->shape[d];
    }
    for (i = 0; i < n; i++) y[i] = ((x[i] >= t->level) ^ t->below) ? 255 : 0;
    return DYNOP_OK;
}

/* Everything the host reads without running the plugin: static const,
 * valid and unchanged while the library is loaded. */
static const dynop_op_input inputs[] = {{DYNOP_OP_INPUT_HEADER, "x", "uint8 tensors, compact.", "uint8", NULL, 0, NULL}};
static const dynop_op_output outputs[] = {{DYNOP_OP_OUTPUT_HEADER, "mask", "255 where x passes, else 0.", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_arg args[] = {
    {DYNOP_OP_ARG_HEADER, "level", "The threshold.", DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 256, "128", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "mode", "above: x >= level passes; below: x < level.", DYNOP_ARG_STRING, 0, 0, 0,
     "\"above\"", "[\"above\", \"below\"]", NULL},
};
static const dynop_op_schema schema = {
    DYNOP_OP_SCHEMA_HEADER, "acme.Threshold", "Turns uint8 tensors into masks.", "cpu", 1, 0, inputs, 1, outputs, 2, args,
};
static const dynop_op_schema *const operators[] = {&schema};
static const dynop_plugin_info info = {
    .header = DYNOP_PLUGIN_INFO_HEADER, .api_version = DYNOP_API_VERSION,
    .id = "acme.plugin.threshold", .plugin_version = DYNOP_V(1, 0, 0),
    .operator_count = 1, .operators = operators, /* 1.1 members: zero where not named */
};
static const dynop_operator threshold_op = DYNOP_OPERATOR("acme.Threshold", "cpu", NULL, create, setup, run, destroy);

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    /* register_operator came with dynop_host 1.1: read a member only if the
     * table's size covers it, for a host may be older than this header. */
    if (!DYNOP_HAS_MEMBER(dynop_host, host, register_operator)) {
        host->set_error(host, "acme.Threshold needs dynop_host 1.1 (register_operator)");
        return DYNOP_ERROR_UNSUPPORTED;
    }
    host_table = host;
    return host->register_operator(host, &threshold_op);
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
