"""Host, Operator, Pipeline and InterfaceRef: dynop_host_open,
dynop_operator_create/run, dynop_pipeline_open/next, dynop_host_acquire."""

import ctypes
import dataclasses
import json
import os
import threading
import weakref

from . import _ffi
from .errors import ClosedError, InvalidArgumentError, check
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
    return None if v is None else os.fsencode(v) if isinstance(v, (str, bytes, os.PathLike)) else str(v).encode()


def _args_json(name, args):
    """The arguments as JSON: NumPy scalars and arrays as their values; a
    NaN or infinity, or a value JSON cannot hold, is refused naming it."""
    def plain(v):
        if hasattr(v, "tolist") and callable(v.tolist):  # NumPy scalars and arrays
            return v.tolist()
        if isinstance(v, os.PathLike):
            return os.fspath(v)
        raise TypeError("%s is not a JSON value" % type(v).__name__)

    try:
        return json.dumps(args, default=plain, allow_nan=False)
    except (TypeError, ValueError):
        for k, v in args.items():  # name the argument at fault
            try:
                json.dumps(v, default=plain, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise InvalidArgumentError("%s: argument %r = %r: %s" % (name, k, v, e)) from None
        raise


class _Owned:
    """Something the library made for the caller, released once by the
    library function named _release (by close(), a with block, or garbage
    collection); releasing twice, or after the host closed, is harmless."""

    _release = None

    def _own(self, lib, handle):
        self._lib, self._handle = lib, handle
        self._finalizer = weakref.finalize(self, getattr(lib, self._release), handle)

    def close(self):
        if self._finalizer.detach() is not None:
            rc = getattr(self._lib, self._release)(self._handle)
            if rc != 0 and rc != ClosedError.code:
                check(self._lib, rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Host:
    """An open dynop host (dynop_host_open). Close it with close() or use
    it as a context manager; output tensors outlive it."""

    def __init__(self, paths=(), cache_dir=None, no_default_paths=False, trust_dir=None, signature_policy=None,
                 cpu_features=None, sandbox=None, library=None, no_cache=False, scanner=None,
                 scan_timeout_ms=0, log_level=4):
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        paths = list(paths)
        if not no_default_paths and os.path.isdir(_ffi.PLUGIN_DIR):
            paths.append(_ffi.PLUGIN_DIR)
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
        with self._lock:  # not while plugins() reads the strings close frees
            if self._closed:
                return
            self._closed = True
            self._finalizer.detach()
            rc = self._lib.dynop_host_close(self._handle)
        check(self._lib, rc)

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
        # The strings belong to the host: read them before close frees them.
        with self._lock:
            check(lib, lib.dynop_host_plugins(self._handle, None, 0, ctypes.byref(count)))
            while True:
                cap = count.value
                arr = (_ffi.dynop_plugin_status * max(cap, 1))()
                for e in arr:
                    e.struct_size = ctypes.sizeof(_ffi.dynop_plugin_status)
                check(lib, lib.dynop_host_plugins(self._handle, arr, cap, ctypes.byref(count)))
                if count.value <= cap:
                    break
            return [PluginStatus(id=_s(e.id), version=str(e.version),
                                 state=_ffi.STATE_NAMES.get(e.state, str(e.state)), path=_s(e.path),
                                 error=_s(e.error), refs=e.refs, starts=e.starts, stops=e.stops)
                    for e in arr[:count.value]]

    def operator(self, name, **args):
        """An instance of the operator name, its keyword arguments as the
        arguments JSON (checked against the operator's schema)."""
        return Operator(self, name, args)

    def run_pipeline(self, path, **options):
        """Runs the pipeline file at path as `dynop run` does
        (dynop_pipeline_run): reads its input files and writes its outputs.
        Options: out_dir, inputs ({name: [files or patterns]}), workers,
        atomic, resume. Returns the run's summary (a dict)."""
        lib = self._lib
        opts = json.dumps(options, default=os.fspath).encode() if options else None
        out = ctypes.c_void_p()
        check(lib, lib.dynop_pipeline_run(self._handle, os.fsencode(path), opts, ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out.value).decode()) if out.value else None
        finally:
            lib.dynop_string_free(out.value)

    def pipeline(self, path, inputs=None, workers=0):
        """Opens the pipeline file at path for iteration
        (dynop_pipeline_open): iterating over it reads its input files and
        yields its outputs' tensors batch by batch, as a training loop
        takes them, without encoding or writing anything. inputs replaces
        the file's inputs ({name: [files or patterns]}); workers is how
        many threads share each batch (0: one per CPU)."""
        return Pipeline(self, path, inputs, workers)

    def acquire(self, plugin_id, uid, min_version=(1, 0, 0), table=None):
        """Acquires interface uid ("XXXXXXXX-XXXX-...") of plugin plugin_id,
        at least min_version (same major), starting the plugin
        (dynop_host_acquire). table is the ctypes.Structure subclass that
        declares the interface's C function table (starting with a
        dynop.Header), as its plugin's header does; the InterfaceRef's
        .table is then that struct, read in place. Release it with
        release() or a with block."""
        return InterfaceRef(self, plugin_id, uid, min_version, table)


class InterfaceRef(_Owned):
    """A reference to an acquired interface (dynop_host_acquire). .table
    is valid until release(), which the last reference's release stops the
    plugin after; use it as a context manager to release it."""

    def __init__(self, host, plugin_id, uid, min_version, table):
        self._lib = lib = host._lib
        if isinstance(uid, str):
            uid = _ffi.dynop_uid.parse(uid)
        elif not isinstance(uid, _ffi.dynop_uid):
            raise TypeError("uid must be a string XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX, not %s" % type(uid).__name__)
        v = tuple(min_version)
        if len(v) != 3 or not all(isinstance(x, int) and 0 <= x < 1 << 32 for x in v):
            raise ValueError("min_version must be (major, minor, patch), three integers, not %r" % (min_version,))
        if table is not None and not (isinstance(table, type) and issubclass(table, ctypes.Structure)):
            raise TypeError("table must be a ctypes.Structure subclass, not %r" % (table,))
        self.plugin_id, self.uid = plugin_id, str(uid)
        ptr, h = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib, lib.dynop_host_acquire(host._handle, plugin_id.encode(), ctypes.byref(uid),
                                          _ffi.dynop_version(*v), ctypes.byref(ptr), ctypes.byref(h)))
        self._own(lib, h.value)
        self.address = ptr.value
        self.header = _ffi.dynop_header.from_address(ptr.value)
        if table is not None and self.header.size < ctypes.sizeof(table):
            self.release()
            raise ValueError("interface %s of %s: its table is %d bytes, smaller than %s's %d: the plugin was built "
                             "against an older header" % (self.uid, plugin_id, self.header.size, table.__name__,
                                                          ctypes.sizeof(table)))
        self.table = table.from_address(ptr.value) if table is not None else None

    @property
    def version(self):
        """The interface's version, as its table's header says."""
        v = self.header.version
        return (v.major, v.minor, v.patch)

    _release = "dynop_host_release"

    def close(self):
        """Releases the reference: the table must not be used any more."""
        self.table = self.header = None
        super().close()

    release = close

    def __repr__(self):
        return "<dynop.InterfaceRef %s of %s>" % (self.uid, self.plugin_id)


class Batch(dict):
    """One batch of a pipeline's outputs: output name -> list of Tensors,
    one per sample, in the order of the pipeline file's outputs. .files
    has, per sample, the input files it was made from."""

    files = ()

    def __repr__(self):
        return "<dynop.Batch of %d samples: %s>" % (len(self.files), ", ".join(self))


class Pipeline(_Owned):
    """A pipeline file open for iteration (Host.pipeline). Iterate over it
    for its Batches; it ends after the last one. name, file, batch_size,
    inputs and outputs (names) and samples (how many the iteration goes
    over) describe it. Close it, or use it as a context manager; the
    tensors it gave out outlive it."""

    def __init__(self, host, path, inputs, workers):
        self._lib = lib = host._lib
        opts = {}
        if inputs:
            opts["inputs"] = {k: [os.fspath(f) for f in ([v] if isinstance(v, (str, os.PathLike)) else v)]
                              for k, v in inputs.items()}
        if workers:
            opts["workers"] = workers
        js = json.dumps(opts).encode() if opts else None
        h, info = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib, lib.dynop_pipeline_open(host._handle, os.fsencode(path), js, ctypes.byref(h), ctypes.byref(info)))
        self._own(lib, h.value)
        try:
            d = json.loads(ctypes.string_at(info.value).decode())
        finally:
            lib.dynop_string_free(info.value)
        self.name, self.file, self.batch_size = d["name"], d["file"], d["batch_size"]
        self.inputs, self.outputs, self.samples = d["inputs"], d["outputs"], d["samples"]
        self._cap = len(self.outputs) * self.batch_size
        self._outs = (ctypes.c_void_p * self._cap)()
        self._lock = threading.Lock()

    def __iter__(self):
        return self

    def __next__(self):
        lib = self._lib
        n, files = ctypes.c_uint32(), ctypes.c_void_p()
        with self._lock:
            outs = self._outs
            check(lib, lib.dynop_pipeline_next(self._handle, outs, self._cap, ctypes.byref(n), ctypes.byref(files)))
            n = n.value
            if n == 0:
                raise StopIteration
            b = Batch((name, [Tensor(lib, outs[o * n + s]) for s in range(n)]) for o, name in enumerate(self.outputs))
        try:
            b.files = json.loads(ctypes.string_at(files.value).decode())
        finally:
            lib.dynop_string_free(files.value)
        return b

    def __len__(self):
        """How many batches the iteration yields (fewer when on_error:
        skip leaves a whole batch out)."""
        return -(-self.samples // self.batch_size)

    _release = "dynop_pipeline_close"  # close() stops the iteration and closes it

    def __repr__(self):
        return "<dynop.Pipeline %s: %d samples in batches of %d, outputs %s>" % (
            self.file, self.samples, self.batch_size, ", ".join(self.outputs))


class Operator(_Owned):
    """An operator instance (dynop_operator_create). Calling it with one
    array per input runs it on a batch of one and returns the output: a
    Tensor, or a tuple of them when the operator has several outputs."""

    def __init__(self, host, name, args):
        self._lib = lib = host._lib
        self.name = name
        self.args = dict(args)
        self._host = host
        js = _args_json(name, self.args).encode() if self.args else None
        h = ctypes.c_void_p()
        check(lib, lib.dynop_operator_create(host._handle, name.encode(), js, ctypes.byref(h)))
        self._own(lib, h.value)
        nin, nout = ctypes.c_uint32(), ctypes.c_uint32()
        check(lib, lib.dynop_operator_arity(self._handle, ctypes.byref(nin), ctypes.byref(nout)))
        self.num_inputs, self.num_outputs = nin.value, nout.value

    _release = "dynop_operator_destroy"  # close() destroys the instance

    def __repr__(self):
        return "<dynop.Operator %s %s>" % (self.name, json.dumps(self.args))

    def run(self, inputs, out=None):
        """Runs on a list of inputs (one per operator input); returns a list
        of output Tensors. With out (a list of arrays, one per output:
        writable, C-contiguous, of the dtype and shape the operator gives,
        not sharing memory with an input) the operator writes into them,
        and run returns out."""
        lib = self._lib
        inputs = list(inputs)
        nin, nout = self.num_inputs, self.num_outputs
        if len(inputs) != nin:
            raise TypeError("%s takes %d input(s), got %d" % (self.name, nin, len(inputs)))
        # The borrowed structs (and the arrays they point into) stay alive
        # in `borrowed` until the call returns.
        borrowed = [borrow(x, "%s: input %d" % (self.name, i)) for i, x in enumerate(inputs)]
        ins = (ctypes.c_void_p * max(nin, 1))(*[ctypes.addressof(b.managed) for b in borrowed])
        if out is not None:
            out = list(out)
            if len(out) != nout:
                raise TypeError("%s has %d output(s), got %d arrays in out" % (self.name, nout, len(out)))
            dst = [borrow(x, "%s: output %d" % (self.name, o), writable=True) for o, x in enumerate(out)]
            outs = (ctypes.c_void_p * max(nout, 1))(*[ctypes.addressof(b.managed) for b in dst])
            check(lib, lib.dynop_operator_run_into(self._handle, ins, nin, 1, outs, nout))
            del borrowed, dst
            return out
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

    def __call__(self, *inputs, out=None):
        """op(x, y) runs on a batch of one; out= an array (or a tuple of
        them, one per output) to write into, as NumPy's out=."""
        if out is not None and self.num_outputs == 1 and not isinstance(out, (tuple, list)):
            return self.run(inputs, [out])[0]
        res = self.run(inputs, out)
        return res[0] if len(res) == 1 else tuple(res)
