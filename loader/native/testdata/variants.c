/*
 * variants.c — a native plugin whose operator test.AddOne (uint8 tensors
 * of any shape; out = in + 1) comes in three variants of run, for the
 * loader's tests: "avx512" (avx512f, avx512bw), "avx2" (avx2) and the
 * reference "scalar". The variants are plain C; only their feature masks
 * differ, so the tests can force any of them on any CPU.
 *
 * -D switches: MARK (each variant adds its own number instead of 1:
 * scalar 1, avx2 2, avx512 3, so outputs tell which one ran),
 * BROKEN_AVX512 (avx512 gets element 3 wrong), RUN_TOO (run is set as well
 * as variants), BAD_NAME, DUP_NAME, NULL_FN, UNKNOWN_BIT (malformed
 * lists), REQUIRE_AVX2 (requirements.cpu_features "avx2"; REQUIRE_FEATURES
 * names others), SELECT (register
 * checks host->select_variant against host->cpu_features), SELECT_NONE
 * (register asks select_variant to choose among variants none of which
 * can run, and fails with its error).
 */
#include <string.h>

#include <dynop/dynop.h>

#ifdef MARK
#define ADD_SCALAR 1
#define ADD_AVX2 2
#define ADD_AVX512 3
#else
#define ADD_SCALAR 1
#define ADD_AVX2 1
#define ADD_AVX512 1
#endif

static dynop_result create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    (void)u, (void)a, (void)n;
    *inst = NULL;
    return DYNOP_OK;
}

static dynop_result setup(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    int32_t i;
    (void)inst, (void)nin, (void)nout;
    out->dtype = in->dtype;
    out->ndim = in->ndim;
    for (i = 0; i < in->ndim; i++) out->shape[i] = in->shape[i];
    return DYNOP_OK;
}

/* add adds k to every element; the host passes compact outputs, and the
 * tests compact inputs. */
static void add(const dynop_tensor *out, const dynop_tensor *in, int k, int64_t wrong) {
    const uint8_t *src = (const uint8_t *)in->data + in->byte_offset;
    uint8_t *dst = (uint8_t *)out->data + out->byte_offset;
    int64_t n = 1, i;
    int32_t d;
    for (d = 0; d < in->ndim; d++) n *= in->shape[d];
    for (i = 0; i < n; i++) dst[i] = (uint8_t)(src[i] + k + (i == wrong));
}

static dynop_result run_scalar(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    (void)inst, (void)nout, (void)nin;
    add(out, in, ADD_SCALAR, -1);
    return DYNOP_OK;
}

static dynop_result run_avx2(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    (void)inst, (void)nout, (void)nin;
    add(out, in, ADD_AVX2, -1);
    return DYNOP_OK;
}

static dynop_result run_avx512(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    (void)inst, (void)nout, (void)nin;
#ifdef BROKEN_AVX512
    add(out, in, ADD_AVX512, 3);
#else
    add(out, in, ADD_AVX512, -1);
#endif
    return DYNOP_OK;
}

static const dynop_variant variants[] = {
#if defined(BAD_NAME)
    DYNOP_VARIANT("avx-512", DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW, run_avx512),
#elif defined(DUP_NAME)
    DYNOP_VARIANT("avx2", DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW, run_avx512),
#elif defined(NULL_FN)
    DYNOP_VARIANT("avx512", DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW, NULL),
#elif defined(UNKNOWN_BIT)
    DYNOP_VARIANT("avx512", DYNOP_CPU_AVX512F | (UINT64_C(1) << 63), run_avx512),
#else
    DYNOP_VARIANT("avx512", DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW, run_avx512),
#endif
    DYNOP_VARIANT("avx2", DYNOP_CPU_AVX2, run_avx2),
    DYNOP_VARIANT("scalar", 0, run_scalar),
};

#ifdef RUN_TOO
static const dynop_operator add_op = {DYNOP_OPERATOR_HEADER, "test.AddOne", "cpu", NULL, create, setup, run_scalar, NULL, 3, variants, 0};
#else
static const dynop_operator add_op = DYNOP_OPERATOR_VARIANTS("test.AddOne", "cpu", NULL, create, setup, NULL, variants);
#endif

static const dynop_op_input inputs[] = {{DYNOP_OP_INPUT_HEADER, "in", "Bytes.", "uint8", NULL, 0, NULL}};
static const dynop_op_output outputs[] = {{DYNOP_OP_OUTPUT_HEADER, "out", "Bytes plus one.", NULL, NULL, NULL, NULL, 0, NULL, 0}};
static const dynop_op_schema schema = {
    DYNOP_OP_SCHEMA_HEADER, "test.AddOne", "Adds one.", "cpu", 1, 0, inputs, 1, outputs, 0, NULL,
};
static const dynop_op_schema *const schemas[] = {&schema};

#ifdef REQUIRE_AVX2
#define REQUIRE_FEATURES "avx2"
#endif
#ifdef REQUIRE_FEATURES
static const dynop_requirements req = {DYNOP_REQUIREMENTS_HEADER, NULL, DYNOP_V(0, 0, 0), NULL, REQUIRE_FEATURES, NULL,
                                       DYNOP_V(0, 0, 0), DYNOP_V(0, 0, 0), NULL};
#define REQ &req
#else
#define REQ NULL
#endif

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "dynop.plugin.variants", DYNOP_V(1, 0, 0), "Variant fixture.", NULL,
    NULL, 0, 0, NULL, 0, NULL, REQ, 1, schemas, 0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
#if defined(SELECT)
    {
        /* The host's choice must be the first variant whose features
         * (closed under implication: avx512 brings avx2) are available. */
        dynop_cpu_features have = host->cpu_features(host);
        int32_t want = 2, got;
        if ((have & DYNOP_CPU_AVX2) != 0) want = 1;
        if ((have & (DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW | DYNOP_CPU_AVX2)) ==
            (DYNOP_CPU_AVX512F | DYNOP_CPU_AVX512BW | DYNOP_CPU_AVX2))
            want = 0;
        got = host->select_variant(host, "test.fn", variants, 3);
        if (got != want) {
            host->set_error(host, "select_variant disagrees with cpu_features");
            return DYNOP_ERROR;
        }
    }
#elif defined(SELECT_NONE)
    if (host->select_variant(host, "test.fn", variants, 2) < 0) {
        host->set_error(host, host->last_error(host));
        return DYNOP_ERROR_UNSUPPORTED;
    }
#endif
    rc = host->register_operator(host, &add_op);
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
