/*
 * nopraw.c — a WebAssembly module that exports one empty function, nop,
 * and imports nothing: the floor of a call through wazero alone.
 */
__attribute__((export_name("nop"))) void nop(void);
void nop(void) {}
