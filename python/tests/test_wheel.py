"""The wheel: what it holds, and the README's Python example run from it
after `pip install` into a fresh virtual environment."""

import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest

from conftest import IMGPROC, ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
try:
    import build_wheel
finally:
    sys.path.pop(0)


@pytest.fixture(scope="module")
def wheel(built, tmp_path_factory):
    return build_wheel.build(str(tmp_path_factory.mktemp("dist")))


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("DYNOP_LIBRARY", "PYTHONPATH", "DYNOP_PLUGIN_PATH")}
    env.update(extra)
    return env


def test_wheel_contents(wheel, tmp_path):
    # the wheel holds the library, its scanner, the capsule helper and the
    # example plugins: a plugin file without a manifest, never cached, is
    # scanned by the dynop-scanner inside the installed package
    assert os.path.basename(wheel).startswith("dynop-%s-py3-none-linux_" % build_wheel.VERSION)
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        for info in z.infolist():
            z.extract(info, site)
            if (info.external_attr >> 16) & stat.S_IXUSR:
                os.chmod(site / info.filename, 0o755)
        record = z.read("dynop-%s.dist-info/RECORD" % build_wheel.VERSION).decode()
    for n in ("dynop/libdynop.so", "dynop/dynop-scanner", "dynop/_dynop_capsule.so", "dynop/__init__.py",
              "dynop/plugins/libdynop_imgproc.so", "dynop/plugins/libdynop_vecmath.so"):
        assert n in names and n + ",sha256=" in record
    plugdir = tmp_path / "plugins"
    plugdir.mkdir()
    shutil.copy(IMGPROC, plugdir)  # no manifest beside it
    script = r"""
import sys, numpy as np, dynop
h = dynop.Host([sys.argv[1]], no_default_paths=True, no_cache=True, log_level=4)
assert h.library_path.startswith(sys.argv[2]), h.library_path
assert dynop.tensor.capsule_destructor().startswith(sys.argv[2])
st = {p.id: p for p in h.plugins()}["dynop.plugin.imgproc"]
assert st.state == "available" and st.path.startswith(sys.argv[1]), st
print(int(np.asarray(h.operator("imgproc.GaussianBlur", sigma=1.0)(np.full((4, 4, 3), 5, np.uint8))).max()))
"""
    r = subprocess.run([sys.executable, "-c", script, str(plugdir), str(site)], env=clean_env(PYTHONPATH=str(site)),
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "5", (r.stdout, r.stderr)


def readme_example():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"<!-- python example:[^>]*-->\n```python\n(.*?)\n```\n", text, re.S)
    assert m, "README.md has no <!-- python example --> block"
    return m.group(1)


def test_readme_example_from_installed_wheel(wheel, tmp_path):
    # pip install of the wheel into a fresh virtual environment that sees
    # Debian's numpy (--system-site-packages), nothing from an index; then
    # the README's example, run from another directory.
    try:
        import ensurepip  # noqa: F401  (Debian: python3-venv)
    except ImportError:
        pytest.skip("no ensurepip: install python3-venv")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "-q", wheel],
                       capture_output=True, text=True, timeout=300, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    example = readme_example()
    work = tmp_path / "elsewhere"
    work.mkdir()
    r = subprocess.run([py, "-c", example], cwd=str(work), capture_output=True, text=True, timeout=120,
                       env=clean_env(XDG_CACHE_HOME=str(tmp_path / "cache")))
    assert r.returncode == 0, r.stderr
    want = re.search(r"# (\(480, 640, 3\) uint8 .*)$", example, re.M).group(1)
    assert r.stdout.strip() == want
    # the package and its library came from the virtual environment
    r = subprocess.run([py, "-c", "import dynop; h = dynop.Host(); print(dynop.__file__); print(h.library_path)"],
                       cwd=str(work), capture_output=True, text=True, timeout=60,
                       env=clean_env(XDG_CACHE_HOME=str(tmp_path / "cache")))
    assert r.returncode == 0 and all(line.startswith(str(venv)) for line in r.stdout.split()), r.stdout + r.stderr
