package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/dynop/dynop/bench/internal/peer"
	"github.com/dynop/dynop/bench/report"
)

// TestSuiteWithoutClangOrPeers runs BenchmarkCall once, as make bench
// does, on a machine with no compiler for WebAssembly and where the peers
// cannot be built (no go command for them), and checks that the report
// says so in those rows while the others have their measurements.
func TestSuiteWithoutClangOrPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark")
	}
	calls := runs[0]
	calls.bench = "^BenchmarkCall$"
	gocmd, err := peer.GoCommand()
	if err != nil {
		t.Fatal(err)
	}
	raw, done := runSuite(context.Background(), gocmd, "../../..", []run{calls}, 1, true,
		"WASM_CC=/nonexistent/clang", "GO=/nonexistent/go")
	if len(done) != 1 || done[0].err != nil {
		t.Fatalf("the run failed: %v\n%s", done, raw)
	}
	var rs report.Results
	if err := rs.Read(bytes.NewReader(raw), "raw"); err != nil {
		t.Fatal(err)
	}
	doc, _, unknown := write(&rs, machine{Quick: true, Count: 1}, done)
	for _, k := range unknown {
		if strings.HasPrefix(k, "Call/") {
			t.Errorf("the report asks for %s, which BenchmarkCall did not produce", k)
		}
	}
	row := func(label string) string {
		for line := range strings.SplitSeq(doc, "\n") {
			if strings.HasPrefix(line, "| "+label+" |") {
				return line
			}
		}
		t.Fatalf("no row %q in\n%s", label, doc)
		return ""
	}
	for label, want := range map[string]string{
		"dynop, wasm plugin (Wasmtime; default: a deadline per call)": "skipped: no C compiler for WebAssembly",
		"dynop, wasm plugin (Wasmtime), uninterruptible":              "skipped: no C compiler for WebAssembly",
		"raw wazero call":              "skipped: no C compiler for WebAssembly",
		"Go `plugin` package symbol":   "/nonexistent/go",
		"hashicorp/go-plugin, net/rpc": "/nonexistent/go",
		"in-process call (native plugin) vs hashicorp/go-plugin over RPC": "skipped: peer did not build",
	} {
		if got := row(label); !strings.Contains(got, want) {
			t.Errorf("row %q = %s\nwant it to say %q", label, got, want)
		}
	}
	for _, label := range []string{"direct Go call (reference)", "dynop, Go plugin", "raw cgo call", "dynop, native plugin"} {
		if got := row(label); strings.Contains(got, "_") || !measured.MatchString(got) {
			t.Errorf("row %q = %s, want a measurement", label, got)
		}
	}
	if !strings.Contains(doc, "## Skipped and failed") || !strings.Contains(doc, "`Call/go-plugin-rpc` skipped: peer did not build") {
		t.Errorf("the report does not list what was skipped:\n%s", doc)
	}
}

// measured matches a table row whose second cell is a time.
var measured = regexp.MustCompile(`^\| [^|]+ \| [0-9.]+ (ns|µs|ms|s) \|`)

func TestSelectRuns(t *testing.T) {
	got, err := selectRuns("executor, calls")
	if err != nil || len(got) != 2 || got[0].name != "executor" || got[1].name != "calls" {
		t.Errorf("selectRuns = %v, %v", got, err)
	}
	if _, err := selectRuns("calls,nope"); err == nil || !strings.Contains(err.Error(), `no run "nope"`) || !strings.Contains(err.Error(), "executor") {
		t.Errorf("selectRuns(nope) = %v, want an error naming it and the runs", err)
	}
}

// TestWrappedLibrarySection: section 8 shows BenchmarkSgemm's medians and
// says whether the table's ratio to the direct call meets issue 25's
// goal, at most 1.05×.
func TestWrappedLibrarySection(t *testing.T) {
	for _, tc := range []struct {
		ratios  []string
		verdict string
	}{
		{[]string{"1.01", "0.98", "1.03"}, "| 1.01× | met |"},
		{[]string{"1.2", "1.1", "1.3"}, "| 1.20× | **not met** |"},
	} {
		raw := "goos: linux\ngoarch: amd64\npkg: github.com/dynop/dynop/bench\n"
		for _, r := range tc.ratios {
			raw += "BenchmarkSgemm/n=64/cgo-direct-2 \t 1000\t 6500 ns/op\t 0 B/op\t 0 allocs/op\n"
			raw += "BenchmarkSgemm/n=64/dynop-table-2 \t 1000\t 6600 ns/op\t " + r + " ratio\t 6500 ref-ns/op\t 0 B/op\t 0 allocs/op\n"
		}
		var rs report.Results
		if err := rs.Read(strings.NewReader(raw), "raw"); err != nil {
			t.Fatal(err)
		}
		doc, _, _ := write(&rs, machine{Count: 3}, nil)
		i := strings.Index(doc, "## 8. A wrapped C library: OpenBLAS")
		if i < 0 {
			t.Fatalf("no section 8 in\n%s", doc)
		}
		section := doc[i:]
		if !strings.Contains(section, "| through the dynop.blas.BLAS table | 6.60 µs "+tc.verdict) ||
			!strings.Contains(section, "| cblas_sgemm called directly through cgo (reference) | 6.50 µs | 1× |") {
			t.Errorf("ratios %v: section 8 is\n%s", tc.ratios, section[:min(len(section), 1500)])
		}
	}
}

// TestPythonSection: section 9 shows BenchmarkPython's medians, the
// package's ratios, and whether the blur's ratio to the Go call meets
// issue 26's goal, at most 1.05×.
func TestPythonSection(t *testing.T) {
	for _, tc := range []struct {
		ratios  []string
		verdict string
	}{
		{[]string{"0.99", "1.02", "0.97"}, "| 0.990× | met |"},
		{[]string{"1.2", "1.1", "1.3"}, "| 1.20× | **not met** |"},
	} {
		raw := "goos: linux\ngoarch: amd64\npkg: github.com/dynop/dynop/bench\n"
		for _, r := range tc.ratios {
			raw += "BenchmarkPython/Saxpy/floats=16-2 \t 50000\t 18000 ns/op\t 4200 capi-ns/op\t 900 go-ns/op\t 200 gorun-ns/op\t 20000 into-ns/op\t 40 ratio\t 450 ref-ns/op\t 9.3 x-capi\t 20 x-go\t 44 x-into\t 136 B/op\t 5 allocs/op\n"
			raw += "BenchmarkPython/GaussianBlur/1920x1080x3-2 \t 75\t 3900000 ns/op\t 3800000 capi-ns/op\t 3500000 gorun-ns/op\t 3600000 into-ns/op\t " + r + " ratio\t 3950000 ref-ns/op\t 0.96 x-capi\t 1.11 x-gorun\t 1.03 x-into\t 190 B/op\t 6 allocs/op\n"
		}
		var rs report.Results
		if err := rs.Read(strings.NewReader(raw), "raw"); err != nil {
			t.Fatal(err)
		}
		doc, _, unknown := write(&rs, machine{Count: 3}, nil)
		for _, k := range unknown {
			if strings.HasPrefix(k, "Python/") {
				t.Errorf("the report asks for %s, which BenchmarkPython does not produce", k)
			}
		}
		i := strings.Index(doc, "## 9. From Python")
		if i < 0 {
			t.Fatalf("no section 9 in\n%s", doc)
		}
		section := doc[i:]
		for _, want := range []string{
			"| the C kernel through ctypes (reference) | 450 ns | 1× |",
			"| the package: `op(x, y)`, a new output `Tensor` each call | 18.0 µs | 40.0× |",
			"| the package: `op(x, y, out=o)`, into an array allocated once | 20.0 µs | 44.0× |",
			"| a new output each call: `Instance.Exec`, `blur(img)` | 3.95 ms | 3.90 ms " + tc.verdict,
			"| into an output set up once: `Instance.Run`, `blur(img, out=arr)` | 3.50 ms | 3.60 ms | 1.03× | met |",
			"takes 3.80 ms (0.960× of `Instance.Exec`)",
			"costs 13.8 µs with the caches warm",
		} {
			if !strings.Contains(section, want) {
				t.Errorf("ratios %v: section 9 lacks %q:\n%s", tc.ratios, want, section[:min(len(section), 3000)])
			}
		}
	}
}
