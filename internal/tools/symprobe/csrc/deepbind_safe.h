/* The rule a host can compute at run time before it loads a plugin with
 * RTLD_DEEPBIND. It returns 1 if DEEPBIND is safe, else 0 with the reason
 * in why. See docs/symbols.md. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

/* copy_reloc_cb: the first object dl_iterate_phdr reports is the main
 * program; count its R_X86_64_COPY relocations naming one of names. */
struct copy_scan {
    const char *const *names;
    const char *found;
};
static int copy_reloc_cb(struct dl_phdr_info *info, size_t size, void *data) {
    struct copy_scan *cs = data;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Rela) *rela = NULL;
    size_t relasz = 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 1;
    /* In the main program ld.so has already relocated d_ptr. */
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_RELA) rela = (const ElfW(Rela) *)dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_RELASZ) relasz = dyn->d_un.d_val;
        if (dyn->d_tag == DT_SYMTAB) symtab = (const ElfW(Sym) *)dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) strtab = (const char *)dyn->d_un.d_ptr;
    }
    if (!rela || !symtab || !strtab) return 1;
    for (size_t i = 0; i < relasz / sizeof *rela; i++) {
        if (ELF64_R_TYPE(rela[i].r_info) != R_X86_64_COPY) continue;
        const char *name = strtab + symtab[ELF64_R_SYM(rela[i].r_info)].st_name;
        for (const char *const *n = cs->names; *n; n++)
            if (strcmp(name, *n) == 0) { cs->found = *n; return 1; }
        if (!cs->names[0]) { cs->found = name; return 1; }
    }
    return 1; /* stop after the main program */
}

static int deepbind_safe(char *why, size_t cap) {
    /* 1. The allocator: every allocation function the global scope finds
     *    must be libc's own, or a DEEPBIND plugin (which finds libc's
     *    first) and the host use two allocators. */
    static const char *const alloc[] = {"malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc",
                                        "memalign", "valloc", "pvalloc", "malloc_usable_size", NULL};
    /* 2. Sanitizer runtimes refuse DEEPBIND (ASan/TSan/MSan intercept dlopen). */
    static const char *const san[] = {"__asan_init", "__tsan_init", "__msan_init", "__hwasan_init", "__lsan_init", NULL};
    /* 3. The C++ runtime: operator new/delete replaced in the host, or the
     *    standard streams copy-relocated into the executable. */
    static const char *const cxx[] = {"_Znwm", "_ZdlPv", "_Znam", "_ZdaPv", "_ZSt4cout", "_ZSt4cerr", "_ZSt4clog",
                                      "_ZSt3cin", NULL};
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc) { snprintf(why, cap, "libc.so.6 is not loaded"); return 0; }
    for (const char *const *s = alloc; *s; s++) {
        void *g = dlsym(RTLD_DEFAULT, *s), *c = dlsym(libc, *s);
        if (g != c) {
            Dl_info di = {0};
            dladdr(g, &di);
            snprintf(why, cap, "%s is interposed (by %s)", *s, di.dli_fname ? di.dli_fname : "?");
            dlclose(libc);
            return 0;
        }
    }
    dlclose(libc);
    for (const char *const *s = san; *s; s++)
        if (dlsym(RTLD_DEFAULT, *s)) { snprintf(why, cap, "sanitizer runtime present (%s)", *s); return 0; }
    void *cxxlib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    for (const char *const *s = cxx; *s; s++) {
        void *g = dlsym(RTLD_DEFAULT, *s);
        if (!g) continue;
        void *c = cxxlib ? dlsym(cxxlib, *s) : NULL;
        if (g != c) {
            Dl_info di = {0};
            dladdr(g, &di);
            snprintf(why, cap, "%s is defined by %s, not by the shared libstdc++", *s, di.dli_fname ? di.dli_fname : "?");
            if (cxxlib) dlclose(cxxlib);
            return 0;
        }
    }
    if (cxxlib) dlclose(cxxlib);
    /* 4. A copy relocation, in the executable, of libc data that libc
     *    itself changes later (setenv, getopt, tzset, lgamma): a DEEPBIND
     *    plugin reading it directly reads libc's own copy, which libc
     *    never updates (for environ: NULL, and the plugin crashes). */
    static const char *const data[] = {"environ", "__environ", "_environ", "optarg", "optind", "opterr", "optopt",
                                       "timezone", "daylight", "tzname", "signgam", NULL};
    struct copy_scan cs = {data, NULL};
    dl_iterate_phdr(copy_reloc_cb, &cs);
    if (cs.found) {
        snprintf(why, cap, "the executable has a copy relocation of %s (a DEEPBIND plugin reads libc's own, never updated, copy)", cs.found);
        return 0;
    }
    snprintf(why, cap, "ok");
    return 1;
}
