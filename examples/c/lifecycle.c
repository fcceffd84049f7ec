/* lifecycle.c: the README's host lifecycle, in C, over libdynop
 * (docs/c-api.md): open a host over plugin files, list the plugins,
 * acquire the VecMath interface of the C plugin vecmath and call it,
 * release it, run an operator on a DLPack tensor, and close the host.
 *
 *   make libdynop plugins
 *   cc -std=c11 -Ibin/include -Iplugins/vecmath -o bin/lifecycle examples/c/lifecycle.c \
 *      -Lbin -ldynop -Wl,-rpath,'$ORIGIN'
 *   bin/lifecycle plugins/vecmath/libdynop_vecmath.so plugins/imgproc/libdynop_imgproc.so
 */
#include <dynop/dynop_host.h>
#include <vecmath.h> /* the VecMath interface: DYNOP_VECMATH_UID, dynop_vecmath */

#include <stdio.h>
#include <stdlib.h>

/* fail prints what failed and the library's message for this thread. */
static int fail(const char *what, dynop_result r) {
    fprintf(stderr, "%s failed (%d): %s\n", what, (int)r, dynop_last_error());
    return 1;
}

static const char *state_name(int32_t s) {
    static const char *names[] = {"available", "starting", "started", "stopping",
                                  "broken", "unsupported", "untrusted", "duplicate"};
    return s >= 0 && s < 8 ? names[s] : "?";
}

int main(int argc, char **argv) {
    /* Open: finds the plugins, starts none. */
    dynop_host_options opts = {.struct_size = sizeof opts};
    opts.paths = (const char *const *)(argv + 1);
    opts.path_count = (size_t)(argc - 1);
    dynop_host_t *host;
    dynop_result r = dynop_host_open(&opts, &host);
    if (r != DYNOP_OK) return fail("dynop_host_open", r);

    /* List: every plugin, usable or not, and why not. */
    dynop_plugin_status list[32];
    size_t count = 0;
    for (int i = 0; i < 32; i++) list[i].struct_size = sizeof list[i];
    if ((r = dynop_host_plugins(host, list, 32, &count)) != DYNOP_OK) return fail("dynop_host_plugins", r);
    for (size_t i = 0; i < count && i < 32; i++) {
        printf("%-22s v%u.%u.%u  %-9s %s%s\n", list[i].id, list[i].version.major, list[i].version.minor,
               list[i].version.patch, state_name(list[i].state), list[i].path[0] ? list[i].path : "compiled in",
               list[i].error);
    }

    /* Acquire: starts the plugin; the table is valid until the release. */
    dynop_uid uid = DYNOP_VECMATH_UID;
    dynop_version min = DYNOP_VECMATH_VERSION;
    const void *table;
    dynop_iface_ref_t *ref;
    if ((r = dynop_host_acquire(host, DYNOP_VECMATH_PLUGIN, &uid, min, &table, &ref)) != DYNOP_OK)
        return fail("dynop_host_acquire", r);
    const dynop_vecmath *vm = table;
    float x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8};
    printf("dot = %g\n", vm->dot(x, y, 4));
    if ((r = dynop_host_release(ref)) != DYNOP_OK) return fail("dynop_host_release", r); /* stops vecmath */

    /* An operator on a DLPack tensor: the input is borrowed, the output
     * is ours and freed by its deleter. */
    dynop_operator_t *saxpy;
    if ((r = dynop_operator_create(host, "imgproc.Saxpy", "{\"a\": 2}", &saxpy)) != DYNOP_OK)
        return fail("dynop_operator_create", r);
    int64_t shape[1] = {4};
    DLManagedTensorVersioned tx = {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL, NULL, 0,
                                   {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0}};
    DLManagedTensorVersioned ty = tx;
    ty.dl_tensor.data = y;
    DLManagedTensorVersioned *inputs[2] = {&tx, &ty}, *out;
    if ((r = dynop_operator_run(saxpy, inputs, 2, 1, &out, 1)) != DYNOP_OK) return fail("dynop_operator_run", r);
    const float *o = out->dl_tensor.data;
    printf("saxpy = %g %g %g %g\n", o[0], o[1], o[2], o[3]);
    out->deleter(out);
    dynop_operator_destroy(saxpy); /* the last instance: imgproc stops */

    /* Close: stops every plugin. */
    if ((r = dynop_host_close(host)) != DYNOP_OK) return fail("dynop_host_close", r);
    printf("closed\n");
    return 0;
}
