/*
 * passes.c — a native plugin with graph passes, for the loader's tests.
 * Without switches it declares and registers:
 *
 *   fixture.double  populate, matching kind "fixture.Double": attaches the
 *                   operator test.Scale (which the test registers in Go)
 *                   with {"factor": 2}. On nodes with these names it does
 *                   something else and returns what the builder said,
 *                   without set_error:
 *                     "own-args"   set_operator with the node's own args
 *                     "bad-index"  set_operator on node 99
 *                     "bad-op"     set_operator of operator "test.Nope"
 *                     "bad-args"   set_operator with args_json "[2]"
 *                     "grouper"    group, which populate passes may not
 *                     "input"      set_operator on a graph input
 *                   and on a node called "late-register" it calls
 *                   register_pass, which only register may, and passes the
 *                   host's error on with set_error
 *   fixture.pair    partition: groups the first two non-input nodes whose
 *                   kind starts with "fixture." into a node "fixture.pair"
 *   fixture.guard   global: fails, with set_error, if a node is called
 *                   "forbidden"; if one is called "describe", fails with a
 *                   description of the graph it sees
 *
 * -D switches break it: NULL_NAME (passes[1] has no name), BAD_KIND
 * (passes[1] has kind 7), SMALL_DESC (passes[0]'s header says 40 bytes),
 * NO_MATCH (the populate pass matches nothing), UNDECLARED (register also
 * registers fixture.ghost), NULL_RUN (fixture.guard's run is NULL),
 * OLD_INFO (an info of version 1.1, which ends before its passes).
 */
#include <stdio.h>
#include <string.h>

#include <dynop/dynop.h>

static const dynop_host *host_table;

/* ---- fixture.double ---- */

static const dynop_pass double_pass;

static dynop_result populate(void *user, const dynop_graph_builder *b) {
    const dynop_graph_node *n;
    (void)user;
    if (b->node >= b->node_count) return DYNOP_ERROR_INVALID_ARGUMENT;
    n = DYNOP_GRAPH_NODE(b, b->node);
    if (strcmp(n->name, "own-args") == 0) return b->set_operator(b, b->node, "test.Scale", NULL);
    if (strcmp(n->name, "bad-index") == 0) return b->set_operator(b, 99, "test.Scale", NULL);
    if (strcmp(n->name, "bad-op") == 0) return b->set_operator(b, b->node, "test.Nope", NULL);
    if (strcmp(n->name, "bad-args") == 0) return b->set_operator(b, b->node, "test.Scale", "[2]");
    if (strcmp(n->name, "grouper") == 0) return b->group(b, "g", &b->node, 1);
    if (strcmp(n->name, "input") == 0) return b->set_operator(b, n->inputs[0], "test.Scale", NULL);
    if (strcmp(n->name, "late-register") == 0) {
        dynop_result rc = host_table->register_pass(host_table, &double_pass);
        host_table->set_error(host_table, host_table->last_error(host_table));
        return rc;
    }
    return b->set_operator(b, b->node, "test.Scale", "{\"factor\": 2}");
}

/* ---- fixture.pair ---- */

static dynop_result partition(void *user, const dynop_graph_builder *b) {
    uint32_t i, picked[2], k = 0;
    (void)user;
    if (b->node != DYNOP_NO_NODE) return DYNOP_ERROR_INVALID_ARGUMENT;
    for (i = 0; i < b->node_count && k < 2; i++) {
        const dynop_graph_node *n = DYNOP_GRAPH_NODE(b, i);
        if (n->kind[0] != 0 && strncmp(n->kind, "fixture.", 8) == 0) picked[k++] = i;
    }
    if (k < 2) return DYNOP_OK;
    return b->group(b, "fixture.pair", picked, k);
}

/* ---- fixture.guard ---- */

static char message[2048];

/* describe writes "node=N; " and then, per node,
 * "name|kind|definition or -|producer:output,...|args_json or -; ". */
static void describe(const dynop_graph_builder *b) {
    size_t at;
    uint32_t i, j;
    if (b->node == DYNOP_NO_NODE) {
        at = (size_t)snprintf(message, sizeof message, "node=none; ");
    } else {
        at = (size_t)snprintf(message, sizeof message, "node=%u; ", (unsigned)b->node);
    }
    for (i = 0; i < b->node_count && at < sizeof message; i++) {
        const dynop_graph_node *n = DYNOP_GRAPH_NODE(b, i);
        at += (size_t)snprintf(message + at, sizeof message - at, "%s|%s|%s|", n->name, n->kind,
                               n->definition ? n->definition : "-");
        for (j = 0; j < n->input_count && at < sizeof message; j++) {
            at += (size_t)snprintf(message + at, sizeof message - at, "%s%u:%u", j ? "," : "",
                                   (unsigned)n->inputs[j], (unsigned)n->input_outputs[j]);
        }
        if (at < sizeof message) {
            at += (size_t)snprintf(message + at, sizeof message - at, "|%s; ", n->args_json ? n->args_json : "-");
        }
    }
}

static dynop_result global(void *user, const dynop_graph_builder *b) {
    uint32_t i;
    (void)user;
    for (i = 0; i < b->node_count; i++) {
        const dynop_graph_node *n = DYNOP_GRAPH_NODE(b, i);
        if (strcmp(n->name, "forbidden") == 0) {
            host_table->set_error(host_table, "fixture.guard: a node called \"forbidden\" is not allowed");
            return DYNOP_ERROR_INVALID_ARGUMENT;
        }
        if (strcmp(n->name, "describe") == 0) {
            describe(b);
            host_table->set_error(host_table, message);
            return DYNOP_ERROR;
        }
    }
    return DYNOP_OK;
}

/* ---- declarations ---- */

static const dynop_pass_desc double_desc =
#ifdef SMALL_DESC
    {{DYNOP_PASS_DESC_TYPE, DYNOP_PASS_DESC_VERSION, 40},
#else
    {DYNOP_PASS_DESC_HEADER,
#endif
     "fixture.double", DYNOP_PASS_POPULATE,
#ifdef NO_MATCH
     NULL,
#else
     "fixture.Double",
#endif
     0, "Runs fixture.Double nodes as test.Scale by 2."};
static const dynop_pass_desc pair_desc = {
    DYNOP_PASS_DESC_HEADER,
#ifdef NULL_NAME
    NULL,
#else
    "fixture.pair",
#endif
#ifdef BAD_KIND
    7,
#else
    DYNOP_PASS_PARTITION,
#endif
    NULL, 5, "Groups the first two fixture nodes."};
static const dynop_pass_desc guard_desc =
    DYNOP_PASS_DESC("fixture.guard", DYNOP_PASS_GLOBAL, NULL, 0, "Refuses graphs with a node called forbidden.");
static const dynop_pass_desc *const pass_descs[] = {&double_desc, &pair_desc, &guard_desc};

static const dynop_pass double_pass = {DYNOP_PASS_HEADER, "fixture.double", NULL, populate};
static const dynop_pass pair_pass = {DYNOP_PASS_HEADER, "fixture.pair", NULL, partition};
#ifdef NULL_RUN
static const dynop_pass guard_pass = {DYNOP_PASS_HEADER, "fixture.guard", NULL, NULL};
#else
static const dynop_pass guard_pass = {DYNOP_PASS_HEADER, "fixture.guard", NULL, global};
#endif
#ifdef UNDECLARED
static const dynop_pass ghost_pass = {DYNOP_PASS_HEADER, "fixture.ghost", NULL, global};
#endif

static const dynop_plugin_info info = {
#ifdef OLD_INFO
    {DYNOP_PLUGIN_INFO_TYPE, DYNOP_V(DYNOP_PLUGIN_INFO_VERSION_MAJOR, 1, 0), (uint32_t)offsetof(dynop_plugin_info, pass_count)},
#else
    DYNOP_PLUGIN_INFO_HEADER,
#endif
    DYNOP_API_VERSION, "dynop.plugin.passes", DYNOP_V(1, 0, 0), "Pass fixture.", NULL, NULL, 0,
    0, NULL, 0, NULL, NULL, 0, NULL, 3, pass_descs,
};

static const dynop_plugin_info *get_info(void) { return &info; }

static dynop_result reg(const dynop_host *host, const dynop_pass *pass) {
    dynop_result rc = host->register_pass(host, pass);
    if (rc != DYNOP_OK) host->set_error(host, host->last_error(host));
    return rc;
}

static dynop_result register_plugin(const dynop_host *host) {
    dynop_result rc;
    if (!DYNOP_HAS_MEMBER(dynop_host, host, register_pass)) {
        host->set_error(host, "the host is too old for passes");
        return DYNOP_ERROR_VERSION;
    }
    host_table = host;
    rc = reg(host, &double_pass);
    if (rc == DYNOP_OK) rc = reg(host, &pair_pass);
    if (rc == DYNOP_OK) rc = reg(host, &guard_pass);
#ifdef UNDECLARED
    if (rc == DYNOP_OK) rc = reg(host, &ghost_pass);
#endif
    return rc;
}

static dynop_result deregister_plugin(const dynop_host *host) {
    (void)host;
    host_table = NULL;
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    if (strcmp(name, "deregister") == 0) return (dynop_function)deregister_plugin;
    return NULL;
}
