import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

LIBRARY = os.environ.get("DYNOP_LIBRARY") or os.path.join(ROOT, "bin", "libdynop.so")
IMGPROC = os.path.join(ROOT, "plugins", "imgproc", "libdynop_imgproc.so")
HELPER = os.path.join(ROOT, "python", "dynop", "_dynop_capsule.so")

# The capsule helper must exist before dynop is imported (the test modules
# import it): build what is missing now.
_need = []
if not os.path.exists(LIBRARY) and not os.environ.get("DYNOP_LIBRARY"):
    _need.append("libdynop")
if not os.path.exists(IMGPROC):
    _need.append("plugins")
if not os.path.exists(HELPER):
    _need.append("python")
if _need:
    subprocess.run(["make"] + _need, cwd=ROOT, check=True)


@pytest.fixture(scope="session")
def built():
    """libdynop.so, built with the imgproc plugin and the capsule helper by
    make when missing (`make pytest` builds them first)."""
    assert os.path.exists(LIBRARY) and os.path.exists(IMGPROC) and os.path.exists(HELPER)
    return LIBRARY


@pytest.fixture
def host(built, tmp_path):
    import dynop

    h = dynop.Host([IMGPROC], no_default_paths=True, cache_dir=str(tmp_path / "cache"), library=built,
                   log_level=4)
    yield h
    h.close()
