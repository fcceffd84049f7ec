/*
 * scratch.c — a plugin whose operator test.Reverse takes its scratch
 * memory from the host (DYNOP_OPERATOR_SCRATCH), for the loaders' tests.
 * It reverses a uint8 vector through its scratch: setup asks for n + 3
 * bytes (an odd size on purpose), run checks what the host gave (aligned
 * to DYNOP_SCRATCH_ALIGN, as long as setup asked, a uint8 vector), fills
 * all of it, copies the input in and writes it out reversed. Its second
 * output, info (two int64), says what run found: the scratch's address
 * modulo DYNOP_SCRATCH_ALIGN and its length; -1, -1 when run got none.
 *
 * -D switches: NEGATIVE (setup asks for -5 bytes), HUGE (2^41 bytes),
 * OVERRUN (run writes one byte past the scratch), BAD_FLAG (flags has a
 * bit no host knows), OLD_STRUCT (the operator is a dynop_operator 1.1,
 * from before flags, whose memory after its end happens to hold
 * DYNOP_OPERATOR_SCRATCH: it must run as it did, without scratch; and
 * its outputs are dynop_op_output 1.0, before the static types),
 * CONCURRENT (the operator sets DYNOP_OPERATOR_CONCURRENT too; create
 * and destroy log "test.Reverse: create" and "test.Reverse: destroy", so
 * tests count the instances the plugin made).
 */
#include <stddef.h>
#include <string.h>

#include <dynop/dynop.h>

static const dynop_host *host_table;

static dynop_result fail(const char *msg) {
    host_table->set_error(host_table, msg);
    return DYNOP_ERROR_INVALID_ARGUMENT;
}

static dynop_result create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    (void)u, (void)a, (void)n;
    *inst = NULL;
#ifdef CONCURRENT
    host_table->log(host_table, DYNOP_LOG_INFO, "test.Reverse: create");
#endif
    return DYNOP_OK;
}

static void destroy(void *inst) {
    (void)inst;
#ifdef CONCURRENT
    host_table->log(host_table, DYNOP_LOG_INFO, "test.Reverse: destroy");
#endif
}

static dynop_result setup(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)inst;
    if (nin != 1 || nout != 2) return fail("test.Reverse: setup: want 1 input and 2 outputs");
    if (in->ndim != 1) return fail("test.Reverse: setup: want a vector");
    out[0].dtype = in->dtype;
    out[0].ndim = 1;
    out[0].shape[0] = in->shape[0];
    out[1].dtype.code = DYNOP_DTYPE_INT;
    out[1].dtype.bits = 64;
    out[1].dtype.lanes = 1;
    out[1].ndim = 1;
    out[1].shape[0] = 2;
#ifndef OLD_STRUCT
    if (out[2].ndim != 1 || out[2].dtype.code != DYNOP_DTYPE_UINT || out[2].dtype.bits != 8 || out[2].shape[0] != 0)
        return fail("test.Reverse: setup: the scratch tensor is not an empty uint8 vector");
#if defined(NEGATIVE)
    out[2].shape[0] = -5;
#elif defined(HUGE)
    out[2].shape[0] = INT64_C(1) << 41;
#else
    out[2].shape[0] = in->shape[0] + 3;
#endif
#endif
    return DYNOP_OK;
}

static dynop_result run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    const uint8_t *src = (const uint8_t *)in->data + in->byte_offset;
    uint8_t *dst = (uint8_t *)out[0].data + out[0].byte_offset;
    int64_t *info = (int64_t *)(void *)((char *)out[1].data + out[1].byte_offset);
    const int64_t n = in->shape[0];
    int64_t i;
    (void)inst;
    if (nin != 1 || nout != 2) return fail("test.Reverse: run: want 1 input and 2 outputs");
#ifdef OLD_STRUCT
    for (i = 0; i < n; i++) dst[i] = src[n - 1 - i];
    info[0] = -1;
    info[1] = -1;
#else
    {
        const dynop_tensor *s = &out[2];
        uint8_t *scratch = (uint8_t *)s->data;
        if (scratch == NULL) return fail("test.Reverse: run: no scratch");
        if (s->ndim != 1 || s->dtype.code != DYNOP_DTYPE_UINT || s->dtype.bits != 8 || s->strides == NULL ||
            s->strides[0] != 1 || s->byte_offset != 0)
            return fail("test.Reverse: run: the scratch tensor is not a compact uint8 vector");
        if (s->shape[0] != n + 3) return fail("test.Reverse: run: the scratch is not as long as setup asked");
        memset(scratch, 0xEE, (size_t)s->shape[0]);
#ifdef OVERRUN
        scratch[s->shape[0]] = 0;
#endif
        memcpy(scratch + 3, src, (size_t)n);
        for (i = 0; i < n; i++) dst[i] = scratch[3 + n - 1 - i];
        info[0] = (int64_t)((uintptr_t)scratch % DYNOP_SCRATCH_ALIGN);
        info[1] = s->shape[0];
    }
#endif
    return DYNOP_OK;
}

#if defined(OLD_STRUCT)
/* A dynop_operator 1.1 followed by a word that reads like flags. */
static const struct {
    dynop_operator op;
} old = {{{DYNOP_OPERATOR_TYPE, DYNOP_V(1, 1, 0), (uint32_t)offsetof(dynop_operator, flags)},
          "test.Reverse",
          "cpu",
          NULL,
          create,
          setup,
          run,
          destroy,
          0,
          NULL,
          DYNOP_OPERATOR_SCRATCH}};
#define THE_OP (&old.op)
#else
#if defined(BAD_FLAG)
#define FLAGS (DYNOP_OPERATOR_SCRATCH | 0x80000000u)
#elif defined(CONCURRENT)
#define FLAGS (DYNOP_OPERATOR_SCRATCH | DYNOP_OPERATOR_CONCURRENT)
#else
#define FLAGS DYNOP_OPERATOR_SCRATCH
#endif
static const dynop_operator reverse_op =
    DYNOP_OPERATOR_FLAGS("test.Reverse", "cpu", NULL, create, setup, run, destroy, FLAGS);
#define THE_OP (&reverse_op)
#endif

#ifdef OLD_STRUCT
/* The input as dynop_op_input 1.0 laid it out, before channels. */
typedef struct {
    dynop_header header;
    const char *name;
    const char *doc;
    const char *dtypes;
    const char *layouts;
    int32_t ndim;
} input_1_0;
static const input_1_0 old_inputs[] = {
    {{DYNOP_OP_INPUT_TYPE, DYNOP_V(1, 0, 0), (uint32_t)sizeof(input_1_0)}, "in", "Bytes.", "uint8", NULL, 1}};
#define INPUTS ((const dynop_op_input *)(const void *)old_inputs)
#else
static const dynop_op_input inputs[] = {{DYNOP_OP_INPUT_HEADER, "in", "Bytes.", "uint8", NULL, 1, NULL}};
#define INPUTS inputs
#endif
#ifdef OLD_STRUCT
/* Outputs as dynop_op_output 1.0 laid them out, before dtypes, dtype_arg,
 * like and ndim: an array of the smaller struct. */
typedef struct {
    dynop_header header;
    const char *name;
    const char *doc;
    const char *layout;
} output_1_0;
static const output_1_0 old_outputs[] = {
    {{DYNOP_OP_OUTPUT_TYPE, DYNOP_V(1, 0, 0), (uint32_t)sizeof(output_1_0)}, "out", "The bytes in reverse order.", NULL},
    {{DYNOP_OP_OUTPUT_TYPE, DYNOP_V(1, 0, 0), (uint32_t)sizeof(output_1_0)}, "info", "The scratch's address modulo 64.",
     NULL},
};
#define OUTPUTS ((const dynop_op_output *)(const void *)old_outputs)
#else
static const dynop_op_output outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "out", "The bytes in reverse order.", NULL, "uint8", NULL, NULL, 1, NULL, 0},
    {DYNOP_OP_OUTPUT_HEADER, "info", "The scratch's address modulo 64 and its length.", NULL, "int64", NULL, NULL, 1, NULL, 0},
};
#define OUTPUTS outputs
#endif
static const dynop_op_schema schema = {
    DYNOP_OP_SCHEMA_HEADER, "test.Reverse", "Reverses bytes through scratch.", "cpu", 1, 0, INPUTS, 2, OUTPUTS, 0,
    NULL,
};
static const dynop_op_schema *const schemas[] = {&schema};

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "dynop.plugin.scratch", DYNOP_V(1, 0, 0), "Scratch fixture.", NULL,
    NULL, 0, 0, NULL, 0, NULL, NULL, 1, schemas, 0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    host_table = host;
#ifndef OLD_STRUCT
    if (!DYNOP_HOST_HAS_SCRATCH(host)) {
        host->set_error(host, "test.Reverse needs a host that passes scratch");
        return DYNOP_ERROR_VERSION;
    }
#endif
    rc = host->register_operator(host, THE_OP);
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
