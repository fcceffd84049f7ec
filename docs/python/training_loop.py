# A pipeline file as a training loop's iterator: each batch holds the
# output nodes' tensors, sample by sample, and the files they came from.
import os
import sys

import numpy as np

import dynop

spec = sys.argv[1]  # a pipeline file, such as docs/python/gray.yaml
with dynop.Host() as host, host.pipeline(spec, workers=2) as pipe:
    print(pipe.name, "samples:", pipe.samples, "batch size:", pipe.batch_size, "outputs:", pipe.outputs)
    for batch in pipe:                            # a dynop.Batch: output name -> tensors
        for t, files in zip(batch["gray"], batch.files):
            a = np.from_dlpack(t)                 # or torch.from_dlpack(t): no copy either
            print(os.path.basename(files[0]), a.shape, a.dtype, int(a.mean()))
