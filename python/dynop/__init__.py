"""dynop for Python: a host of dynop plugins over libdynop.so, through
ctypes (no extension module, no link against libpython).

    import dynop, numpy as np
    with dynop.Host(["plugins/imgproc/libdynop_imgproc.so"]) as host:
        blur = host.operator("imgproc.GaussianBlur", sigma=2.0)
        out = blur(np.zeros((64, 64, 3), np.uint8))   # a dynop.Tensor
        a = np.asarray(out)                            # a view, no copy
"""

from .errors import (ClosedError, CycleError, DuplicateError, DynopError, InvalidArgumentError, NoMemoryError,
                     NotFoundError, StateError, TypeMismatchError, UnsupportedError, VersionError)
from ._ffi import dynop_header as Header
from ._ffi import dynop_uid as UID
from .host import Batch, Host, InterfaceRef, Operator, Pipeline, PluginStatus
from .tensor import Tensor, outstanding_exports

__all__ = ["Host", "Operator", "Pipeline", "Batch", "InterfaceRef", "Header", "UID", "PluginStatus", "Tensor",
           "outstanding_exports", "DynopError",
           "InvalidArgumentError", "NotFoundError", "VersionError", "StateError", "CycleError",
           "NoMemoryError", "UnsupportedError", "DuplicateError", "TypeMismatchError", "ClosedError"]
