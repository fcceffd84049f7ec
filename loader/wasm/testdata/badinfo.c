/*
 * badinfo.c — a module with the dynop_wasm_* exports of its own, built
 * without abi/wasm/dynop_wasm.c (cbuild.WasmRaw), whose dynop_wasm_info
 * returns an info at 0xFFFF0000: outside its memory. Built with
 * -DBADINFO_ABI_VERSION=0x10000 it says it is built for version 1.0 of
 * dynop_wasm.h.
 */
#include <stdint.h>
#include <stdlib.h>

#ifndef BADINFO_ABI_VERSION
#define BADINFO_ABI_VERSION 0x20000
#endif

#define WASM_EXPORT(name) __attribute__((export_name(name)))

WASM_EXPORT("dynop_wasm_abi_version") uint32_t abi_version(void) { return BADINFO_ABI_VERSION; }

WASM_EXPORT("dynop_wasm_alloc") void *alloc(uint32_t size, uint32_t align) {
    (void)align;
    return malloc(size != 0 ? size : 1);
}

WASM_EXPORT("dynop_wasm_free") void dealloc(void *p) { free(p); }

WASM_EXPORT("dynop_wasm_info") uint64_t info(void) { return 0xFFFF0000u; }

WASM_EXPORT("dynop_wasm_register") int32_t register_(void) { return 0; }

WASM_EXPORT("dynop_wasm_deregister") int32_t deregister(void) { return 0; }

WASM_EXPORT("dynop_wasm_op_create") int32_t op_create(uint32_t op, uint32_t args, uint32_t n, uint32_t *inst) {
    (void)op, (void)args, (void)n, (void)inst;
    return 8;
}

WASM_EXPORT("dynop_wasm_op_setup")
int32_t op_setup(uint32_t op, uint32_t inst, uint32_t s, uint32_t in, uint32_t nin, uint32_t out, uint32_t nout,
                 uint32_t *failed) {
    (void)op, (void)inst, (void)s, (void)in, (void)nin, (void)out, (void)nout, (void)failed;
    return 8;
}

WASM_EXPORT("dynop_wasm_op_run")
int32_t op_run(uint32_t op, uint32_t inst, uint32_t s, uint32_t in, uint32_t nin, uint32_t out, uint32_t nout,
               uint32_t *failed) {
    (void)op, (void)inst, (void)s, (void)in, (void)nin, (void)out, (void)nout, (void)failed;
    return 8;
}

WASM_EXPORT("dynop_wasm_op_destroy") void op_destroy(uint32_t op, uint32_t inst) { (void)op, (void)inst; }
