/* training_loop.c: a pipeline file as a training loop's iterator, in C,
 * over libdynop (docs/c-api.md): each dynop_pipeline_next runs one batch
 * and hands out the output nodes' tensors, views of the pipeline's memory
 * that the caller frees with their deleter.
 *
 *   bin/training_loop docs/python/gray.yaml plugins/imgproc/libdynop_imgproc.so
 */
#include <dynop/dynop_host.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, dynop_result r) {
    fprintf(stderr, "%s failed (%d): %s\n", what, (int)r, dynop_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: training_loop PIPELINE [PLUGIN...]\n");
        return 2;
    }
    dynop_host_options opts = {.struct_size = sizeof opts};
    opts.paths = (const char *const *)(argv + 2);
    opts.path_count = (size_t)(argc - 2);
    dynop_host_t *host;
    dynop_result r = dynop_host_open(&opts, &host);
    if (r != DYNOP_OK) return fail("dynop_host_open", r);

    dynop_pipeline_t *p;
    char *info; /* {"name":"gray","batch_size":4,"outputs":["gray"],"samples":6,...} */
    if ((r = dynop_pipeline_open(host, argv[1], "{\"workers\": 2}", &p, &info)) != DYNOP_OK)
        return fail("dynop_pipeline_open", r);
    printf("%s\n", info);
    dynop_string_free(info);

    DLManagedTensorVersioned *outs[4]; /* room for num_outputs * batch_size */
    uint32_t n;
    int batch = 0;
    while ((r = dynop_pipeline_next(p, outs, 4, &n, NULL)) == DYNOP_OK && n > 0) {
        batch++;
        for (uint32_t s = 0; s < n; s++) {
            const DLTensor *t = &outs[s]->dl_tensor; /* train on it */
            printf("batch %d sample %u: %lldx%lldx%lld\n", batch, s, (long long)t->shape[0],
                   (long long)t->shape[1], (long long)t->shape[2]);
            dynop_tensor_delete(outs[s]);
        }
    }
    if (r != DYNOP_OK) return fail("dynop_pipeline_next", r);
    dynop_pipeline_close(p);
    dynop_host_close(host);
    return 0;
}
