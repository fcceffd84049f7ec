package report

import (
	"strings"
	"testing"
)

// output is go test -bench -v output of a run with -count 3 and -cpu 1,2:
// results, a skipped and a failed sub-benchmark, and a skipped parent.
const output = `goos: linux
goarch: amd64
pkg: example.com/bench
cpu: Some CPU @ 3.0GHz
BenchmarkCall
BenchmarkCall/direct
BenchmarkCall/direct    	1000	        2.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCall/direct-2  	1000	        4.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCall/direct    	1000	        3.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCall/direct-2  	1000	        5.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCall/direct    	1000	        1.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCall/direct-2  	1000	        9.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkCall/wasm
    calls_test.go:71: no C compiler for WebAssembly ($WASM_CC, else clang): exec: "clang": executable file not found in $PATH
--- SKIP: BenchmarkCall/wasm
BenchmarkCall/rpc
    calls_test.go:120: peer did not build: building the go-plugin peer: exit status 1
        go: cannot find module
--- FAIL: BenchmarkCall/rpc
BenchmarkOpen/n=10-2	1	5 ns/op	1.5 cached-ms	20.25 speedup
BenchmarkOpen/n=10-2	1	5 ns/op	2.5 cached-ms	30.25 speedup
BenchmarkGone
    gone_test.go:9: no fixtures
--- SKIP: BenchmarkGone
PASS
`

func read(t *testing.T) *Results {
	t.Helper()
	var rs Results
	if err := rs.Read(strings.NewReader(output), "output.txt"); err != nil {
		t.Fatal(err)
	}
	return &rs
}

func TestMedians(t *testing.T) {
	rs := read(t)
	for _, c := range []struct {
		key  Key
		want float64
		n    int
	}{
		{Key{"Call/direct", 1, "ns/op"}, 2, 3},
		{Key{"Call/direct", 2, "ns/op"}, 5, 3},
		{Key{"Call/direct", 2, "allocs/op"}, 0, 3},
		{Key{"Open/n=10", 2, "cached-ms"}, 2, 2}, // the mean of the middle two
		{Key{"Open/n=10", 2, "speedup"}, 25.25, 2},
	} {
		got, n, ok := rs.Median(c.key)
		if !ok || got != c.want || n != c.n {
			t.Errorf("Median(%v) = %v, %d, %v; want %v, %d", c.key, got, n, ok, c.want, c.n)
		}
	}
	if _, _, ok := rs.Median(Key{"Call/direct", 4, "ns/op"}); ok {
		t.Error("a median at GOMAXPROCS 4, which did not run")
	}
	if lo, hi, ok := rs.Range(Key{"Call/direct", 2, "ns/op"}); !ok || lo != 4 || hi != 9 {
		t.Errorf("Range(Call/direct-2 ns/op) = %v, %v, %v; want 4, 9", lo, hi, ok)
	}
	if _, _, ok := rs.Range(Key{"Call/direct", 4, "ns/op"}); ok {
		t.Error("a range at GOMAXPROCS 4, which did not run")
	}
	if got := rs.Procs("Call/direct"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("Procs = %v, want [1 2]", got)
	}
	if got := rs.Config("cpu"); got != "Some CPU @ 3.0GHz" {
		t.Errorf("Config(cpu) = %q", got)
	}
}

func TestWhy(t *testing.T) {
	rs := read(t)
	for bench, want := range map[string]string{
		"Call/direct":  "",
		"Call/wasm":    `skipped: no C compiler for WebAssembly ($WASM_CC, else clang): exec: "clang": executable file not found in $PATH`,
		"Call/rpc":     "failed: peer did not build: building the go-plugin peer: exit status 1 go: cannot find module",
		"Gone/sub/row": "skipped: no fixtures", // a benchmark under a skipped parent
		"Call/missing": "did not run",
		"Nothing":      "did not run",
	} {
		if got := rs.Why(bench); got != want {
			t.Errorf("Why(%q) = %q, want %q", bench, got, want)
		}
	}
	if s := rs.Skipped(); len(s) != 2 || s[0].Bench != "Call/wasm" || s[1].Bench != "Gone" {
		t.Errorf("Skipped = %v", s)
	}
	if f := rs.Failed(); len(f) != 1 || f[0].Bench != "Call/rpc" {
		t.Errorf("Failed = %v", f)
	}
}

func TestReadAddsRuns(t *testing.T) {
	rs := read(t)
	more := "pkg: other\nBenchmarkCall/direct 	10	7.0 ns/op\n"
	if err := rs.Read(strings.NewReader(more), "more.txt"); err != nil {
		t.Fatal(err)
	}
	if got, n, _ := rs.Median(Key{"Call/direct", 1, "ns/op"}); n != 4 || got != 2.5 {
		t.Errorf("after a second read: median %v of %d, want 2.5 of 4", got, n)
	}
}

func TestSplitName(t *testing.T) {
	for full, want := range map[string]Key{
		"BenchmarkA/b-16":      {"A/b", 16, ""},
		"BenchmarkA/b":         {"A/b", 1, ""},
		"BenchmarkA/in=4MiB-2": {"A/in=4MiB", 2, ""},
		"BenchmarkA/x-y":       {"A/x-y", 1, ""},
	} {
		bench, procs := splitName(full)
		if bench != want.Bench || procs != want.Procs {
			t.Errorf("splitName(%q) = %q, %d; want %q, %d", full, bench, procs, want.Bench, want.Procs)
		}
	}
}

func TestKeyString(t *testing.T) {
	if got := (Key{"Call/direct", 2, "ns/op"}).String(); got != "Call/direct-2 ns/op" {
		t.Errorf("got %q", got)
	}
	if got := (Key{"Call/direct", 1, "ns/op"}).String(); got != "Call/direct ns/op" {
		t.Errorf("got %q", got)
	}
}
