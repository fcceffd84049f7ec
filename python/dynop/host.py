"""Host and Operator: dynop_host_open, dynop_operator_create/run."""

import ctypes
import dataclasses
import json
import os
import threading
import weakref

from . import _ffi
from .errors import ClosedError, check
from .tensor import Tensor, borrow


@dataclasses.dataclass(frozen=True)
class PluginStatus:
    """One plugin as the host sees it (dynop_plugin_status)."""

    id: str
    version: str
    state: str
    path: str
    error: str
    refs: int = 0
    starts: int = 0
    stops: int = 0


def _s(b):
    return b.decode("utf-8", "replace") if b else ""


def _opt(v):
    return None if v is None else os.fsencode(v) if isinstance(v, os.PathLike) else str(v).encode()


class Host:
    """An open dynop host (dynop_host_open). Close it with close() or use
    it as a context manager; output tensors outlive it."""

    def __init__(self, paths=(), cache_dir=None, no_default_paths=False, trust_dir=None, signature_policy=None,
                 cpu_features=None, sandbox=None, library=None, no_cache=False, scanner=None,
                 scan_timeout_ms=0, log_level=0):
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        self._lib = _ffi.load(library)
        enc = [os.fsencode(p) for p in paths]
        arr = (ctypes.c_char_p * max(len(enc), 1))(*enc)
        o = _ffi.dynop_host_options()
        o.struct_size = ctypes.sizeof(o)
        o.paths = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
        o.path_count = len(enc)
        o.no_default_paths = 1 if no_default_paths else 0
        o.no_cache = 1 if no_cache else 0
        o.cache_dir = _opt(cache_dir)
        o.trust_dir = _opt(trust_dir)
        o.signature_policy = _opt(signature_policy)
        o.cpu_features = _opt(cpu_features)
        o.sandbox = _opt(sandbox)
        o.scanner = _opt(scanner)
        o.scan_timeout_ms = int(scan_timeout_ms)
        o.log_level = int(log_level)
        h = ctypes.c_void_p()
        check(self._lib, self._lib.dynop_host_open(ctypes.byref(o), ctypes.byref(h)))
        self._handle = h.value
        self._closed = False
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, self._lib.dynop_host_close, self._handle)

    @property
    def library_path(self):
        return self._lib._dynop_path

    def close(self):
        """Stops every plugin and frees the host; its operators are closed
        from then on. Closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._finalizer.detach()
        check(self._lib, self._lib.dynop_host_close(self._handle))

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def plugins(self):
        """The host's plugins, usable or not, sorted by id then path."""
        lib = self._lib
        count = ctypes.c_size_t()
        check(lib, lib.dynop_host_plugins(self._handle, None, 0, ctypes.byref(count)))
        while True:
            cap = count.value
            arr = (_ffi.dynop_plugin_status * max(cap, 1))()
            for e in arr:
                e.struct_size = ctypes.sizeof(_ffi.dynop_plugin_status)
            check(lib, lib.dynop_host_plugins(self._handle, arr, cap, ctypes.byref(count)))
            if count.value <= cap:
                break
        return [PluginStatus(id=_s(e.id), version=str(e.version), state=_ffi.STATE_NAMES.get(e.state, str(e.state)),
                             path=_s(e.path), error=_s(e.error), refs=e.refs, starts=e.starts, stops=e.stops)
                for e in arr[:count.value]]

    def operator(self, name, **args):
        """An instance of the operator name, its keyword arguments as the
        arguments JSON (checked against the operator's schema)."""
        return Operator(self, name, args)

    def pipeline(self, path, **options):
        """Runs the pipeline file at path (dynop_pipeline_run) with options
        out_dir, inputs, workers, atomic, resume; returns the summary."""
        lib = self._lib
        opts = json.dumps(options, default=os.fspath).encode() if options else None
        out = ctypes.c_void_p()
        check(lib, lib.dynop_pipeline_run(self._handle, os.fsencode(path), opts, ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out.value).decode()) if out.value else None
        finally:
            lib.dynop_string_free(out.value)


class Operator:
    """An operator instance (dynop_operator_create). Calling it with one
    array per input runs it on a batch of one and returns the output: a
    Tensor, or a tuple of them when the operator has several outputs."""

    def __init__(self, host, name, args):
        self._lib = lib = host._lib
        self.name = name
        self.args = dict(args)
        self._host = host
        js = json.dumps(self.args).encode() if self.args else None
        h = ctypes.c_void_p()
        check(lib, lib.dynop_operator_create(host._handle, name.encode(), js, ctypes.byref(h)))
        self._handle = h.value
        self._finalizer = weakref.finalize(self, lib.dynop_operator_destroy, self._handle)
        nin, nout = ctypes.c_uint32(), ctypes.c_uint32()
        check(lib, lib.dynop_operator_arity(self._handle, ctypes.byref(nin), ctypes.byref(nout)))
        self.num_inputs, self.num_outputs = nin.value, nout.value

    def close(self):
        """Destroys the instance (harmless after its host was closed)."""
        if self._finalizer.detach() is not None:
            rc = self._lib.dynop_operator_destroy(self._handle)
            if rc != 0 and rc != ClosedError.code:
                check(self._lib, rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<dynop.Operator %s %s>" % (self.name, json.dumps(self.args))

    def run(self, inputs):
        """Runs on a list of inputs (one per operator input); returns a list
        of output Tensors."""
        lib = self._lib
        inputs = list(inputs)
        nin, nout = self.num_inputs, self.num_outputs
        if len(inputs) != nin:
            raise TypeError("%s takes %d input(s), got %d" % (self.name, nin, len(inputs)))
        # The borrowed structs (and the arrays they point into) stay alive
        # in `borrowed` until the call returns.
        borrowed = [borrow(x, "%s: input %d" % (self.name, i)) for i, x in enumerate(inputs)]
        ins = (ctypes.c_void_p * max(nin, 1))(*[ctypes.addressof(b.managed) for b in borrowed])
        outs = (ctypes.c_void_p * max(nout, 1))()
        check(lib, lib.dynop_operator_run(self._handle, ins, nin, 1, outs, nout))
        del borrowed
        return [Tensor(lib, p) for p in outs[:nout]]

    def run_batch(self, inputs):
        """Runs on a batch: inputs[i] is the list of input i's samples (all
        inputs with as many; shapes may differ between samples). Returns
        outputs[o][s], sample s of output o."""
        lib = self._lib
        inputs = [list(x) for x in inputs]
        if len(inputs) != self.num_inputs:
            raise TypeError("%s takes %d input(s), got %d" % (self.name, self.num_inputs, len(inputs)))
        batch = len(inputs[0]) if inputs else 1
        if batch == 0 or any(len(x) != batch for x in inputs):
            raise ValueError("%s: every input needs the same number of samples, at least one (got %s)"
                             % (self.name, [len(x) for x in inputs]))
        # The borrowed structs (and the arrays they point into) stay alive
        # in `borrowed` until the call returns.
        borrowed = [borrow(x, "%s: input %d sample %d" % (self.name, i, s) if batch > 1 else
                           "%s: input %d" % (self.name, i))
                    for i, samples in enumerate(inputs) for s, x in enumerate(samples)]
        ins = (ctypes.c_void_p * max(len(borrowed), 1))(*[ctypes.addressof(b.managed) for b in borrowed])
        outs = (ctypes.c_void_p * max(self.num_outputs * batch, 1))()
        rc = lib.dynop_operator_run(self._handle, ins, self.num_inputs, batch, outs, self.num_outputs)
        check(lib, rc)
        del borrowed
        return [[Tensor(lib, outs[o * batch + s]) for s in range(batch)] for o in range(self.num_outputs)]

    def __call__(self, *inputs):
        out = self.run(inputs)
        return out[0] if len(out) == 1 else tuple(out)
