# An interface acquired from a plugin: its C function table as a ctypes
# struct, declared as the plugin's header declares it (vecmath.h).
import ctypes

import numpy as np

import dynop

F = ctypes.POINTER(ctypes.c_float)


class VecMath(ctypes.Structure):
    _fields_ = [
        ("header", dynop.Header),
        ("saxpy", ctypes.CFUNCTYPE(None, ctypes.c_float, F, F, ctypes.c_size_t)),
        ("dot", ctypes.CFUNCTYPE(ctypes.c_float, F, F, ctypes.c_size_t)),
        ("scale", ctypes.CFUNCTYPE(None, ctypes.c_float, F, ctypes.c_size_t)),
        ("nop", ctypes.CFUNCTYPE(None)),
    ]


with dynop.Host() as host:
    uid = "9A3C5E71-0B2D-4F68-8A1E-3C5D7F90A2B4"  # DYNOP_VECMATH_UID
    with host.acquire("dynop.plugin.vecmath", uid, (1, 0, 0), VecMath) as ref:  # starts the plugin
        x = np.array([1, 2, 3], np.float32)
        y = np.array([4, 5, 6], np.float32)
        print("version", ref.version, "dot", ref.table.dot(x.ctypes.data_as(F), y.ctypes.data_as(F), 3))
    # released: the plugin stops when nothing else holds it
    try:
        host.acquire("dynop.plugin.vecmath", uid, (2, 0, 0))
    except dynop.VersionError as e:
        print("refused:", type(e).__name__)
