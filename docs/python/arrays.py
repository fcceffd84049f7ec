# An operator called on NumPy arrays: inputs are read in place, outputs
# are viewed without a copy, and writing through a view writes the output.
import numpy as np

import dynop

with dynop.Host() as host:
    blur = host.operator("imgproc.GaussianBlur", sigma=2.0)
    img = np.zeros((480, 640, 3), np.uint8)
    img[200:280, 280:360] = 255
    out = blur(img)                               # a dynop.Tensor
    view = np.asarray(out)                        # no copy: the same memory
    assert view.__array_interface__["data"][0] == out.data_ptr
    print(out.shape, out.dtype, view[240, 320], view[0, 0])

    # Strided views are read in place; a negative stride is refused.
    saxpy = host.operator("imgproc.Saxpy", a=2.0)
    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = saxpy(grid[:, 1], np.ones(3, np.float32))  # column 1: a stride of 4 elements
    print(np.asarray(y))
    try:
        saxpy(grid[::-1, 1], np.ones(3, np.float32))
    except ValueError as e:
        print("refused:", e)
