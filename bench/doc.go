// Package bench compares dynop with its peers and with the machine's
// limits, side by side in one run: ratios hold on shared machines where
// absolute times drift.
//
// It is a module of its own so that the peers it measures against
// (github.com/disintegration/imaging, …) never enter the dependencies of
// github.com/dynop/dynop. Run it from the repository root with
//
//	make bench
//
// which runs bench/cmd/perf: these benchmarks and the comparisons that
// live beside the code they measure (discovery, the executor, the demo
// pipeline, WebAssembly), and writes docs/PERFORMANCE.md. One part alone:
// go run ./cmd/perf -only calls. The benchmarks build their plugins
// (testdata/, the example plugins) and peers (peers/) when they run; a
// row whose plugin or peer cannot be built is skipped and says why.
package bench
