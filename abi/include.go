package abi

import "embed"

// Include holds the C headers a plugin that is not Go compiles against:
// include/dynop/dynop.h (the C ABI) and include/dynop/dynop_wasm.h (its
// wasm32 form). dynop new copies them into the projects it writes, so
// that a plugin builds without a dynop checkout.
//
//go:embed include/dynop/dynop.h include/dynop/dynop_wasm.h
var Include embed.FS
