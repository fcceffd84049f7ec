/*
 * fuzzinfo.c — a plugin whose info is made, at each get_info, from the
 * bytes of the file $DYNOP_FUZZ_INFO names (a native library), or from
 * the hex digits of the macro FUZZINFO_RECIPE it was built with (a
 * WebAssembly module, which has no files, nor an environment while the
 * host reads its info): the C harness of the native info reader's
 * fuzz target (loader/native/info_fuzz_test.go), and of the test that
 * both loaders read a malformed info alike (abi/malformed_test.go).
 *
 * The bytes are read as a recipe: counts, strings (a length, 255 for
 * NULL, 254 for a string of 70,000 bytes without its NUL, 253 for one of
 * 10,000 bytes), versions, flags,
 * and for every struct a byte whose bits break its header (another type,
 * another major version, a size of the recipe's choosing, small or large).
 * Every struct is allocated as large as its header says (at least its
 * sizeof), and every array of structs with the stride its first header
 * says, so that whatever the reader reads within what the headers claim
 * is memory; reads beyond are the reader's bugs. Counts are the truth,
 * or a lie beyond any count the reader takes (C cannot tell an array's
 * length). The recipe running out reads as zeros.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dynop/dynop.h>

static unsigned char recipe[1 << 16];
static size_t len, pos;

static unsigned byte(void) { return pos < len ? recipe[pos++] : 0; }
static uint32_t u32(void) {
    uint32_t v = byte();
    v |= (uint32_t)byte() << 8;
    v |= (uint32_t)byte() << 16;
    return v | (uint32_t)byte() << 24;
}

/* Everything allocated for one info, freed at the next get_info. */
static void *blocks[1 << 14];
static size_t nblocks;

static void *alloc(size_t n) {
    void *p;
    if (nblocks == sizeof blocks / sizeof blocks[0]) return NULL;
    p = calloc(1, n > 0 ? n : 1);
    if (p != NULL) blocks[nblocks++] = p;
    return p;
}

static void free_all(void) {
    while (nblocks > 0) free(blocks[--nblocks]);
}

static const char *str(void) {
    unsigned k = byte(), i;
    char *s;
    if (k == 255) return NULL;
    if (k == 254) {
        s = (char *)alloc(70000);
        if (s != NULL) memset(s, 'x', 70000); /* no NUL */
        return s;
    }
    if (k == 253) {
        s = (char *)alloc(10001);
        if (s != NULL) memset(s, 'a', 10000); /* and a NUL */
        return s;
    }
    s = (char *)alloc(k + 1);
    if (s == NULL) return NULL;
    for (i = 0; i < k; i++) s[i] = (char)byte();
    return s;
}

static dynop_version version(void) {
    dynop_version v;
    v.major = (uint16_t)(byte() % 4);
    v.minor = (uint16_t)byte();
    v.patch = byte();
    return v;
}

/* size returns the size a struct's header claims: its sizeof, or, if the
 * recipe says so, another size. */
static uint32_t size(uint32_t real, unsigned how) {
    if (how & 4) return byte() * 4u;          /* small: 0 to 1020 */
    if (how & 8) return real + byte() * 64u;  /* larger: up to 16 KiB more */
    if (how & 16) return u32();               /* anything */
    return real;
}

/* header fills in h for a struct of type t, version v and sizeof real,
 * broken as the recipe says; it returns the size to allocate. */
static uint32_t header(dynop_header *h, dynop_header proper, unsigned how) {
    *h = proper;
    if (how & 1) h->type.bytes[byte() % 16] ^= 1;
    if (how & 2) h->version.major += 1;
    h->size = size(proper.size, how);
    return h->size;
}

/* make allocates a copy of the struct proper (sizeof real) whose header
 * is broken as the recipe says, with room for what its header claims (at
 * most 64 KiB). */
static void *make(const void *proper, size_t real) {
    dynop_header h;
    unsigned how = byte();
    size_t n;
    char *p;
    header(&h, *(const dynop_header *)proper, how);
    n = h.size > real ? h.size : real;
    if (n > 1 << 16) n = real; /* a huge claim: the reader must not trust it */
    p = (char *)alloc(n);
    if (p == NULL) return NULL;
    memcpy(p, proper, real);
    memcpy(p, &h, sizeof h);
    return p;
}

/* array allocates count copies of the struct proper (sizeof real), the
 * stride being the first header's (broken) size, and calls fill on each. */
static void *array(uint32_t count, const void *proper, size_t real, void (*fill)(void *)) {
    dynop_header h;
    unsigned how = byte();
    size_t stride, i;
    char *p;
    if (count == 0) return byte() & 1 ? alloc(1) : NULL;
    header(&h, *(const dynop_header *)proper, how);
    stride = h.size > real ? h.size : real;
    if (stride > 1 << 16) stride = real;
    p = (char *)alloc(stride * count);
    if (p == NULL) return NULL;
    for (i = 0; i < count; i++) {
        memcpy(p + i * stride, proper, real);
        memcpy(p + i * stride, &h, sizeof h);
        if (i > 0 && (byte() & 1)) ((dynop_header *)(void *)(p + i * stride))->size += 8; /* a ragged array */
        fill(p + i * stride);
    }
    return p;
}

static void fill_desc(void *p) {
    dynop_interface_desc *d = (dynop_interface_desc *)p;
    unsigned i;
    for (i = 0; i < sizeof d->uid.bytes; i++) d->uid.bytes[i] = (uint8_t)byte();
    d->version = version();
    d->name = str();
}

static const dynop_interface_desc proper_desc = {DYNOP_INTERFACE_DESC_HEADER, {{0}}, {0, 0, 0}, NULL};

static dynop_interface_desc *desc(void) {
    dynop_interface_desc *d = (dynop_interface_desc *)make(&proper_desc, sizeof *d);
    if (d != NULL) fill_desc(d);
    return d;
}

static void fill_input(void *p) {
    dynop_op_input *in = (dynop_op_input *)p;
    in->name = str();
    in->doc = str();
    in->dtypes = str();
    in->layouts = str();
    in->ndim = (int32_t)u32();
}

static void fill_output(void *p) {
    dynop_op_output *out = (dynop_op_output *)p;
    out->name = str();
    out->doc = str();
    out->layout = str();
}

static void fill_arg(void *p) {
    dynop_op_arg *a = (dynop_op_arg *)p;
    a->name = str();
    a->doc = str();
    a->type = (dynop_arg_type)byte();
    a->flags = byte();
    a->min = (double)(int32_t)u32() / 4;
    a->max = (double)(int32_t)u32() / 4;
    a->default_value = str();
    a->allowed = str();
    a->deprecated = str();
}

static const dynop_op_input proper_input = {DYNOP_OP_INPUT_HEADER, NULL, NULL, NULL, NULL, 0, NULL};
static const dynop_op_output proper_output = {DYNOP_OP_OUTPUT_HEADER, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0};
static const dynop_op_arg proper_arg = {DYNOP_OP_ARG_HEADER, NULL, NULL, DYNOP_ARG_INT, 0, 0, 0, NULL, NULL, NULL};
static const dynop_op_schema proper_schema = {DYNOP_OP_SCHEMA_HEADER, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, 0, NULL};
static const dynop_need proper_need = {DYNOP_NEED_HEADER, NULL, NULL};
static const dynop_requirements proper_requirements = {DYNOP_REQUIREMENTS_HEADER, NULL, {0, 0, 0}, NULL, NULL, NULL,
                                                       {0, 0, 0}, {0, 0, 0}, NULL};
static const dynop_pass_desc proper_pass = {DYNOP_PASS_DESC_HEADER, NULL, DYNOP_PASS_POPULATE, NULL, 0, NULL};
static const dynop_plugin_info proper_info = {DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, NULL, {0, 0, 0}, NULL,
                                              NULL, NULL, 0, 0, NULL, 0, NULL, NULL, 0, NULL, 0, NULL};

static dynop_op_schema *schema(void) {
    dynop_op_schema *s = (dynop_op_schema *)make(&proper_schema, sizeof *s);
    if (s == NULL) return NULL;
    s->name = str();
    s->doc = str();
    s->devices = str();
    s->input_count = byte() % 4;
    s->optional_inputs = byte() % 4;
    s->inputs = (const dynop_op_input *)array(s->input_count, &proper_input, sizeof proper_input, fill_input);
    s->output_count = byte() % 4;
    s->outputs = (const dynop_op_output *)array(s->output_count, &proper_output, sizeof proper_output, fill_output);
    s->arg_count = byte() % 4;
    s->args = (const dynop_op_arg *)array(s->arg_count, &proper_arg, sizeof proper_arg, fill_arg);
    if (byte() == 0xEE) s->arg_count = u32() | 0x10000000u; /* a count that lies, beyond any the reader takes */
    return s;
}

/* pointers allocates an array of count pointers made by make_one; a
 * count of 0 may come with a non-NULL array, and the recipe may make the
 * array NULL with a count. */
static const void **pointers(uint32_t count, void *(*make_one)(void)) {
    const void **a;
    uint32_t i;
    if (count == 0) return NULL;
    if (byte() == 0xEE) return NULL;
    a = (const void **)alloc(count * sizeof *a);
    if (a == NULL) return NULL;
    for (i = 0; i < count; i++) a[i] = byte() == 0xEF ? NULL : make_one();
    return a;
}

static void *make_desc(void) { return desc(); }
static void *make_schema(void) { return schema(); }

static void *make_need(void) {
    dynop_need *n = (dynop_need *)make(&proper_need, sizeof *n);
    if (n == NULL) return NULL;
    n->plugin = str();
    n->iface = byte() == 0xEF ? NULL : desc();
    return n;
}

static void *make_pass(void) {
    dynop_pass_desc *d = (dynop_pass_desc *)make(&proper_pass, sizeof *d);
    if (d == NULL) return NULL;
    d->name = str();
    d->kind = (dynop_pass_kind)byte();
    d->match = str();
    d->priority = (int32_t)u32();
    d->doc = str();
    return d;
}

/* read_recipe reads the recipe: from the hex digits of FUZZINFO_RECIPE,
 * or else from the file $DYNOP_FUZZ_INFO. */
static void read_recipe(void) {
#if defined(FUZZINFO_RECIPE)
    const char *hex = FUZZINFO_RECIPE;
    static const char digits[] = "0123456789abcdef";
    while (hex != NULL && hex[0] != '\0' && hex[1] != '\0' && len < sizeof recipe) {
        const char *hi = strchr(digits, hex[0]), *lo = strchr(digits, hex[1]);
        if (hi == NULL || lo == NULL) break;
        recipe[len++] = (unsigned char)((hi - digits) << 4 | (lo - digits));
        hex += 2;
    }
#else
    const char *path = getenv("DYNOP_FUZZ_INFO");
    FILE *f;
    if (path != NULL && (f = fopen(path, "rb")) != NULL) {
        len = fread(recipe, 1, sizeof recipe, f);
        fclose(f);
    }
#endif
}

static const dynop_plugin_info *get_info(void) {
    dynop_plugin_info *info;
    free_all();
    len = pos = 0;
    read_recipe();
    if (byte() == 0xEE) return NULL;
    info = (dynop_plugin_info *)make(&proper_info, sizeof *info);
    if (info == NULL) return NULL;
    if (byte() & 1) info->api_version = version();
    info->id = str();
    info->plugin_version = version();
    info->description = str();
    info->author = str();
    info->build = str();
    info->flags = byte();
    info->interface_count = byte() % 4;
    info->interfaces = (const dynop_interface_desc *const *)pointers(info->interface_count, make_desc);
    info->need_count = byte() % 4;
    info->needs = (const dynop_need *const *)pointers(info->need_count, make_need);
    if (byte() & 1) {
        dynop_requirements *r = (dynop_requirements *)make(&proper_requirements, sizeof *r);
        if (r != NULL) {
            r->os = str();
            r->min_os_version = version();
            r->arch = str();
            r->cpu_features = str();
            r->gpu_vendor = str();
            r->gpu_min_arch = version();
            r->gpu_min_driver = version();
            r->libraries = str();
        }
        info->requirements = r;
    }
    info->operator_count = byte() % 4;
    info->operators = (const dynop_op_schema *const *)pointers(info->operator_count, make_schema);
    info->pass_count = byte() % 3;
    info->passes = (const dynop_pass_desc *const *)pointers(info->pass_count, make_pass);
    if (byte() == 0xEE) info->interface_count = u32() | 0x10000000u; /* a count that lies, beyond any the reader takes */
    return info;
}

static dynop_result register_plugin(const dynop_host *host) {
    (void)host;
    return DYNOP_OK;
}

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
