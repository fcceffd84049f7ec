"""Rough timings of the Python package against raw ctypes calls of the
same C API: PYTHONPATH=python /usr/bin/python3 python/bench.py
(after make libdynop plugins python)."""

import ctypes
import os
import sys
import time

import numpy as np

import dynop
from dynop.tensor import borrow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def per_call(f, n):
    for _ in range(max(n // 20, 1)):
        f()
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n


def main():
    with dynop.Host([os.path.join(ROOT, "plugins", "imgproc", "libdynop_imgproc.so")], no_default_paths=True,
                    no_cache=True, log_level=4) as h:
        sx = h.operator("imgproc.Saxpy", a=2.0)
        x, y = np.ones(16, np.float32), np.ones(16, np.float32)
        print("Saxpy, 16 floats, dynop package: %6.1f us/call" % (per_call(lambda: sx(x, y), 20000) * 1e6))
        bx, by = borrow(x), borrow(y)
        ins = (ctypes.c_void_p * 2)(ctypes.addressof(bx.managed), ctypes.addressof(by.managed))
        outs = (ctypes.c_void_p * 1)()
        lib = h._lib

        def raw():
            lib.dynop_operator_run(sx._handle, ins, 2, 1, outs, 1)
            lib.dynop_tensor_delete(outs[0])

        print("Saxpy, 16 floats, raw ctypes:    %6.1f us/call (tensors described once)" % (per_call(raw, 20000) * 1e6))
        blur = h.operator("imgproc.GaussianBlur", sigma=2.0)
        img = np.random.default_rng(0).integers(0, 256, (1080, 1920, 3), dtype=np.uint8)
        print("GaussianBlur sigma=2, 1920x1080x3 uint8: %6.2f ms/call" % (per_call(lambda: blur(img), 50) * 1e3))


if __name__ == "__main__":
    sys.exit(main())
