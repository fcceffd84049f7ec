// Package report reads the output of go test -bench and writes what it
// measured as Markdown tables and SVG plots: medians over repeated runs,
// ratios to a reference measured in the same run, and verdicts against
// targets. It reads the standard benchmark format with
// golang.org/x/perf/benchfmt (the parser benchstat uses), and the lines
// go test -v adds around them to learn why a benchmark was skipped or
// failed.
package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// A Key names one measured quantity: a benchmark (its full name without
// the "Benchmark" prefix and without the GOMAXPROCS suffix, such as
// "Call/dynop-go"), the GOMAXPROCS it ran with, and a unit as the
// benchmark printed it ("ns/op", "allocs/op", "MB/s", "speedup", …).
type Key struct {
	Bench string
	Procs int
	Unit  string
}

// String returns the key as "Call/dynop-go-2 ns/op".
func (k Key) String() string {
	name := k.Bench
	if k.Procs > 1 {
		name += "-" + strconv.Itoa(k.Procs)
	}
	return name + " " + k.Unit
}

// Results are the measurements of one or more runs of go test -bench.
// The zero value is empty and ready to use.
type Results struct {
	values  map[Key][]float64
	procs   map[string][]int  // the GOMAXPROCS each benchmark ran with
	skipped map[string]string // benchmark → why it was skipped
	failed  map[string]string // benchmark → why it failed
	config  map[string]string // goos, goarch, cpu, … (the last seen)
}

// Read adds the benchmark results and the skip and failure messages in r
// (go test -bench output, with or without -v) to rs. name names r in
// errors.
func (rs *Results) Read(r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if rs.values == nil {
		rs.values, rs.procs = map[Key][]float64{}, map[string][]int{}
		rs.skipped, rs.failed, rs.config = map[string]string{}, map[string]string{}, map[string]string{}
	}
	br := benchfmt.NewReader(bytes.NewReader(data), name)
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue // a syntax error: a line that only looks like a result
		}
		for _, c := range res.Config {
			rs.config[c.Key] = string(c.Value)
		}
		bench, procs := splitName(string(res.Name))
		if !slices.Contains(rs.procs[bench], procs) {
			rs.procs[bench] = append(rs.procs[bench], procs)
		}
		for _, v := range res.Values {
			unit, value := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, value = v.OrigUnit, v.OrigValue
			}
			k := Key{bench, procs, unit}
			rs.values[k] = append(rs.values[k], value)
		}
	}
	if err := br.Err(); err != nil {
		return err
	}
	rs.readOutcomes(data)
	return nil
}

// readOutcomes records why benchmarks were skipped or failed: go test -v
// prints a benchmark's log lines (indented) and then
// "--- SKIP: BenchmarkName" or "--- FAIL: BenchmarkName".
func (rs *Results) readOutcomes(data []byte) {
	var logged []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "--- SKIP: Benchmark"), strings.HasPrefix(line, "--- FAIL: Benchmark"):
			name, _ := splitName(strings.Fields(trimmed)[2])
			why := strings.Join(logged, " ")
			if strings.HasPrefix(line, "--- SKIP") {
				rs.skipped[name] = why
			} else {
				rs.failed[name] = why
			}
			logged = nil
		case strings.HasPrefix(line, "    ") && trimmed != "":
			logged = append(logged, stripPosition(trimmed))
		default:
			logged = nil
		}
	}
}

// stripPosition removes the "file_test.go:12: " go test puts before a
// logged line.
func stripPosition(s string) string {
	file, rest, ok := strings.Cut(s, ": ")
	if ok && strings.HasSuffix(strings.SplitN(file, ":", 2)[0], ".go") {
		return rest
	}
	return s
}

// splitName removes "Benchmark" and the GOMAXPROCS suffix ("-2") from a
// full benchmark name. Without a suffix, GOMAXPROCS was 1.
func splitName(full string) (bench string, procs int) {
	full = strings.TrimPrefix(full, "Benchmark")
	if i := strings.LastIndexByte(full, '-'); i > 0 {
		if n, err := strconv.Atoi(full[i+1:]); err == nil && n > 0 {
			return full[:i], n
		}
	}
	return full, 1
}

// Median returns the median of the values of k and how many there are;
// ok is false if there are none.
func (rs *Results) Median(k Key) (median float64, n int, ok bool) {
	vs := rs.values[k]
	if len(vs) == 0 {
		return 0, 0, false
	}
	s := slices.Sorted(slices.Values(vs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return m, len(s), true
}

// Range returns the smallest and the largest value of k; ok is false if
// there are none.
func (rs *Results) Range(k Key) (lo, hi float64, ok bool) {
	vs := rs.values[k]
	if len(vs) == 0 {
		return 0, 0, false
	}
	return slices.Min(vs), slices.Max(vs), true
}

// Procs returns the GOMAXPROCS values bench ran with, in the order seen.
func (rs *Results) Procs(bench string) []int { return slices.Clone(rs.procs[bench]) }

// Config returns the value of a configuration line such as "cpu" or
// "goos" from the output, the last one read.
func (rs *Results) Config(key string) string { return rs.config[key] }

// Why says why there are no results for bench: it or a benchmark above
// it was skipped or failed (with the message it logged), or nothing ran
// it. It returns "" if bench has results.
func (rs *Results) Why(bench string) string {
	if len(rs.procs[bench]) > 0 {
		return ""
	}
	for name := bench; ; {
		if why, ok := rs.skipped[name]; ok {
			return "skipped: " + orUnknown(why)
		}
		if why, ok := rs.failed[name]; ok {
			return "failed: " + orUnknown(why)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return "did not run"
		}
		name = name[:i]
	}
}

func orUnknown(why string) string {
	if why == "" {
		return "no reason given"
	}
	return why
}

// Skipped returns the skipped benchmarks and why, sorted by name.
func (rs *Results) Skipped() []Outcome { return outcomes(rs.skipped) }

// Failed returns the failed benchmarks and why, sorted by name.
func (rs *Results) Failed() []Outcome { return outcomes(rs.failed) }

// An Outcome is a benchmark that did not produce results, and why.
type Outcome struct{ Bench, Why string }

func outcomes(m map[string]string) []Outcome {
	var out []Outcome
	for name, why := range m {
		out = append(out, Outcome{name, why})
	}
	slices.SortFunc(out, func(a, b Outcome) int { return strings.Compare(a.Bench, b.Bench) })
	return out
}

// errorf is fmt.Errorf with the package's prefix.
func errorf(format string, args ...any) error { return fmt.Errorf("report: "+format, args...) }
