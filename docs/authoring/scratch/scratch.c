/*
 * scratch.c — the native plugin acme.plugin.boxblur, whose operator
 * acme.BoxBlur3 averages each element of a uint8 vector with its two
 * neighbours, the ends replicated. It copies the vector into a row padded
 * by one element on either side, and takes that row from the host's
 * scratch (DYNOP_OPERATOR_SCRATCH) instead of malloc: setup says how many
 * bytes run needs, run finds them after its outputs.
 */
#include <string.h>

#include <dynop/dynop.h>

static dynop_result create(void *user, const dynop_arg *args, uint32_t count, void **instance) {
    (void)user, (void)args, (void)count;
    *instance = NULL; /* no state */
    return DYNOP_OK;
}

static dynop_result setup(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)inst, (void)nin;
    out[0].dtype = in[0].dtype;
    out[0].ndim = 1;
    out[0].shape[0] = in[0].shape[0];
    /* ... outputs as before; then the scratch, out[nout]: */
    out[nout].shape[0] = in[0].shape[0] + 2;
    return DYNOP_OK;
}

static dynop_result run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    uint8_t *row = (uint8_t *)out[nout].data; /* out[nout].shape[0] bytes, DYNOP_SCRATCH_ALIGN-aligned, uninitialized */
    const uint8_t *x = (const uint8_t *)in->data + in->byte_offset;
    uint8_t *y = (uint8_t *)out->data + out->byte_offset;
    const int64_t n = in->shape[0];
    int64_t i;
    (void)inst, (void)nin;
    if (n == 0) return DYNOP_OK;
    for (i = 0; i < n; i++) row[i + 1] = x[i * in->strides[0]];
    row[0] = row[1];
    row[n + 1] = row[n];
    for (i = 0; i < n; i++) y[i] = (uint8_t)((row[i] + row[i + 1] + row[i + 2] + 1) / 3);
    return DYNOP_OK;
}

static const dynop_operator blur = DYNOP_OPERATOR_FLAGS("acme.BoxBlur3", "cpu", NULL, create, setup, run, NULL,
                                                        DYNOP_OPERATOR_SCRATCH);

static const dynop_op_input inputs[] = {{DYNOP_OP_INPUT_HEADER, "x", "A uint8 vector.", "uint8", NULL, 1, NULL}};
static const dynop_op_output outputs[] = {{DYNOP_OP_OUTPUT_HEADER, "y", "x averaged over 3 elements.", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_schema schema = {
    DYNOP_OP_SCHEMA_HEADER, "acme.BoxBlur3", "Averages neighbours.", "cpu", 1, 0, inputs, 1, outputs, 0, NULL,
};
static const dynop_op_schema *const operators[] = {&schema};
static const dynop_plugin_info info = {
    .header = DYNOP_PLUGIN_INFO_HEADER, .api_version = DYNOP_API_VERSION,
    .id = "acme.plugin.boxblur", .plugin_version = DYNOP_V(1, 0, 0),
    .operator_count = 1, .operators = operators,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    if (!DYNOP_HOST_HAS_SCRATCH(host)) { /* a host from before dynop_host 1.4 */
        host->set_error(host, "acme needs a host that passes scratch");
        return DYNOP_ERROR_VERSION;
    }
    return host->register_operator(host, &blur);
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
