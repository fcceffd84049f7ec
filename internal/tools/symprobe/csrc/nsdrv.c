/* nsdrv TEST ARGS : dlmopen measurements.
 *   count PLUGIN        open new namespaces until dlmopen fails
 *   reuse PLUGIN N      N times: dlmopen(LM_ID_NEWLM) then dlclose
 *   open MODE PLUGIN    MODE dlopen|dlmopen: time and RSS delta of one open
 *   maps PLUGIN         dlmopen, call plugin_run, count libc/libstdc++ copies mapped
 *   free PLUGIN SIZE    the namespace mallocs SIZE bytes, the host frees it (in a child)
 *   thread PLUGIN       __thread and pthread_create inside a namespace */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long rss_kib(void) {
    long size, res;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &res) != 2) return -1;
    fclose(f);
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int count_maps(const char *needle) {
    /* distinct mapped files whose path contains needle */
    char line[4096], seen[64][512];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (!p || !strstr(p, needle)) continue;
        char key[512];
        /* key: device and inode plus the start offset 0 mapping count */
        unsigned long lo;
        char perm[8], dev[16];
        unsigned long off, ino;
        if (sscanf(line, "%lx-%*x %7s %lx %15s %lu", &lo, perm, &off, dev, &ino) != 5) continue;
        if (off != 0) continue; /* one offset-0 mapping per loaded copy */
        snprintf(key, sizeof key, "%lx", lo);
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= strcmp(seen[i], key) == 0;
        if (!dup && n < 64) strcpy(seen[n++], key);
    }
    fclose(f);
    return n;
}

static void *tls_thread(void *a) {
    int (*bump)(void) = (int (*)(void))a;
    int x = bump();
    int y = bump();
    return (void *)(long)(x * 10 + y);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0); /* a crash loses nothing */
    if (argc < 3) return 2;
    const char *t = argv[1];
    if (!strcmp(t, "count")) {
        int n = 0;
        for (;;) {
            void *h = dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW);
            if (!h) { printf("namespaces=%d error=%s\n", n, dlerror()); break; }
            n++;
        }
    } else if (!strcmp(t, "reuse")) {
        int n = atoi(argv[3]), ok = 0;
        long r0 = rss_kib();
        for (int i = 0; i < n; i++) {
            void *h = dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW);
            if (!h) { printf("iteration %d: %s\n", i, dlerror()); break; }
            float (*run)(void) = (float (*)(void))dlsym(h, "plugin_run");
            if (run() != 32) printf("iteration %d: wrong result\n", i);
            if (dlclose(h)) { printf("iteration %d dlclose: %s\n", i, dlerror()); break; }
            ok++;
        }
        printf("open+close cycles=%d rss_growth_kib=%ld libc_copies_mapped_after=%d\n", ok, rss_kib() - r0,
               count_maps("libc.so"));
        int more = 0;
        while (dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW)) more++;
        printf("namespaces still available after the cycles=%d\n", more);
    } else if (!strcmp(t, "open")) {
        int ns = !strcmp(argv[2], "dlmopen");
        struct timespec a, b;
        long r0 = rss_kib();
        clock_gettime(CLOCK_MONOTONIC, &a);
        void *h = ns ? dlmopen(LM_ID_NEWLM, argv[3], RTLD_LAZY) : dlopen(argv[3], RTLD_LAZY | RTLD_LOCAL);
        float (*run)(void) = h ? (float (*)(void))dlsym(h, "plugin_run") : NULL;
        float r = run ? run() : -1;
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("us=%.0f rss_kib=%ld result=%g\n", (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3,
               rss_kib() - r0, r);
    } else if (!strcmp(t, "maps")) {
        int c0 = count_maps("libc.so"), s0 = count_maps("libstdc++");
        void *h = dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW);
        if (!h) { printf("error=%s\n", dlerror()); return 0; }
        float (*run)(void) = (float (*)(void))dlsym(h, "plugin_run");
        float r = run();
        fflush(stdout);
        printf("result=%g libc copies %d->%d libstdc++ copies %d->%d libm copies=%d libgcc_s copies=%d\n", r, c0,
               count_maps("libc.so"), s0, count_maps("libstdc++"), count_maps("libm.so"), count_maps("libgcc_s"));
    } else if (!strcmp(t, "free")) {
        size_t size = strtoul(argv[3], 0, 10);
        void *h = dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW);
        if (!h) { printf("error=%s\n", dlerror()); return 0; }
        void *(*pm)(size_t) = (void *(*)(size_t))dlsym(h, "plugin_malloc");
        printf("host malloc=%p namespace malloc=%p (%s)\n", (void *)&malloc, dlsym(h, "malloc"),
               (void *)&malloc == dlsym(h, "malloc") ? "same" : "different");
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            void *p = pm(size);
            uintptr_t pa = (uintptr_t)p;
            free(p);
            void *q = malloc(size);
            printf("child: freed the namespace's block %#lx; the host's next malloc(%zu) returned %s\n",
                   (unsigned long)pa, size, pa == (uintptr_t)q ? "that same block (now owned by both heaps)" : "another block");
            fflush(stdout);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFSIGNALED(st)) printf("child killed by signal %d (%s)\n", WTERMSIG(st), strsignal(WTERMSIG(st)));
        else printf("child exited %d\n", WEXITSTATUS(st));
    } else if (!strcmp(t, "thread")) {
        void *h = dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW);
        if (!h) { printf("error=%s\n", dlerror()); return 0; }
        int (*pt)(void) = (int (*)(void))dlsym(h, "plugin_thread");
        int (*bump)(void) = (int (*)(void))dlsym(h, "plugin_tls_bump");
        printf("thread created inside the namespace returned %d (want 5)\n", pt());
        pthread_t th;
        void *r;
        int m1 = bump();
        pthread_create(&th, 0, tls_thread, (void *)bump);
        pthread_join(th, &r);
        int m2 = bump();
        printf("__thread in the namespace: main thread %d,%d (want 1,2); host thread %ld (want 12)\n", m1, m2, (long)r);
    }
    return 0;
}
