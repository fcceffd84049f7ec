"""The main job of dynop's issue 23 in OpenCV, for bench's
BenchmarkMainJobVsOpenCV: decode every *.jpg of a directory, resize it to
half (bilinear), blur it (Gaussian, sigma 2) and write it as JPEG,
quality 90, on one thread.

It reads a line "IN_DIR OUT_DIR" at a time on stdin, runs the job over
IN_DIR's photos into OUT_DIR, and answers with a line: the seconds it
took and the number of images. Python starts once; every run after the
first finds OpenCV loaded, as the benchmark's dynop host is.
"""
import os
import sys
import time

import cv2

cv2.setNumThreads(1)

for line in sys.stdin:
    src, dst = line.split()
    names = sorted(n for n in os.listdir(src) if n.endswith(".jpg"))
    start = time.perf_counter()
    for name in names:
        img = cv2.imread(os.path.join(src, name), cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        half = cv2.resize(img, (w // 2, h // 2), interpolation=cv2.INTER_LINEAR)
        blur = cv2.GaussianBlur(half, (0, 0), 2.0)
        if not cv2.imwrite(os.path.join(dst, name), blur, [cv2.IMWRITE_JPEG_QUALITY, 90]):
            sys.exit("cannot write " + os.path.join(dst, name))
    print(time.perf_counter() - start, len(names), flush=True)
