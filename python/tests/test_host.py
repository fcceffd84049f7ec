import ctypes
import gc
import json
import os
import threading

import numpy as np
import pytest

import dynop
from conftest import IMGPROC, ROOT


def test_plugins(host):
    ps = host.plugins()
    assert all(isinstance(p, dynop.PluginStatus) for p in ps)
    by_id = {p.id: p for p in ps}
    img = by_id["dynop.plugin.imgproc"]
    assert img.state == "available", img
    assert img.path == IMGPROC
    assert img.version == "0.2.0"
    assert img.error == ""
    # compiled into the library
    assert by_id["dynop.plugin.image"].path == ""
    assert [p.id for p in ps] == sorted(p.id for p in ps)


def test_plugin_started_by_operator(host):
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    st = {p.id: p for p in host.plugins()}["dynop.plugin.imgproc"]
    assert st.state == "started" and st.starts == 1
    blur.close()
    blur.close()


def test_context_manager(built):
    with dynop.Host([IMGPROC], no_default_paths=True, no_cache=True, library=built, log_level=4) as h:
        assert not h.closed
        assert h.library_path == os.path.abspath(built)
    assert h.closed
    h.close()  # twice is harmless


def test_gaussian_blur_constant(host):
    blur = host.operator("imgproc.GaussianBlur", sigma=2.0)
    assert (blur.num_inputs, blur.num_outputs) == (1, 1)
    x = np.full((24, 31, 3), 173, np.uint8)
    out = blur(x)
    assert isinstance(out, dynop.Tensor)
    assert out.dtype == "uint8" and out.shape == (24, 31, 3)
    a = np.asarray(out)
    assert a.dtype == np.uint8 and a.shape == (24, 31, 3)
    assert (a == 173).all()
    assert (x == 173).all()  # the input is only read


def test_blur_not_constant_differs(host):
    # the constant test would pass with an identity: check it blurs
    blur = host.operator("imgproc.GaussianBlur", sigma=2.0)
    x = np.zeros((21, 21, 1), np.uint8)
    x[10, 10, 0] = 255
    a = np.asarray(blur(x))
    assert 0 < a[10, 10, 0] < 255 and a[10, 12, 0] > 0


def test_noncontiguous_input(host):
    rng = np.random.default_rng(1)
    big = rng.integers(0, 256, (40, 50, 4), dtype=np.uint8)
    view = big[3:37:2, 5:45:3, :3]  # strided in H and W, a channel slice
    assert not view.flags.c_contiguous
    blur = host.operator("imgproc.GaussianBlur", sigma=1.5)
    got = np.asarray(blur(view))
    want = np.asarray(blur(np.ascontiguousarray(view)))
    assert got.shape == view.shape
    np.testing.assert_array_equal(got, want)

    saxpy = host.operator("imgproc.Saxpy", a=3.0)
    xs = rng.standard_normal((30, 8)).astype(np.float32)
    ys = rng.standard_normal((8, 30)).astype(np.float32)
    x, y = xs[::2, ::2], ys.T[::2, ::2]  # one transposed: F-order strides
    out = np.asarray(saxpy(x, y))
    np.testing.assert_allclose(out, 3.0 * x + y, rtol=1e-6)


def test_buffer_protocol_input(host):
    buf = bytearray(b"\x40" * (6 * 5 * 3))
    mv = memoryview(buf).cast("B", (6, 5, 3))
    out = host.operator("imgproc.GaussianBlur", sigma=1.0)(mv)
    assert (np.asarray(out) == 0x40).all()


def _capsule_data(capsule, name=b"dltensor"):
    get = ctypes.pythonapi["PyCapsule_GetPointer"]
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    p = get(capsule, name)
    if name == b"dltensor":
        return dynop._ffi.DLManagedTensor.from_address(p).dl_tensor.data
    return dynop._ffi.DLManagedTensorVersioned.from_address(p).dl_tensor.data


def test_zero_copy(host):
    saxpy = host.operator("imgproc.Saxpy", a=2.0)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = saxpy(x, np.ones_like(x))
    ptr = out.__array_interface__["data"][0]
    assert ptr == out.data_ptr
    assert ptr == _capsule_data(out.__dlpack__())
    assert ptr == _capsule_data(out.__dlpack__(max_version=(1, 0)), b"dltensor_versioned")
    a = np.asarray(out)
    assert a.ctypes.data == ptr
    assert a.base is out or a.base.base is out or a.base is not None
    np.testing.assert_array_equal(a, 2 * x + 1)
    a[1, 2] = 1000.0
    # read back through dynop: out as input (through its __array_interface__)
    ident = host.operator("imgproc.Saxpy", a=1.0)
    back = np.asarray(ident(out, np.zeros_like(x)))
    assert back[1, 2] == 1000.0
    assert back[0, 0] == 1.0
    # and the view written through, as input
    back2 = np.asarray(ident(a, np.zeros_like(x)))
    assert back2[1, 2] == 1000.0


def test_from_dlpack(host):
    out = host.operator("imgproc.Saxpy", a=1.0)(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    before = dynop.outstanding_exports()
    b = np.from_dlpack(out)
    assert b.ctypes.data == out.data_ptr
    np.testing.assert_array_equal(b, np.full((2, 3), 2, np.float32))
    assert dynop.outstanding_exports() == before + 1
    del b
    gc.collect()
    assert dynop.outstanding_exports() == before
    # capsules nobody consumed release their export too
    c1, c2 = out.__dlpack__(), out.__dlpack__(max_version=(1, 0))
    assert dynop.outstanding_exports() == before + 2
    del c1, c2
    assert dynop.outstanding_exports() == before
    assert out.__dlpack_device__() == (1, 0)


def test_deleter_runs_once(host, monkeypatch):
    lib = host._lib
    calls = []
    real = lib.dynop_tensor_delete

    def counting(ptr):
        calls.append(ptr)
        return real(ptr)

    monkeypatch.setattr(lib, "dynop_tensor_delete", counting)
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    n0 = dynop.Tensor.deleted
    out = blur(np.zeros((8, 8, 3), np.uint8))
    p = out._ptr
    view = np.asarray(out)
    cap_view = np.from_dlpack(out)
    unconsumed = out.__dlpack__()
    del out
    gc.collect()
    assert calls == [] and dynop.Tensor.deleted == n0  # the views keep it
    del view, unconsumed
    gc.collect()
    assert calls == []
    assert (cap_view == 0).all()
    del cap_view
    gc.collect()
    assert calls == [p]
    assert dynop.Tensor.deleted == n0 + 1
    # many tensors, each deleted exactly once
    outs = [blur(np.zeros((4, 4, 1), np.uint8)) for _ in range(20)]
    ptrs = [o._ptr for o in outs]
    del outs
    gc.collect()
    assert sorted(calls[1:]) == sorted(ptrs)
    assert len(set(ptrs)) == 20 and len(calls) == 21  # (the first address may be reused)


def test_tensor_outlives_host(built):
    h = dynop.Host([IMGPROC], no_default_paths=True, no_cache=True, library=built, log_level=4)
    blur = h.operator("imgproc.GaussianBlur", sigma=1.0)
    out = blur(np.full((5, 5, 3), 9, np.uint8))
    h.close()
    assert (np.asarray(out) == 9).all()
    with pytest.raises(dynop.ClosedError):
        blur(np.zeros((5, 5, 3), np.uint8))
    blur.close()  # harmless after the host closed


def test_wrong_dtype(host):
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    with pytest.raises(dynop.InvalidArgumentError) as e:
        blur(np.zeros((4, 4, 3), np.int16))
    assert e.value.code == 2
    assert "dtype int16 is not allowed" in str(e.value) and "uint8" in e.value.message
    saxpy = host.operator("imgproc.Saxpy")
    with pytest.raises(dynop.DynopError) as e:
        saxpy(np.zeros(4, np.uint8), np.zeros(4, np.float32))
    assert "uint8" in str(e.value)


def test_wrong_input_count(host):
    with pytest.raises(TypeError, match="takes 2 input"):
        host.operator("imgproc.Saxpy")(np.zeros(3, np.float32))


def test_negative_strides(host):
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    with pytest.raises(ValueError, match="negative stride") as e:
        blur(np.zeros((4, 4, 3), np.uint8)[::-1])
    assert not isinstance(e.value, dynop.DynopError)


def test_non_integral_strides(host):
    rec = np.zeros(10, dtype=[("a", "u1"), ("b", "<f4")])
    with pytest.raises(ValueError, match="not a multiple of the item size"):
        host.operator("imgproc.Saxpy")(rec["b"], np.zeros(10, np.float32))


def test_unsupported_dtype_and_device(host):
    saxpy = host.operator("imgproc.Saxpy")
    with pytest.raises(ValueError, match="complex64"):
        saxpy(np.zeros(4, np.complex64), np.zeros(4, np.float32))

    class OnGPU:
        __array_interface__ = np.zeros(4, np.float32).__array_interface__

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(ValueError, match="not the CPU"):
        saxpy(OnGPU(), np.zeros(4, np.float32))


def test_closed_host(built):
    h = dynop.Host([IMGPROC], no_default_paths=True, no_cache=True, library=built, log_level=4)
    h.close()
    with pytest.raises(dynop.ClosedError) as e:
        h.operator("imgproc.GaussianBlur", sigma=1.0)
    assert e.value.code == 11 and "closed" in e.value.message
    with pytest.raises(dynop.ClosedError):
        h.plugins()


def test_unknown_operator(host):
    with pytest.raises(dynop.NotFoundError) as e:
        host.operator("imgproc.GausianBlur", sigma=1.0)
    assert e.value.code == 3
    assert 'did you mean "imgproc.GaussianBlur"' in str(e.value)


def test_bad_arguments(host):
    with pytest.raises(dynop.InvalidArgumentError):
        host.operator("imgproc.GaussianBlur", sigma="wide")
    with pytest.raises(dynop.InvalidArgumentError):
        host.operator("imgproc.GaussianBlur", nosuch=1)


def test_bad_options(built):
    with pytest.raises(dynop.InvalidArgumentError):
        dynop.Host([IMGPROC], no_cache=True, cpu_features="-nosuchfeature", library=built)
    with pytest.raises(dynop.NotFoundError):
        dynop.Host([IMGPROC], no_cache=True, trust_dir="/nonexistent/trust", library=built)


def test_errors_per_thread(host):
    errs = {}

    def worker(i):
        try:
            host.operator("imgproc.Nope%d" % i)
        except dynop.NotFoundError as e:
            errs[i] = e.message

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(errs) == [0, 1, 2, 3]
    for i, m in errs.items():
        assert "imgproc.Nope%d" % i in m


IMAGES = os.path.join(ROOT, "examples", "pipelines", "images")


def gray_pipeline(tmp_path, batch_size=4, on_error="stop", files=None):
    spec = tmp_path / "gray.yaml"
    spec.write_text("""name: gray
batch_size: %d
on_error: %s
inputs:
  photos: {files: [%s]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos], args: {channels: 3}}
  - {name: gray, op: imgproc.Grayscale, inputs: [decode]}
outputs:
  thumbs: {from: gray, dir: out, format: png}
""" % (batch_size, on_error, json.dumps(files or IMAGES + "/")))
    return str(spec)


def test_run_pipeline(host, tmp_path):
    spec = gray_pipeline(tmp_path)
    summary = host.run_pipeline(spec, out_dir=str(tmp_path / "out"), atomic=True)
    assert summary["images"] == 6, summary
    assert len(list((tmp_path / "out").rglob("*.png"))) == 6
    with pytest.raises(dynop.NotFoundError):
        host.run_pipeline("/nonexistent/p.yaml")
    with pytest.raises(dynop.InvalidArgumentError, match="options_json"):
        host.run_pipeline(spec, workers="two")


def test_pipeline_iterates(host, tmp_path):
    # The pipeline's outputs, batch by batch, equal what its operators give
    # when called one by one on each file's bytes; nothing is written.
    decode = host.operator("image.Decode", channels=3)
    gray = host.operator("imgproc.Grayscale")
    with host.pipeline(gray_pipeline(tmp_path), workers=2) as p:
        assert (p.name, p.batch_size, p.inputs, p.outputs, p.samples, len(p)) == ("gray", 4, ["photos"], ["thumbs"], 6, 2)
        batches = list(p)
        assert [len(b["thumbs"]) for b in batches] == [4, 2]
        with pytest.raises(StopIteration):
            next(p)
    for b in batches:
        assert isinstance(b, dynop.Batch) and list(b) == ["thumbs"] and len(b.files) == len(b["thumbs"])
        for t, files in zip(b["thumbs"], b.files):
            assert len(files) == 1 and files[0].startswith(IMAGES)
            with open(files[0], "rb") as f:
                data = np.frombuffer(f.read(), np.uint8)
            want = np.asarray(gray(decode(data)))
            got = np.asarray(t)
            assert got.__array_interface__["data"][0] == t.data_ptr  # a view of the pipeline's memory
            assert got.dtype == np.uint8 and got.shape == want.shape and got.shape[2] == 1
            np.testing.assert_array_equal(got, want)
    assert not (tmp_path / "out").exists()


def test_pipeline_tensors_outlive_it(built, tmp_path):
    h = dynop.Host([IMGPROC], no_default_paths=True, no_cache=True, library=built, log_level=4)
    p = h.pipeline(gray_pipeline(tmp_path, batch_size=2))
    first = next(p)["thumbs"]
    want = [np.array(t) for t in first]  # copies
    p.close()
    p.close()
    with pytest.raises(dynop.ClosedError, match="pipeline handle"):
        next(p)
    left_open = h.pipeline(gray_pipeline(tmp_path, batch_size=2))
    h.close()  # closes left_open too
    with pytest.raises(dynop.ClosedError):
        next(left_open)
    left_open.close()
    gc.collect()
    for t, w in zip(first, want):
        np.testing.assert_array_equal(np.asarray(t), w)
    before = dynop.Tensor.deleted
    del first, t
    gc.collect()
    assert dynop.Tensor.deleted == before + 2


def test_pipeline_torch(host, tmp_path):
    torch = pytest.importorskip("torch")
    with host.pipeline(gray_pipeline(tmp_path, batch_size=6)) as p:
        (b,) = list(p)
    ts = [torch.from_dlpack(t) for t in b["thumbs"]]
    assert all(x.dtype == torch.uint8 and x.shape[2] == 1 for x in ts)
    assert ts[0].data_ptr() == b["thumbs"][0].data_ptr


def test_pipeline_errors(host, tmp_path):
    with pytest.raises(dynop.NotFoundError, match="/nonexistent/p.yaml"):
        host.pipeline("/nonexistent/p.yaml")
    spec = gray_pipeline(tmp_path)
    with pytest.raises(dynop.InvalidArgumentError, match="input \"pics\"; the pipeline's inputs are photos"):
        host.pipeline(spec, inputs={"pics": [IMAGES]})
    # A file that is not an image: on_error: stop ends the iteration with
    # an error naming it; skip leaves it out.
    bad = tmp_path / "in"
    bad.mkdir()
    for name in sorted(n for n in os.listdir(IMAGES) if n.endswith(".png"))[:3]:
        (bad / name).write_bytes(open(os.path.join(IMAGES, name), "rb").read())
    (bad / "b-broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with host.pipeline(gray_pipeline(tmp_path, batch_size=2, files=str(bad) + "/")) as p:
        with pytest.raises(dynop.DynopError, match="b-broken.png.*on_error: skip would skip it"):
            list(p)
        assert list(p) == []  # at its end after the error
    with host.pipeline(gray_pipeline(tmp_path, batch_size=2, on_error="skip", files=str(bad) + "/")) as p:
        names = [os.path.basename(f[0]) for b in p for f in b.files]
    assert len(names) == 3 and "b-broken.png" not in names


VECMATH = os.path.join(ROOT, "plugins", "vecmath", "libdynop_vecmath.so")
VECMATH_UID = "9A3C5E71-0B2D-4F68-8A1E-3C5D7F90A2B4"
_F = ctypes.POINTER(ctypes.c_float)


class VecMath(ctypes.Structure):
    """plugins/vecmath/vecmath.h's dynop_vecmath, as a ctypes table."""

    _fields_ = [
        ("header", dynop.Header),
        ("saxpy", ctypes.CFUNCTYPE(None, ctypes.c_float, _F, _F, ctypes.c_size_t)),
        ("dot", ctypes.CFUNCTYPE(ctypes.c_float, _F, _F, ctypes.c_size_t)),
        ("scale", ctypes.CFUNCTYPE(None, ctypes.c_float, _F, ctypes.c_size_t)),
        ("nop", ctypes.CFUNCTYPE(None)),
    ]


def test_acquire(built, tmp_path):
    if not os.path.exists(VECMATH):
        pytest.skip("plugins/vecmath/libdynop_vecmath.so is not built (make plugins)")
    with dynop.Host([VECMATH], no_default_paths=True, no_cache=True, library=built, log_level=4) as h:
        with h.acquire("dynop.plugin.vecmath", VECMATH_UID, (1, 0, 0), VecMath) as ref:
            assert str(ref.header.type) == VECMATH_UID and ref.version[0] == 1
            assert ref.header.size >= ctypes.sizeof(VecMath)
            x = np.array([1, 2, 3], np.float32)
            y = np.array([4, 5, 6], np.float32)
            assert ref.table.dot(x.ctypes.data_as(_F), y.ctypes.data_as(_F), 3) == 32
            ref.table.saxpy(2.0, x.ctypes.data_as(_F), y.ctypes.data_as(_F), 3)
            np.testing.assert_array_equal(y, [6, 9, 12])
            st = {p.id: p for p in h.plugins()}["dynop.plugin.vecmath"]
            assert st.state == "started" and st.refs == 1
        assert ref.table is None
        ref.release()  # twice: harmless
        assert {p.id: p for p in h.plugins()}["dynop.plugin.vecmath"].refs == 0
        with pytest.raises(dynop.VersionError, match="2.0.0"):
            h.acquire("dynop.plugin.vecmath", VECMATH_UID, (2, 0, 0))
        with pytest.raises(dynop.NotFoundError):
            h.acquire("dynop.plugin.vecmath", "00000000-0000-0000-0000-000000000001")
        with pytest.raises(ValueError, match="not of the form"):
            h.acquire("dynop.plugin.vecmath", "9A3C5E71")
        with pytest.raises(ValueError, match="not a hex digit"):
            h.acquire("dynop.plugin.vecmath", "9A3C5E71-0B2D-4F68-8A1E-3C5D7F90A2BX")
        with pytest.raises(ValueError, match="min_version"):
            h.acquire("dynop.plugin.vecmath", VECMATH_UID, (1, 0))
        with pytest.raises(TypeError, match="ctypes.Structure"):
            h.acquire("dynop.plugin.vecmath", VECMATH_UID, table=int)
        kept = h.acquire("dynop.plugin.vecmath", VECMATH_UID)
        assert kept.table is None and kept.address
    kept.release()  # after the host closed: harmless


def test_torch(host):
    torch = pytest.importorskip("torch")
    saxpy = host.operator("imgproc.Saxpy", a=2.0)
    out = saxpy(np.ones(5, np.float32), np.ones(5, np.float32))
    n0 = dynop.Tensor.deleted
    t = torch.from_dlpack(out)  # torch 1.13 consumes the legacy capsule
    assert t.data_ptr() == out.data_ptr
    assert t.tolist() == [3.0] * 5
    t[0] = 7.0
    assert np.asarray(out)[0] == 7.0
    del out
    gc.collect()
    assert dynop.Tensor.deleted == n0  # torch holds it
    del t
    gc.collect()
    assert dynop.Tensor.deleted == n0 + 1
    assert dynop.outstanding_exports() == 0


def test_torch_inputs(host):
    torch = pytest.importorskip("torch")
    saxpy = host.operator("imgproc.Saxpy", a=3.0)
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    y = torch.ones(6, 4, dtype=torch.float32).t()  # non-contiguous
    out = saxpy(x, y)
    np.testing.assert_array_equal(np.asarray(out), (3 * x + y).numpy())
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    img = torch.full((8, 9, 3), 42, dtype=torch.uint8)
    assert (np.asarray(blur(img)) == 42).all()
    with pytest.raises(ValueError, match="negative stride"):
        blur(img.numpy()[::-1])


def test_capsule_helper_loaded():
    from conftest import HELPER

    assert dynop.tensor.capsule_destructor() == HELPER


_EXCEPTION_SCRIPT = r"""
import gc, sys
import numpy as np
import dynop
h = dynop.Host([sys.argv[1]], no_default_paths=True, no_cache=True, library=sys.argv[2], log_level=4)
o = h.operator("imgproc.GaussianBlur", sigma=1.0)(np.zeros((4, 4, 3), np.uint8))
def f(*a):
    pass
for i in range(3):
    try:
        f(o.__dlpack__(), 1 / 0)   # an unconsumed capsule dies while ZeroDivisionError propagates
    except ZeroDivisionError:
        pass
try:
    f(o.__dlpack__(max_version=(1, 0)), 1 / 0)
except ZeroDivisionError:
    pass
assert dynop.outstanding_exports() == 0, dynop.outstanding_exports()
try:
    f(o.__dlpack__(), (o := None), 1 / 0)  # ... holding the last reference to the tensor
except ZeroDivisionError:
    pass
gc.collect()
assert dynop.Tensor.deleted == 1 and dynop.outstanding_exports() == 0
print("ok")
"""


def test_capsule_destroyed_during_exception(built):
    # with a ctypes callback as the capsules' destructor this crashed the
    # interpreter: run it in a child
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", _EXCEPTION_SCRIPT, IMGPROC, built], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)
    assert "Exception ignored" not in r.stderr, r.stderr


def test_without_capsule_helper(built):
    # without _dynop_capsule.so an unconsumed capsule leaks its tensor, and
    # nothing crashes
    import subprocess
    import sys

    from conftest import ROOT

    script = _EXCEPTION_SCRIPT.replace("assert dynop.outstanding_exports() == 0, dynop.outstanding_exports()",
                                       "assert dynop.tensor.capsule_destructor() is None\n"
                                       "assert dynop.outstanding_exports() == 4").replace(
        "assert dynop.Tensor.deleted == 1 and dynop.outstanding_exports() == 0",
        "assert dynop.Tensor.deleted == 0 and dynop.outstanding_exports() == 5")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), DYNOP_CAPSULE_HELPER="/nonexistent/helper.so")
    r = subprocess.run([sys.executable, "-c", script, IMGPROC, built], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)


def test_dlpack_input(host):
    # an object that is only a DLPack producer is read in place
    saxpy = host.operator("imgproc.Saxpy", a=1.0)
    src = saxpy(np.arange(6, dtype=np.float32), np.zeros(6, np.float32))

    class Producer:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    np.asarray(src)[5] = 50.0
    out = np.asarray(saxpy(Producer(src), np.ones(6, np.float32)))
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 5, 51])
    gc.collect()
    assert dynop.outstanding_exports() == 0


def test_run_batch(host):
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    samples = [np.full((5 + s, 7, 3), 10 * s, np.uint8) for s in range(3)]
    (outs,) = blur.run_batch([samples])
    assert [o.shape for o in outs] == [(5, 7, 3), (6, 7, 3), (7, 7, 3)]
    for s, o in enumerate(outs):
        assert (np.asarray(o) == 10 * s).all()
    saxpy = host.operator("imgproc.Saxpy", a=2.0)
    xs = [np.full(3, 1, np.float32), np.full(4, 2, np.float32)]
    ys = [np.zeros(3, np.float32), np.ones(4, np.float32)]
    (outs,) = saxpy.run_batch([xs, ys])
    assert [np.asarray(o).tolist() for o in outs] == [[2.0] * 3, [5.0] * 4]
    with pytest.raises(ValueError, match="same number of samples"):
        saxpy.run_batch([xs, ys[:1]])
    with pytest.raises(ValueError, match="input 1 sample 1: negative stride"):
        saxpy.run_batch([xs, [ys[0], ys[1][::-1]]])


def test_threads(host):
    # one operator per thread; the calls release the GIL
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 256, (64, 48, 3), dtype=np.uint8) for _ in range(4)]
    want = [np.asarray(host.operator("imgproc.GaussianBlur", sigma=1.5)(im)).copy() for im in imgs]
    bad = []

    def worker(i):
        blur = host.operator("imgproc.GaussianBlur", sigma=1.5)
        for _ in range(25):
            got = np.asarray(blur(imgs[i]))
            if not np.array_equal(got, want[i]):
                bad.append(i)
        blur.close()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert bad == []


def test_host_collected_without_close(built):
    h = dynop.Host([IMGPROC], no_default_paths=True, no_cache=True, library=built, log_level=4)
    op = h.operator("imgproc.GaussianBlur", sigma=1.0)
    out = op(np.full((4, 4, 1), 3, np.uint8))
    fin = h._finalizer
    del h
    gc.collect()
    assert fin.alive  # the operator holds its host
    del op
    gc.collect()
    assert not fin.alive  # closed by the finalizer
    assert (np.asarray(out) == 3).all()


def test_argument_values(host):
    # NumPy scalars are their values; NaN and what JSON cannot hold are
    # refused naming the argument
    saxpy = host.operator("imgproc.Saxpy", a=np.float32(2))
    assert np.asarray(saxpy(np.ones(3, np.float32), np.ones(3, np.float32))).tolist() == [3, 3, 3]
    with pytest.raises(dynop.InvalidArgumentError, match="argument 'a' = nan"):
        host.operator("imgproc.Saxpy", a=float("nan"))
    with pytest.raises(dynop.InvalidArgumentError, match="argument 'a' = .*object is not a JSON value"):
        host.operator("imgproc.Saxpy", a=object())


def test_bytes_options(built, tmp_path):
    cache = tmp_path / "bytes-cache"
    with dynop.Host([IMGPROC], no_default_paths=True, cache_dir=os.fsencode(str(cache)), library=built,
                    log_level=4) as h:
        h.plugins()
    assert cache.is_dir()


def test_outputs_readable_at_exit(built, tmp_path):
    # an output viewed by NumPy is still there for an atexit hook: the
    # deleter does not run at interpreter exit
    import subprocess
    import sys
    script = r"""
import atexit, sys, numpy as np
a = []
atexit.register(lambda: print(float(a[0].sum())))
import dynop
h = dynop.Host([sys.argv[1]], no_default_paths=True, no_cache=True, log_level=4)
a.append(np.asarray(h.operator("imgproc.GaussianBlur", sigma=1.0)(np.full((256, 256, 3), 2, np.float32))))
"""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), DYNOP_LIBRARY=built)
    r = subprocess.run([sys.executable, "-c", script, IMGPROC], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and abs(float(r.stdout) - 2 * 256 * 256 * 3) < 1, (r.returncode, r.stdout, r.stderr)


def test_plugins_while_closing(built):
    # plugins() on one thread, close() on another: the strings are read
    # before close frees them, or the call says the host is closed
    for _ in range(30):
        h = dynop.Host([IMGPROC], no_default_paths=True, no_cache=True, library=built, log_level=4)
        seen, errs = [], []

        def lister():
            try:
                for _ in range(200):
                    seen.extend(p.id for p in h.plugins())
            except dynop.ClosedError:
                pass
            except Exception as e:  # noqa: BLE001
                errs.append(e)

        t = threading.Thread(target=lister)
        t.start()
        h.close()
        t.join()
        assert not errs and all(i.startswith("dynop.plugin.") for i in seen), (errs, set(seen))


def test_out(host):
    # out= writes into the caller's array, in place: its address is
    # unchanged, and the result equals the operator's own output
    blur = host.operator("imgproc.GaussianBlur", sigma=2.0)
    img = np.random.default_rng(1).integers(0, 256, (32, 48, 3), dtype=np.uint8)
    dst = np.zeros_like(img)
    addr = dst.__array_interface__["data"][0]
    assert blur(img, out=dst) is dst and dst.__array_interface__["data"][0] == addr
    np.testing.assert_array_equal(dst, np.asarray(blur(img)))
    # a Tensor the library made can be written into too
    t = blur(img)
    blur(np.zeros_like(img), out=np.asarray(t))
    assert not np.asarray(t).any()
    ro = np.zeros_like(img)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="output 0: the array is read-only"):
        blur(img, out=ro)
    with pytest.raises(ValueError, match="not C-contiguous"):
        blur(img, out=np.zeros((32, 96, 3), np.uint8)[:, ::2])
    with pytest.raises(dynop.InvalidArgumentError, match=r"output 0 sample 0 is uint8 \[32 47 3\]; operator \"imgproc.GaussianBlur\" gives uint8 \[32 48 3\]"):
        blur(img, out=np.zeros((32, 47, 3), np.uint8))
    with pytest.raises(dynop.InvalidArgumentError, match="is float32 .* gives uint8"):
        blur(img, out=np.zeros((32, 48, 3), np.float32))
    with pytest.raises(dynop.InvalidArgumentError, match="overlaps input 0 sample 0: operators do not run in place"):
        blur(img, out=img)
    with pytest.raises(TypeError, match="has 1 output"):
        blur.run([img], out=[dst, dst])


def test_input_collected_while_output_lives(host):
    # outputs never view inputs (operators write new memory): an input
    # collected right after the call leaves the output intact
    import weakref as _weakref
    blur = host.operator("imgproc.GaussianBlur", sigma=1.0)
    x = np.full((16, 16, 3), 77, np.uint8)
    gone = _weakref.ref(x)
    out = blur(x)
    in_ptr = x.__array_interface__["data"][0]
    del x
    gc.collect()
    assert gone() is None
    junk = [np.full((16, 16, 3), 1, np.uint8) for _ in range(64)]  # reuse the freed memory
    assert out.data_ptr != in_ptr and (np.asarray(out) == 77).all()
    del junk
