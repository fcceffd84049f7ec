/* deepbind.c — whether RTLD_DEEPBIND is safe in this process. The file
 * needs nothing from Go (no _cgo_export.h), so that tests can compile it
 * into C programs of their own: a non-PIE executable, for instance. */
#define _GNU_SOURCE /* RTLD_DEFAULT, dladdr */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader.h"

/* The rule of docs/symbols.md, measured by internal/tools/symprobe: loading
 * a library with RTLD_DEEPBIND is unsafe where the process replaces libc's
 * allocator or the C++ runtime's operator new or standard streams, runs a
 * sanitizer, or has copy relocations of libc data that libc changes later
 * (environ after setenv): a deep-bound plugin would bind libc's or
 * libstdc++'s own definitions, not those the host uses. */

/* phdr_dynamic returns the dynamic section of the object dl_iterate_phdr
 * reports in info (its link_map's l_ld), or NULL if it has none. */
static const ElfW(Dyn) *phdr_dynamic(const struct dl_phdr_info *info) {
    int k;
    for (k = 0; k < info->dlpi_phnum; k++) {
        if (info->dlpi_phdr[k].p_type == PT_DYNAMIC) return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
    }
    return NULL;
}

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
    const ElfW(Dyn) *dyn = phdr_dynamic(info);
    const ElfW(Rela) *rela = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    size_t relasz = 0, i;
    (void)size;
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

/* dyn_ptr returns the address a d_ptr of an object loaded at base stands
 * for: the dynamic linker relocates them where the dynamic section is
 * writable (the main program, libraries), not where it is read-only (the
 * vDSO), and a relocated one is never below base. */
static const void *dyn_ptr(ElfW(Addr) base, ElfW(Addr) p) { return (const void *)(p < base ? p + base : p); }

/* object_symbol returns the entry for name in the dynamic symbol table of
 * the object with the dynamic section dyn, loaded at base, found through
 * its DT_GNU_HASH or DT_HASH table as the dynamic linker finds it, or NULL
 * if it has none. An entry with a hidden version (name@VERSION, not
 * name@@VERSION) does not answer to the plain name. The entry may be a
 * definition or an undefined symbol (st_shndx SHN_UNDEF). */
static const ElfW(Sym) *object_symbol(const ElfW(Dyn) *dyn, ElfW(Addr) base, const char *name) {
    const ElfW(Sym) *symtab = NULL;
    const ElfW(Half) *versym = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    const unsigned char *c;
    uint32_t i;
    if (dyn == NULL) return NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB) symtab = (const ElfW(Sym) *)dyn_ptr(base, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_STRTAB) strtab = (const char *)dyn_ptr(base, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_VERSYM) versym = (const ElfW(Half) *)dyn_ptr(base, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_GNU_HASH) gnu = (const uint32_t *)dyn_ptr(base, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_HASH) sysv = (const uint32_t *)dyn_ptr(base, dyn->d_un.d_ptr);
    }
    if (symtab == NULL || strtab == NULL) return NULL;
#define DYNOP_VISIBLE(k) (strcmp(strtab + symtab[k].st_name, name) == 0 && (versym == NULL || (versym[k] & 0x8000) == 0))
    if (gnu != NULL) {
        /* nbuckets, symoffset, bloom words, bloom shift; the bloom filter;
         * the buckets; a chain of hashes, bit 0 set on each chain's last. */
        uint32_t nbuckets = gnu[0], symoffset = gnu[1], h = 5381;
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + gnu[2]);
        const uint32_t *chain = buckets + nbuckets;
        for (c = (const unsigned char *)name; *c != 0; c++) h = h * 33 + *c;
        if (nbuckets == 0 || (i = buckets[h % nbuckets]) < symoffset) return NULL;
        for (;; i++) {
            uint32_t hi = chain[i - symoffset];
            if ((hi | 1) == (h | 1) && DYNOP_VISIBLE(i)) return &symtab[i];
            if (hi & 1) return NULL;
        }
    }
    if (sysv != NULL) {
        /* nbucket, nchain, the buckets, the chains. */
        uint32_t h = 0, g;
        for (c = (const unsigned char *)name; *c != 0; c++) {
            h = (h << 4) + *c;
            g = h & 0xf0000000u;
            h = (h ^ (g >> 24)) & ~g;
        }
        if (sysv[0] == 0) return NULL;
        for (i = sysv[2 + h % sysv[0]]; i != STN_UNDEF && i < sysv[1]; i = sysv[2 + sysv[0] + i]) {
            if (DYNOP_VISIBLE(i)) return &symtab[i];
        }
    }
#undef DYNOP_VISIBLE
    return NULL;
}

/* defines reports whether sym is a definition that the dynamic linker
 * binds a reference to: not an undefined symbol, whatever its value. */
static int defines(const ElfW(Sym) *sym) {
    int type = ELF64_ST_TYPE(sym->st_info); /* ELF32_ST_TYPE is the same */
    if (sym->st_shndx == SHN_UNDEF || (sym->st_value == 0 && sym->st_shndx != SHN_ABS)) return 0;
    return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT || type == STT_NOTYPE || type == STT_COMMON;
}

typedef struct definer_scan {
    const char *name;
    const void *after; /* the dynamic section of the object to look past */
    int past;          /* whether the scan has passed it */
    const void *dyn;   /* the definer's dynamic section, once found */
    const char *file;  /* and its name */
} definer_scan;

/* definer_cb finds the first object after ds->after, in the order
 * dl_iterate_phdr reports them (load order, under the dynamic linker's
 * lock), that defines ds->name. */
static int definer_cb(struct dl_phdr_info *info, size_t size, void *data) {
    definer_scan *ds = (definer_scan *)data;
    const ElfW(Dyn) *dyn = phdr_dynamic(info);
    const ElfW(Sym) *sym;
    (void)size;
    if (!ds->past) {
        ds->past = dyn != NULL && (const void *)dyn == ds->after;
        return 0;
    }
    sym = object_symbol(dyn, info->dlpi_addr, ds->name);
    if (sym == NULL || !defines(sym)) return 0;
    ds->dyn = dyn;
    ds->file = info->dlpi_name;
    return 1;
}

/* defined_elsewhere reports whether the global scope's definition of name
 * is not lib's (or lib has none while the global scope does), naming the
 * object that defines it in who.
 *
 * dlsym(RTLD_DEFAULT) is not always a definition. A non-PIE executable
 * that takes the address of a function of a library (Debian's python3
 * does, of malloc and free) has an undefined symbol for it whose value is
 * the address of its PLT entry, which stands for the function wherever
 * its address is compared; dlsym returns that entry, in the executable.
 * Calls, libc's own included, bind past it: to the first object after it
 * in the global scope that defines the symbol (load order is the global
 * scope's order for the objects loaded with the program, which are all
 * that can come before libc or a libstdc++ that the executable links).
 * That object's is the definition. A copy relocation, by contrast, is a
 * definition in the executable. */
static int defined_elsewhere(void *lib, const char *name, const char **who) {
    Dl_info di;
    struct link_map *at = NULL, *mine = NULL;
    const ElfW(Sym) *sym;
    definer_scan ds;
    void *global = dlsym(RTLD_DEFAULT, name);
    if (global == NULL || (lib != NULL && dlsym(lib, name) == global)) return 0;
    memset(&di, 0, sizeof di);
    if (dladdr1(global, &di, (void **)&at, RTLD_DL_LINKMAP) == 0 || at == NULL) {
        *who = "?";
        return 1;
    }
    sym = object_symbol(at->l_ld, at->l_addr, name);
    if (sym == NULL || sym->st_shndx != SHN_UNDEF) {
        *who = di.dli_fname != NULL ? di.dli_fname : "?";
        return 1;
    }
    memset(&ds, 0, sizeof ds);
    ds.name = name;
    ds.after = at->l_ld;
    dl_iterate_phdr(definer_cb, &ds);
    if (ds.dyn == NULL) return 0;
    if (lib != NULL && dlinfo(lib, RTLD_DI_LINKMAP, &mine) == 0 && mine != NULL && (const void *)mine->l_ld == ds.dyn) return 0;
    *who = ds.file != NULL && ds.file[0] != 0 ? ds.file : "?";
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
