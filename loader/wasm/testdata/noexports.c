/*
 * noexports.c — a valid WebAssembly module that is no dynop plugin: it
 * exports one unrelated function and none of the dynop_wasm_* entry
 * points. Build it without abi/wasm/dynop_wasm.c (cbuild.WasmRaw).
 */
__attribute__((export_name("add"))) int add(int a, int b) { return a + b; }
