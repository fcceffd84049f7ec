package main

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/dynop/dynop/bench/report"
)

// A cell names one median: a benchmark (without "Benchmark"), the
// GOMAXPROCS it ran with (0: the most it ran with) and a unit.
type cell struct {
	bench string
	procs int
	unit  string
}

// ns is the time per operation of bench.
func ns(bench string) cell { return cell{bench, 0, "ns/op"} }

// metric is another unit of bench.
func metric(bench, unit string) cell { return cell{bench, 0, unit} }

func (c cell) at(procs int) cell { c.procs = procs; return c }

// doc writes the report from the results.
type doc struct {
	rs   *report.Results
	done []outcome
	sb   strings.Builder
	// unknown are the cells asked for that no benchmark of the runs
	// done produced, nor skipped: a row naming a benchmark the suite does
	// not have.
	unknown []string
}

func (d *doc) key(c cell) report.Key {
	procs := c.procs
	if procs == 0 {
		procs = slices.Max(append(d.rs.Procs(c.bench), 1))
	}
	return report.Key{Bench: c.bench, Procs: procs, Unit: c.unit}
}

// get returns the median of c, or why there is none.
func (d *doc) get(c cell) (v float64, why string) {
	k := d.key(c)
	if m, _, ok := d.rs.Median(k); ok {
		return m, ""
	}
	if why := d.rs.Why(c.bench); why != "did not run" && why != "" {
		return 0, why
	}
	if r, ok := runOf(c.bench); ok {
		i := slices.IndexFunc(d.done, func(o outcome) bool { return o.run.name == r.name })
		switch {
		case i < 0 && len(d.done) > 0:
			return 0, "not run (-only " + onlyList(d.done) + ")"
		case i >= 0 && d.done[i].err != nil:
			return 0, "did not run: " + d.done[i].err.Error()
		}
	}
	d.unknown = append(d.unknown, k.String())
	if ps := d.rs.Procs(c.bench); len(ps) > 0 {
		return 0, fmt.Sprintf("no %s at GOMAXPROCS %d", c.unit, k.Procs)
	}
	return 0, "no result"
}

func onlyList(done []outcome) string {
	var names []string
	for _, o := range done {
		names = append(names, o.run.name)
	}
	return strings.Join(names, ",")
}

// runOf returns the run whose -bench pattern selects bench.
func runOf(bench string) (run, bool) {
	top, _, _ := strings.Cut(bench, "/")
	for _, r := range runs {
		if regexp.MustCompile(r.bench).MatchString("Benchmark" + top) {
			return r, true
		}
	}
	return run{}, false
}

// ratio returns a/b, or why one is missing.
func (d *doc) ratio(a, b cell) (float64, string) {
	va, why := d.get(a)
	if why != "" {
		return 0, why
	}
	vb, why := d.get(b)
	if why != "" {
		return 0, "reference " + b.bench + ": " + why
	}
	if vb == 0 {
		return 0, "reference is 0"
	}
	return va / vb, ""
}

// show formats a median of c for a table: a time, or a quantity in c's
// unit; or why it is missing, in italics.
func (d *doc) show(c cell) string {
	v, why := d.get(c)
	if why != "" {
		return missing(why)
	}
	return format(v, c.unit)
}

func format(v float64, unit string) string {
	switch unit {
	case "ns/op":
		return report.Duration(v)
	case "allocs/op":
		return fmt.Sprintf("%.0f", v)
	case "MB/s":
		return report.Quantity(v*1e6, "B/s")
	}
	if strings.HasPrefix(unit, "x-") || unit == "speedup" || unit == "ratio" {
		return report.Ratio(v)
	}
	if strings.HasPrefix(unit, "%") {
		return fmt.Sprintf("%.1f %%", v)
	}
	// Units with what they measure in front: dynop-ns/op, cached-ms,
	// copy-GB/s, goroutine-nodes/s.
	if i := strings.LastIndexByte(unit, '-'); i >= 0 {
		switch u := unit[i+1:]; u {
		case "ns/op":
			return report.Duration(v)
		case "ms":
			return report.Duration(v * 1e6)
		case "us":
			return report.Duration(v * 1e3)
		case "ns/image":
			return report.Duration(v) + " per image"
		case "us/image":
			return report.Duration(v*1e3) + " per image"
		default:
			unit = u
		}
	}
	return report.Quantity(v, unit)
}

// showRatio formats a/b as "1.23×", or why it is missing.
func (d *doc) showRatio(a, b cell) string {
	r, why := d.ratio(a, b)
	if why != "" {
		return missing(why)
	}
	return report.Ratio(r)
}

// missing is a table cell for a value that is not there: the reason, in
// italics, cut short.
func missing(why string) string {
	why = strings.Join(strings.Fields(why), " ")
	if len(why) > 160 {
		why = why[:157] + "…"
	}
	return "_" + strings.ReplaceAll(why, "_", `\_`) + "_"
}

func (d *doc) p(format string, args ...any) { fmt.Fprintf(&d.sb, format+"\n", args...) }

func (d *doc) table(t *report.Table) { d.sb.WriteString(t.Markdown() + "\n") }

// write returns docs/PERFORMANCE.md for the results, the plots by file
// name, and the cells of the report that no benchmark of the runs done
// produced or skipped.
func write(rs *report.Results, m machine, done []outcome) (string, map[string]*report.Plot, []string) {
	d := &doc{rs: rs, done: done}
	plots := map[string]*report.Plot{}
	d.header(m)
	d.targets()
	d.calls()
	d.operator4MiB()
	d.discovery(plots)
	d.executor()
	d.imageKernels()
	d.pipeline()
	d.scaling(plots)
	d.wrappedLibrary()
	d.python()
	d.wasmCompute()
	d.outcomes()
	d.comparing()
	slices.Sort(d.unknown)
	return d.sb.String(), plots, slices.Compact(d.unknown)
}

func (d *doc) header(m machine) {
	d.p("# Performance")
	d.p("")
	d.p("_Written by `make bench` (bench/cmd/perf); do not edit by hand. The raw `go test -bench` output is in [perf/bench.txt](perf/bench.txt)._")
	d.p("")
	d.p("Every comparison below ran its rows and their reference in the same process, one after the other; the report gives the **median** of the runs and the **ratio to the reference** — absolute times drift on shared machines, ratios hold. Targets are DESIGN.md's.")
	d.p("")
	d.p("## The machine")
	d.p("")
	d.p("| | |")
	d.p("|---|---|")
	d.p("| CPU | %s, %d logical cores |", orDash(m.CPU), m.Cores)
	d.p("| CPU features dynop dispatches on | %s |", m.Features)
	if m.Memory != "" {
		d.p("| memory | %s |", m.Memory)
	}
	d.p("| OS | %s |", m.OS)
	d.p("| Go | %s |", orDash(m.Go))
	d.p("| commit | %s |", orDash(m.Commit))
	d.p("| date | %s |", m.Date)
	switch {
	case m.Count == 0:
		d.p("| runs | read from a file |")
	case m.Quick:
		d.p("| runs | -quick: one short run of each benchmark (a check that the suite works, not a measurement); %s in all |", m.Took.Round(1e9))
	default:
		d.p("| runs | %d of each benchmark; medians; the suite took %s |", m.Count, m.Took.Round(1e9))
	}
	d.p("")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// A target is one row of DESIGN.md's performance table.
type target struct {
	what, goal string
	measure    func(d *doc) (v float64, shown, why string)
	met        func(v float64) bool
	bound      string // what bounds it, shown when it is not met
}

func atMost(x float64) func(float64) bool  { return func(v float64) bool { return v <= x } }
func atLeast(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }

// ratioOf measures a/b.
func ratioOf(a, b cell) func(d *doc) (float64, string, string) {
	return func(d *doc) (float64, string, string) {
		r, why := d.ratio(a, b)
		return r, report.Ratio(r), why
	}
}

// valueOf measures c.
func valueOf(c cell) func(d *doc) (float64, string, string) {
	return func(d *doc) (float64, string, string) {
		v, why := d.get(c)
		return v, format(v, c.unit), why
	}
}

// extraOf measures the nanoseconds bench takes more than the reference
// it alternated with, and checks that it does not allocate: an allocation
// makes the value +Inf.
func extraOf(bench string) func(d *doc) (float64, string, string) {
	return func(d *doc) (float64, string, string) {
		v, why := d.get(ns(bench))
		if why != "" {
			return 0, "", why
		}
		r, why := d.get(metric(bench, "ref-ns/op"))
		if why != "" {
			return 0, "", why
		}
		allocs, why := d.get(metric(bench, "allocs/op"))
		if why != "" {
			return 0, "", why
		}
		shown := fmt.Sprintf("+%s (%s vs %s), %.0f allocs", report.Duration(v-r), report.Duration(v), report.Duration(r), allocs)
		if allocs > 0 {
			return math.Inf(1), shown, ""
		}
		return v - r, shown, ""
	}
}

// besides measures with m and, beside it, shows other.
func besides(m func(d *doc) (float64, string, string), label string, other func(d *doc) (float64, string, string)) func(d *doc) (float64, string, string) {
	return func(d *doc) (float64, string, string) {
		v, shown, why := m(d)
		if why != "" {
			return v, shown, why
		}
		if _, o, owhy := other(d); owhy == "" {
			shown += " (" + label + ": " + o + ")"
		}
		return v, shown, why
	}
}

// openTarget measures the cached open of n plugins: its speedup over
// loading each, which must be ≥ 20, and its time, which must be ≤ 20 ms
// (else the value is made 0, failing the check).
func openTarget(kind string) func(d *doc) (float64, string, string) {
	return func(d *doc) (float64, string, string) {
		bench := "OpenVsLoadEach/" + kind + "/n=1000"
		speedup, why := d.get(metric(bench, "speedup"))
		if why != "" {
			return 0, "", why
		}
		ms, why := d.get(metric(bench, "cached-ms"))
		if why != "" {
			return 0, "", why
		}
		shown := fmt.Sprintf("%s faster, %s", report.Ratio(speedup), report.Duration(ms*1e6))
		if ms > 20 {
			return 0, shown, ""
		}
		return speedup, shown, ""
	}
}

func (d *doc) targets() {
	d.p("## Targets")
	d.p("")
	t := &report.Table{Header: []string{"DESIGN.md target", "goal", "measured", ""}}
	var notMet []string
	for _, tg := range designTargets {
		v, shown, why := tg.measure(d)
		verdict := "met"
		switch {
		case why != "":
			shown, verdict = missing(why), "—"
		case !tg.met(v):
			verdict = "**not met**"
			notMet = append(notMet, fmt.Sprintf("- **%s** (%s; goal %s): %s", tg.what, shown, tg.goal, tg.bound))
		}
		t.Add(tg.what, tg.goal, shown, verdict)
	}
	d.table(t)
	if len(notMet) > 0 {
		d.p("What bounds the targets not met:")
		d.p("")
		for _, s := range notMet {
			d.p("%s", s)
		}
		d.p("")
	}
}

func (d *doc) calls() {
	d.p("## 1. Call overhead, empty function")
	d.p("")
	d.p("`BenchmarkCall` (bench/calls_test.go): one call of an empty function each way a Go program can call into a plugin; each row alternates with the direct Go call in its loop (rounds of calls of each), and the ratio is of their times there. The dynop rows call `Nop` of vecmath's interface acquired from its Go, native and WebAssembly builds; `stdplugin` is Go's `plugin` package calling a symbol of a `-buildmode=plugin` build; `go-plugin-rpc` is github.com/hashicorp/go-plugin over net/rpc to a plugin subprocess.")
	d.p("")
	t := &report.Table{Header: []string{"call", "time", "vs direct Go call", "allocs/op"}}
	for _, r := range []struct{ name, label string }{
		{"go-direct", "direct Go call (reference)"},
		{"dynop-go", "dynop, Go plugin"},
		{"stdplugin", "Go `plugin` package symbol"},
		{"cgo-raw", "raw cgo call"},
		{"dynop-native", "dynop, native plugin"},
		{"wazero-raw", "raw wazero call"},
		{"dynop-wasm-uninterruptible", "dynop, wasm plugin (Wasmtime), uninterruptible"},
		{"wazero-raw-deadline", "raw wazero call with a deadline"},
		{"dynop-wasm", "dynop, wasm plugin (Wasmtime; default: a deadline per call)"},
		{"go-plugin-rpc", "hashicorp/go-plugin, net/rpc"},
	} {
		b := "Call/" + r.name
		ratio := "1×"
		if r.name != "go-direct" {
			ratio = d.show(metric(b, "ratio"))
		}
		t.Add(r.label, d.show(ns(b)), ratio, d.show(metric(b, "allocs/op")))
	}
	d.table(t)
	d.p("`BenchmarkOperatorEmpty`: one call of an operator that does nothing (bench.Nop) on a 16-byte, one-sample batch, through `op.Instance.Run` — argument and shape checks against Setup, cancellation, panic recovery, and for native and wasm plugins the tensors' descriptors and the call across. `cgo-raw-2ptr` passes two Go pointers, as an operator's call passes its tensors' data; cgo checks each (GODEBUG=cgocheck=1, the default). Each row but the references alternates in its loop with the one named.")
	d.p("")
	t = &report.Table{Header: []string{"operator call", "time", "alternating with", "time / that", "allocs/op"}}
	for _, r := range []struct{ name, label, ref string }{
		{"go-direct", "Go operator's Run called directly", ""},
		{"dynop-go", "dynop, Go plugin", "Run called directly"},
		{"cgo-raw", "raw cgo call, no arguments", ""},
		{"cgo-raw-2ptr", "raw cgo call, two Go pointers", "raw cgo call"},
		{"dynop-native", "dynop, native plugin", "raw cgo call"},
		{"dynop-wasm-uninterruptible", "dynop, wasm plugin (Wasmtime), uninterruptible", "dynop, native plugin"},
		{"dynop-wasm", "dynop, wasm plugin (Wasmtime; default)", "dynop, native plugin"},
	} {
		b := "OperatorEmpty/" + r.name
		ratio, ref := "", "—"
		if r.ref != "" {
			ratio, ref = d.show(metric(b, "ratio")), r.ref
		}
		t.Add(r.label, d.show(ns(b)), ref, ratio, d.show(metric(b, "allocs/op")))
	}
	d.table(t)
}

// grayRows are BenchmarkGray's rows after its reference.
var grayRows = []struct{ name, label string }{
	{"dynop-native-scalar", "dynop, native, scalar variant (the same code)"},
	{"dynop-native", "dynop, native, variant chosen for this CPU"},
	{"dynop-wasm-uninterruptible", "dynop, wasm (same C, Wasmtime), uninterruptible"},
	{"dynop-wasm", "dynop, wasm (same C, Wasmtime), default"},
	{"dynop-go", "dynop, Go operator image.Grayscale"},
}

func (d *doc) operator4MiB() {
	d.p("## 2. Operator on 4 MiB")
	d.p("")
	d.p("`BenchmarkGray/in=4MiB` (bench/operator_test.go): RGBA → gray on a 1024×1024 uint8 image. The reference is imgproc's C kernel `dynop_imgproc_gray_u8` (its scalar variant) called directly through cgo; the rows run the operator `imgproc.Grayscale` through dynop, and the Go plugin's `image.Grayscale`, which computes the same bytes. Each row alternates with the reference in its loop (rounds of calls of each); the ratio is of their times there.")
	d.p("")
	t := &report.Table{Header: []string{"", "time", "throughput", "vs C kernel called directly"}}
	ref := "Gray/in=4MiB/c-direct"
	t.Add("C kernel called directly (reference)", d.show(ns(ref)), d.show(metric(ref, "MB/s")), "1×")
	for _, r := range grayRows {
		b := "Gray/in=4MiB/" + r.name
		t.Add(r.label, d.show(ns(b)), d.show(metric(b, "MB/s")), d.show(metric(b, "ratio")))
	}
	d.table(t)
}

// openSizes are BenchmarkOpenVsLoadEach's plugin counts.
var openSizes = []int{10, 100, 1000, 5000}

func (d *doc) discovery(plots map[string]*report.Plot) {
	d.p("## 3. Discovery")
	d.p("")
	d.p("`BenchmarkOpenVsLoadEach` (loader/native/open_bench_test.go): opening a host over n plugin files, each its own plugin (copies of a C fixture with their IDs patched in, and the C++ example plugin, which links libstdc++), three ways in each iteration: from the registry cache, from the manifests beside the files, and NVIGI's way — loading every library to ask for its info. No plugin code runs in the first two.")
	d.p("")
	t := &report.Table{Header: []string{"plugins", "from the cache", "from manifests", "loading each", "loading each / cache"}}
	plot := &report.Plot{Title: "Opening a host over n plugins", XLabel: "plugins", YLabel: "time to open",
		YTick: func(v float64) string { return report.Duration(v * 1e6) }}
	series := map[string]*report.Series{}
	for _, kind := range []string{"c", "cpp"} {
		for _, n := range openSizes {
			b := fmt.Sprintf("OpenVsLoadEach/%s/n=%d", kind, n)
			if kind == "cpp" && n != 1000 {
				continue
			}
			label := fmt.Sprintf("%d", n)
			if kind == "cpp" {
				label += " (C++)"
			}
			t.Add(label, d.show(metric(b, "cached-ms")), d.show(metric(b, "manifests-ms")), d.show(metric(b, "load-each-ms")),
				d.show(metric(b, "speedup")))
			if kind != "c" {
				continue
			}
			for _, s := range []struct{ unit, name string }{{"cached-ms", "from the cache"}, {"manifests-ms", "from manifests"}, {"load-each-ms", "loading each"}} {
				if v, why := d.get(metric(b, s.unit)); why == "" {
					if series[s.name] == nil {
						series[s.name] = &report.Series{Name: s.name}
						plot.Series = append(plot.Series, report.Series{})
					}
					series[s.name].X = append(series[s.name].X, float64(n))
					series[s.name].Y = append(series[s.name].Y, v)
				}
			}
		}
	}
	d.table(t)
	plot.Series = plot.Series[:0]
	for _, name := range []string{"from the cache", "from manifests", "loading each"} {
		if s := series[name]; s != nil {
			plot.Series = append(plot.Series, *s)
		}
	}
	if len(plot.Series) > 0 {
		plots["open.svg"] = plot
		d.p("![Open time against the number of plugins](perf/open.svg)")
		d.p("")
	}
	d.p("`BenchmarkFirstAcquire`: the lazy start of one plugin — the first `Acquire` of vecmath's interface in a host opened from the cache (the library is mapped and registers then), and one call: **%s** (the cached open before it: %s).",
		d.show(ns("FirstAcquire")), d.show(metric("FirstAcquire", "open-us")))
	d.p("")
}

func (d *doc) executor() {
	d.p("## 4. Executor")
	d.p("")
	d.p("`BenchmarkExecutorVsGoroutines` (graph/bench_test.go): 10,001 empty nodes, wide (all after one source) and as a chain, run by the parallel executor and, in the same iteration, by one goroutine per node with a WaitGroup (the reference), at GOMAXPROCS 1 and 2.")
	d.p("")
	t := &report.Table{Header: []string{"graph", "GOMAXPROCS", "dynop", "goroutine per node", "dynop / goroutines", "dynop, 2 vs 1"}}
	for _, shape := range []string{"wide", "chain"} {
		b := "ExecutorVsGoroutines/" + shape
		for _, procs := range []int{1, 2} {
			scale := ""
			if procs == 2 {
				scale = d.showRatio(metric(b, "nodes/s").at(2), metric(b, "nodes/s").at(1))
			}
			t.Add(shape, fmt.Sprint(procs), d.show(metric(b, "nodes/s").at(procs)), d.show(metric(b, "goroutine-nodes/s").at(procs)),
				d.show(metric(b, "x-faster").at(procs)), scale)
		}
	}
	d.table(t)
}

// imageKernels are BenchmarkImageVsImaging's cases.
var imageKernels = []string{"Blur/sigma=2", "Blur/sigma=5", "Grayscale", "Resize/half", "Resize/double", "Sobel"}

func (d *doc) imageKernels() {
	d.p("## 5. Image kernels")
	d.p("")
	d.p("`BenchmarkImageVsImaging` (bench/imgproc_test.go): imgproc's operators against github.com/disintegration/imaging on the same 1920×1080 RGBA image, alternating in one loop, with the variant dynop chooses for this CPU and with the scalar variant forced. A dynop operator call runs on one core; imaging spreads its work over GOMAXPROCS goroutines, so the one-core columns compare like with like. imaging has no Sobel: its row is one 3×3 convolution, half of Sobel's work.")
	d.p("")
	t := &report.Table{Header: []string{"kernel", "variant", "dynop, 1 core", "imaging, 1 core", "speedup, 1 core", "speedup, 2 cores"}}
	for _, k := range imageKernels {
		for _, v := range []string{"chosen", "scalar"} {
			b := "ImageVsImaging/" + k + "/" + v
			t.Add(k, v, d.show(metric(b, "dynop-ns/op").at(1)), d.show(metric(b, "peer-ns/op").at(1)),
				d.show(metric(b, "speedup").at(1)), d.show(metric(b, "speedup").at(2)))
		}
	}
	d.table(t)
	d.p("`BenchmarkSaxpyVsCopy`: the memory-bound kernel imgproc.Saxpy (out = a·x + y, float32) on 64 MiB arrays against a copy of 64 MiB in the same loop — the bandwidth a kernel can hope for — in GB/s of bytes read and written.")
	d.p("")
	t = &report.Table{Header: []string{"variant", "copy", "saxpy", "saxpy / copy"}}
	for _, v := range []string{"chosen", "scalar"} {
		b := "SaxpyVsCopy/" + v
		t.Add(v, d.show(metric(b, "copy-GB/s")), d.show(metric(b, "saxpy-GB/s")), d.show(metric(b, "%-of-copy")))
	}
	d.table(t)
}

func (d *doc) pipeline() {
	d.p("## 6. The demo pipeline")
	d.p("")
	d.p("`BenchmarkDemoPipeline` (pipeline/bench_test.go): examples/pipelines/demo.yaml over its six bundled images (decode, blur, gray, Sobel, adjust+gamma+invert, resize, encode), with the pointwise chain fused into one walk and not, on one and two workers; the last column is the time the chain's nodes took, from the run's node times.")
	d.p("")
	t := &report.Table{Header: []string{"", "images/s", "vs unfused, 1 worker", "adjust, gamma, invert"}}
	ref := metric("DemoPipeline/unfused/1", "images/s")
	for _, c := range []string{"unfused/1", "fused/1", "unfused/2", "fused/2"} {
		m := metric("DemoPipeline/"+c, "images/s")
		t.Add(c, d.show(m), d.showRatio(m, ref), d.show(metric("DemoPipeline/"+c, "chain-us/image")))
	}
	d.table(t)
	d.p("Runs of the whole demo one after another see a shared machine change under them; `vs/1` and `vs/2` run the fused and the unfused demo in turn in one loop, and their ratio is the one to read. The chain is a small part of the demo (decoding, blurring, Sobel and encoding are most of it), which bounds what fusing it can gain there.")
	d.p("")
	t = &report.Table{Header: []string{"workers", "fused", "unfused", "fused / unfused", "chain, fused", "chain, unfused"}}
	for _, w := range []string{"1", "2"} {
		b := "DemoPipeline/vs/" + w
		t.Add(w, d.show(metric(b, "fused-images/s")), d.show(metric(b, "unfused-images/s")), d.show(metric(b, "speedup")),
			d.show(metric(b, "fused-chain-us/image")), d.show(metric(b, "unfused-chain-us/image")))
	}
	d.table(t)
	d.p("`BenchmarkDemoChain` (pipeline/bench_test.go): the demo's chain alone — image.Adjust (contrast 1.6, brightness 10), image.Gamma (0.8), image.Invert — on the demo's images as it receives them (after Sobel: six gray 320×240 uint8 images in batches of 4 and 2), fused and as three nodes, in turn in one loop; each output is handed back (Graph.Recycle) as the pipeline does. The fused walk composes the three stages into one table of 256 entries and writes into the memory of its last output. The fusion pass is on by default because of this row. The main job (below) has no pointwise chain: the pass leaves its graph as it is (TestFusionOnDemoAndMainJob), so fusion neither helps nor costs there.")
	d.p("")
	t = &report.Table{Header: []string{"fused", "three nodes", "fused / three nodes", "allocated per six images, fused", "three nodes"}}
	t.Add(d.show(metric("DemoChain/vs", "fused-ns/image")), d.show(metric("DemoChain/vs", "unfused-ns/image")), d.show(metric("DemoChain/vs", "speedup")),
		d.show(metric("DemoChain/fused", "B/op")), d.show(metric("DemoChain/unfused", "B/op")))
	d.table(t)
	d.p("`BenchmarkMainJob` (bench/mainjob_test.go): issue 23's main job — decode 50 generated 1920×1080 JPEG photos, resize them to 960×540 (imgproc.Resize), blur them (imgproc.GaussianBlur, σ 2), encode them as JPEG (quality 90) — with dynop on one worker and on two (each worker with its own copy of the graph, sharing each batch of 8; decoding and encoding with the native codec plugin, plugins/codec on libjpeg-turbo, whose passes replace image.Decode and image.Encode), and with OpenCV 4.6 (python3-opencv: cv2.imread, resize INTER_LINEAR, GaussianBlur, imwrite; one thread, one Python process), alternating in one loop. Goals: two workers at least 1.8× one on this 2-core machine (issue 23), one worker at least 1.0× OpenCV's images/s (issue 24).")
	d.p("")
	t = &report.Table{Header: []string{"dynop, 1 worker", "dynop, 2 workers", "2 workers / 1", "", "OpenCV, 1 thread", "dynop 1 worker / OpenCV", "", "dynop 2 workers / OpenCV"}}
	speedup := metric("MainJob", "speedup")
	t.Add(d.show(metric("MainJob", "dynop1-images/s")), d.show(metric("MainJob", "dynop2-images/s")), d.show(speedup), d.verdict(speedup, atLeast(1.8)),
		d.show(metric("MainJob", "opencv-images/s")), d.show(metric("MainJob", "x-opencv-1worker")), d.verdict(metric("MainJob", "x-opencv-1worker"), atLeast(1.0)),
		d.show(metric("MainJob", "x-opencv-2workers")))
	d.table(t)
	d.p("`BenchmarkMainJobKernels` (bench/scaling_test.go) is what two cores give this work at all: the same four operators called directly, image after image, by one goroutine over 16 photos and by two over 8 each at once, with no pipeline around them (no files, batches or workers). With native codecs and SIMD kernels the two cores share more than they add — the main job's two workers are measured against this bound, not against 2×.")
	d.p("")
	t = &report.Table{Header: []string{"1 goroutine", "2 goroutines", "2 / 1: the machine's bound", "main job, 2 workers / 1", "of the bound"}}
	t.Add(d.show(metric("MainJobKernels", "1goroutine-images/s")), d.show(metric("MainJobKernels", "2goroutines-images/s")),
		d.show(metric("MainJobKernels", "speedup")), d.show(speedup), d.showRatio(speedup, metric("MainJobKernels", "speedup")))
	d.table(t)
	d.p("`BenchmarkJPEGCodec` (bench/codec_test.go): one generated 1920×1080 JPEG photo decoded to RGB and encoded again at quality 90, from bytes in memory, ten of each per round, by dynop's codec plugin (codec.Decode, codec.Encode) and by OpenCV (cv2.imdecode, cv2.imencode; one thread), alternating in one loop. Both are libjpeg-turbo; dynop decodes with its fast chroma upsampling (chroma replicated, as Go's image/jpeg does, which keeps it within 3 levels of image.Decode), OpenCV with the smooth one. Goal (issue 24): dynop at most 1.1× OpenCV's time for each.")
	d.p("")
	t = &report.Table{Header: []string{"", "dynop", "OpenCV", "dynop / OpenCV", ""}}
	for _, c := range []struct{ what, unit string }{{"decode", "decode"}, {"encode, quality 90", "encode"}} {
		x := metric("JPEGCodec", "x-opencv-"+c.unit)
		t.Add(c.what, d.show(metric("JPEGCodec", "dynop-"+c.unit+"-ms")), d.show(metric("JPEGCodec", "opencv-"+c.unit+"-ms")), d.show(x), d.verdict(x, atMost(1.1)))
	}
	d.table(t)
	d.p("`BenchmarkThumbnail` (bench/thumbnail_test.go): 256-pixel-wide JPEG thumbnails (quality 90, the aspect ratio kept) of 50 generated 1920×1080 photos, by dynop (image.Decode → imgproc.Resize width 256 → JPEG; the codec plugin's decode pass shrinks each JPEG on load to 480×270, then the resize is bilinear) on one worker and on two, and by libvips' vipsthumbnail (`-s 256`, one thread, one process for the 50 files, its start included; it shrinks on load too, then resamples with Lanczos-3, a sharper filter than dynop's bilinear), alternating in one loop. Issue 24 asks for the ratio, with no goal.")
	d.p("")
	t = &report.Table{Header: []string{"dynop, 1 worker", "dynop, 2 workers", "vipsthumbnail, 1 thread", "dynop 1 worker / vipsthumbnail"}}
	t.Add(d.show(metric("Thumbnail", "dynop1-images/s")), d.show(metric("Thumbnail", "dynop2-images/s")), d.show(metric("Thumbnail", "vips-images/s")), d.show(metric("Thumbnail", "x-vips-1worker")))
	d.table(t)
	d.p("`BenchmarkRunMemory` (pipeline/bench_test.go): the main job (to 320×240) as `dynop run` runs it, in a child process on two workers, over 50 and over 1,000 generated 640×480 JPEG photos: the peak RSS of each. Memory is bounded by the batches in flight, not by the number of inputs. Goal: the run over 1,000 at most 1.2× the run over 50.")
	d.p("")
	t = &report.Table{Header: []string{"50 inputs", "1,000 inputs", "1,000 / 50", ""}}
	ratio := metric("RunMemory", "ratio")
	t.Add(d.show(metric("RunMemory", "rss50-MiB")), d.show(metric("RunMemory", "rss1000-MiB")), d.show(ratio), d.verdict(ratio, atMost(1.2)))
	d.table(t)
}

// verdict says whether c's value meets a goal: "met", "**not met**", or
// "—" when it was not measured.
func (d *doc) verdict(c cell, met func(float64) bool) string {
	switch v, why := d.get(c); {
	case why != "":
		return "—"
	case met(v):
		return "met"
	}
	return "**not met**"
}

func (d *doc) scaling(plots map[string]*report.Plot) {
	d.p("## 7. Scaling")
	d.p("")
	d.p("How the cost of a call through dynop shrinks beside the work it carries: `BenchmarkGray` at every size, each form's time over the C kernel called directly (the ratio at 4 MiB is section 2's). Open time against the number of plugins is section 3's plot.")
	d.p("")
	t := &report.Table{Header: append([]string{"input", "C kernel"}, grayLabels()...)}
	plot := &report.Plot{Title: "Grayscale through dynop, time over the C kernel called directly", XLabel: "input bytes (RGBA)",
		YLabel: "time / direct C call", XTick: func(v float64) string { return bytesLabel(v) },
		Guides: []report.Guide{{Y: 1, Label: "direct call"}}}
	for _, r := range grayRows {
		s := report.Series{Name: strings.TrimPrefix(r.name, "dynop-")}
		for _, size := range graySizes {
			if r, why := d.get(metric("Gray/"+size.name+"/"+r.name, "ratio")); why == "" {
				s.X, s.Y = append(s.X, float64(size.bytes)), append(s.Y, r)
			}
		}
		if len(s.X) > 0 {
			plot.Series = append(plot.Series, s)
		}
	}
	for _, size := range graySizes {
		ref := ns("Gray/" + size.name + "/c-direct")
		row := []string{strings.TrimPrefix(size.name, "in="), d.show(ref)}
		for _, r := range grayRows {
			row = append(row, d.show(metric("Gray/"+size.name+"/"+r.name, "ratio")))
		}
		t.Add(row...)
	}
	d.table(t)
	if len(plot.Series) > 0 {
		plots["gray-sizes.svg"] = plot
		d.p("![Call overhead against tensor size](perf/gray-sizes.svg)")
		d.p("")
	}
	d.p("`BenchmarkCallVsRawEngine` (loader/wasm/bench_test.go): a WebAssembly operator (scale n floats) through dynop — checks, tensors laid out, input copied in, output zeroed and copied out — over one raw call of the same export through the engine alone on data already in the module's memory (`wasm.RawScale`: the loader's engine call, Wasmtime's `wasmtime_func_call_unchecked` or wazero's `CallWithStack`, with the same per-call deadline), alternating in one loop, for each engine.")
	d.p("")
	t = &report.Table{Header: []string{"engine", "floats", "deadline per call: dynop", "raw call", "ratio", "uninterruptible: dynop", "raw call", "ratio"}}
	for _, engine := range []string{"wasmtime", "wazero"} {
		for _, n := range []int{16, 16 << 10, 256 << 10} {
			row := []string{engine, fmt.Sprint(n)}
			for _, mode := range []string{"deadline", "uninterruptible"} {
				b := fmt.Sprintf("CallVsRawEngine/%s/%s/floats=%d", engine, mode, n)
				row = append(row, d.show(metric(b, "dynop-ns/op")), d.show(metric(b, "raw-ns/op")), d.show(metric(b, "ratio")))
			}
			t.Add(row...)
		}
	}
	d.table(t)
	d.p("Under Wasmtime a second loop alternates dynop's call with the export called through wasmtime-go's `Func.Call`, the engine's own Go API (its arguments boxed, its result returned as `interface{}`), with the deadline armed alike; a loop of its own, since the garbage `Func.Call` makes slows what runs beside it:")
	d.p("")
	t = &report.Table{Header: []string{"floats", "deadline per call: dynop", "`Func.Call`", "dynop / `Func.Call`", "uninterruptible: dynop", "`Func.Call`", "dynop / `Func.Call`"}}
	for _, n := range []int{16, 16 << 10, 256 << 10} {
		row := []string{fmt.Sprint(n)}
		for _, mode := range []string{"deadline", "uninterruptible"} {
			b := fmt.Sprintf("CallVsRawEngine/wasmtime/%s/floats=%d", mode, n)
			row = append(row, d.show(metric(b, "dynop-vs-goapi-ns/op")), d.show(metric(b, "goapi-ns/op")), d.show(metric(b, "x-goapi")))
		}
		t.Add(row...)
	}
	d.table(t)
}

// blasGoal is issue 25's goal for a call through the dynop.blas.BLAS
// table over a direct cgo call of cblas_sgemm: at most this ratio.
const blasGoal = 1.05

func (d *doc) wrappedLibrary() {
	d.p("## 8. A wrapped C library: OpenBLAS")
	d.p("")
	d.p("`BenchmarkSgemm` (bench/blas_test.go): C = A·Bᵀ on 64×64 float32 matrices with OpenBLAS's cblas_sgemm, called directly from Go through cgo (the reference; the function's address from libopenblas.so.0, which the plugin links), and through the dynop.blas.BLAS table of the example plugin dynop.plugin.blas (plugins/blas), acquired from a host: the Go binding's checks of the sizes, a cgo call to a trampoline, a call through the table. The table's row alternates with the reference in its loop; the ratio is of their times there. Goal (issue 25): at most %.2f×.", blasGoal)
	d.p("")
	t := &report.Table{Header: []string{"", "time", "vs direct call", "", "allocs/op"}}
	ref, row := "Sgemm/n=64/cgo-direct", "Sgemm/n=64/dynop-table"
	t.Add("cblas_sgemm called directly through cgo (reference)", d.show(ns(ref)), "1×", "", d.show(metric(ref, "allocs/op")))
	ratio := metric(row, "ratio")
	t.Add("through the dynop.blas.BLAS table", d.show(ns(row)), d.show(ratio), d.verdict(ratio, atMost(blasGoal)), d.show(metric(row, "allocs/op")))
	d.table(t)
}

// pythonBlurGoal is issue 26's goal for the blur called from Python over
// the same call from Go: at most this ratio.
const pythonBlurGoal = 1.05

func (d *doc) python() {
	d.p("## 9. From Python")
	d.p("")
	d.p("`BenchmarkPython` (bench/python_test.go): the Python package (python/dynop, over libdynop.so through ctypes; Debian's Python 3 and NumPy) against the same work done without it. One Python process (`python/bench.py --serve`, started once) runs the Python sides and answers the time they took; the benchmark runs each Go side and then its Python pair in turn, in short rounds in one loop (so each round of a pair's sides begins after the other process ran), and each ratio is of times measured in the same run. Both hosts load the imgproc plugin the benchmark builds, and dispatch chooses the same variant in both; a call runs on the calling thread in both (libdynop's Go runtime is given the benchmark's GOMAXPROCS), and each process spends one core's time on it (CPU time over wall time, measured with getrusage: 1.05 in Python, at most 1 in Go).")
	d.p("")
	d.p("`Saxpy/floats=16`: imgproc.Saxpy (out = 2·x + y) on two float32 arrays of 16, a kernel of a few nanoseconds: the times are the cost of the call. The reference is the plugin's exported C kernel of the variant the host runs (`dynop_imgproc_saxpy_f32_avx512` on an AVX-512 machine) called through ctypes, its argtypes declared once, on addresses taken once, into an output allocated once. Issue 26 asks for the package's call against it in µs, with no goal.")
	d.p("")
	b := "Python/Saxpy/floats=16"
	t := &report.Table{Header: []string{"16 floats", "time per call", "vs the C kernel through ctypes"}}
	t.Add("the C kernel through ctypes (reference)", d.show(metric(b, "ref-ns/op")), "1×")
	t.Add("`dynop_operator_run` through ctypes, input structs described once, the output deleted", d.show(metric(b, "capi-ns/op")), d.show(metric(b, "x-capi")))
	t.Add("the package: `op(x, y)`, a new output `Tensor` each call", d.show(ns(b)), d.show(metric(b, "ratio")))
	t.Add("the package: `op(x, y, out=o)`, into an array allocated once", d.show(metric(b, "into-ns/op")), d.show(metric(b, "x-into")))
	t.Add("from Go: `Instance.Exec`, a new output each call (handed back with `Recycle`)", d.show(metric(b, "go-ns/op")), "—")
	t.Add("from Go: `Instance.Run` into outputs set up once", d.show(metric(b, "gorun-ns/op")), "—")
	d.table(t)
	d.p("`GaussianBlur/1920x1080x3`: imgproc.GaussianBlur (σ 2) on a 1080×1920×3 uint8 image, batch 1, from Python and the same call from Go, two ways: returning a new output — `blur(img)` and `Instance.Exec` (the benchmark hands Exec's output back with `Recycle`, so the next call reuses its memory, cleared as a new allocation is; libdynop allocates and clears a new output in C for each call) — and into an output set up once: `blur(img, out=arr)` (`dynop_operator_run_into`) and `Instance.Run`. Goal (issue 26): the Python call at most %.2f× the Go call's time.", pythonBlurGoal)
	d.p("")
	b = "Python/GaussianBlur/1920x1080x3"
	ratio, into := metric(b, "ratio"), metric(b, "x-into")
	t = &report.Table{Header: []string{"1920×1080×3 uint8", "from Go", "from Python", "Python / Go", ""}}
	t.Add("a new output each call: `Instance.Exec`, `blur(img)`", d.show(metric(b, "ref-ns/op")), d.show(ns(b)), d.show(ratio), d.verdict(ratio, atMost(pythonBlurGoal)))
	t.Add("into an output set up once: `Instance.Run`, `blur(img, out=arr)`", d.show(metric(b, "gorun-ns/op")), d.show(metric(b, "into-ns/op")), d.show(into), d.verdict(into, atMost(pythonBlurGoal)))
	d.table(t)
	d.p("`dynop_operator_run` called through ctypes on the input's struct described once, its output deleted, takes %s (%s of `Instance.Exec`): the package's call without its Python work. That work — describing the inputs (a ctypes struct and its shape and strides), the arrays of pointers, the `Tensor` and its `weakref.finalize` — costs %s with the caches warm (the package's `op(x, y)` over `dynop_operator_run` on 16 floats, above), but a blur streams 12 MB through the caches, and the next call's Python work runs with the interpreter's code and objects evicted: timing the parts of `Operator.run` between blurs gave about 0.1 ms a call, 2–4 %% of a blur (`python/bench.py` shows the effect on 16 floats: one call right after copying 64 MB takes 0.2–0.3 ms, `dynop_operator_run`'s 60–110 µs). A call that returns a new output also has its 6 MB allocated and cleared (libdynop's memset is 4–5 %% of the package's time in a perf profile of the loop), as `Exec` clears the memory it reuses; `out=` and `Instance.Run` skip both.",
		d.show(metric(b, "capi-ns/op")), d.show(metric(b, "x-capi")), d.pythonWork())
	d.p("")
}

// pythonWork is the package's time per call over dynop_operator_run's
// through ctypes on 16 floats: its own Python work.
func (d *doc) pythonWork() string {
	b := "Python/Saxpy/floats=16"
	pkg, why := d.get(ns(b))
	if why != "" {
		return missing(why)
	}
	capi, why := d.get(metric(b, "capi-ns/op"))
	if why != "" {
		return missing(why)
	}
	return report.Duration(pkg - capi)
}

func grayLabels() []string {
	var out []string
	for _, r := range grayRows {
		out = append(out, strings.TrimPrefix(r.name, "dynop-"))
	}
	return out
}

// graySizes are BenchmarkGray's inputs and their sizes in bytes.
var graySizes = []struct {
	name  string
	bytes int
}{{"in=256B", 256}, {"in=4KiB", 4 << 10}, {"in=64KiB", 64 << 10}, {"in=1MiB", 1 << 20}, {"in=4MiB", 4 << 20}, {"in=16MiB", 16 << 20}}

func bytesLabel(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if v >= u.f {
			return fmt.Sprintf("%.3g %s", v/u.f, u.s)
		}
	}
	return fmt.Sprintf("%.3g B", v)
}

func (d *doc) outcomes() {
	skipped, failed := d.rs.Skipped(), d.rs.Failed()
	var runFailed []outcome
	for _, o := range d.done {
		if o.err != nil {
			runFailed = append(runFailed, o)
		}
	}
	if len(skipped)+len(failed)+len(runFailed) == 0 {
		return
	}
	d.p("## Skipped and failed")
	d.p("")
	for _, o := range skipped {
		d.p("- `%s` skipped: %s", o.Bench, oneLine(o.Why))
	}
	for _, o := range failed {
		d.p("- `%s` **failed**: %s", o.Bench, oneLine(o.Why))
	}
	for _, o := range runFailed {
		d.p("- run %s **failed**: %s", o.run.name, oneLine(o.err.Error()))
	}
	d.p("")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (d *doc) comparing() {
	d.p("## Comparing two runs")
	d.p("")
	d.p("Keep the raw output of one run and compare it with the next with benchstat:")
	d.p("")
	d.p("```sh")
	d.p("cp docs/perf/bench.txt /tmp/old.txt")
	d.p("make bench")
	d.p("go run golang.org/x/perf/cmd/benchstat@latest /tmp/old.txt docs/perf/bench.txt")
	d.p("```")
}

// wasmComputeGoal is issue 27's goal for a WebAssembly operator, deadline
// enforced, over the native scalar variant of the same C: at most this.
const wasmComputeGoal = 2.0

func (d *doc) wasmCompute() {
	d.p("## 10. WebAssembly compute")
	d.p("")
	d.p("`BenchmarkWasmVsNative` (plugins/imgproc/wasm_bench_test.go): each of imgproc's operators on a 1920×1080 RGB uint8 image (Resize to 960×540, GaussianBlur σ 2) through its WebAssembly build (the same C, clang -O3 -msimd128) on the build's default engine, Wasmtime, against the native plugin's scalar variant (the reference) and the variant dispatch chooses for this CPU, the three alternating in one loop; each ratio is of their times there. The wasm build runs with a deadline per call (the default) and uninterruptible (`wasm.Config.CallTimeout < 0`). Goal (issue 27): with the deadline, at most %.0f× the native scalar variant. docs/wasm-engines.md compares the engines themselves, wazero's deadline included.", wasmComputeGoal)
	d.p("")
	t := &report.Table{Header: []string{"operator", "native scalar", "native best", "wasm, deadline", "× scalar", "", "× best", "wasm, uninterruptible", "× scalar"}}
	for _, op := range []string{"GaussianBlur", "Sobel", "Resize", "Grayscale"} {
		b := "WasmVsNative/imgproc." + op
		dl, un := b+"/deadline", b+"/uninterruptible"
		ratio := metric(dl, "ratio")
		t.Add(op, d.show(metric(dl, "native-ms")), d.show(metric(dl, "best-ms")), d.show(metric(dl, "wasm-ms")), d.show(ratio), d.verdict(ratio, atMost(wasmComputeGoal)),
			d.show(metric(dl, "x-best")), d.show(metric(un, "wasm-ms")), d.show(metric(un, "ratio")))
	}
	d.table(t)
}
