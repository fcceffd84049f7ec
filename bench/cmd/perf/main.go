// Command perf runs dynop's benchmark suite and writes docs/PERFORMANCE.md:
// the machine, then every comparison of dynop with its peers and with
// the machine's limits as medians over repeated runs, each with its ratio
// to a reference measured in the same process, and the DESIGN.md targets
// marked met or not met. It keeps go test's raw output in
// docs/perf/bench.txt, for benchstat, and draws the scaling plots as SVG
// in docs/perf/.
//
// make bench runs it from the bench module:
//
//	cd bench && go run ./cmd/perf
//
// A benchmark that cannot run (no C compiler for WebAssembly, a peer that
// does not build) is skipped with its reason, which the report prints in
// its row; the rest runs. Flags:
//
//	-count N     runs of each benchmark (default 5); the report takes medians
//	-quick       one short run of each benchmark, to check the suite works
//	-only NAMES  comma-separated runs to do (see -list); the others' rows say "did not run"
//	-root DIR    the repository (default ..)
//	-out DIR     where PERFORMANCE.md and perf/ go (default ROOT/docs)
//	-from FILE   write the report from a raw output file instead of running
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dynop/dynop/bench/internal/peer"
	"github.com/dynop/dynop/bench/report"
)

// A run is one go test invocation of the suite.
type run struct {
	name      string   // what -only selects
	dir       string   // the module to run in, relative to the repository
	pkgs      []string // packages, relative to dir
	bench     string   // the -bench pattern
	benchtime string   // -benchtime
	cpu       string   // -cpu, if not the default
}

// runs are the suite, in the order they run. Each benchmark compares its
// rows with their reference inside one process; benchtimes are chosen so
// that the whole suite takes a few minutes on two cores with -count 5.
var runs = []run{
	{name: "calls", dir: "bench", pkgs: []string{"."}, benchtime: "100ms",
		bench: "^(BenchmarkCall|BenchmarkOperatorEmpty|BenchmarkGray|BenchmarkSaxpyVsCopy)$"},
	{name: "imaging", dir: "bench", pkgs: []string{"."}, benchtime: "300ms", cpu: "1,2",
		bench: "^BenchmarkImageVsImaging$"},
	{name: "discovery", dir: ".", pkgs: []string{"./loader/native"}, benchtime: "1x",
		bench: "^(BenchmarkOpenVsLoadEach|BenchmarkFirstAcquire)$"},
	{name: "executor", dir: ".", pkgs: []string{"./graph"}, benchtime: "200ms", cpu: "1,2",
		bench: "^BenchmarkExecutorVsGoroutines$"},
	{name: "pipeline", dir: ".", pkgs: []string{"./pipeline"}, benchtime: "300ms",
		bench: "^(BenchmarkDemoPipeline|BenchmarkDemoChain|BenchmarkRunMemory)$"},
	{name: "mainjob", dir: "bench", pkgs: []string{"."}, benchtime: "1x",
		bench: "^(BenchmarkMainJob|BenchmarkMainJobKernels)$"},
	{name: "codec", dir: "bench", pkgs: []string{"."}, benchtime: "5x",
		bench: "^BenchmarkJPEGCodec$"},
	{name: "thumbnail", dir: "bench", pkgs: []string{"."}, benchtime: "1x",
		bench: "^BenchmarkThumbnail$"},
	{name: "wasm", dir: ".", pkgs: []string{"./plugins/imgproc"}, benchtime: "10x",
		bench: "^BenchmarkWasmVsNative$"},
	{name: "wasmcall", dir: ".", pkgs: []string{"./loader/wasm"}, benchtime: "300ms",
		bench: "^BenchmarkCallVsRawEngine$"},
	{name: "blas", dir: "bench", pkgs: []string{"."}, benchtime: "300ms",
		bench: "^BenchmarkSgemm$"},
	{name: "python", dir: "bench", pkgs: []string{"."}, benchtime: "3s",
		bench: "^BenchmarkPython$"},
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("perf: ")
	count := flag.Int("count", 5, "runs of each benchmark; the report takes medians")
	quick := flag.Bool("quick", false, "one short run of each benchmark, to check that the suite works")
	only := flag.String("only", "", "comma-separated runs to do: "+runNames())
	root := flag.String("root", "..", "the repository")
	out := flag.String("out", "", "where PERFORMANCE.md and perf/ go (default ROOT/docs)")
	from := flag.String("from", "", "write the report from this raw output instead of running the suite")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("unexpected arguments %q", flag.Args())
	}
	if *count < 1 {
		log.Fatalf("-count %d: want at least 1", *count)
	}
	if *out == "" {
		*out = filepath.Join(*root, "docs")
	}
	selected, err := selectRuns(*only)
	if err != nil {
		log.Fatal(err)
	}
	gocmd, err := peer.GoCommand()
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	start := time.Now()
	var raw []byte
	var done []outcome
	if *from != "" {
		if raw, err = os.ReadFile(*from); err != nil {
			log.Fatal(err)
		}
	} else {
		raw, done = runSuite(ctx, gocmd, *root, selected, *count, *quick)
	}
	var rs report.Results
	if err := rs.Read(bytes.NewReader(raw), "bench.txt"); err != nil {
		log.Fatal(err)
	}
	m := describeMachine(ctx, gocmd, *root)
	if m.CPU == "" {
		m.CPU = rs.Config("cpu") // go test's own, where /proc/cpuinfo is not
	}
	m.Count, m.Quick, m.Took = *count, *quick, time.Since(start)
	if *from != "" {
		m.Count, m.Took = 0, 0
	}
	doc, plots, unknown := write(&rs, m, done)
	for _, k := range unknown {
		log.Printf("warning: the report asks for %s, which no benchmark run produced", k)
	}
	if err := os.MkdirAll(filepath.Join(*out, "perf"), 0o755); err != nil {
		log.Fatal(err)
	}
	files := map[string][]byte{"PERFORMANCE.md": []byte(doc)}
	if *from == "" {
		files["perf/bench.txt"] = raw
	}
	for name, p := range plots {
		var buf bytes.Buffer
		if err := p.WriteSVG(&buf); err != nil {
			log.Printf("plot %s not drawn: %v", name, err)
			continue
		}
		files["perf/"+name] = buf.Bytes()
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(*out, filepath.FromSlash(name))
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", path)
	}
	fmt.Printf("the suite took %s\n", time.Since(start).Round(time.Second))
}

func runNames() string {
	var names []string
	for _, r := range runs {
		names = append(names, r.name)
	}
	return strings.Join(names, ", ")
}

// selectRuns returns the runs named in the comma-separated list only, or
// all of them if it is empty.
func selectRuns(only string) ([]run, error) {
	if only == "" {
		return runs, nil
	}
	var out []run
	for name := range strings.SplitSeq(only, ",") {
		i := slices.IndexFunc(runs, func(r run) bool { return r.name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("-only: no run %q (the runs: %s)", name, runNames())
		}
		out = append(out, runs[i])
	}
	return out, nil
}

// An outcome is how a run of go test ended.
type outcome struct {
	run  run
	err  error         // non-nil if go test failed (some benchmarks may still have results)
	took time.Duration // wall time
}

// runSuite runs each of runs with go test (gocmd), showing its output as it goes,
// and returns all of the output and how each run ended. A run that fails
// does not stop the others. env is added to go test's environment.
func runSuite(ctx context.Context, gocmd, root string, runs []run, count int, quick bool, env ...string) ([]byte, []outcome) {
	var all bytes.Buffer
	var done []outcome
	for _, r := range runs {
		args := []string{"test", "-run", "^$", "-bench", r.bench, "-benchmem", "-v", "-timeout", "30m",
			"-count", strconv.Itoa(count), "-benchtime", r.benchtime}
		if quick {
			args[len(args)-3], args[len(args)-1] = "1", "1x"
		}
		if r.cpu != "" {
			args = append(args, "-cpu", r.cpu)
		}
		args = append(args, r.pkgs...)
		fmt.Fprintf(os.Stderr, "\n== %s: go %s (in %s)\n", r.name, strings.Join(args, " "), r.dir)
		cmd := exec.CommandContext(ctx, gocmd, args...)
		cmd.Dir = filepath.Join(root, r.dir)
		cmd.Env = append(os.Environ(), env...)
		var buf bytes.Buffer
		cmd.Stdout = io.MultiWriter(&buf, os.Stderr)
		cmd.Stderr = cmd.Stdout
		start := time.Now()
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("go test %s: %w: %s", strings.Join(r.pkgs, " "), err, lastLines(buf.Bytes(), 3))
			fmt.Fprintf(os.Stderr, "== %s failed: %v\n", r.name, err)
		}
		done = append(done, outcome{r, err, time.Since(start)})
		fmt.Fprintf(&all, "# run %s: go %s\n", r.name, strings.Join(args, " "))
		all.Write(buf.Bytes())
		if ctx.Err() != nil {
			break
		}
	}
	return all.Bytes(), done
}

// lastLines returns the last n non-empty lines of b, joined by " / ".
func lastLines(b []byte, n int) string {
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}
