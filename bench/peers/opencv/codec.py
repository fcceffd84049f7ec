"""JPEG decode and encode in OpenCV, for bench's BenchmarkJPEGCodec.

It reads a line "PATH N" at a time on stdin: it decodes the JPEG file
PATH from memory N times (cv2.imdecode, to BGR) and encodes the result N
times (cv2.imencode, quality 90), on one thread, and answers with a line:
the seconds decoding took and the seconds encoding took. Python starts
once; the file is read before the clock starts, as dynop's benchmark
holds the bytes in memory too.
"""
import sys
import time

import cv2
import numpy as np

cv2.setNumThreads(1)

for line in sys.stdin:
    path, n = line.split()
    n = int(n)
    with open(path, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8)
    start = time.perf_counter()
    for _ in range(n):
        img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    decode = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(n):
        ok, _ = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])
        if not ok:
            sys.exit("imencode failed")
    encode = time.perf_counter() - start
    print(decode, encode, flush=True)
