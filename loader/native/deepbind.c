/* deepbind.c — whether RTLD_DEEPBIND is safe in this process. The file
 * needs nothing from Go (no _cgo_export.h), so that tests can compile it
 * into C programs of their own: a non-PIE executable, for instance. */
#define _GNU_SOURCE /* RTLD_DEFAULT, dladdr */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "loader.h"

/* The rule of docs/symbols.md, measured by internal/tools/symprobe: loading
 * a library with RTLD_DEEPBIND is unsafe where the process replaces libc's
 * allocator or the C++ runtime's operator new or standard streams, runs a
 * sanitizer, or has copy relocations of libc data that libc changes later
 * (environ after setenv): a deep-bound plugin would bind libc's or
 * libstdc++'s own definitions, not those the host uses. */

#if defined(__x86_64__)
#define COPY_RELOC R_X86_64_COPY
#elif defined(__aarch64__)
#define COPY_RELOC R_AARCH64_COPY
#endif

#ifdef COPY_RELOC
typedef struct copy_scan {
    const char *const *names;
    const char *found;
} copy_scan;

/* copy_reloc_cb looks at the first object dl_iterate_phdr reports, the
 * main program, for a copy relocation of one of scan->names. */
static int copy_reloc_cb(struct dl_phdr_info *info, size_t size, void *data) {
    copy_scan *cs = (copy_scan *)data;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Rela) *rela = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    size_t relasz = 0, i;
    int k;
    (void)size;
    for (k = 0; k < info->dlpi_phnum; k++) {
        if (info->dlpi_phdr[k].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
    }
    if (dyn == NULL) return 1;
    for (; dyn->d_tag != DT_NULL; dyn++) { /* the dynamic linker relocated d_ptr in the main program */
        if (dyn->d_tag == DT_RELA) rela = (const ElfW(Rela) *)dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_RELASZ) relasz = dyn->d_un.d_val;
        if (dyn->d_tag == DT_SYMTAB) symtab = (const ElfW(Sym) *)dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) strtab = (const char *)dyn->d_un.d_ptr;
    }
    if (rela == NULL || symtab == NULL || strtab == NULL) return 1;
    for (i = 0; i < relasz / sizeof *rela; i++) {
        const char *const *n;
        const char *name;
        if (ELF64_R_TYPE(rela[i].r_info) != COPY_RELOC) continue;
        name = strtab + symtab[ELF64_R_SYM(rela[i].r_info)].st_name;
        for (n = cs->names; *n != NULL; n++) {
            if (strcmp(name, *n) == 0) {
                cs->found = *n;
                return 1;
            }
        }
    }
    return 1; /* the main program only */
}
#endif

/* defined_elsewhere reports whether the global scope's definition of name
 * is not lib's (or lib has none while the global scope does), naming the
 * object that defines it in who. */
static int defined_elsewhere(void *lib, const char *name, const char **who) {
    Dl_info di;
    void *global = dlsym(RTLD_DEFAULT, name);
    if (global == NULL || (lib != NULL && dlsym(lib, name) == global)) return 0;
    memset(&di, 0, sizeof di);
    *who = dladdr(global, &di) != 0 && di.dli_fname != NULL ? di.dli_fname : "?";
    return 1;
}

int dynop_loader_deep_bind_unsafe(char *why, size_t cap) {
    static const char *const allocator[] = {"malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc",
                                            "memalign", "valloc", "pvalloc", "malloc_usable_size", NULL};
    static const char *const sanitizers[] = {"__asan_init", "__tsan_init", "__msan_init", "__hwasan_init", "__lsan_init", NULL};
    static const char *const cxx[] = {"_Znwm", "_ZdlPv", "_Znam", "_ZdaPv", "_ZSt4cout", "_ZSt4cerr", "_ZSt4clog", "_ZSt3cin", NULL};
    const char *const *s;
    const char *who = NULL;
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD), *libstdcxx;
    if (libc == NULL) {
        snprintf(why, cap, "libc.so.6 is not loaded, so its allocator cannot be told from a replacement");
        return 1;
    }
    for (s = allocator; *s != NULL; s++) {
        if (defined_elsewhere(libc, *s, &who)) {
            snprintf(why, cap, "the process replaces libc's %s (with %s's): a deep-bound plugin would allocate with libc's, and memory would cross allocators", *s, who);
            dlclose(libc);
            return 1;
        }
    }
    dlclose(libc);
    for (s = sanitizers; *s != NULL; s++) {
        if (dlsym(RTLD_DEFAULT, *s) != NULL) {
            snprintf(why, cap, "the process runs a sanitizer (%s), whose runtime refuses RTLD_DEEPBIND", *s);
            return 1;
        }
    }
    libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    for (s = cxx; *s != NULL; s++) {
        if (defined_elsewhere(libstdcxx, *s, &who)) {
            snprintf(why, cap, "the process has its own %s (in %s), not the shared libstdc++'s: a deep-bound C++ plugin would use another", *s, who);
            if (libstdcxx != NULL) dlclose(libstdcxx);
            return 1;
        }
    }
    if (libstdcxx != NULL) dlclose(libstdcxx);
#ifdef COPY_RELOC
    {
        static const char *const data[] = {"environ", "__environ", "_environ", "optarg", "optind", "opterr", "optopt",
                                           "timezone", "daylight", "tzname", "signgam", NULL};
        copy_scan cs;
        cs.names = data;
        cs.found = NULL;
        dl_iterate_phdr(copy_reloc_cb, &cs);
        if (cs.found != NULL) {
            snprintf(why, cap, "the program has a copy relocation of libc's %s: a deep-bound plugin would read libc's own copy, which libc never updates", cs.found);
            return 1;
        }
    }
#endif
    return 0;
}
