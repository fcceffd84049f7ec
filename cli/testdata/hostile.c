/*
 * hostile.c — a native plugin for the CLI's tests of what it does with a
 * plugin that misbehaves. Without switches it declares and registers the
 * operator hostile.Nop (one input, one output of the input's shape; run
 * leaves the output as the host allocated it), and every string it hands
 * the host carries terminal escape sequences: the description, author and
 * build, the operator's docs, a log line at error level from register.
 *
 * -D switches:
 *   REGISTER_FAILS    register fails, with a message full of escapes
 *   REGISTER_BLOCKS   register never returns; it first creates the file
 *                     named by $HOSTILE_MARKER, so a test knows it is stuck
 *   DEREGISTER_FAILS  deregister fails with set_error
 *   PLAIN             the strings carry no escapes
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dynop/dynop.h>

#ifdef PLAIN
#define HOSTILE(s) s
#else
/* A window title (OSC), clear screen, a fake red verdict, a carriage
 * return, an 8-bit CSI as a code point (U+009B) and as a lone byte, and a
 * right-to-left override. */
#define HOSTILE(s)                                                                                          \
    "\x1b]0;owned\x07" s "\x1b[2J\x1b[31mall plugins verified\x1b[0m\rEVIL\xc2\x9b" "31m\x9b" "1m" \
    "\xe2\x80\xae" "reversed"
#endif

static dynop_result nop_create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    (void)u, (void)a, (void)n;
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

static const dynop_op_input inputs[] = {
    {DYNOP_OP_INPUT_HEADER, "images", HOSTILE("Input doc."), NULL, NULL, 0, NULL},
};
static const dynop_op_output outputs[] = {
    {DYNOP_OP_OUTPUT_HEADER, "out", HOSTILE("Output doc."), NULL, NULL, NULL, NULL, 0, NULL, 0},
};
static const dynop_op_arg args[] = {
    {DYNOP_OP_ARG_HEADER, "level", HOSTILE("Arg doc."), DYNOP_ARG_INT, 0, 0, 0, "1", NULL, NULL},
};
static const dynop_op_schema schema = {
    DYNOP_OP_SCHEMA_HEADER, "hostile.Nop", HOSTILE("Operator doc."), "cpu", 1, 0, inputs, 1, outputs, 1, args,
};
static const dynop_op_schema *const schemas[] = {&schema};
static const dynop_operator nop = DYNOP_OPERATOR("hostile.Nop", "cpu", NULL, nop_create, nop_setup, nop_run, NULL);

static const dynop_plugin_info info = {
    DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "dynop.plugin.hostile", DYNOP_V(1, 0, 0),
    HOSTILE("Description."), HOSTILE("Author."), HOSTILE("Build."), 0,
    0, NULL, 0, NULL, NULL, 1, schemas, 0, NULL,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
#ifdef REGISTER_BLOCKS
    {
        const char *marker = getenv("HOSTILE_MARKER");
        if (marker != NULL) {
            FILE *f = fopen(marker, "w");
            if (f != NULL) fclose(f);
        }
        for (;;) sleep(1);
    }
#endif
#ifdef REGISTER_FAILS
    host->set_error(host, HOSTILE("register refuses."));
    return DYNOP_ERROR_UNSUPPORTED;
#endif
    host->log(host, DYNOP_LOG_ERROR, HOSTILE("Log line."));
    rc = host->register_operator(host, &nop);
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

static dynop_result deregister_plugin(const dynop_host *host) {
#ifdef DEREGISTER_FAILS
    host->set_error(host, HOSTILE("cannot let go."));
    return DYNOP_ERROR;
#else
    (void)host;
    return DYNOP_OK;
#endif
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    if (strcmp(name, "deregister") == 0) return (dynop_function)deregister_plugin;
    return NULL;
}
