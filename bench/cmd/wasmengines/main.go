// Command wasmengines turns the output of the WebAssembly engine
// benchmarks (bench/wasmengines_test.go) into the Markdown tables of
// docs/wasm-engines.md: for each kernel, every engine's median time per
// call, the range over the runs, and its ratio to the native scalar and
// the native best variant's medians from the same output; the calls on
// 16 floats; and what the deadline costs each engine.
//
//	cd bench && go test -run '^$' -bench 'WasmEngines|WasmCall16' -benchmem -count 5 -timeout 60m | tee engines.txt
//	go run ./cmd/wasmengines engines.txt
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dynop/dynop/bench/report"
)

// The rows, as the benchmarks name them; keep them in step with
// engKernels and engineSpecs in wasmengines_test.go.
var (
	kernels = []string{"Blur", "Sobel", "Resize", "Grayscale"}
	engines = []struct {
		name     string
		deadline string // how a runaway call is stopped; "" if it is not
	}{
		{"wazero", ""},
		{"wazero-deadline", "close on context done"},
		{"wasmtime", ""},
		{"wasmtime-epoch", "epoch"},
		{"wasmtime-fuel", "fuel (a work bound)"},
		{"wazy-deadline", "preemption check"},
	}
	calls = []string{
		"native-cgo", "context.WithTimeout",
		"wazero/CallWithStack", "wazero/Call", "wasmtime/Func.Call", "wasmtime/unchecked",
		"wazero-deadline/CallWithStack", "wazero-deadline/Call", "wasmtime-epoch/Func.Call", "wasmtime-epoch/unchecked",
		"wazy-deadline/CallWithStack",
	}
	// Each engine with its deadline against the same engine without.
	deadlinePairs = [][2]string{{"wazero", "wazero-deadline"}, {"wasmtime", "wasmtime-epoch"}, {"wasmtime", "wasmtime-fuel"}}
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: wasmengines BENCH-OUTPUT...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var rs report.Results
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fatal(err)
		}
		err = rs.Read(f, name)
		f.Close()
		if err != nil {
			fatal(err)
		}
	}
	fmt.Print(tables(&rs))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "wasmengines:", err)
	os.Exit(1)
}

// stat is a benchmark's median and range of one unit, and how many runs.
type stat struct {
	med, lo, hi float64
	n           int
	ok          bool
	why         string // why not ok
}

func get(rs *report.Results, bench, unit string) stat {
	procs := rs.Procs(bench)
	if len(procs) == 0 {
		return stat{why: rs.Why(bench)}
	}
	k := report.Key{Bench: bench, Procs: procs[0], Unit: unit}
	med, n, ok := rs.Median(k)
	lo, hi, _ := rs.Range(k)
	return stat{med: med, lo: lo, hi: hi, n: n, ok: ok}
}

func (s stat) time() string {
	if !s.ok {
		return s.why
	}
	return report.Duration(s.med)
}

func (s stat) spread() string {
	if !s.ok {
		return ""
	}
	return report.Duration(s.lo) + " – " + report.Duration(s.hi)
}

func ratio(x, ref stat) string {
	if !x.ok || !ref.ok || ref.med == 0 {
		return ""
	}
	return report.Ratio(x.med / ref.med)
}

func tables(rs *report.Results) string {
	out := fmt.Sprintf("cpu: %s; runs per row: see n.\n\n", rs.Config("cpu"))
	for _, k := range kernels {
		scalar := get(rs, "WasmEngines/"+k+"/native-scalar", "ns/op")
		best := get(rs, "WasmEngines/"+k+"/native-best", "ns/op")
		o2 := get(rs, "WasmEngines/"+k+"/native-scalar-O2", "ns/op")
		t := report.Table{Header: []string{"engine", "SIMD build", "deadline", "median", "range", "n", "× native scalar", "× native best", "× scalar -O2"}}
		t.Add("native scalar (gcc -O3)", "", "", scalar.time(), scalar.spread(), fmt.Sprint(scalar.n), ratio(scalar, scalar), ratio(scalar, best), ratio(scalar, o2))
		t.Add("native best variant", "", "", best.time(), best.spread(), fmt.Sprint(best.n), ratio(best, scalar), ratio(best, best), ratio(best, o2))
		t.Add("native scalar (gcc -O2, as the plugin)", "", "", o2.time(), o2.spread(), fmt.Sprint(o2.n), ratio(o2, scalar), ratio(o2, best), ratio(o2, o2))
		for _, e := range engines {
			for _, simd := range []bool{false, true} {
				name, build := e.name, "no"
				if simd {
					name, build = name+"/simd", "-msimd128"
				}
				s := get(rs, "WasmEngines/"+k+"/"+name, "ns/op")
				dl := e.deadline
				if dl == "" {
					dl = "none"
				}
				t.Add(e.name, build, dl, s.time(), s.spread(), fmt.Sprint(s.n), ratio(s, scalar), ratio(s, best), ratio(s, o2))
			}
		}
		out += "#### " + k + "\n\n" + t.Markdown() + "\n"
	}

	t := report.Table{Header: []string{"call", "median", "range", "n", "B/op", "allocs/op", "× native cgo"}}
	native := get(rs, "WasmCall16/native-cgo", "ns/op")
	for _, c := range calls {
		s := get(rs, "WasmCall16/"+c, "ns/op")
		bytes, allocs := get(rs, "WasmCall16/"+c, "B/op"), get(rs, "WasmCall16/"+c, "allocs/op")
		t.Add(c, s.time(), s.spread(), fmt.Sprint(s.n), num(bytes), num(allocs), ratio(s, native))
	}
	out += "#### Calls: saxpy on 16 float32\n\n" + t.Markdown() + "\n"

	t = report.Table{Header: []string{"kernel", "SIMD build"}}
	for _, p := range deadlinePairs {
		t.Header = append(t.Header, p[1]+" / "+p[0])
	}
	for _, k := range kernels {
		for _, simd := range []string{"", "/simd"} {
			build := "no"
			if simd != "" {
				build = "-msimd128"
			}
			row := []string{k, build}
			for _, p := range deadlinePairs {
				row = append(row, ratio(get(rs, "WasmEngines/"+k+"/"+p[1]+simd, "ns/op"), get(rs, "WasmEngines/"+k+"/"+p[0]+simd, "ns/op")))
			}
			t.Add(row...)
		}
	}
	row := []string{"call on 16 floats", "no"}
	for _, p := range [][2]string{{"wazero/CallWithStack", "wazero-deadline/CallWithStack"}, {"wasmtime/unchecked", "wasmtime-epoch/unchecked"}} {
		row = append(row, ratio(get(rs, "WasmCall16/"+p[1], "ns/op"), get(rs, "WasmCall16/"+p[0], "ns/op")))
	}
	t.Add(row...)
	out += "#### What the deadline costs: each engine with it over the same engine without\n\n" + t.Markdown()
	return out
}

func num(s stat) string {
	if !s.ok {
		return ""
	}
	return fmt.Sprintf("%.0f", s.med)
}
