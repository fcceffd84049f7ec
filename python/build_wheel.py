"""Builds a platform wheel of the dynop package with the standard library
only: python/dynop with bin/libdynop.so, bin/dynop-scanner and
python/dynop/_dynop_capsule.so beside its modules (the package finds the
library in its own directory, and the library its scanner beside itself),
and the example plugins imgproc and vecmath in dynop/plugins/, which every
Host searches unless no_default_paths.

    /usr/bin/python3 python/build_wheel.py [out_dir]    (make wheel: dist/)

The wheel is tagged py3-none-linux_<machine>: the package is pure Python,
the libraries are native code for this platform (glibc; no manylinux
audit)."""

import base64
import hashlib
import os
import platform
import stat
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "dynop"
VERSION = "0.2.0"  # DYNOP_HOST_API_VERSION
# The example plugins the wheel carries: C with no library beyond libc.
PLUGINS = ("plugins/imgproc/libdynop_imgproc.so", "plugins/vecmath/libdynop_vecmath.so")


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def files():
    pkg = os.path.join(ROOT, "python", NAME)
    out = []
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name == "_capsule.c":
            out.append((os.path.join(pkg, name), "%s/%s" % (NAME, name)))
    for src in (os.path.join(pkg, "_dynop_capsule.so"), os.path.join(ROOT, "bin", "libdynop.so"),
                os.path.join(ROOT, "bin", "dynop-scanner")):
        if not os.path.exists(src):
            raise SystemExit("%s is missing: run make libdynop python first" % src)
        out.append((src, "%s/%s" % (NAME, os.path.basename(src))))
    for rel in PLUGINS:
        src = os.path.join(ROOT, rel)
        if not os.path.exists(src):
            raise SystemExit("%s is missing: run make plugins first" % src)
        out.append((src, "%s/plugins/%s" % (NAME, os.path.basename(src))))
    return out


def build(out_dir):
    tag = "py3-none-linux_%s" % platform.machine()
    dist = "%s-%s" % (NAME, VERSION)
    path = os.path.join(out_dir, "%s-%s.whl" % (dist, tag))
    os.makedirs(out_dir, exist_ok=True)
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data, mode=0o644):
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(_record_line(arcname, data))

        for src, arcname in files():
            with open(src, "rb") as f:
                data = f.read()
            add(arcname, data, 0o755 if os.access(src, os.X_OK) and not src.endswith(".py") else 0o644)
        meta = "%s.dist-info" % dist
        add(meta + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                                 "Summary: A host of dynop compute plugins, over libdynop through ctypes\n"
                                 "License: Apache-2.0\n"
                                 "Requires-Python: >=3.8\nRequires-Dist: numpy\n" % (NAME, VERSION)).encode())
        with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
            add(meta + "/LICENSE", f.read(), 0o644)
        add(meta + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: dynop build_wheel.py\nRoot-Is-Purelib: false\n"
                              "Tag: %s\n" % tag).encode())
        record.append(meta + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(meta + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return path


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "dist")))
