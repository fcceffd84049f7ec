//go:build wasip1

// Command tone is an example dynop plugin written in Go and built as a
// WebAssembly module: dynop.plugin.tone, with one operator, tone.Gamma.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o tone.wasm ./plugins/tone
//
// The module is a WASI reactor: the host calls _initialize, which runs
// the init function that registers the plugin with
// [github.com/dynop/dynop/loader/wasm/guest]; main never runs. It builds
// only for GOOS=wasip1.
//
// tone.Gamma applies a gamma curve to HWC images, uint8 on a 0..255
// scale and float32 on a 0..1 scale, with g the argument gamma:
//
//	uint8:   y = round(255 * (x/255)^(1/g))       a 256-entry table made at create,
//	                                              in float64, rounded half away from zero
//	float32: y = float32(x^(1/g)) for x > 0       in float64, 1/g too
//	         y = 0 otherwise (negatives and NaN)
//
// Inputs may be strided (a crop of a larger image, say): Run walks them
// by their strides.
package main
