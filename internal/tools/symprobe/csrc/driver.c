/* driver STEP... : each STEP is FLAGS:PATH, opened in order; the last one
 * is the plugin, whose plugin_run is called. FLAGS letters:
 *   g RTLD_GLOBAL (else RTLD_LOCAL)   d RTLD_DEEPBIND
 *   m copy the file into a sealed memfd and open /proc/self/fd/N
 *   n dlmopen(LM_ID_NEWLM) instead of dlopen
 *   e not a file: setenv(NAME, VALUE) for a PATH of NAME=VALUE
 * Built with -DUSE_ENVIRON, the executable reads environ itself (so it
 * has a copy relocation of it).
 * Prints "result=R" or "error=..." and, with -r, the DEEPBIND rule. */
#define _GNU_SOURCE
#include "deepbind_safe.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int memfd_copy(const char *path) {
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) { perror(path); exit(2); }
    int fd = memfd_create(path, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(fd, buf, n) != n) { perror("write"); exit(2); }
    close(in);
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    return fd;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0); /* a crash loses nothing */
    void *h = NULL;
    int i = 1;
#ifdef USE_ENVIRON
    extern char **environ;
    int nenv = 0;
    for (char **e = environ; *e; e++) nenv++;
    printf("host environ has %d entries\n", nenv);
#endif
    if (argc > 1 && strcmp(argv[1], "-r") == 0) {
        char why[512];
        int ok = deepbind_safe(why, sizeof why);
        printf("rule=%s (%s)\n", ok ? "safe" : "unsafe", why);
        fflush(stdout);
        i++;
    }
    for (; i < argc; i++) {
        char *colon = strchr(argv[i], ':');
        if (!colon) { fprintf(stderr, "bad step %s\n", argv[i]); return 2; }
        *colon = 0;
        const char *flags = argv[i], *path = colon + 1;
        if (strchr(flags, 'e')) {
            char *eq = strchr(path, '=');
            *eq = 0;
            setenv(path, eq + 1, 1);
            continue;
        }
        char fdpath[64];
        int mode = RTLD_NOW | (strchr(flags, 'g') ? RTLD_GLOBAL : RTLD_LOCAL) | (strchr(flags, 'd') ? RTLD_DEEPBIND : 0);
        if (strchr(flags, 'm')) {
            snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", memfd_copy(path));
            path = fdpath;
        }
        h = strchr(flags, 'n') ? dlmopen(LM_ID_NEWLM, path, mode) : dlopen(path, mode);
        if (!h) { printf("error=%s\n", dlerror()); return 0; }
    }
    float (*run)(void) = (float (*)(void))dlsym(h, "plugin_run");
    if (!run) { printf("error=%s\n", dlerror()); return 0; }
    printf("result=%g\n", run());
    return 0;
}
