//go:build !cgo || dynop_wazero

package wasm

import "context"

// CallGoAPI is wasmtime-go's Func.Call in builds with Wasmtime; this
// build has none: ok is false.
func (r *RawScale) CallGoAPI(context.Context) (ok bool, err error) { return false, nil }
