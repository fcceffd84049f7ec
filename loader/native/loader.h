/* loader.h — the native loader's private C side: the host table it hands
 * to plugins, and trampolines that call plugin entry points. */
#ifndef DYNOP_LOADER_H
#define DYNOP_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <dynop/dynop.h>

/* Who a library is, for the report of a crash or an exit() in its code:
 * the file, and the plugin ID once it is known. Every trampoline into the
 * library takes it. */
typedef struct dynop_loader_ident {
    char *file;
    char *plugin; /* NULL until set */
} dynop_loader_ident;

dynop_loader_ident *dynop_loader_new_ident(const char *file);
void dynop_loader_set_plugin(dynop_loader_ident *w, const char *plugin);
void dynop_loader_free_ident(dynop_loader_ident *w);

/* dynop_loader_install_handlers chains a handler before Go's for the fatal
 * signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS) that first
 * prints the plugin call in flight on the faulting thread, if any, and
 * registers an on_exit hook that names the plugin that called exit(),
 * turning a status of 0 into DYNOP_LOADER_EXIT_STATUS. Call it once. */
void dynop_loader_install_handlers(void);
#define DYNOP_LOADER_EXIT_STATUS 70 /* EX_SOFTWARE */
#define DYNOP_LOADER_EXIT_STATUS_TEXT "70"

/* The host table a plugin receives, followed by what the shims need to
 * find the Go side of the plugin's current start. Plugins see only pub. */
typedef struct dynop_loader_host {
    dynop_host pub;
    uintptr_t session;             /* a runtime/cgo.Handle */
    dynop_cpu_features cpu;        /* what cpu_features returns */
    const dynop_loader_ident *who; /* the library */
} dynop_loader_host;

dynop_loader_host *dynop_loader_new_host(uintptr_t session, dynop_cpu_features cpu, const dynop_loader_ident *who);
void dynop_loader_free_host(dynop_loader_host *h);

void *dynop_loader_dlopen(const dynop_loader_ident *who, const char *path, int global, int now, char *err,
                          size_t errcap);
int dynop_loader_dlclose(const dynop_loader_ident *who, void *lib, char *err, size_t errcap);
void *dynop_loader_dlsym(void *lib, const char *name, char *err, size_t errcap);
int dynop_loader_symbol_visible(const char *name);
int dynop_loader_is_loaded(const char *path); /* dlopen(RTLD_NOLOAD) finds it */

dynop_function dynop_loader_get_function(const dynop_loader_ident *who, void *entry, const char *name);
const dynop_plugin_info *dynop_loader_get_info(const dynop_loader_ident *who, dynop_function f);
/* step names the entry point, "register" or "deregister". */
dynop_result dynop_loader_call_step(dynop_function f, const dynop_host *h, const char *step);

/* The size of the first layout (version N.0) of each ABI struct's major:
 * where its last N.0 member ends. A host reads every minor version of a
 * major it knows, so these, not sizeof, are the least a plugin's struct may
 * be; they stay as the structs grow. */
extern const size_t dynop_loader_min_info, dynop_loader_min_desc, dynop_loader_min_need,
    dynop_loader_min_requirements, dynop_loader_min_schema, dynop_loader_min_input,
    dynop_loader_min_output, dynop_loader_min_arg, dynop_loader_min_operator;

/* Where dynop_plugin_info.operators ends: an info (of version 1.1 or
 * later) whose size covers it lists operators. */
extern const size_t dynop_loader_info_operators_end;

/* Where dynop_plugin_info.passes ends (version 1.2), and the first
 * layouts of the pass structs. */
extern const size_t dynop_loader_info_passes_end, dynop_loader_min_pass_desc, dynop_loader_min_pass;

/* Where dynop_operator.variants ends (version 1.1), and the first layout
 * of dynop_variant. */
extern const size_t dynop_loader_operator_variants_end, dynop_loader_min_variant;

/* The ABI structs' type UIDs, as data Go can read. */
extern const dynop_uid dynop_loader_info_type;
extern const dynop_uid dynop_loader_desc_type;
extern const dynop_uid dynop_loader_need_type;
extern const dynop_uid dynop_loader_requirements_type;
extern const dynop_uid dynop_loader_schema_type;
extern const dynop_uid dynop_loader_input_type;
extern const dynop_uid dynop_loader_output_type;
extern const dynop_uid dynop_loader_arg_type;
extern const dynop_uid dynop_loader_operator_type;
extern const dynop_uid dynop_loader_pass_desc_type;
extern const dynop_uid dynop_loader_pass_type;
extern const dynop_uid dynop_loader_variant_type;
/* The header of a dynop_graph_node as this host writes them. */
extern const dynop_header dynop_loader_graph_node_header;

dynop_result dynop_loader_op_create(const dynop_loader_ident *who, const dynop_operator *op, const dynop_arg *args,
                                    uint32_t n, void **instance, char *err, size_t errcap);
/* How many data pointers dynop_loader_op_call takes as arguments. */
#define DYNOP_LOADER_ARG_POINTERS 8
/* first is the index in the batch of the first of the samples, for
 * reports. */
dynop_result dynop_loader_op_call(uintptr_t who_, int setup, uintptr_t op_, uintptr_t run_, uintptr_t instance,
                                  uint32_t samples, uintptr_t in_, uint32_t nin, uintptr_t out_, uint32_t nout,
                                  int fill, void *p0, void *p1, void *p2, void *p3, void *p4, void *p5, void *p6,
                                  void *p7, uint32_t first, uintptr_t failed_, uintptr_t err_, size_t errcap);
void dynop_loader_op_destroy(const dynop_loader_ident *who, const dynop_operator *op, void *instance);

/* dynop_loader_pass_run fills in b's header and functions, with context
 * (a runtime/cgo.Handle) for the functions to find the Go side of the
 * run, and runs pass over b. If run fails, err receives the message the
 * plugin gave with set_error. */
dynop_result dynop_loader_pass_run(const dynop_loader_ident *who, const dynop_pass *pass, dynop_graph_builder *b,
                                   uintptr_t context, char *err, size_t errcap);

#endif
