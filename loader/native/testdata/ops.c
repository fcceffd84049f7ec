/*
 * ops.c — a native plugin with operators, for the loader's tests. Without
 * switches it declares and registers:
 *
 *   test.Nop    one input, one output of the input's shape; run does nothing
 *   test.Fail   run fails on sample FAIL_SAMPLE (default 1) with a message
 *   test.Args   echoes its arguments: output float64 [i, f, b, strlen(s),
 *               d.bits, sum(il), given(i), strlen(sl[last]), count(sl)]
 *
 * -D switches make it misbehave: UNDECLARED (registers an operator the info
 * does not declare), MISSING (registers no test.Fail), TWICE (registers
 * test.Nop twice), BAD_DEFAULT (a default that is not JSON), BAD_STRIDE
 * (elements of one array with different sizes), BAD_SETUP (setup gives an
 * output 99 dimensions), SLOW (test.Nop's run takes 300 ms).
 *
 * The audit's hostile infos: HUGE_STRIDE (an output array whose first
 * element says it is 1 GiB, so the second would be read 1 GiB away),
 * BAD_ARG_TYPE (an argument of type 99), BIG_NDIM (an input of ndim 1000),
 * LONG_ID (a plugin id of 10,000 bytes), BAD_DTYPE (setup gives an output
 * the dtype code 99), UNTERMINATED (a description of 70,000 bytes with no
 * NUL in them). OVERRUN and UNDERRUN make test.Nop's run write past the
 * end or before the start of its output (only for the bounds-checking mode's
 * tests: without it, the write lands in the Go heap).
 *
 * Plugin code that kills the process, for the crash reports: CRASH_REGISTER
 * (a NULL write in register), CRASH_RUN (in test.Nop's run of sample 1),
 * ABORT_RUN (abort() in its run), EXIT_REGISTER (exit(7) in register),
 * EXIT0_RUN (exit(0) in test.Nop's run).
 */
#ifdef SLOW
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dynop/dynop.h>

#ifndef FAIL_SAMPLE
#define FAIL_SAMPLE 1
#endif

static const dynop_host *host_table;
#if defined(CRASH_RUN) || defined(CRASH_REGISTER)
static int *volatile nowhere; /* NULL, and the compiler cannot tell */
#endif

/* ---- test.Nop ---- */

static dynop_result nop_create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    (void)u, (void)a, (void)n;
    *inst = NULL;
    return DYNOP_OK;
}

static dynop_result same_shape(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    int32_t i;
    (void)inst, (void)nin, (void)nout;
    out->dtype = in->dtype;
#ifdef BAD_DTYPE
    out->dtype.code = 99;
#endif
#ifdef BAD_SETUP
    out->ndim = 99;
#else
    out->ndim = in->ndim;
#endif
    for (i = 0; i < in->ndim; i++) out->shape[i] = in->shape[i];
    return DYNOP_OK;
}

static dynop_result nop_run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
#if defined(OVERRUN) || defined(UNDERRUN)
    unsigned char *d = (unsigned char *)out->data + out->byte_offset;
    int64_t n = out->dtype.bits / 8 * out->dtype.lanes;
    int32_t i;
    for (i = 0; i < out->ndim; i++) n *= out->shape[i];
#endif
#ifdef SLOW
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
#endif
#ifdef OVERRUN
    d[n + 2] = 0; /* three bytes past the end */
#endif
#ifdef CRASH_RUN
    {
        static int calls;
        if (calls++ == 1) *nowhere = 1;
    }
#endif
#ifdef ABORT_RUN
    abort();
#endif
#ifdef EXIT0_RUN
    exit(0);
#endif
#ifdef UNDERRUN
    d[-1] = 0; /* one byte before the start */
#endif
    (void)inst, (void)out, (void)nout, (void)in, (void)nin;
    return DYNOP_OK;
}

/* ---- test.Fail ---- */

typedef struct { int sample; } fail_state;
static fail_state fail_instance;

static dynop_result fail_create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    (void)u, (void)a, (void)n;
    fail_instance.sample = 0;
    *inst = &fail_instance;
    return DYNOP_OK;
}

static dynop_result fail_run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    fail_state *s = (fail_state *)inst;
    char msg[64];
    (void)out, (void)nout, (void)in, (void)nin;
    if (s->sample++ == FAIL_SAMPLE) {
        snprintf(msg, sizeof msg, "sample %d is cursed", FAIL_SAMPLE);
        host_table->set_error(host_table, msg);
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    return DYNOP_OK;
}

/* ---- test.Args ---- */

#define ECHO 9
typedef struct { double v[ECHO]; } args_state;
static args_state args_instance;
static int destroyed;

static dynop_result args_create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    args_state *s = &args_instance;
    uint32_t k;
    (void)u;
    if (n != 7) {
        host_table->set_error(host_table, "test.Args: want 7 arguments");
        return DYNOP_ERROR_INVALID_ARGUMENT;
    }
    if (strcmp(a[0].name, "i") != 0 || a[0].type != DYNOP_ARG_INT) return DYNOP_ERROR;
    s->v[0] = (double)*(const int64_t *)a[0].values;
    s->v[1] = *(const double *)a[1].values;
    s->v[2] = *(const int32_t *)a[2].values;
    s->v[3] = (double)strlen(*(const char *const *)a[3].values);
    s->v[4] = ((const dynop_dtype *)a[4].values)->bits;
    s->v[5] = 0;
    for (k = 0; k < a[5].count; k++) s->v[5] += (double)((const int64_t *)a[5].values)[k];
    s->v[6] = a[0].given;
    s->v[7] = a[6].count ? (double)strlen(((const char *const *)a[6].values)[a[6].count - 1]) : -1;
    s->v[8] = a[6].count;
    destroyed = 0;
    *inst = s;
    return DYNOP_OK;
}

static dynop_result args_setup(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)inst, (void)in, (void)nin, (void)nout;
    out->dtype.code = DYNOP_DTYPE_FLOAT;
    out->dtype.bits = 64;
    out->dtype.lanes = 1;
    out->ndim = 1;
    out->shape[0] = ECHO;
    return DYNOP_OK;
}

static dynop_result args_run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    args_state *s = (args_state *)inst;
    double *d = (double *)((char *)out->data + out->byte_offset);
    int k;
    (void)nout, (void)in, (void)nin;
    for (k = 0; k < ECHO; k++) d[k * out->strides[0]] = s->v[k];
    return DYNOP_OK;
}

static void args_destroy(void *inst) {
    (void)inst;
    destroyed++;
}

DYNOP_EXPORT int dynop_test_destroyed(void);
DYNOP_EXPORT int dynop_test_destroyed(void) { return destroyed; }

/* ---- schemas ---- */

#ifdef BIG_NDIM
#define INPUT_NDIM 1000
#else
#define INPUT_NDIM 0
#endif
static const dynop_op_input any_input[] = {
    {DYNOP_OP_INPUT_HEADER, "in", "Anything.", NULL, NULL, INPUT_NDIM, NULL},
};
static const dynop_op_output one_output[] = {
#ifdef HUGE_STRIDE
    {{DYNOP_OP_OUTPUT_TYPE, DYNOP_OP_OUTPUT_VERSION, 1u << 30}, "out", "The result.", NULL, NULL, NULL, NULL, 0, NULL, 0},
#else
    {DYNOP_OP_OUTPUT_HEADER, "out", "The result.", NULL, NULL, NULL, NULL, 0, NULL, 0},
#endif
#if defined(BAD_STRIDE) || defined(HUGE_STRIDE)
    {{DYNOP_OP_OUTPUT_TYPE, DYNOP_OP_OUTPUT_VERSION, (uint32_t)sizeof(dynop_op_output) + 8}, "x", "y", NULL, NULL, NULL, NULL, 0, NULL, 0},
#endif
};
#ifdef BAD_ARG_TYPE
#define F_TYPE 99 /* and no default, which would tell the type is wrong */
#define F_DEFAULT NULL
#else
#define F_TYPE DYNOP_ARG_FLOAT
#define F_DEFAULT "0.5"
#endif
static const dynop_op_arg echo_args[] = {
    {DYNOP_OP_ARG_HEADER, "i", "An int.", DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 0, 100,
#ifdef BAD_DEFAULT
     "seven",
#else
     "7",
#endif
     NULL, "old_i"},
    {DYNOP_OP_ARG_HEADER, "f", "A float.", F_TYPE, 0, 0, 0, F_DEFAULT, NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "b", "A bool.", DYNOP_ARG_BOOL, 0, 0, 0, "false", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "s", "A string.", DYNOP_ARG_STRING, 0, 0, 0, "\"linear\"", "[\"linear\", \"cubic\"]", NULL},
    {DYNOP_OP_ARG_HEADER, "d", "A dtype.", DYNOP_ARG_DTYPE, 0, 0, 0, "\"uint8\"", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "il", "Ints.", DYNOP_ARG_INT_LIST, 0, 0, 0, "[1, 2, 3]", NULL, NULL},
    {DYNOP_OP_ARG_HEADER, "sl", "Strings.", DYNOP_ARG_STRING_LIST, 0, 0, 0, NULL, NULL, NULL},
};

#if defined(BAD_STRIDE) || defined(HUGE_STRIDE)
#define OUTPUTS 2
#else
#define OUTPUTS 1
#endif

static const dynop_op_schema nop_schema = {
    DYNOP_OP_SCHEMA_HEADER, "test.Nop", "Does nothing.", "cpu", 1, 0, any_input, OUTPUTS, one_output, 0, NULL,
};
static const dynop_op_schema fail_schema = {
    DYNOP_OP_SCHEMA_HEADER, "test.Fail", "Fails on one sample.", "cpu", 1, 0, any_input, 1, one_output, 0, NULL,
};
static const dynop_op_schema args_schema = {
    DYNOP_OP_SCHEMA_HEADER, "test.Args", "Echoes its arguments.", "cpu", 0, 0, NULL, 1, one_output, 7, echo_args,
};
static const dynop_op_schema *const schemas[] = {&nop_schema, &fail_schema, &args_schema};

static const dynop_operator nop_op = DYNOP_OPERATOR("test.Nop", "cpu", NULL, nop_create, same_shape, nop_run, NULL);
static const dynop_operator fail_op = DYNOP_OPERATOR("test.Fail", "cpu", NULL, fail_create, same_shape, fail_run, NULL);
static const dynop_operator args_op = DYNOP_OPERATOR("test.Args", "cpu", NULL, args_create, args_setup, args_run, args_destroy);
#ifdef UNDECLARED
static const dynop_operator undeclared_op = DYNOP_OPERATOR("test.Ghost", "cpu", NULL, nop_create, same_shape, nop_run, NULL);
#endif

static dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "dynop.plugin.ops", DYNOP_V(1, 0, 0), "Operator fixture.", NULL, NULL, 0,
    0, NULL, 0, NULL, NULL, 3, schemas, 0, NULL,
};

#ifdef UNTERMINATED
static char endless[70000];
#endif
#ifdef LONG_ID
static char long_id[16 + 10000 + 1] = "dynop.plugin.ops";
#endif

static const dynop_plugin_info *get_info(void) {
#ifdef LONG_ID
    memset(long_id + 16, 'o', 10000); /* a valid id but for its length */
    info.id = long_id;
#endif
#ifdef UNTERMINATED
    memset(endless, 'x', sizeof endless); /* no NUL; what follows is whatever the linker put there */
    info.description = endless;
#endif
    return &info;
}

static dynop_result reg(const dynop_host *host, const dynop_operator *op) {
    dynop_result rc = host->register_operator(host, op);
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    host_table = host;
#ifdef CRASH_REGISTER
    *nowhere = 1;
#endif
#ifdef EXIT_REGISTER
    exit(7);
#endif
    rc = reg(host, &nop_op);
#ifdef TWICE
    if (rc == DYNOP_OK) rc = reg(host, &nop_op);
#endif
#ifndef MISSING
    if (rc == DYNOP_OK) rc = reg(host, &fail_op);
#endif
    if (rc == DYNOP_OK) rc = reg(host, &args_op);
#ifdef UNDECLARED
    if (rc == DYNOP_OK) rc = reg(host, &undeclared_op);
#endif
    return rc;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
