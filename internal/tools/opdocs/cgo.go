//go:build cgo

package main

// nativeLoader says whether this program loads native plugins: it has
// the native loader, which needs cgo.
const nativeLoader = true
