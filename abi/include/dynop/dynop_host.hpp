// dynop_host.hpp: header-only C++17 wrappers of dynop_host.h, libdynop's C
// API: RAII owners of hosts, operators, interface references and output
// tensors, and exceptions carrying the library's message.
//
//   dynop::Host host(dynop::HostOptions{{"plugins/"}});
//   auto ref = host.acquire(DYNOP_VECMATH_PLUGIN, uid, DYNOP_V(1, 0, 0));
//   float d = ref.table<dynop_vecmath>()->dot(x, y, n);
//   dynop::Operator blur = host.op("imgproc.GaussianBlur", R"({"sigma": 2})");
//   std::vector<dynop::Tensor> out = blur.run({&input});
//
// Every failing call throws dynop::Error, whose code() is the dynop_result
// and what() the message of dynop_last_error(). Destructors never throw:
// they ignore the result, so an Operator or InterfaceRef that outlives its
// Host is harmless (its handle is closed; the library checks handles).
// Memory rules are dynop_host.h's: inputs are borrowed for the call, and
// a Tensor owns an output, calling its deleter once when it is destroyed.
#ifndef DYNOP_DYNOP_HOST_HPP
#define DYNOP_DYNOP_HOST_HPP

#include <dynop/dynop_host.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dynop {

// Error is a failed call: its dynop_result and message.
class Error : public std::runtime_error {
  public:
    Error(dynop_result code, const std::string &message) : std::runtime_error(message), code_(code) {}
    dynop_result code() const noexcept { return code_; }

  private:
    dynop_result code_;
};

// check throws the calling thread's error if r is not DYNOP_OK.
inline void check(dynop_result r) {
    if (r != DYNOP_OK) {
        throw Error(r, dynop_last_error());
    }
}

// Tensor owns a DLManagedTensorVersioned, as std::unique_ptr owns an
// object: it calls the deleter once, when it is destroyed or reset.
class Tensor {
  public:
    Tensor() noexcept = default;
    explicit Tensor(DLManagedTensorVersioned *t) noexcept : t_(t) {}
    Tensor(const Tensor &) = delete;
    Tensor &operator=(const Tensor &) = delete;
    Tensor(Tensor &&o) noexcept : t_(o.release()) {}
    Tensor &operator=(Tensor &&o) noexcept {
        if (this != &o) {
            reset(o.release());
        }
        return *this;
    }
    ~Tensor() { reset(); }

    // reset calls the owned tensor's deleter (if it has one) and owns t.
    void reset(DLManagedTensorVersioned *t = nullptr) noexcept {
        DLManagedTensorVersioned *old = t_;
        t_ = t;
        if (old != nullptr && old->deleter != nullptr) {
            old->deleter(old);
        }
    }
    // release gives up ownership: the caller calls the deleter.
    DLManagedTensorVersioned *release() noexcept { return std::exchange(t_, nullptr); }
    DLManagedTensorVersioned *get() const noexcept { return t_; }
    explicit operator bool() const noexcept { return t_ != nullptr; }
    const DLTensor &dl() const { return t_->dl_tensor; }
    template <class T> T *data() const {
        return reinterpret_cast<T *>(static_cast<char *>(t_->dl_tensor.data) + t_->dl_tensor.byte_offset);
    }
    std::vector<int64_t> shape() const { return {t_->dl_tensor.shape, t_->dl_tensor.shape + t_->dl_tensor.ndim}; }

  private:
    DLManagedTensorVersioned *t_ = nullptr;
};

// InterfaceRef holds an acquired interface; its table is valid while it
// lives. Destroying it releases the reference.
class InterfaceRef {
  public:
    InterfaceRef(const InterfaceRef &) = delete;
    InterfaceRef &operator=(const InterfaceRef &) = delete;
    InterfaceRef(InterfaceRef &&o) noexcept
        : ref_(std::exchange(o.ref_, nullptr)), table_(std::exchange(o.table_, nullptr)) {}
    InterfaceRef &operator=(InterfaceRef &&o) noexcept {
        if (this != &o) {
            reset();
            ref_ = std::exchange(o.ref_, nullptr);
            table_ = std::exchange(o.table_, nullptr);
        }
        return *this;
    }
    ~InterfaceRef() { reset(); }

    // table returns the interface's C function table as a T.
    template <class T> const T *table() const noexcept { return static_cast<const T *>(table_); }
    // release releases the reference now, throwing on failure.
    void release() {
        dynop_iface_ref_t *r = std::exchange(ref_, nullptr);
        table_ = nullptr;
        check(dynop_host_release(r));
    }

  private:
    friend class Host;
    InterfaceRef(dynop_iface_ref_t *ref, const void *table) noexcept : ref_(ref), table_(table) {}
    void reset() noexcept {
        if (ref_ != nullptr) {
            dynop_host_release(ref_);
        }
        ref_ = nullptr;
        table_ = nullptr;
    }
    dynop_iface_ref_t *ref_ = nullptr;
    const void *table_ = nullptr;
};

// Operator is an operator instance; destroying it destroys the instance.
class Operator {
  public:
    Operator(const Operator &) = delete;
    Operator &operator=(const Operator &) = delete;
    Operator(Operator &&o) noexcept : op_(std::exchange(o.op_, nullptr)), in_(o.in_), out_(o.out_) {}
    Operator &operator=(Operator &&o) noexcept {
        if (this != &o) {
            reset();
            op_ = std::exchange(o.op_, nullptr);
            in_ = o.in_;
            out_ = o.out_;
        }
        return *this;
    }
    ~Operator() { reset(); }

    uint32_t num_inputs() const noexcept { return in_; }
    uint32_t num_outputs() const noexcept { return out_; }

    // run runs the operator on batch_size samples per input, inputs laid
    // out input by input (inputs[i * batch_size + s]), borrowed; it
    // returns the outputs laid out the same way, each owned by a Tensor.
    std::vector<Tensor> run(const std::vector<DLManagedTensorVersioned *> &inputs, uint32_t batch_size = 1) {
        if (batch_size == 0 || inputs.size() % batch_size != 0) {
            throw Error(DYNOP_ERROR_INVALID_ARGUMENT, "dynop::Operator::run: " + std::to_string(inputs.size()) +
                                                          " inputs are not a whole number of batches of " +
                                                          std::to_string(batch_size));
        }
        std::vector<DLManagedTensorVersioned *> outs(static_cast<size_t>(out_) * batch_size, nullptr);
        check(dynop_operator_run(op_, inputs.data(), static_cast<uint32_t>(inputs.size() / batch_size),
                                 batch_size, outs.data(), out_));
        std::vector<Tensor> result;
        result.reserve(outs.size());
        for (DLManagedTensorVersioned *t : outs) {
            result.emplace_back(t);
        }
        return result;
    }
    // run_into runs the operator into the caller's outputs (borrowed,
    // writable, compact, of the shapes the operator gives), laid out as
    // run lays out its results.
    void run_into(const std::vector<DLManagedTensorVersioned *> &inputs,
                  const std::vector<DLManagedTensorVersioned *> &outputs, uint32_t batch_size = 1) {
        if (batch_size == 0 || inputs.size() % batch_size != 0 || outputs.size() % batch_size != 0) {
            throw Error(DYNOP_ERROR_INVALID_ARGUMENT, "dynop::Operator::run_into: " + std::to_string(inputs.size()) +
                                                          " inputs and " + std::to_string(outputs.size()) +
                                                          " outputs are not whole numbers of batches of " +
                                                          std::to_string(batch_size));
        }
        check(dynop_operator_run_into(op_, inputs.data(), static_cast<uint32_t>(inputs.size() / batch_size),
                                      batch_size, outputs.data(), static_cast<uint32_t>(outputs.size() / batch_size)));
    }
    // destroy destroys the instance now, throwing on failure.
    void destroy() { check(dynop_operator_destroy(std::exchange(op_, nullptr))); }

  private:
    friend class Host;
    explicit Operator(dynop_operator_t *op) : op_(op) {
        try {
            check(dynop_operator_arity(op_, &in_, &out_));
        } catch (...) {
            reset();
            throw;
        }
    }
    void reset() noexcept {
        if (op_ != nullptr) {
            dynop_operator_destroy(op_);
        }
        op_ = nullptr;
    }
    dynop_operator_t *op_ = nullptr;
    uint32_t in_ = 0, out_ = 0;
};

// Pipeline is a pipeline file open for iteration (dynop_pipeline_open);
// destroying it closes it. Its tensors outlive it.
class Pipeline {
  public:
    Pipeline(const Pipeline &) = delete;
    Pipeline &operator=(const Pipeline &) = delete;
    Pipeline(Pipeline &&o) noexcept
        : p_(std::exchange(o.p_, nullptr)), info_(std::move(o.info_)), outputs_(o.outputs_), batch_size_(o.batch_size_) {}
    Pipeline &operator=(Pipeline &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
            info_ = std::move(o.info_);
            outputs_ = o.outputs_;
            batch_size_ = o.batch_size_;
        }
        return *this;
    }
    ~Pipeline() { reset(); }

    // info is dynop_pipeline_open's info_json.
    const std::string &info() const noexcept { return info_; }
    uint32_t num_outputs() const noexcept { return outputs_; }
    uint32_t batch_size() const noexcept { return batch_size_; }

    // next runs the next batch and returns its tensors output by output
    // (sample s of output o at o * n + s, n = size() / num_outputs());
    // empty after the last batch. files_json, if not null, is set to the
    // samples' input files as a JSON array ("" after the last batch).
    std::vector<Tensor> next(std::string *files_json = nullptr) {
        std::vector<DLManagedTensorVersioned *> outs(static_cast<size_t>(outputs_) * batch_size_, nullptr);
        uint32_t n = 0;
        char *files = nullptr;
        check(dynop_pipeline_next(p_, outs.data(), outs.size(), &n, files_json != nullptr ? &files : nullptr));
        if (files_json != nullptr) {
            *files_json = files != nullptr ? files : "";
            dynop_string_free(files);
        }
        std::vector<Tensor> result;
        result.reserve(static_cast<size_t>(outputs_) * n);
        for (size_t i = 0; i < static_cast<size_t>(outputs_) * n; i++) {
            result.emplace_back(outs[i]);
        }
        return result;
    }
    // close closes the pipeline now, throwing on failure.
    void close() { check(dynop_pipeline_close(std::exchange(p_, nullptr))); }

  private:
    friend class Host;
    Pipeline(dynop_pipeline_t *p, std::string info) : p_(p), info_(std::move(info)) {
        // info_json's "batch_size" is a number and "outputs" an array of
        // names that hold no quote or comma ([A-Za-z_][A-Za-z0-9_-]*).
        size_t at = info_.find("\"batch_size\":");
        if (at != std::string::npos) {
            batch_size_ = static_cast<uint32_t>(std::stoul(info_.substr(at + 13)));
        }
        at = info_.find("\"outputs\":[");
        if (at != std::string::npos) {
            for (size_t i = at + 11; i < info_.size() && info_[i] != ']'; i++) {
                if (info_[i] == '"') {
                    outputs_++;
                    i = info_.find('"', i + 1);
                }
            }
        }
        if (batch_size_ == 0 || outputs_ == 0) {
            reset();
            throw Error(DYNOP_ERROR_INVALID_ARGUMENT, "dynop::Pipeline: cannot read batch_size and outputs from " + info_);
        }
    }
    void reset() noexcept {
        if (p_ != nullptr) {
            dynop_pipeline_close(p_);
        }
        p_ = nullptr;
    }
    dynop_pipeline_t *p_ = nullptr;
    std::string info_;
    uint32_t outputs_ = 0, batch_size_ = 0;
};

// PluginInfo is one plugin as the host sees it (dynop_plugin_status).
struct PluginInfo {
    std::string id;
    dynop_version version;
    int32_t state; // DYNOP_PLUGIN_*
    std::string path;
    std::string error;
    uint32_t refs, starts, stops;
};

// HostOptions are dynop_host_options with C++ values; empty strings are
// the defaults.
struct HostOptions {
    std::vector<std::string> paths;
    bool no_default_paths = false;
    bool no_cache = false;
    std::string cache_dir, trust_dir, signature_policy, cpu_features, sandbox, scanner;
    uint32_t scan_timeout_ms = 0;
    int32_t log_level = 0;
};

// Host is an open host; destroying it closes it.
class Host {
  public:
    explicit Host(const HostOptions &o = HostOptions()) {
        std::vector<const char *> paths;
        for (const std::string &p : o.paths) {
            paths.push_back(p.c_str());
        }
        auto str = [](const std::string &s) { return s.empty() ? nullptr : s.c_str(); };
        dynop_host_options c{};
        c.struct_size = sizeof c;
        c.paths = paths.data();
        c.path_count = paths.size();
        c.no_default_paths = o.no_default_paths;
        c.no_cache = o.no_cache;
        c.cache_dir = str(o.cache_dir);
        c.trust_dir = str(o.trust_dir);
        c.signature_policy = str(o.signature_policy);
        c.cpu_features = str(o.cpu_features);
        c.sandbox = str(o.sandbox);
        c.scanner = str(o.scanner);
        c.scan_timeout_ms = o.scan_timeout_ms;
        c.log_level = o.log_level;
        check(dynop_host_open(&c, &h_));
    }
    Host(const Host &) = delete;
    Host &operator=(const Host &) = delete;
    Host(Host &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Host &operator=(Host &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    ~Host() { reset(); }

    dynop_host_t *get() const noexcept { return h_; }

    // close closes the host now, throwing on failure.
    void close() { check(dynop_host_close(std::exchange(h_, nullptr))); }

    std::vector<PluginInfo> plugins() const {
        size_t n = 0;
        check(dynop_host_plugins(h_, nullptr, 0, &n));
        std::vector<dynop_plugin_status> st(n);
        for (dynop_plugin_status &s : st) {
            s.struct_size = sizeof s;
        }
        check(dynop_host_plugins(h_, st.data(), st.size(), &n));
        std::vector<PluginInfo> out;
        for (size_t i = 0; i < n && i < st.size(); i++) {
            const dynop_plugin_status &s = st[i];
            out.push_back(PluginInfo{s.id, s.version, s.state, s.path, s.error, s.refs, s.starts, s.stops});
        }
        return out;
    }

    InterfaceRef acquire(const std::string &plugin_id, const dynop_uid &uid, dynop_version min_version) {
        const void *table = nullptr;
        dynop_iface_ref_t *ref = nullptr;
        check(dynop_host_acquire(h_, plugin_id.c_str(), &uid, min_version, &table, &ref));
        return InterfaceRef(ref, table);
    }

    // op makes an instance of operator name with its arguments as JSON.
    Operator op(const std::string &name, const std::string &args_json = std::string()) {
        dynop_operator_t *o = nullptr;
        check(dynop_operator_create(h_, name.c_str(), args_json.c_str(), &o));
        return Operator(o);
    }

    // run_pipeline runs a pipeline file and returns its summary as JSON.
    std::string run_pipeline(const std::string &path, const std::string &options_json = std::string()) {
        char *summary = nullptr;
        check(dynop_pipeline_run(h_, path.c_str(), options_json.c_str(), &summary));
        std::string out = summary != nullptr ? summary : "";
        dynop_string_free(summary);
        return out;
    }

    // pipeline opens a pipeline file for iteration over its outputs.
    Pipeline pipeline(const std::string &path, const std::string &options_json = std::string()) {
        dynop_pipeline_t *p = nullptr;
        char *info = nullptr;
        check(dynop_pipeline_open(h_, path.c_str(), options_json.c_str(), &p, &info));
        std::string text = info != nullptr ? info : "";
        dynop_string_free(info);
        return Pipeline(p, std::move(text));
    }

  private:
    void reset() noexcept {
        if (h_ != nullptr) {
            dynop_host_close(h_);
        }
        h_ = nullptr;
    }
    dynop_host_t *h_ = nullptr;
};

} // namespace dynop

#endif // DYNOP_DYNOP_HOST_HPP
