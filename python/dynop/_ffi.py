"""ctypes declarations of dynop_host.h (and the DLPack structs it uses).

Nothing here links against libpython: libdynop.so is opened with
ctypes.CDLL, and the few CPython calls the DLPack capsules need go through
ctypes.pythonapi, the interpreter's own symbols.
"""

import ctypes
import os
import threading

# ---- DLPack ---------------------------------------------------------------

kDLCPU = 1

kDLInt = 0
kDLUInt = 1
kDLFloat = 2
kDLBfloat = 4
kDLComplex = 5
kDLBool = 6

DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0

DYNOP_MAX_NDIM = 16


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# Deleters are declared with a void* argument: the library's outputs are
# freed with dynop_tensor_delete, and the deleters this package makes for
# the tensors it exports look themselves up by address.
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


class DLManagedTensor(ctypes.Structure):
    """DLPack < 1.0's managed tensor: what a "dltensor" capsule holds."""

    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
    ]


# ---- dynop_host.h ---------------------------------------------------------

class dynop_version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("patch", ctypes.c_uint32)]

    def __str__(self):
        return "%d.%d.%d" % (self.major, self.minor, self.patch)


class dynop_host_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("paths", ctypes.POINTER(ctypes.c_char_p)),
        ("path_count", ctypes.c_size_t),
        ("no_default_paths", ctypes.c_int32),
        ("no_cache", ctypes.c_int32),
        ("cache_dir", ctypes.c_char_p),
        ("trust_dir", ctypes.c_char_p),
        ("signature_policy", ctypes.c_char_p),
        ("cpu_features", ctypes.c_char_p),
        ("sandbox", ctypes.c_char_p),
        ("scanner", ctypes.c_char_p),
        ("scan_timeout_ms", ctypes.c_uint32),
        ("log_level", ctypes.c_int32),
    ]


class dynop_plugin_status(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("state", ctypes.c_int32),
        ("id", ctypes.c_char_p),
        ("version", dynop_version),
        ("path", ctypes.c_char_p),
        ("error", ctypes.c_char_p),
        ("refs", ctypes.c_uint32),
        ("starts", ctypes.c_uint32),
        ("stops", ctypes.c_uint32),
    ]


STATE_NAMES = {
    0: "available",
    1: "starting",
    2: "started",
    3: "stopping",
    4: "broken",
    5: "unsupported",
    6: "untrusted",
    7: "duplicate",
}

HOST_API_VERSION_MAJOR = 0
HOST_API_VERSION_MINOR = 2


class dynop_uid(ctypes.Structure):
    """dynop.h's 128-bit type identifier: the 16 bytes of its text form."""

    _fields_ = [("bytes", ctypes.c_uint8 * 16)]

    @classmethod
    def parse(cls, text):
        """From "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" (hex digits)."""
        parts = text.split("-") if isinstance(text, str) else []
        if [len(p) for p in parts] != [8, 4, 4, 4, 12]:
            raise ValueError("UID %r is not of the form XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" % (text,))
        try:
            raw = bytes.fromhex("".join(parts))
        except ValueError:
            raise ValueError("UID %r has a character that is not a hex digit" % (text,)) from None
        u = cls()
        ctypes.memmove(u.bytes, raw, 16)
        return u

    def __str__(self):
        h = bytes(self.bytes).hex().upper()
        return "-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:]))


class dynop_header(ctypes.Structure):
    """The header every struct crossing dynop's ABI starts with (an
    interface table's first member)."""

    _fields_ = [("type", dynop_uid), ("version", dynop_version), ("size", ctypes.c_uint32)]

_handle = ctypes.c_void_p
_result = ctypes.c_int32
_P = ctypes.POINTER

_PROTOTYPES = {
    "dynop_host_api_version": (dynop_version, []),
    "dynop_last_error": (ctypes.c_char_p, []),
    "dynop_host_open": (_result, [_P(dynop_host_options), _P(_handle)]),
    "dynop_host_close": (_result, [_handle]),
    "dynop_host_plugins": (_result, [_handle, _P(dynop_plugin_status), ctypes.c_size_t, _P(ctypes.c_size_t)]),
    "dynop_operator_create": (_result, [_handle, ctypes.c_char_p, ctypes.c_char_p, _P(_handle)]),
    "dynop_operator_arity": (_result, [_handle, _P(ctypes.c_uint32), _P(ctypes.c_uint32)]),
    "dynop_operator_run": (_result, [_handle, _P(ctypes.c_void_p), ctypes.c_uint32, ctypes.c_uint32,
                                     _P(ctypes.c_void_p), ctypes.c_uint32]),
    "dynop_operator_run_into": (_result, [_handle, _P(ctypes.c_void_p), ctypes.c_uint32, ctypes.c_uint32,
                                          _P(ctypes.c_void_p), ctypes.c_uint32]),
    "dynop_operator_destroy": (_result, [_handle]),
    "dynop_tensor_delete": (_result, [ctypes.c_void_p]),
    "dynop_pipeline_run": (_result, [_handle, ctypes.c_char_p, ctypes.c_char_p, _P(ctypes.c_void_p)]),
    "dynop_pipeline_open": (_result, [_handle, ctypes.c_char_p, ctypes.c_char_p, _P(_handle), _P(ctypes.c_void_p)]),
    "dynop_pipeline_next": (_result, [_handle, _P(ctypes.c_void_p), ctypes.c_size_t, _P(ctypes.c_uint32),
                                      _P(ctypes.c_void_p)]),
    "dynop_pipeline_close": (_result, [_handle]),
    "dynop_host_acquire": (_result, [_handle, ctypes.c_char_p, _P(dynop_uid), dynop_version, _P(ctypes.c_void_p),
                                     _P(_handle)]),
    "dynop_host_release": (_result, [_handle]),
    "dynop_string_free": (None, [ctypes.c_void_p]),
}

_lock = threading.Lock()
_libs = {}


# The example plugins a wheel carries (make python puts them there in a
# source checkout too): searched by every Host unless no_default_paths.
PLUGIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins")


def _candidates(library):
    if library:
        return [os.fspath(library)]
    env = os.environ.get("DYNOP_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(here, "libdynop.so"),
        os.path.join(os.path.dirname(os.path.dirname(here)), "bin", "libdynop.so"),
    ]


def load(library=None):
    """Opens libdynop.so: library, else $DYNOP_LIBRARY, else the package's
    directory, else the repository's bin/. Each path is opened once."""
    candidates = _candidates(library)
    path = None
    for c in candidates:
        if os.path.exists(c):
            path = os.path.abspath(c)
            break
    if path is None:
        raise OSError("libdynop.so not found (looked at %s; build it with `make libdynop` "
                      "or set $DYNOP_LIBRARY)" % ", ".join(candidates))
    with _lock:
        lib = _libs.get(path)
        if lib is not None:
            return lib
        lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in _PROTOTYPES.items():
            f = getattr(lib, name)
            f.restype = restype
            f.argtypes = argtypes
        v = lib.dynop_host_api_version()
        if v.major != HOST_API_VERSION_MAJOR or v.minor < HOST_API_VERSION_MINOR:
            raise OSError("%s has API version %s; this package needs %d.%d" %
                          (path, v, HOST_API_VERSION_MAJOR, HOST_API_VERSION_MINOR))
        lib._dynop_path = path
        _libs[path] = lib
        return lib


# ---- CPython's capsule functions, through ctypes.pythonapi ---------------

_api = ctypes.pythonapi
PyCapsule_New = _api["PyCapsule_New"]  # [] makes our own function objects: not shared with other users of pythonapi
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
