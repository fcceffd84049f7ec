/* mallocdrv FLAGS:PLUGIN : run under LD_PRELOAD=libcountmalloc.so. The
 * plugin mallocs 100 blocks and the host frees them; the counting
 * allocator reports how many of those frees were of blocks it did not
 * hand out. Then, in a child process, the host mallocs and the plugin
 * frees, and the child's fate is printed. */
#define _GNU_SOURCE
#include "deepbind_safe.h"
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0); /* a crash loses nothing */
    char why[512];
    int ok = deepbind_safe(why, sizeof why);
    printf("rule=%s (%s)\n", ok ? "safe" : "unsafe", why);
    fflush(stdout);
    char *colon = strchr(argv[1], ':');
    *colon = 0;
    int mode = RTLD_NOW | RTLD_LOCAL | (strchr(argv[1], 'd') ? RTLD_DEEPBIND : 0);
    void *h = strchr(argv[1], 'n') ? dlmopen(LM_ID_NEWLM, colon + 1, mode) : dlopen(colon + 1, mode);
    if (!h) { printf("error=%s\n", dlerror()); return 0; }
    void *(*pm)(size_t) = (void *(*)(size_t))dlsym(h, "plugin_malloc");
    void (*pf)(void *) = (void (*)(void *))dlsym(h, "plugin_free");
    void *(*pma)(void) = (void *(*)(void))dlsym(h, "plugin_malloc_addr");
    void (*stats)(unsigned long *, unsigned long *, unsigned long *) =
        (void (*)(unsigned long *, unsigned long *, unsigned long *))dlsym(RTLD_DEFAULT, "countmalloc_stats");
    Dl_info di = {0};
    dladdr(pma(), &di);
    printf("plugin malloc is in %s\n", di.dli_fname);
    unsigned long m0, o0, f0, m1, o1, f1;
    if (stats) stats(&m0, &o0, &f0);
    void *blocks[100];
    for (int i = 0; i < 100; i++) blocks[i] = pm(64);
    for (int i = 0; i < 100; i++) free(blocks[i]);
    if (stats) {
        stats(&m1, &o1, &f1);
        printf("plugin malloc x100, host free x100: interposer mallocs=%lu own frees=%lu foreign frees=%lu\n", m1 - m0,
               o1 - o0, f1 - f0);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        void *p = malloc(64);
        pf(p);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) printf("host malloc, plugin free: child killed by signal %d (%s)\n", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else printf("host malloc, plugin free: child exited %d\n", WEXITSTATUS(st));
    return 0;
}
