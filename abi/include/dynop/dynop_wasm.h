/*
 * dynop_wasm.h — the wasm32 form of the dynop plugin ABI.
 *
 * A WebAssembly plugin is the same plugin as a native one — the same
 * info, operators, interfaces and lifecycle — built for wasm32 and run by
 * the host in a sandbox (wazero). Pointers are 32-bit offsets into the
 * module's linear memory, so every struct of dynop.h keeps its members
 * and order with 4-byte pointers (the layout checks at the end of dynop.h
 * hold for wasm32 too): dynop_tensor is 40 bytes (data 0, device 4, ndim
 * 12, dtype 16, shape 20, strides 24, byte_offset 32) and dynop_arg 20
 * (name 0, type 4, given 8, count 12, values 16).
 *
 * A C plugin keeps its source as it is — dynop_plugin_get_function,
 * get_info, register, dynop_operator — and links abi/wasm/dynop_wasm.c,
 * which implements the exports below on top of it and gives register a
 * dynop_host table whose functions call the imports below:
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O3 -msimd128 \
 *         -Iabi/include -o plugin.wasm plugin.c abi/wasm/dynop_wasm.c
 *
 * (Debian: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32.)
 *
 * A Go plugin (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared)
 * imports github.com/dynop/dynop/loader/wasm/guest, which implements the
 * exports with //go:wasmexport. A Go module provides operators only: it
 * has no function table to put in an interface.
 *
 * WebAssembly plugins provide no graph passes (yet): a module whose info
 * declares one is refused, and the shim's register_pass fails.
 *
 * # Exports (the module provides)
 *
 *   memory                              its linear memory
 *   _initialize()                       the reactor's initializer, if any;
 *                                       the host calls it first
 *   dynop_wasm_abi_version() -> i32     DYNOP_WASM_ABI_VERSION
 *   dynop_wasm_alloc(size, align) -> ptr   guest memory for the host to
 *                                       write into (align 0 means 16), or
 *                                       0 when out of memory (a Go module
 *                                       traps instead)
 *   dynop_wasm_free(ptr)
 *   dynop_wasm_info() -> i64            the plugin's dynop_plugin_info at
 *                                       (uint32_t)r, and its capabilities
 *                                       at (uint32_t)(r >> 32) (see "Info"
 *                                       below)
 *   dynop_wasm_register() -> result     register, with the host table
 *   dynop_wasm_deregister() -> result   deregister
 *   dynop_wasm_op_create(op, args, arg_count, *instance) -> result
 *   dynop_wasm_op_setup(op, instance, samples, inputs, input_count,
 *                       outputs, output_count, *failed) -> result
 *   dynop_wasm_op_run  (same as setup)
 *   dynop_wasm_op_destroy(op, instance)
 *
 * op is the handle the module gave register_operator. setup and run take
 * samples * input_count input tensors (sample s's at inputs + s *
 * input_count) and samples * output_count outputs likewise, call the
 * operator's setup or run once per sample, and on failure store the
 * failing sample's index in *failed (which they leave alone otherwise:
 * the host sets it to 0xFFFFFFFF first). During setup, each output's
 * shape points to DYNOP_MAX_NDIM int64_t the host provides, data and
 * strides are 0, and dtype and ndim are zero. For an operator with
 * DYNOP_OPERATOR_SCRATCH (since 2.1) each sample has output_count + 1
 * output tensors: its outputs, then its scratch, which the host lays
 * out as dynop.h says (output_count still counts the outputs only).
 * create stores the
 * operator instance's handle in *instance (0 if create fails). The
 * dynop_arg array is the host's, valid during create: names and string
 * values are NUL-terminated; int64 and double values are 8-aligned.
 *
 * # Imports (the host provides, module "dynop")
 *
 *   log(level i32, msg ptr, len i32)
 *   set_error(msg ptr, len i32)        explains the error the running
 *                                      export is about to return
 *   last_error(buf ptr, cap i32) -> i32  copies why the last failed host
 *                                      call failed (no NUL), returns its
 *                                      full length
 *   register_operator(op ptr) -> result
 *                                      during register: op is a
 *                                      dynop_operator (device "cpu"),
 *                                      which the host reads and checks as
 *                                      it does a native plugin's; its
 *                                      address is the operator's handle.
 *                                      The host runs run, or with
 *                                      variants the first that needs no
 *                                      CPU features (the reference, last,
 *                                      needs none; a wasm SIMD variant
 *                                      before it needs none either)
 *   select_variant(name ptr, name_len i32, variants ptr,
 *                  count i32) -> i32   dynop_host.select_variant: the host
 *                                      checks the list and returns the
 *                                      index of the first variant that
 *                                      needs no CPU features, or -1
 *                                      (last_error says why)
 *   add_interface(table ptr) -> result    a struct starting with a
 *                                      dynop_header and holding function
 *                                      table indices (C function pointers)
 *   remove_interface(uid ptr) -> result
 *   acquire(plugin_id ptr, id_len i32, uid ptr, min ptr,
 *           *ref) -> result            holds interface uid of plugin
 *                                      plugin_id (min: a dynop_version)
 *                                      until release: its plugin stays
 *                                      started. A sandboxed module cannot
 *                                      call into another plugin, so the
 *                                      C host table's acquire sets
 *                                      *iface to NULL.
 *   release(ref i64) -> result
 *
 * All lengths are in bytes; strings passed with a length are UTF-8
 * without a NUL, and (0, 0) is the empty string. Any offset and length
 * the module passes must lie in its memory, or the call fails and the
 * instance is discarded. log may be called at any time, also from
 * dynop_wasm_info; last_error does not clear the message it returns. An
 * export may call the imports, and an import never calls an export.
 *
 * # Info
 *
 * dynop_wasm_info returns the address of the plugin's dynop_plugin_info
 * (what its get_info returns) in the low 32 bits: the host reads it, and
 * everything it points to, in the module's memory with the very code
 * that reads a native plugin's (wasm32 layout: 4-byte pointers), so a
 * module's info follows dynop.h's rules to the letter and a malformed one
 * gets the errors a native plugin would. The high 32 bits are the
 * address of a NUL-terminated, comma-separated list of the capabilities
 * the module asks the host to grant beyond computing, or 0 for none:
 * "clock" (the real wall and monotonic clocks; otherwise both are
 * fixed), "random" (the host's random source; otherwise a fixed
 * seed), "env" (the host's environment variables; otherwise none) and
 * "stdio" (stdout and stderr go to the host's log; otherwise they are
 * discarded). A module that asks for one the host does not grant is
 * unsupported. No module gets a file system or a network.
 *
 * Version 2.0 made the info a struct (1.x wrote it as JSON); a host
 * refuses a module built for another major version and says so.
 *
 * # Limits
 *
 * The host bounds the module's memory (pages of 64 KiB) and each call (a
 * deadline). A trap, running out of memory, a deadline, a malformed
 * pointer or a write past an output buffer (the host checks guard bytes
 * after each output) fails the call with an error naming the plugin and
 * the operator; the module instance is discarded and a new one made for
 * the next call. A Go module's panic or fatal out-of-memory shows as an
 * "unreachable" trap. wasm-ld's default stack is 64 KiB; a C plugin
 * that needs more links with -Wl,-z,stack-size=N.
 *
 * # Threads
 *
 * A module instance runs one call at a time. The host keeps a pool of
 * instances per plugin, each of which ran register itself; an operator
 * instance keeps one module instance from create to destroy.
 */
#ifndef DYNOP_DYNOP_WASM_H
#define DYNOP_DYNOP_WASM_H

#include "dynop.h"

/* The version of this ABI: major << 16 | minor. */
#define DYNOP_WASM_ABI_MAJOR 2
#define DYNOP_WASM_ABI_MINOR 1 /* 1: scratch tensors (DYNOP_OPERATOR_SCRATCH) */
#define DYNOP_WASM_ABI_VERSION ((DYNOP_WASM_ABI_MAJOR << 16) | DYNOP_WASM_ABI_MINOR)

#if defined(__wasm32__)
DYNOP_STATIC_ASSERT(sizeof(dynop_tensor) == 40, wasm_tensor_size);
DYNOP_STATIC_ASSERT(offsetof(dynop_tensor, byte_offset) == 32, wasm_tensor_byte_offset);
DYNOP_STATIC_ASSERT(sizeof(dynop_arg) == 20, wasm_arg_size);
#endif

#endif /* DYNOP_DYNOP_WASM_H */
