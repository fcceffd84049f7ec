"""DLPack tensors: borrowing NumPy arrays as inputs, and Tensor, the
owner of an output DLManagedTensorVersioned."""

import ctypes
import sys
import threading
import weakref

from . import _ffi
from ._ffi import DLManagedTensor, DLManagedTensorVersioned

# numpy dtype kind/itemsize <-> DLPack (code, bits)
_KIND_TO_CODE = {"i": _ffi.kDLInt, "u": _ffi.kDLUInt, "f": _ffi.kDLFloat, "b": _ffi.kDLBool}
_CODE_TO_KIND = {v: k for k, v in _KIND_TO_CODE.items()}
_CODE_NAMES = {_ffi.kDLInt: "int", _ffi.kDLUInt: "uint", _ffi.kDLFloat: "float", _ffi.kDLBfloat: "bfloat",
               _ffi.kDLComplex: "complex", _ffi.kDLBool: "bool"}
_SUPPORTED = {("i", 1), ("i", 2), ("i", 4), ("i", 8), ("u", 1), ("u", 2), ("u", 4), ("u", 8),
              ("f", 2), ("f", 4), ("f", 8), ("b", 1)}
_NATIVE = "<" if sys.byteorder == "little" else ">"


def _dtype_name(code, bits, lanes=1):
    name = _CODE_NAMES.get(code, "code%d" % code)
    name = "bool" if code == _ffi.kDLBool else "%s%d" % (name, bits)
    return name if lanes == 1 else "%sx%d" % (name, lanes)


# ---- inputs ---------------------------------------------------------------

class _Borrowed:
    """A DLManagedTensorVersioned that points at an array's own memory, and
    what must stay alive while the library reads it."""

    __slots__ = ("managed", "array", "shape", "strides")


_dtype_codes = {}  # numpy dtype -> DLDataType, for dtypes borrow has accepted
_VERSION_1_0 = _ffi.DLPackVersion(1, 0)
_CPU = _ffi.DLDevice(_ffi.kDLCPU, 0)
_NO_DELETER = _ffi.DELETER()


def borrow(obj, what="input", writable=False):
    """Describes obj (a NumPy array, anything np.asarray takes without
    copying: __array_interface__, the buffer protocol, a dynop Tensor; or
    a DLPack producer, through np.from_dlpack) as a
    borrowed DLManagedTensorVersioned, without copying its data. writable
    (for an output) refuses a read-only or non-C-contiguous array."""
    import numpy as np

    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None and not isinstance(obj, np.ndarray):
        d = dev()
        if int(d[0]) != _ffi.kDLCPU:
            raise ValueError("%s: on device %r, not the CPU (dynop operators take CPU tensors)" % (what, tuple(d)))
    if isinstance(obj, np.ndarray):
        arr = obj
    elif hasattr(obj, "__dlpack__") and not hasattr(obj, "__array_interface__") \
            and not hasattr(obj, "__array__"):
        # a DLPack producer only (a PyTorch tensor has __array__ too, which
        # np.asarray takes without copying): a view of its memory
        arr = np.from_dlpack(obj)
    else:
        arr = np.asarray(obj)
    if writable:
        if not arr.flags.writeable:
            raise ValueError("%s: the array is read-only; an output must be writable" % what)
        if not arr.flags.c_contiguous:
            raise ValueError("%s: the array is not C-contiguous (strides %s); an output must be compact: "
                             "pass np.empty(shape, dtype)" % (what, arr.strides))
    dt = arr.dtype
    code = _dtype_codes.get(dt)
    if code is None:
        if dt.fields is not None or dt.subdtype is not None or (dt.kind, dt.itemsize) not in _SUPPORTED:
            raise ValueError("%s: dtype %s has no DLPack equivalent dynop takes" % (what, dt))
        if dt.byteorder not in ("=", "|", _NATIVE):
            raise ValueError("%s: dtype %s is not in the machine's byte order" % (what, dt))
        code = _dtype_codes[dt] = _ffi.DLDataType(_KIND_TO_CODE[dt.kind], dt.itemsize * 8, 1)
    nd = arr.ndim
    if nd > _ffi.DYNOP_MAX_NDIM:
        raise ValueError("%s: %d dimensions (at most %d)" % (what, nd, _ffi.DYNOP_MAX_NDIM))
    item = dt.itemsize
    strides = arr.strides
    for d, s in enumerate(strides):
        if s < 0 or s % item:
            if s < 0:
                raise ValueError("%s: negative stride (%d bytes) along dimension %d; dynop takes no negative "
                                 "strides: pass a copy (np.ascontiguousarray)" % (what, s, d))
            raise ValueError("%s: stride of %d bytes along dimension %d is not a multiple of the item size "
                             "(%d bytes); pass a copy (np.ascontiguousarray)" % (what, s, d, item))
    b = _Borrowed()
    b.array = arr
    b.shape = shape = (ctypes.c_int64 * max(nd, 1))(*arr.shape)
    b.strides = st = (ctypes.c_int64 * max(nd, 1))(*[s // item for s in strides])
    b.managed = DLManagedTensorVersioned(
        _VERSION_1_0, None, _NO_DELETER, 0 if arr.flags.writeable else _ffi.DLPACK_FLAG_BITMASK_READ_ONLY,
        _ffi.DLTensor(arr.__array_interface__["data"][0] or None, _CPU, nd, code, shape, st, 0))
    return b


# ---- exports through __dlpack__ --------------------------------------------

# The structs handed to consumers, by address, with the Tensor each keeps
# alive: a consumer's call of the deleter (or the destructor of a capsule
# nobody consumed) removes the entry.
_exports = {}
_exports_lock = threading.Lock()


def _release_export(addr):
    with _exports_lock:
        entry = _exports.pop(addr, None)
    # entry (the struct, its shape and strides, the Tensor) is dropped here:
    # the Tensor's own deleter runs when its last reference goes.
    del entry


@_ffi.DELETER
def _export_deleter(addr):
    _release_export(addr)


_NAME_LEGACY = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"


_EXPORT_DELETER_ADDR = ctypes.cast(_export_deleter, ctypes.c_void_p).value


def _load_capsule_destructor():
    """The capsules' destructor: dynop_py_capsule_destructor of
    _dynop_capsule.so (built from _capsule.c beside this file) when it is
    there, else none.

    The destructor of a capsule nobody consumed must call the deleter; it
    cannot be a ctypes callback, because a capsule may be destroyed while
    an exception propagates and Python code cannot run then (see
    _capsule.c: the interpreter crashes). Without the helper, a capsule
    that is never consumed keeps its Tensor alive for good (a leak, not a
    crash); consumed capsules, np.asarray views and the Tensor itself are
    released as usual."""
    import os

    path = os.environ.get("DYNOP_CAPSULE_HELPER") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "_dynop_capsule.so")
    if not os.path.exists(path):
        return None, None
    lib = ctypes.CDLL(path)
    return lib, ctypes.cast(lib.dynop_py_capsule_destructor, ctypes.c_void_p).value


_capsule_helper, _CAPSULE_DESTRUCTOR_ADDR = _load_capsule_destructor()


def capsule_destructor():
    """Where unconsumed capsules' destructor comes from: the path of
    _dynop_capsule.so, or None when it was not built (then unconsumed
    capsules leak their tensor)."""
    return _capsule_helper._name if _capsule_helper is not None else None


class Tensor:
    """An output tensor of an operator: owns a DLManagedTensorVersioned
    that the library allocated, and calls its deleter exactly once, when
    the last reference to it goes (NumPy arrays made from it and DLPack
    capsules handed out hold one).

    np.asarray(t) and np.from_dlpack(t) are views of its memory, not
    copies."""

    #: how many tensors' deleters this package has run (for tests)
    deleted = 0
    _count_lock = threading.Lock()

    __slots__ = ("_ptr", "_managed", "_finalizer", "__weakref__")

    def __init__(self, lib, ptr):
        if not ptr:
            raise ValueError("NULL tensor")
        self._ptr = ptr
        self._managed = DLManagedTensorVersioned.from_address(ptr)
        self._finalizer = weakref.finalize(self, Tensor._delete, lib, ptr)
        # Not at interpreter exit: NumPy arrays and torch tensors viewing
        # the memory may still be read then (by atexit hooks, threads).
        self._finalizer.atexit = False

    @staticmethod
    def _delete(lib, ptr):
        lib.dynop_tensor_delete(ptr)
        with Tensor._count_lock:
            Tensor.deleted += 1

    # ---- description

    @property
    def _t(self):
        if not self._finalizer.alive:
            raise ValueError("the tensor was released")
        return self._managed.dl_tensor

    @property
    def ndim(self):
        return self._t.ndim

    @property
    def shape(self):
        t = self._t
        return tuple(t.shape[i] for i in range(t.ndim))

    @property
    def strides(self):
        """Strides in elements (compact row-major when the tensor has none)."""
        t = self._t
        if t.strides:
            return tuple(t.strides[i] for i in range(t.ndim))
        out, acc = [], 1
        for n in reversed(self.shape):
            out.append(acc)
            acc *= n
        return tuple(reversed(out))

    @property
    def dtype(self):
        """The dtype's name: uint8, float32, bool..."""
        d = self._t.dtype
        return _dtype_name(d.code, d.bits, d.lanes)

    @property
    def data_ptr(self):
        """The address of the first element (data + byte_offset)."""
        t = self._t
        return (t.data or 0) + t.byte_offset

    @property
    def readonly(self):
        return bool(self._managed.flags & _ffi.DLPACK_FLAG_BITMASK_READ_ONLY)

    def __repr__(self):
        if not self._finalizer.alive:
            return "<dynop.Tensor released>"
        return "<dynop.Tensor %s %s>" % (self.dtype, "x".join(map(str, self.shape)) or "scalar")

    # ---- NumPy

    @property
    def __array_interface__(self):
        t = self._t
        d = t.dtype
        kind = _CODE_TO_KIND.get(d.code)
        if kind is None or d.lanes != 1 or (kind, d.bits // 8) not in _SUPPORTED or d.bits % 8:
            raise TypeError("dtype %s has no NumPy equivalent" % self.dtype)
        typestr = ("|" if d.bits == 8 else _NATIVE) + kind + str(d.bits // 8)
        item = d.bits // 8
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": typestr,
            "data": (self.data_ptr, self.readonly),
            "strides": tuple(s * item for s in self.strides) if t.strides else None,
        }

    # ---- DLPack

    def __dlpack_device__(self):
        d = self._t.device
        return (int(d.device_type), int(d.device_id))

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this tensor's memory: "dltensor_versioned"
        (DLManagedTensorVersioned) when max_version >= (1, 0) is asked for,
        else the legacy "dltensor" (DLManagedTensor) that NumPy < 2 and
        older PyTorch consume. The capsule keeps this Tensor alive until
        the consumer calls its deleter (or the capsule goes unconsumed)."""
        if stream is not None and stream != -1:
            raise BufferError("dynop tensors are on the CPU: stream must be None")
        if copy:
            raise BufferError("dynop tensors are exported without copying (copy=True is not supported)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("dynop tensors are on the CPU")
        t = self._t
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        if versioned:
            m = DLManagedTensorVersioned()
            m.version.major, m.version.minor = 1, 0
            m.flags = self._managed.flags
            name = _NAME_VERSIONED
        else:
            m = DLManagedTensor()
            name = _NAME_LEGACY
        ctypes.memmove(ctypes.addressof(m.dl_tensor), ctypes.addressof(t), ctypes.sizeof(t))
        m.manager_ctx = None
        m.deleter = ctypes.cast(_EXPORT_DELETER_ADDR, _ffi.DELETER)
        addr = ctypes.addressof(m)
        with _exports_lock:
            _exports[addr] = (m, self)
        try:
            return _ffi.PyCapsule_New(addr, name, _CAPSULE_DESTRUCTOR_ADDR)
        except BaseException:
            _release_export(addr)
            raise


def outstanding_exports():
    """How many DLPack exports are still held by consumers (for tests)."""
    with _exports_lock:
        return len(_exports)
