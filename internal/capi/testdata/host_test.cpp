// The C++ test of libdynop through dynop_host.hpp (run by TestCXX): RAII
// owners, exceptions with the library's code and message, a Tensor that
// calls its deleter exactly once, objects that outlive their host.
//
// usage: host_test_cpp PLUGIN_DIR PIPELINE
#include <dynop/dynop_host.hpp>
#include <vecmath.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

// EXPECT_THROW checks that stmt throws dynop::Error with code and a
// message containing text.
#define EXPECT_THROW(stmt, want_code, text)                                                        \
    do {                                                                                           \
        try {                                                                                      \
            stmt;                                                                                  \
            std::fprintf(stderr, "%s:%d: %s did not throw\n", __FILE__, __LINE__, #stmt);          \
            failures++;                                                                            \
        } catch (const dynop::Error &e) {                                                          \
            if (e.code() != (want_code) || std::strstr(e.what(), (text)) == nullptr) {             \
                std::fprintf(stderr, "%s:%d: %s threw %d \"%s\"; want %d with \"%s\"\n", __FILE__, \
                             __LINE__, #stmt, (int)e.code(), e.what(), (int)(want_code), (text));  \
                failures++;                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static int deleted;
static void count_deleter(DLManagedTensorVersioned *) { deleted++; }

static DLManagedTensorVersioned make_tensor(float *data, int64_t *shape) {
    DLManagedTensorVersioned t{};
    t.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t.dl_tensor.data = data;
    t.dl_tensor.device = {kDLCPU, 0};
    t.dl_tensor.ndim = 1;
    t.dl_tensor.dtype = {kDLFloat, 32, 1};
    t.dl_tensor.shape = shape;
    return t;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: host_test_cpp PLUGIN_DIR PIPELINE\n");
        return 2;
    }
    // Tensor: unique ownership, the deleter called exactly once.
    {
        DLManagedTensorVersioned a{}, b{};
        a.deleter = count_deleter;
        b.deleter = count_deleter;
        dynop::Tensor ta(&a);
        dynop::Tensor moved = std::move(ta);
        CHECK(!ta && moved.get() == &a);
        moved = dynop::Tensor(&b); // deletes a
        CHECK(deleted == 1);
        DLManagedTensorVersioned *raw = moved.release();
        CHECK(raw == &b && deleted == 1);
        dynop::Tensor again(raw);
    } // deletes b
    CHECK(deleted == 2);

    dynop::HostOptions o;
    o.paths = {argv[1]};
    o.no_default_paths = true;
    o.no_cache = true;
    o.log_level = 8;
    dynop::Tensor survivor, pipe_kept;
    {
        dynop::Host host(o);
        bool found = false;
        for (const dynop::PluginInfo &p : host.plugins()) {
            if (p.id == "dynop.plugin.vecmath") {
                found = p.state == DYNOP_PLUGIN_AVAILABLE && p.path.find("libdynop_vecmath.so") != std::string::npos;
            }
        }
        CHECK(found);

        dynop_uid uid = DYNOP_VECMATH_UID;
        {
            dynop::InterfaceRef ref = host.acquire(DYNOP_VECMATH_PLUGIN, uid, DYNOP_V(1, 0, 0));
            float x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
            CHECK(ref.table<dynop_vecmath>()->dot(x, y, 3) == 32.0f);
            for (const dynop::PluginInfo &p : host.plugins()) {
                if (p.id == "dynop.plugin.vecmath") CHECK(p.state == DYNOP_PLUGIN_STARTED && p.refs == 1);
            }
        } // released
        for (const dynop::PluginInfo &p : host.plugins()) {
            if (p.id == "dynop.plugin.vecmath") CHECK(p.refs == 0 && p.stops == 1);
        }
        EXPECT_THROW(host.acquire(DYNOP_VECMATH_PLUGIN, uid, DYNOP_V(2, 0, 0)), DYNOP_ERROR_VERSION, "dynop_host_acquire");

        dynop::Operator saxpy = host.op("imgproc.Saxpy", R"({"a": -1})");
        CHECK(saxpy.num_inputs() == 2 && saxpy.num_outputs() == 1);
        float x[3] = {1, 2, 3}, y[3] = {10, 10, 10};
        int64_t shape[1] = {3};
        DLManagedTensorVersioned tx = make_tensor(x, shape), ty = make_tensor(y, shape);
        std::vector<dynop::Tensor> out = saxpy.run({&tx, &ty});
        CHECK(out.size() == 1 && out[0].shape() == std::vector<int64_t>{3});
        CHECK(out[0].data<float>()[0] == 9 && out[0].data<float>()[2] == 7);
        survivor = std::move(out[0]);

        // Into the caller's output; a read-only one is refused.
        float dst[3] = {0, 0, 0};
        DLManagedTensorVersioned tdst = make_tensor(dst, shape);
        saxpy.run_into({&tx, &ty}, {&tdst});
        CHECK(dst[0] == 9 && dst[2] == 7);
        tdst.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
        EXPECT_THROW(saxpy.run_into({&tx, &ty}, {&tdst}), DYNOP_ERROR_INVALID_ARGUMENT, "read-only");
        EXPECT_THROW(saxpy.run_into({&tx, &ty}, {&tdst}, 0), DYNOP_ERROR_INVALID_ARGUMENT, "whole numbers of batches");

        EXPECT_THROW(host.op("imgproc.Saxpy", R"({"a": "x"})"), DYNOP_ERROR_INVALID_ARGUMENT, "\"a\"");
        EXPECT_THROW(host.op("imgproc.Nope"), DYNOP_ERROR_NOT_FOUND, "imgproc.Nope");
        EXPECT_THROW(saxpy.run({&tx}), DYNOP_ERROR_INVALID_ARGUMENT, "takes 2 input(s), not 1");
        EXPECT_THROW(saxpy.run({&tx, &ty, &tx}, 2), DYNOP_ERROR_INVALID_ARGUMENT, "not a whole number of batches of 2");
        int64_t neg[1] = {-1};
        tx.dl_tensor.strides = neg;
        EXPECT_THROW(saxpy.run({&tx, &ty}), DYNOP_ERROR_INVALID_ARGUMENT, "negative");

        // A pipeline iterated: 6 images in batches of 4, then nothing; a
        // tensor kept past the pipeline and the host.
        {
            dynop::Pipeline pipe = host.pipeline(argv[2], "{\"workers\": 1}");
            CHECK(pipe.num_outputs() == 1 && pipe.batch_size() == 4);
            std::string files;
            std::vector<dynop::Tensor> b1 = pipe.next(&files);
            CHECK(b1.size() == 4 && files.find("[[\"") == 0);
            std::vector<dynop::Tensor> b2 = pipe.next();
            CHECK(b2.size() == 2 && b2[1] && b2[1].shape().size() == 3);
            CHECK(pipe.next(&files).empty() && files.empty());
            pipe_kept = std::move(b2[1]);
            dynop::Pipeline moved = std::move(pipe);
            moved.close();
            EXPECT_THROW(moved.next(), DYNOP_ERROR_INVALID_ARGUMENT, "the pipeline handle is NULL");
            EXPECT_THROW(host.pipeline("/nonexistent/p.yaml"), DYNOP_ERROR_NOT_FOUND, "/nonexistent/p.yaml");
        }

        // An operator moved out of its host's scope: destroyed after the
        // host closes, harmlessly.
        static dynop::Operator outlives = host.op("imgproc.Saxpy");
        host.close();
        EXPECT_THROW(host.plugins(), DYNOP_ERROR_INVALID_ARGUMENT, "the host handle is NULL");
        EXPECT_THROW(outlives.run({&ty, &ty}), DYNOP_ERROR_CLOSED, "operator handle");
    }
    // The output outlives its operator and host.
    CHECK(survivor.data<float>()[1] == 8);
    CHECK(pipe_kept && pipe_kept.shape()[2] == 1 && pipe_kept.shape()[0] > 0);
    pipe_kept.reset();
    survivor.reset();

    EXPECT_THROW(dynop::Host(dynop::HostOptions{{}, false, false, "", "", "", "", "never", "", 0, 0}),
                 DYNOP_ERROR_INVALID_ARGUMENT, "options.sandbox");

    if (failures > 0) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("ok\n");
    return 0;
}
