package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/bench/internal/peer"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// BenchmarkPython measures the Python package (python/dynop, over
// libdynop.so through ctypes) against the same work done without it, in
// one loop: the Go sides run here, the Python sides in one Python process
// (python/bench.py --serve, started once) that answers the time its calls
// took, in short rounds that alternate between Go and Python sides (see
// alternatePython). Both hosts run the imgproc plugin built by this
// benchmark, with the variant the same dispatch chooses for this CPU; a
// call runs on the calling thread in both (libdynop's Go runtime gets this
// process's GOMAXPROCS).
//
// Saxpy/floats=16 (issue 26: "a small operator call from Python in µs
// against calling the same C kernel through ctypes directly"):
// imgproc.Saxpy (a = 2) on two float32 arrays of 16. The row (ns/op) is
// the package's call op(x, y), which returns a new output tensor; the
// reference (ref-ns/op) is the plugin's exported C kernel of the variant
// the host chose (dynop_imgproc_saxpy_f32_avx512, …) called through ctypes
// on addresses taken once, into an output allocated once; capi-ns/op is
// dynop_operator_run called through ctypes on input structs described
// once, its output deleted; into-ns/op is the package's call into an
// array allocated once, op(x, y, out=o) (dynop_operator_run_into); go-ns/op
// and gorun-ns/op are the Go host's call of the operator, with a new
// output per call (Instance.Exec, the output handed back with Recycle) and
// into outputs set up once (Instance.Run). ratio is the row over the
// reference, x-into and x-capi the out= call's and the C API's over the
// reference, x-go the row over Instance.Exec. No goal: the ratio is
// reported.
//
// GaussianBlur/1920x1080x3 (issue 26's goal: "a 1920×1080 blur from
// Python within 1.05× of the same call from Go"): imgproc.GaussianBlur
// (σ 2) on a 1080×1920×3 uint8 image, batch 1. The row is the package's
// call blur(img); the reference is the same call from Go, which returns a
// new output tensor as Python's does (Instance.Exec, the output handed
// back with Recycle, so its memory is cleared for the next call as the C
// API clears the new output it allocates). The same pair into an output
// set up once: gorun-ns/op, Instance.Run, and into-ns/op, the package's
// blur(img, out=arr); x-into is the second over the first. capi-ns/op as
// above. ratio is the row over the reference (the goal: at most 1.05),
// x-capi the C API's call over the reference, x-gorun the row over
// Instance.Run.
//
// It builds libdynop.so and dynop-scanner (go build, as make libdynop does)
// and the package's capsule helper; it is skipped where no python3 imports
// numpy (apt-get install python3-numpy) or they do not build.
func BenchmarkPython(b *testing.B) {
	nat := host(b, nativeHost)
	x := make([]float32, 16)
	y := make([]float32, 16)
	for i := range x {
		x[i], y[i] = float32(i), 1
	}
	b.Run("Saxpy/floats=16", func(b *testing.B) {
		xs, ys := sliceBatch(b, x, 16), sliceBatch(b, y, 16)
		args := schema.Args{"a": 2.0}
		execOp, variant := execCall(b, "imgproc.Saxpy", args, xs, ys)
		run := prepareRun(b, nat, "imgproc.Saxpy", args, "", xs, ys)
		py := pythonPeer(b, variant)
		ns := alternatePython(b, 1000, []side{
			{goCall: execOp}, {py: py, pyCase: "saxpy16", pySide: "package"},
			{goCall: run}, {py: py, pyCase: "saxpy16", pySide: "into"},
			{py: py, pyCase: "saxpy16", pySide: "capi"}, {py: py, pyCase: "saxpy16", pySide: "kernel"}})
		goExec, pkg, goRun, into, capi, kernel := ns[0], ns[1], ns[2], ns[3], ns[4], ns[5]
		b.ReportMetric(pkg, "ns/op")
		b.ReportMetric(kernel, "ref-ns/op")
		b.ReportMetric(pkg/kernel, "ratio")
		b.ReportMetric(into, "into-ns/op")
		b.ReportMetric(into/kernel, "x-into")
		b.ReportMetric(capi, "capi-ns/op")
		b.ReportMetric(capi/kernel, "x-capi")
		b.ReportMetric(goExec, "go-ns/op")
		b.ReportMetric(goRun, "gorun-ns/op")
		b.ReportMetric(pkg/goExec, "x-go")
	})
	b.Run("GaussianBlur/1920x1080x3", func(b *testing.B) {
		img := sliceBatch(b, blurImage(), 1080, 1920, 3)
		args := schema.Args{"sigma": 2.0}
		execOp, _ := execCall(b, "imgproc.GaussianBlur", args, img)
		run := prepareRun(b, nat, "imgproc.GaussianBlur", args, "", img)
		py := pythonPeer(b, saxpyVariant(b))
		ns := alternatePython(b, 8, []side{
			{goCall: execOp}, {py: py, pyCase: "blur", pySide: "package"},
			{goCall: run}, {py: py, pyCase: "blur", pySide: "into"}, {py: py, pyCase: "blur", pySide: "capi"}})
		goExec, pkg, goRun, into, capi := ns[0], ns[1], ns[2], ns[3], ns[4]
		b.ReportMetric(pkg, "ns/op")
		b.ReportMetric(goExec, "ref-ns/op")
		b.ReportMetric(pkg/goExec, "ratio")
		b.ReportMetric(goRun, "gorun-ns/op")
		b.ReportMetric(into, "into-ns/op")
		b.ReportMetric(into/goRun, "x-into")
		b.ReportMetric(capi, "capi-ns/op")
		b.ReportMetric(capi/goExec, "x-capi")
		b.ReportMetric(pkg/goRun, "x-gorun")
	})
}

// blurImage is the blur's input, the bytes python/bench.py's image()
// makes: a multiplicative hash of each byte's index.
func blurImage() []uint8 {
	img := make([]uint8, 1080*1920*3)
	for i := range img {
		img[i] = uint8(uint64(i) * 2654435761 >> 13)
	}
	return img
}

func sliceBatch[T tensor.Number](b *testing.B, s []T, shape ...int64) *tensor.Batch {
	b.Helper()
	t, err := tensor.FromSlice(s, shape...)
	if err != nil {
		b.Fatal(err)
	}
	return batchOf(b, t)
}

// execCall makes an instance of operator name in the native host and
// returns one call of it as a Go program gets a new output — Exec, its
// outputs handed back for the next call to reuse (Recycle) — and the
// variant the host chose.
func execCall(b *testing.B, name string, args schema.Args, inputs ...*tensor.Batch) (func(), string) {
	b.Helper()
	in, err := host(b, nativeHost).NewOperator(ctx, name, args)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close() })
	return func() {
		outs, err := in.Exec(ctx, inputs...)
		if err != nil {
			b.Fatal(err)
		}
		in.Recycle(outs)
	}, in.Variant()
}

// saxpyVariant is the variant of imgproc.Saxpy the native host chooses.
func saxpyVariant(b *testing.B) string {
	in, err := host(b, nativeHost).NewOperator(ctx, "imgproc.Saxpy", schema.Args{"a": 2.0})
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	return in.Variant()
}

// A side is one of the ways BenchmarkPython does its work: a call from
// Go, or side pySide of case pyCase of python/bench.py, which py runs.
type side struct {
	goCall         func()
	py             *pyPeer
	pyCase, pySide string
}

// calls runs s n times and returns the time they took, measured by the
// process that ran them.
func (s side) calls(b *testing.B, n int) time.Duration {
	if s.goCall == nil {
		var secs float64
		s.py.ask(b, fmt.Sprintf("%s %s %d", s.pyCase, s.pySide, n), &secs)
		return time.Duration(secs * float64(time.Second))
	}
	t0 := time.Now()
	for range n {
		s.goCall()
	}
	return time.Since(t0)
}

// alternatePython runs b.N calls of each of sides, in rounds of perRound
// calls of each in turn, and returns each side's time per call in
// nanoseconds. Rounds are short, so that a change of the shared machine
// falls on every side alike; sides are given as pairs, a Go side and
// then its Python pair, so that each round of both begins after the other
// process ran. Each side is warmed up first: twice from Go, and once per
// Python process with perRound calls.
func alternatePython(b *testing.B, perRound int, sides []side) []float64 {
	for _, s := range sides {
		if s.goCall != nil {
			s.calls(b, 2)
		} else {
			pythonWarm(b, s, perRound)
		}
	}
	t := make([]time.Duration, len(sides))
	b.ResetTimer()
	for done := 0; done < b.N; done += perRound {
		k := min(perRound, b.N-done)
		for i, s := range sides {
			t[i] += s.calls(b, k)
		}
	}
	b.StopTimer()
	ns := make([]float64, len(sides))
	for i := range t {
		ns[i] = float64(t[i].Nanoseconds()) / float64(b.N)
	}
	return ns
}

// The Python process of BenchmarkPython, started once per process (and
// again if the Saxpy variant asked for differs); stopPython ends it.
var (
	pyMu      sync.Mutex
	pyProc    *pyPeer
	pyVariant string
	pyWarmed  map[string]bool
	pyLibOnce sync.Once
	pyLibDir  string
	pyLibErr  error
)

func pythonWarm(b *testing.B, s side, n int) {
	key := s.pyCase + " " + s.pySide
	pyMu.Lock()
	done := pyWarmed[key]
	pyWarmed[key] = true
	pyMu.Unlock()
	if !done {
		s.calls(b, n)
	}
}

// pythonPeer returns the process of python/bench.py --serve over the
// benchmarks' imgproc plugin and a libdynop.so built from this tree,
// calling Saxpy's kernel of variant directly ("scalar" is the exported
// reference). It skips the benchmark where no python3 imports numpy or
// libdynop does not build.
func pythonPeer(b *testing.B, variant string) *pyPeer {
	b.Helper()
	python := numpyPython()
	if python == "" {
		b.Skip("no python3 imports numpy (apt-get install python3-numpy)")
	}
	dir, err := buildLibdynop()
	if err != nil {
		b.Skipf("libdynop did not build (make libdynop python says why): %v", err)
	}
	plugin := imgprocNative(b)
	pyMu.Lock()
	defer pyMu.Unlock()
	if pyProc != nil && pyVariant == variant {
		return pyProc
	}
	if pyProc != nil {
		pyProc.close()
	}
	kernel := variant
	if kernel == "scalar" {
		kernel = ""
	}
	cmd := exec.Command(python, cbuild.Path("python/bench.py"), "--serve", "--library", filepath.Join(dir, "libdynop.so"),
		"--plugin", plugin, "--kernel", kernel)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+cbuild.Path("python"),
		"DYNOP_CAPSULE_HELPER="+filepath.Join(dir, "_dynop_capsule.so"),
		fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0)))
	pyProc, pyVariant, pyWarmed = startPeerCmd(b, cmd), variant, map[string]bool{}
	return pyProc
}

func stopPython() {
	pyMu.Lock()
	defer pyMu.Unlock()
	if pyProc != nil {
		pyProc.close()
		pyProc = nil
	}
}

// numpyPython returns a python3 that imports numpy, Debian's first (which
// python3-numpy is for), or "".
func numpyPython() string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	return ""
}

// buildLibdynop builds, once per process, what make libdynop python
// builds for the package: libdynop.so (go build -buildmode=c-shared
// ./capi, with capi/libdynop.map), dynop-scanner beside it, and the
// capsule helper _dynop_capsule.so, into a directory of fixtureDir that it
// returns.
func buildLibdynop() (string, error) {
	pyLibOnce.Do(func() {
		pyLibDir = filepath.Join(fixtureDir, "libdynop")
		pyLibErr = func() error {
			gocmd, err := peer.GoCommand()
			if err != nil {
				return err
			}
			cc, err := cbuild.CompilerCommand(false)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(pyLibDir, 0o755); err != nil {
				return err
			}
			for _, args := range [][]string{
				{gocmd, "build", "-buildmode=c-shared", "-ldflags=-extldflags=-Wl,--version-script=" + cbuild.Path("capi/libdynop.map"),
					"-o", filepath.Join(pyLibDir, "libdynop.so"), "./capi"},
				{gocmd, "build", "-o", filepath.Join(pyLibDir, "dynop-scanner"), "./cmd/dynop-scanner"},
				{cc, "-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
					"-o", filepath.Join(pyLibDir, "_dynop_capsule.so"), cbuild.Path("python/dynop/_capsule.c")},
			} {
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = cbuild.Root()
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
				}
			}
			return nil
		}()
	})
	return pyLibDir, pyLibErr
}
