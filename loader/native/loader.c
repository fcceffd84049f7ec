/* loader.c — dlopen wrappers, entry-point trampolines and the host table's
 * C functions, which forward to the Go functions exported in host.go. */
#define _GNU_SOURCE /* on_exit */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#include "_cgo_export.h"

const dynop_header dynop_loader_graph_node_header = DYNOP_GRAPH_NODE_HEADER;


/* ---- Whom to blame: the plugin call in flight on each thread ----
 *
 * Every trampoline into plugin code records, for its thread, which plugin
 * (and file) it calls and what (register, an operator's run and sample, a
 * pass); calls back into the host clear the record while Go runs. A fatal
 * signal in plugin code then prints that record before Go's handler prints
 * its dump, and an exit() from plugin code says who called it. */

dynop_loader_ident *dynop_loader_new_ident(const char *file) {
    dynop_loader_ident *w = (dynop_loader_ident *)calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    w->file = strdup(file);
    return w;
}

void dynop_loader_set_plugin(dynop_loader_ident *w, const char *plugin) {
    char *p = strdup(plugin);
    if (w == NULL) {
        free(p);
        return;
    }
    free(w->plugin);
    w->plugin = p;
}

void dynop_loader_free_ident(dynop_loader_ident *w) {
    if (w == NULL) return;
    free(w->file);
    free(w->plugin);
    free(w);
}

typedef struct inflight {
    const dynop_loader_ident *who;
    const char *call; /* "register", "run", ... */
    const char *name; /* the operator or pass, or NULL */
    int64_t sample;   /* -1: none */
} inflight;

static _Thread_local const inflight *volatile current;

#define ENTER_PLUGIN(w, c, n)                                 \
    inflight here_ = {(w), (c), (n), -1};                      \
    const inflight *saved_ = current;                          \
    current = (w) != NULL ? &here_ : saved_
#define LEAVE_PLUGIN() current = saved_

/* IN_GO evaluates a call into Go with the thread's record cleared: a
 * fault that Go turns into a panic there is Go's, not the plugin's. */
#define IN_GO(call)                           \
    ({                                        \
        const inflight *go_saved_ = current;  \
        current = NULL;                       \
        __typeof__(call) go_r_ = (call);      \
        current = go_saved_;                  \
        go_r_;                                \
    })
#define IN_GO_VOID(call)                      \
    do {                                      \
        const inflight *go_saved_ = current;  \
        current = NULL;                       \
        call;                                 \
        current = go_saved_;                  \
    } while (0)

/* A message built without malloc or stdio, for signal handlers. */
typedef struct msgbuf {
    char b[1024];
    size_t n;
} msgbuf;

static void put(msgbuf *m, const char *s) {
    size_t k = 0;
    if (s == NULL) s = "(null)";
    while (s[k] != 0 && k < 300 && m->n < sizeof m->b - 1) m->b[m->n++] = s[k++];
}

static void put_int(msgbuf *m, int64_t v) {
    char d[24];
    int k = 0;
    uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    if (v < 0) put(m, "-");
    do {
        d[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    while (k > 0 && m->n < sizeof m->b - 1) m->b[m->n++] = d[--k];
}

static void put_call(msgbuf *m, const inflight *f) {
    put(m, "native plugin \"");
    put(m, f->who->plugin != NULL ? f->who->plugin : "(not yet known)");
    put(m, "\" (");
    put(m, f->who->file);
    put(m, "), during ");
    if (f->name != NULL) {
        put(m, f->name[0] == 0 ? "(unnamed)" : f->name);
        put(m, " ");
    }
    put(m, f->call);
    if (f->sample >= 0) {
        put(m, ", sample ");
        put_int(m, f->sample);
    }
}

static void emit(msgbuf *m) {
    ssize_t rc;
    m->b[m->n++] = '\n';
    rc = write(2, m->b, m->n);
    (void)rc;
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGABRT: return "SIGABRT (abort)";
    case SIGSYS: return "SIGSYS (bad system call)";
    }
    return "a fatal signal";
}

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction previous[NFATAL];

static void on_fatal(int sig, siginfo_t *info, void *uc) {
    const inflight *f = current;
    size_t i;
    if (f != NULL) {
        msgbuf m;
        m.n = 0;
        current = NULL; /* once: the handlers below may fault again */
        put(&m, "dynop: ");
        put(&m, signal_name(sig));
        put(&m, " in ");
        put_call(&m, f);
        put(&m, "; the host process ends (what follows is the Go runtime's report)");
        emit(&m);
    }
    /* Chain to the handler before ours: Go's, which turns a fault in Go
     * code into a panic and reports any other. */
    for (i = 0; i < NFATAL; i++) {
        const struct sigaction *p = &previous[i];
        if (fatal_signals[i] != sig) continue;
        if (p->sa_flags & SA_SIGINFO) {
            if (p->sa_sigaction != NULL) p->sa_sigaction(sig, info, uc);
            return;
        }
        if (p->sa_handler == SIG_IGN) return;
        if (p->sa_handler == SIG_DFL) {
            /* The default action, once this handler returns: a fault
             * faults again, a raised signal is raised again. */
            signal(sig, SIG_DFL);
            if (info == NULL || info->si_code <= 0) raise(sig);
            return;
        }
        p->sa_handler(sig);
        return;
    }
}

static void on_plugin_exit(int status, void *arg) {
    const inflight *f = current;
    msgbuf m;
    (void)arg;
    if (f == NULL) return;
    current = NULL;
    m.n = 0;
    put(&m, "dynop: exit(");
    put_int(&m, status);
    put(&m, ") called by ");
    put_call(&m, f);
    put(&m, ": the host process ends with it");
    if (status == 0) put(&m, ", with status " DYNOP_LOADER_EXIT_STATUS_TEXT " instead of 0: nothing the host was doing finished");
    emit(&m);
    if (status == 0) {
        fflush(NULL);
        _exit(DYNOP_LOADER_EXIT_STATUS);
    }
}

void dynop_loader_install_handlers(void) {
    size_t i;
    for (i = 0; i < NFATAL; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(fatal_signals[i], NULL, &previous[i]) != 0) continue;
        sa.sa_mask = previous[i].sa_mask;
        sigaction(fatal_signals[i], &sa, NULL);
    }
    on_exit(on_plugin_exit, NULL);
}

/* dlerror's state is per thread, and a goroutine may change threads
 * between two cgo calls: each wrapper reads dlerror in the same call. */
static void copy_dlerror(char *err, size_t errcap, const char *what) {
    const char *e = dlerror();
    snprintf(err, errcap, "%s", e ? e : what);
}

void *dynop_loader_dlopen(const dynop_loader_ident *who, const char *path, int global, int now, int deep,
                          char *err, size_t errcap) {
    void *lib;
    ENTER_PLUGIN(who, "loading (its constructors)", NULL);
    lib = dlopen(path, (now ? RTLD_NOW : RTLD_LAZY) | (global ? RTLD_GLOBAL : RTLD_LOCAL) | (deep ? RTLD_DEEPBIND : 0));
    LEAVE_PLUGIN();
    if (lib == NULL) copy_dlerror(err, errcap, "dlopen failed");
    return lib;
}

int dynop_loader_dlclose(const dynop_loader_ident *who, void *lib, char *err, size_t errcap) {
    int rc;
    ENTER_PLUGIN(who, "unloading (its destructors)", NULL);
    rc = dlclose(lib);
    LEAVE_PLUGIN();
    if (rc != 0) copy_dlerror(err, errcap, "dlclose failed");
    return rc;
}

void *dynop_loader_dlsym(void *lib, const char *name, char *err, size_t errcap) {
    void *sym;
    dlerror();
    sym = dlsym(lib, name);
    if (sym == NULL) copy_dlerror(err, errcap, "symbol not found");
    return sym;
}

int dynop_loader_symbol_visible(const char *name) {
    return dlsym(RTLD_DEFAULT, name) != NULL;
}

dynop_function dynop_loader_get_function(const dynop_loader_ident *who, void *entry, const char *name) {
    dynop_function (*get)(const char *);
    dynop_function f;
    ENTER_PLUGIN(who, "dynop_plugin_get_function", NULL);
    *(void **)(&get) = entry; /* POSIX: dlsym results convert this way */
    f = get(name);
    LEAVE_PLUGIN();
    return f;
}

const dynop_plugin_info *dynop_loader_get_info(const dynop_loader_ident *who, dynop_function f) {
    const dynop_plugin_info *info;
    ENTER_PLUGIN(who, "get_info", NULL);
    info = ((dynop_get_info_function)f)();
    LEAVE_PLUGIN();
    return info;
}

/* While a thread runs an operator function or a pass, set_error writes
 * into that call's error buffer, and the trampoline returns with the
 * message in it (a goroutine may change threads between two cgo calls).
 * Calls nest: a pass may instantiate an operator, which may start another
 * plugin, whose register gives its messages to its session; each
 * trampoline installs its buffer, or none, and restores the one before. */
typedef struct error_sink {
    char *buf;
    size_t cap;
} error_sink;
static _Thread_local error_sink sink;

static error_sink enter_sink(char *buf, size_t cap) {
    error_sink saved = sink;
    if (buf != NULL && cap > 0) buf[0] = 0;
    sink.buf = buf;
    sink.cap = cap;
    return saved;
}

static void leave_sink(error_sink saved) { sink = saved; }

dynop_result dynop_loader_call_step(dynop_function f, const dynop_host *h, const char *step) {
    dynop_result rc;
    error_sink saved = enter_sink(NULL, 0);
    ENTER_PLUGIN(((const dynop_loader_host *)h)->who, step, NULL);
    rc = ((dynop_register_function)f)(h);
    LEAVE_PLUGIN();
    leave_sink(saved);
    return rc;
}

/* The host table. Each function clears the calling thread's last error,
 * checks what C can check, and forwards to Go with the thread's error
 * buffer, which last_error returns. */

/* The thread's error buffer is on the heap, found through an 8-byte
 * thread-local pointer: a library built with -buildmode=c-shared has
 * static TLS only (Go's), which dlopen takes from a small reserve shared
 * by every library (glibc's), and Wasmtime's own thread-locals already
 * use most of it. A 1 KiB thread-local buffer made libdynop.so fail to
 * dlopen ("cannot allocate memory in static TLS block"). */
#define LAST_ERROR_SIZE 1024
static _Thread_local char *last_error_buf;
static pthread_key_t last_error_key;
static pthread_once_t last_error_once = PTHREAD_ONCE_INIT;
static char last_error_oom[LAST_ERROR_SIZE]; /* shared, only if calloc fails */

static void last_error_key_make(void) { (void)pthread_key_create(&last_error_key, free); }

/* thread_error returns the calling thread's error buffer, made on first
 * use and freed when the thread exits. */
static char *thread_error(void) {
    if (last_error_buf == NULL) {
        char *b = calloc(1, LAST_ERROR_SIZE);
        if (b == NULL) return last_error_oom;
        (void)pthread_once(&last_error_once, last_error_key_make);
        (void)pthread_setspecific(last_error_key, b);
        last_error_buf = b;
    }
    return last_error_buf;
}

static uintptr_t session_of(const dynop_host *h) {
    return ((const dynop_loader_host *)h)->session;
}

/* done clears the thread's last error after a success: a nested host call
 * on this thread (a plugin started by this acquire) may have left one. */
static dynop_result done(dynop_result rc) {
    if (rc == DYNOP_OK) thread_error()[0] = 0;
    return rc;
}

static dynop_result invalid(const char *msg) {
    snprintf(thread_error(), LAST_ERROR_SIZE, "%s", msg);
    return DYNOP_ERROR_INVALID_ARGUMENT;
}

static dynop_result host_add_interface(const dynop_host *h, const void *iface) {
    thread_error()[0] = 0;
    if (h == NULL) return invalid("add_interface: host is NULL");
    if (iface == NULL) return invalid("add_interface: iface is NULL");
    return done(IN_GO(dynopGoAddInterface(session_of(h), (void *)iface, thread_error(), LAST_ERROR_SIZE)));
}

static dynop_result host_remove_interface(const dynop_host *h, const dynop_uid *uid) {
    thread_error()[0] = 0;
    if (h == NULL) return invalid("remove_interface: host is NULL");
    if (uid == NULL) return invalid("remove_interface: uid is NULL");
    return done(IN_GO(dynopGoRemoveInterface(session_of(h), (dynop_uid *)uid, thread_error(), LAST_ERROR_SIZE)));
}

static dynop_result host_acquire(const dynop_host *h, const char *plugin_id, const dynop_uid *uid,
                                 dynop_version min_version, const void **iface, dynop_ref *ref) {
    thread_error()[0] = 0;
    if (h == NULL) return invalid("acquire: host is NULL");
    if (plugin_id == NULL) return invalid("acquire: plugin_id is NULL");
    if (uid == NULL) return invalid("acquire: uid is NULL");
    if (iface == NULL || ref == NULL) return invalid("acquire: iface or ref is NULL");
    *iface = NULL;
    *ref = 0;
    return done(IN_GO(dynopGoAcquire(session_of(h), (char *)plugin_id, (dynop_uid *)uid, &min_version,
                               (void **)iface, ref, thread_error(), LAST_ERROR_SIZE)));
}

static dynop_result host_release(const dynop_host *h, dynop_ref ref) {
    thread_error()[0] = 0;
    if (h == NULL) return invalid("release: host is NULL");
    return done(IN_GO(dynopGoRelease(session_of(h), ref, thread_error(), LAST_ERROR_SIZE)));
}

static void host_log(const dynop_host *h, dynop_log_level level, const char *message) {
    if (h == NULL) return;
    IN_GO_VOID(dynopGoLog(session_of(h), level, (char *)(message ? message : "(null)")));
}

static void host_set_error(const dynop_host *h, const char *message) {
    if (sink.buf != NULL) {
        snprintf(sink.buf, sink.cap, "%s", message ? message : "");
        return;
    }
    if (h == NULL) return;
    IN_GO_VOID(dynopGoSetError(session_of(h), (char *)(message ? message : "")));
}

static dynop_result host_register_operator(const dynop_host *h, const dynop_operator *op) {
    thread_error()[0] = 0;
    if (h == NULL) return invalid("register_operator: host is NULL");
    if (op == NULL) return invalid("register_operator: op is NULL");
    return done(IN_GO(dynopGoRegisterOperator(session_of(h), (dynop_operator *)op, thread_error(), LAST_ERROR_SIZE)));
}

static dynop_result host_register_pass(const dynop_host *h, const dynop_pass *pass) {
    thread_error()[0] = 0;
    if (h == NULL) return invalid("register_pass: host is NULL");
    if (pass == NULL) return invalid("register_pass: pass is NULL");
    return done(IN_GO(dynopGoRegisterPass(session_of(h), (dynop_pass *)pass, thread_error(), LAST_ERROR_SIZE)));
}

static dynop_cpu_features host_cpu_features(const dynop_host *h) {
    return h == NULL ? 0 : ((const dynop_loader_host *)h)->cpu;
}

static int32_t host_select_variant(const dynop_host *h, const char *name, const dynop_variant *variants,
                                   uint32_t count) {
    thread_error()[0] = 0;
    if (h == NULL || name == NULL || variants == NULL || count == 0) {
        invalid("select_variant: host, name or variants is NULL, or count is 0");
        return -1;
    }
    return IN_GO(dynopGoSelectVariant(session_of(h), (char *)name, (dynop_variant *)variants, count, thread_error(),
                                      LAST_ERROR_SIZE));
}

static const char *host_last_error(const dynop_host *h) {
    (void)h;
    return thread_error();
}

dynop_loader_host *dynop_loader_new_host(uintptr_t session, dynop_cpu_features cpu, const dynop_loader_ident *who) {
    static const dynop_header header = DYNOP_HOST_HEADER;
    static const dynop_version api = DYNOP_API_VERSION;
    dynop_loader_host *h = (dynop_loader_host *)calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->pub.header = header;
    h->pub.api_version = api;
    h->pub.add_interface = host_add_interface;
    h->pub.remove_interface = host_remove_interface;
    h->pub.acquire = host_acquire;
    h->pub.release = host_release;
    h->pub.log = host_log;
    h->pub.set_error = host_set_error;
    h->pub.last_error = host_last_error;
    h->pub.register_operator = host_register_operator;
    h->pub.register_pass = host_register_pass;
    h->pub.cpu_features = host_cpu_features;
    h->pub.select_variant = host_select_variant;
    h->pub.plugin_path = who->file;
    h->session = session;
    h->cpu = cpu;
    h->who = who;
    return h;
}

void dynop_loader_free_host(dynop_loader_host *h) { free(h); }

/* Operator trampolines. Each runs one operator function for a whole batch,
 * so a batch costs one cgo call, with the message the plugin gives with
 * set_error going to err. */

dynop_result dynop_loader_op_create(const dynop_loader_ident *who, const dynop_operator *op, const dynop_arg *args,
                                    uint32_t n, void **instance, char *err, size_t errcap) {
    dynop_result rc;
    error_sink saved = enter_sink(err, errcap);
    ENTER_PLUGIN(who, "create", op->name);
    *instance = NULL;
    rc = op->create(op->user_data, args, n, instance);
    LEAVE_PLUGIN();
    leave_sink(saved);
    return rc;
}

/* dynop_loader_op_call runs setup (if setup is nonzero) or run (the
 * operator's run or the variant of it that the host chose) for
 * samples samples: inputs in[j*nin ...], outputs out[j*nout ...] for sample
 * j, the last of which is the scratch tensor if scratch is 1 (the
 * operator is told nout - scratch outputs). If fill is nonzero the
 * tensors' data pointers come from p0..p7, in the order sample 0's
 * inputs, then its outputs, then sample 1's, and are cleared again before
 * returning: Go passes the pointers to its memory as
 * arguments, which C may use for the call, instead of pinning them. The
 * other pointers, all to C memory, come as integers: cgo checks every
 * pointer argument, and these need no check. */
dynop_result dynop_loader_op_call(uintptr_t who_, int setup, uintptr_t op_, uintptr_t run_, uintptr_t instance,
                                  uint32_t samples, uintptr_t in_, uint32_t nin, uintptr_t out_, uint32_t nout,
                                  uint32_t scratch, int fill, void *p0, void *p1, void *p2, void *p3, void *p4,
                                  void *p5, void *p6, void *p7, uint32_t first, uintptr_t failed_, uintptr_t err_,
                                  size_t errcap) {
    const dynop_operator *op = (const dynop_operator *)op_;
    dynop_op_run_function run = (dynop_op_run_function)run_;
    dynop_tensor *in = (dynop_tensor *)in_, *out = (dynop_tensor *)out_;
    uint32_t *failed = (uint32_t *)failed_;
    char *err = (char *)err_;
    void *p[DYNOP_LOADER_ARG_POINTERS];
    dynop_result rc = DYNOP_OK;
    error_sink saved;
    uint32_t i, j, k = 0;
    p[0] = p0, p[1] = p1, p[2] = p2, p[3] = p3, p[4] = p4, p[5] = p5, p[6] = p6, p[7] = p7;
    if (fill) {
        for (j = 0; j < samples; j++) {
            for (i = 0; i < nin; i++) in[j * nin + i].data = p[k++];
            for (i = 0; i < nout; i++) out[j * nout + i].data = p[k++];
        }
    }
    saved = enter_sink(err, errcap);
    {
        ENTER_PLUGIN((const dynop_loader_ident *)who_, setup ? "setup" : "run", op->name);
        for (j = 0; j < samples && rc == DYNOP_OK; j++) {
            here_.sample = (int64_t)first + j;
            if (setup) {
                rc = op->setup((void *)instance, in + (size_t)j * nin, nin, out + (size_t)j * nout, nout - scratch);
            } else {
                rc = run((void *)instance, out + (size_t)j * nout, nout - scratch, in + (size_t)j * nin, nin);
            }
        }
        LEAVE_PLUGIN();
    }
    leave_sink(saved);
    *failed = j - 1;
    if (fill) {
        for (j = 0; j < samples; j++) {
            for (i = 0; i < nin; i++) in[j * nin + i].data = NULL;
            for (i = 0; i < nout; i++) out[j * nout + i].data = NULL;
        }
    }
    return rc;
}

void dynop_loader_op_destroy(const dynop_loader_ident *who, const dynop_operator *op, void *instance) {
    ENTER_PLUGIN(who, "destroy", op->name);
    if (op->destroy != NULL) op->destroy(instance);
    LEAVE_PLUGIN();
}

/* The graph builder's functions, for passes. They work like the host
 * table's: the thread's last error says why one failed. */

static dynop_result builder_set_operator(const dynop_graph_builder *b, uint32_t node, const char *op,
                                         const char *args_json) {
    thread_error()[0] = 0;
    if (b == NULL) return invalid("set_operator: builder is NULL");
    if (op == NULL) return invalid("set_operator: op is NULL");
    return done(IN_GO(dynopGoPassSetOperator((uintptr_t)b->context, node, (char *)op, (char *)args_json, thread_error(),
                                       LAST_ERROR_SIZE)));
}

static dynop_result builder_group(const dynop_graph_builder *b, const char *name, const uint32_t *nodes,
                                  uint32_t count) {
    thread_error()[0] = 0;
    if (b == NULL) return invalid("group: builder is NULL");
    if (name == NULL) return invalid("group: name is NULL");
    if (nodes == NULL && count > 0) return invalid("group: nodes is NULL but count is not 0");
    return done(IN_GO(dynopGoPassGroup((uintptr_t)b->context, (char *)name, (uint32_t *)nodes, count, thread_error(),
                                 LAST_ERROR_SIZE)));
}

dynop_result dynop_loader_pass_run(const dynop_loader_ident *who, const dynop_pass *pass, dynop_graph_builder *b,
                                   uintptr_t context, char *err, size_t errcap) {
    static const dynop_header header = DYNOP_GRAPH_BUILDER_HEADER;
    dynop_result rc;
    error_sink saved;
    b->header = header;
    b->context = (void *)context;
    b->set_operator = builder_set_operator;
    b->group = builder_group;
    saved = enter_sink(err, errcap);
    {
        ENTER_PLUGIN(who, "pass run", pass->name);
        rc = pass->run(pass->user, b);
        LEAVE_PLUGIN();
    }
    leave_sink(saved);
    return rc;
}

int dynop_loader_loaded_as(const char *name, char *path, size_t cap) {
    struct link_map *lm = NULL;
    void *lib = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) return 0;
    if (cap > 0) {
        path[0] = 0;
        if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL && lm->l_name != NULL) {
            strncpy(path, lm->l_name, cap - 1);
            path[cap - 1] = 0;
        }
    }
    dlclose(lib);
    return 1;
}

int dynop_loader_is_loaded(const char *path) {
    void *lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) return 0;
    dlclose(lib);
    return 1;
}
