"""Timings of the Python package against raw ctypes calls of the same C
code, after make libdynop plugins python:

    PYTHONPATH=python /usr/bin/python3 python/bench.py            # a table
    PYTHONPATH=python /usr/bin/python3 python/bench.py --json     # {"case/side": ns per call}
    PYTHONPATH=python /usr/bin/python3 python/bench.py --serve    # for bench/python_test.go

The cases, each with its sides (every side the same computation):

saxpy16   imgproc.Saxpy (a=2) on two float32 arrays of 16:
            package  op(x, y), a new output Tensor each call (dropped)
            into     op(x, y, out=o), into an array allocated once
            capi     dynop_operator_run through ctypes on input structs
                     described once, then dynop_tensor_delete of the output
            kernel   the plugin's exported C kernel (dynop_imgproc_saxpy_f32,
                     _avx2 or _avx512: --kernel, default the best this CPU
                     has, as the host chooses) called through ctypes, its
                     argtypes declared once, on addresses taken once, into
                     an output allocated once
blur      imgproc.GaussianBlur (sigma=2) on a 1080x1920x3 uint8 image:
            package, into, capi  as above

--json times each side of each case --repeat times over --n calls (after
warm-up calls) and prints the median time per call in nanoseconds; and
each side of saxpy16 once more, --cold times, one call right after
copying 64 MB (which evicts the caches, as a large operator's call does):
"saxpy16/SIDE/cold", the median.

--serve answers bench/python_test.go's BenchmarkPython, which alternates
these calls with the same operators run from Go in one loop: it reads
lines "CASE SIDE N" on stdin (blur package 4), runs that side of CASE N
times, and answers with a line: the seconds the N calls took. The
process, the host and its operators are made once, before the first
line; the Go benchmark warms each side up with a first request.
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np

import dynop
from dynop.tensor import borrow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLUR_SHAPE = (1080, 1920, 3)
SAXPY_N = 16
SAXPY_A = 2.0


def image():
    """The blur's input: the same bytes as bench/python_test.go's
    (bytes of a multiplicative hash of the index)."""
    i = np.arange(np.prod(BLUR_SHAPE), dtype=np.uint64)
    return (((i * np.uint64(2654435761)) >> np.uint64(13)) & np.uint64(0xFF)).astype(np.uint8).reshape(BLUR_SHAPE)


def best_kernel():
    """The Saxpy variant imgproc's host chooses on this CPU: avx512 (F and
    BW), avx2, or the scalar reference ("")."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return ""
    if "avx512f" in flags and "avx512bw" in flags:
        return "avx512"
    return "avx2" if "avx2" in flags else ""


class Cases:
    """The host, operators, inputs and raw entry points of the cases."""

    def __init__(self, library, plugin, kernel):
        self.host = dynop.Host([plugin], no_default_paths=True, no_cache=True, log_level=4, library=library)
        lib = self.lib = self.host._lib

        self.sx = self.host.operator("imgproc.Saxpy", a=SAXPY_A)
        self.x = np.arange(SAXPY_N, dtype=np.float32)
        self.y = np.ones(SAXPY_N, np.float32)
        self.blur = self.host.operator("imgproc.GaussianBlur", sigma=2.0)
        self.img = image()

        self.kernel_name = "dynop_imgproc_saxpy_f32" + ("_" + kernel if kernel else "")
        kern = getattr(ctypes.CDLL(plugin), self.kernel_name)
        kern.restype = None
        kern.argtypes = [ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        out = np.empty(SAXPY_N, np.float32)
        xp, yp, op = self.x.ctypes.data, self.y.ctypes.data, out.ctypes.data
        self.kernel_out = out

        def kernel_call():
            kern(SAXPY_A, xp, yp, op, SAXPY_N)

        self.kernel = kernel_call
        self.capi_saxpy = self._capi(self.sx, self.x, self.y)
        self.capi_blur = self._capi(self.blur, self.img)

        sx, blur, x, y, img = self.sx, self.blur, self.x, self.y, self.img
        self.saxpy_out, self.blur_out = so, bo = np.empty_like(x), np.empty_like(img)
        self.sides = {
            "saxpy16": [("package", lambda: sx(x, y)), ("into", lambda: sx(x, y, out=so)),
                        ("capi", self.capi_saxpy), ("kernel", self.kernel)],
            "blur": [("package", lambda: blur(img)), ("into", lambda: blur(img, out=bo)), ("capi", self.capi_blur)],
        }
        self.check()

    def _capi(self, op, *inputs):
        """dynop_operator_run on inputs described once (as the package
        describes them), and dynop_tensor_delete of the one output."""
        lib = self.lib
        held = [borrow(x) for x in inputs]
        ins = (ctypes.c_void_p * len(held))(*[ctypes.addressof(b.managed) for b in held])
        outs = (ctypes.c_void_p * 1)()
        run, delete, handle, n = lib.dynop_operator_run, lib.dynop_tensor_delete, op._handle, len(held)

        def call():
            rc = run(handle, ins, n, 1, outs, 1)
            if rc != 0:
                raise RuntimeError("dynop_operator_run: result %d" % rc)
            delete(outs[0])

        call.held = held
        return call

    def check(self):
        """Every side computes the same output."""
        want = SAXPY_A * self.x + self.y
        got = np.asarray(self.sx(self.x, self.y))
        self.kernel()
        self.sx(self.x, self.y, out=self.saxpy_out)
        if not all(np.array_equal(a, want) for a in (got, self.kernel_out, self.saxpy_out)):
            raise SystemExit("bench.py: Saxpy's outputs differ from a*x+y")
        blurred = np.asarray(self.blur(self.img))
        self.blur(self.img, out=self.blur_out)
        if blurred.shape != BLUR_SHAPE or not np.array_equal(blurred, self.blur_out):
            raise SystemExit("bench.py: GaussianBlur's outputs differ")

    def time(self, case, n, side=None):
        """Runs each side of case (or the one at index side) n times in
        turn; the seconds each took."""
        out = []
        for _, f in self.sides[case] if side is None else self.sides[case][side:side + 1]:
            t = time.perf_counter()
            for _ in range(n):
                f()
            out.append(time.perf_counter() - t)
        return out


def serve(cases):
    for line in sys.stdin:
        case, side, n = line.split()
        names = [name for name, _ in cases.sides[case]]
        print(repr(cases.time(case, int(n), names.index(side))[0]), flush=True)


def medians(cases, n, repeat):
    """{case/side: median ns per call} over repeat rounds of n calls of
    each side (blur: n/100 calls, at least 5), after a warm-up round."""
    res = {}
    for case, sides in cases.sides.items():
        k = n if case == "saxpy16" else max(n // 100, 5)
        cases.time(case, max(k // 10, 1))
        runs = [cases.time(case, k) for _ in range(repeat)]
        for i, (side, _) in enumerate(sides):
            res[case + "/" + side] = statistics.median(r[i] for r in runs) / k * 1e9
    return res


def cold(cases, case, samples):
    """{case/side/cold: median ns of one call right after copying 64 MB},
    the sides in turn."""
    big = np.ones(64 << 20, np.uint8)
    dst = np.empty_like(big)
    res = {}
    sides = cases.sides[case]
    times = [[] for _ in sides]
    for _ in range(samples):
        for i, (_, f) in enumerate(sides):
            np.copyto(dst, big)
            t = time.perf_counter()
            f()
            times[i].append(time.perf_counter() - t)
    for (side, _), ts in zip(sides, times):
        res[case + "/" + side + "/cold"] = statistics.median(ts) * 1e9
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print {case/side: median ns per call}")
    p.add_argument("--serve", action="store_true", help="answer lines CASE N with the seconds of each side")
    p.add_argument("--library", default=os.path.join(ROOT, "bin", "libdynop.so"), help="libdynop.so")
    p.add_argument("--plugin", default=os.path.join(ROOT, "plugins", "imgproc", "libdynop_imgproc.so"),
                   help="the imgproc plugin")
    p.add_argument("--kernel", default=None, help='the Saxpy variant to call directly: "", avx2 or avx512 '
                                                  "(default: the best this CPU has)")
    p.add_argument("--n", type=int, default=20000, help="calls per round (blur: n/100)")
    p.add_argument("--repeat", type=int, default=5, help="rounds; the median is reported")
    p.add_argument("--cold", type=int, default=100, help="saxpy16 calls after evicting the caches (0: none)")
    a = p.parse_args()
    cases = Cases(a.library, a.plugin, best_kernel() if a.kernel is None else a.kernel)
    if a.serve:
        return serve(cases)
    res = medians(cases, a.n, a.repeat)
    if a.cold > 0:
        res.update(cold(cases, "saxpy16", a.cold))
    if a.json:
        print(json.dumps(res, indent=1, sort_keys=True))
        return
    print("imgproc.Saxpy, 16 floats (and one call right after evicting the caches):")
    for side, what in (("package", "dynop package:                "),
                       ("into", "dynop package, out=:          "),
                       ("capi", "dynop_operator_run via ctypes:"),
                       ("kernel", "the C kernel via ctypes:      ")):
        c = res.get("saxpy16/%s/cold" % side)
        print("  %s %8.2f us/call%s" % (what, res["saxpy16/" + side] / 1e3, "" if c is None else ", cold %8.2f us" % (c / 1e3)))
    print("  (dynop_operator_run: input structs described once; the kernel: %s)" % cases.kernel_name)
    print("  package / kernel: %.1fx" % (res["saxpy16/package"] / res["saxpy16/kernel"]))
    print("imgproc.GaussianBlur sigma=2, 1920x1080x3 uint8:")
    print("  dynop package:                       %8.3f ms/call" % (res["blur/package"] / 1e6))
    print("  dynop package, out=:                 %8.3f ms/call" % (res["blur/into"] / 1e6))
    print("  dynop_operator_run via ctypes:       %8.3f ms/call" % (res["blur/capi"] / 1e6))


if __name__ == "__main__":
    sys.exit(main())
