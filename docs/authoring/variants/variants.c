/*
 * variants.c — the native plugin acme.plugin.invert, whose operator
 * acme.Invert (y = 255 - x on uint8 vectors) comes in CPU variants: AVX2
 * on x86-64 and the portable reference. The library is built for the
 * baseline CPU; each variant asks for its instructions with a target
 * attribute, and the host calls a variant only on a CPU that has them.
 */
#include <string.h>

#include <dynop/dynop.h>

/* The reference: portable C, what every other variant must compute. */
static dynop_result run_scalar(void *inst, const dynop_tensor *out, uint32_t n_out, const dynop_tensor *in, uint32_t n_in) {
    const uint8_t *x = (const uint8_t *)in->data + in->byte_offset;
    uint8_t *y = (uint8_t *)out->data + out->byte_offset;
    int64_t i;
    (void)inst, (void)n_out, (void)n_in;
    for (i = 0; i < in->shape[0]; i++) y[i] = (uint8_t)(255 - x[i * in->strides[0]]);
    return DYNOP_OK;
}

#if defined(__x86_64__)
#include <immintrin.h>
/* Compiled for AVX2 alone: the host calls it only on a CPU with AVX2. */
__attribute__((target("avx2"))) static dynop_result run_avx2(void *inst, const dynop_tensor *out, uint32_t n_out,
                                                             const dynop_tensor *in, uint32_t n_in) {
    const uint8_t *x = (const uint8_t *)in->data + in->byte_offset;
    uint8_t *y = (uint8_t *)out->data + out->byte_offset;
    int64_t i = 0, n = in->shape[0];
    if (in->strides[0] != 1) return run_scalar(inst, out, n_out, in, n_in); /* a strided view */
    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + i));
        _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm256_xor_si256(v, _mm256_set1_epi8(-1)));
    }
    for (; i < n; i++) y[i] = (uint8_t)(255 - x[i]);
    return DYNOP_OK;
}
#endif

/* Best first, the reference last. */
static const dynop_variant variants[] = {
#if defined(__x86_64__)
    DYNOP_VARIANT("avx2", DYNOP_CPU_AVX2, run_avx2),
#endif
    DYNOP_VARIANT("scalar", 0, run_scalar),
};

/* create, setup and destroy are shared by the variants. */
static dynop_result create(void *user, const dynop_arg *args, uint32_t count, void **instance) {
    (void)user, (void)args, (void)count;
    *instance = NULL; /* no state */
    return DYNOP_OK;
}
static dynop_result setup(void *inst, const dynop_tensor *in, uint32_t n_in, dynop_tensor *out, uint32_t n_out) {
    (void)inst, (void)n_in, (void)n_out;
    out[0].dtype = in[0].dtype;
    out[0].ndim = 1;
    out[0].shape[0] = in[0].shape[0];
    return DYNOP_OK;
}

static const dynop_operator invert = DYNOP_OPERATOR_VARIANTS("acme.Invert", "cpu", NULL, create, setup, NULL, variants);

static const dynop_op_input inputs[] = {{DYNOP_OP_INPUT_HEADER, "x", "A uint8 vector.", "uint8", NULL, 1, NULL}};
static const dynop_op_output outputs[] = {{DYNOP_OP_OUTPUT_HEADER, "y", "255 - x.", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_schema schema = {
    DYNOP_OP_SCHEMA_HEADER, "acme.Invert", "Inverts uint8 vectors.", "cpu", 1, 0, inputs, 1, outputs, 0, NULL,
};
static const dynop_op_schema *const operators[] = {&schema};
static const dynop_plugin_info info = {
    .header = DYNOP_PLUGIN_INFO_HEADER, .api_version = DYNOP_API_VERSION,
    .id = "acme.plugin.invert", .plugin_version = DYNOP_V(1, 0, 0),
    .operator_count = 1, .operators = operators,
};

static const dynop_plugin_info *get_info(void) { return &info; }
static dynop_result register_plugin(const dynop_host *host) { return host->register_operator(host, &invert); }

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
