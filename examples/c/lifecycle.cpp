// lifecycle.cpp: the README's host lifecycle in C++, with the RAII owners
// of dynop_host.hpp (docs/c-api.md): every handle is closed by its
// destructor, and failures throw dynop::Error.
//
//   bin/lifecycle_cpp plugins/vecmath/libdynop_vecmath.so plugins/imgproc/libdynop_imgproc.so
#include <dynop/dynop_host.hpp>
#include <vecmath.h>

#include <cstdio>

int main(int argc, char **argv) try {
    dynop::HostOptions options;
    options.paths.assign(argv + 1, argv + argc);
    dynop::Host host(options);

    dynop_uid uid = DYNOP_VECMATH_UID;
    dynop::InterfaceRef ref = host.acquire(DYNOP_VECMATH_PLUGIN, uid, DYNOP_V(1, 0, 0));
    float x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
    std::printf("dot = %g\n", ref.table<dynop_vecmath>()->dot(x, y, 3));

    dynop::Operator saxpy = host.op("imgproc.Saxpy", R"({"a": -1})");
    int64_t shape[1] = {3};
    DLManagedTensorVersioned tx{{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, nullptr, nullptr, 0,
                                {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0}};
    DLManagedTensorVersioned ty = tx;
    ty.dl_tensor.data = y;
    std::vector<dynop::Tensor> out = saxpy.run({&tx, &ty}); // each output freed by its owner
    std::printf("saxpy = %g %g %g\n", out[0].data<float>()[0], out[0].data<float>()[1], out[0].data<float>()[2]);
    return 0;
} catch (const dynop::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
