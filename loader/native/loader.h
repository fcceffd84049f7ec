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

void *dynop_loader_dlopen(const dynop_loader_ident *who, const char *path, int global, int now, int deep,
                          char *err, size_t errcap);
int dynop_loader_dlclose(const dynop_loader_ident *who, void *lib, char *err, size_t errcap);
void *dynop_loader_dlsym(void *lib, const char *name, char *err, size_t errcap);
int dynop_loader_symbol_visible(const char *name);
int dynop_loader_is_loaded(const char *path); /* dlopen(RTLD_NOLOAD) finds it */
/* dynop_loader_loaded_as reports whether an object that name (a path or a
 * soname) matches is loaded, and writes the name it was loaded by to path. */
int dynop_loader_loaded_as(const char *name, char *path, size_t cap);
/* dynop_loader_deep_bind_unsafe reports whether loading a library with
 * RTLD_DEEPBIND is unsafe in this process, and writes why: libc's
 * allocator replaced in the global scope, or a sanitizer's runtime. */
int dynop_loader_deep_bind_unsafe(char *why, size_t cap);

dynop_function dynop_loader_get_function(const dynop_loader_ident *who, void *entry, const char *name);
const dynop_plugin_info *dynop_loader_get_info(const dynop_loader_ident *who, dynop_function f);
/* step names the entry point, "register" or "deregister". */
dynop_result dynop_loader_call_step(dynop_function f, const dynop_host *h, const char *step);

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
                                  uint32_t scratch, int fill, void *p0, void *p1, void *p2, void *p3, void *p4,
                                  void *p5, void *p6, void *p7, uint32_t first, uintptr_t failed_, uintptr_t err_,
                                  size_t errcap);
void dynop_loader_op_destroy(const dynop_loader_ident *who, const dynop_operator *op, void *instance);

/* dynop_loader_pass_run fills in b's header and functions, with context
 * (a runtime/cgo.Handle) for the functions to find the Go side of the
 * run, and runs pass over b. If run fails, err receives the message the
 * plugin gave with set_error. */
dynop_result dynop_loader_pass_run(const dynop_loader_ident *who, const dynop_pass *pass, dynop_graph_builder *b,
                                   uintptr_t context, char *err, size_t errcap);

#endif
