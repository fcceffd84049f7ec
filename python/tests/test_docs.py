"""docs/python.md: every code block after an <!-- example: PATH --> line
is in PATH verbatim, every file under docs/python is quoted, and every
example runs and prints what the guide says it does."""

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

GUIDE = os.path.join(ROOT, "docs", "python.md")
EXAMPLES = os.path.join(ROOT, "docs", "python")


def test_guide_quotes():
    with open(GUIDE) as f:
        lines = f.read().split("\n")
    quoted = set()
    i = 0
    while i < len(lines):
        m = re.match(r"<!-- example: (\S+) -->$", lines[i])
        if lines[i] == "```python" and (i == 0 or not lines[i - 1].startswith("<!-- example:")):
            pytest.fail("docs/python.md:%d: a python block without an <!-- example: PATH --> line" % (i + 1))
        if not m:
            i += 1
            continue
        assert lines[i + 1].startswith("```"), "docs/python.md:%d: no code block after the example line" % (i + 1)
        end = lines.index("```", i + 2)
        block = "\n".join(lines[i + 2:end]) + "\n"
        path = m.group(1)
        assert path.startswith("docs/python/"), path
        with open(os.path.join(ROOT, path)) as f:
            src = f.read()
        assert ("\n" + block) in ("\n" + src), "docs/python.md:%d: the block is not in %s verbatim" % (i + 3, path)
        quoted.add(path)
        i = end + 1
    files = {"docs/python/" + n for n in os.listdir(EXAMPLES) if not n.startswith(".") and n != "__pycache__"}
    assert files == quoted, "quoted %s, files %s" % (sorted(quoted), sorted(files))


def run_example(built, tmp_path, name, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("DYNOP_PLUGIN_PATH",)}
    env.update(PYTHONPATH=os.path.join(ROOT, "python"), DYNOP_LIBRARY=built, XDG_CACHE_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)] + list(args), cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_arrays(built, tmp_path):
    out = run_example(built, tmp_path, "arrays.py")
    assert out[0] == "(480, 640, 3) uint8 [255 255 255] [0 0 0]"
    assert out[1] == "[ 3. 11. 19.]"  # 2 * [1 5 9] + 1
    assert out[2].startswith("refused: imgproc.Saxpy: input 0: negative stride")


def test_training_loop(built, tmp_path):
    out = run_example(built, tmp_path, "training_loop.py", os.path.join(EXAMPLES, "gray.yaml"))
    assert out[0] == "gray samples: 6 batch size: 4 outputs: ['gray']"
    names = sorted(n for n in os.listdir(os.path.join(ROOT, "examples", "pipelines", "images")) if n.endswith(".png"))
    assert [line.split()[0] for line in out[1:]] == names
    assert all(" (48, 64, 1) uint8 " in line for line in out[1:])


def test_tables(built, tmp_path):
    assert run_example(built, tmp_path, "tables.py") == ["version (1, 0, 0) dot 32.0", "refused: VersionError"]
