// A compiled model library loaded through the runtime's C API, with one session, taking and
// returning ir::Tensors: what `run`, `compare`, `bench` and `test-suite` share. Runtime failures
// become UserErrors (ONNXC_ERR_INTERNAL becomes an InternalError) carrying the runtime's message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/tensor_io.h"
#include "ir/tensor.h"

struct onnxc_model;
struct onnxc_session;
struct onnxc_step_profile;

namespace onnxc::tools {

struct IOInfo {
  std::string name;
  ir::DType dtype = ir::DType::Undefined;
  std::vector<int64_t> dims;            // -1 for a dynamic dim
  std::vector<std::string> dim_names;   // "" for a fixed dim, else the symbol or expression
  int value = 0;                        // enum onnxc_value_kind: 0 a tensor, else a sequence or optional
  std::string type_str() const;         // "f32[batch,seq,64]"
  ir::Type value_type() const;          // how to read its test data: a tensor, seq(...) or opt(...)
};

class ModelRunner {
 public:
  // Opens a library built by `onnxc compile` (onnxc_model_open) and creates a session with
  // `num_threads` workers (0 = the runtime's default).
  ModelRunner(const std::string& library_path, int num_threads);
  ~ModelRunner();
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  const std::string& name() const { return name_; }
  const std::string& target() const { return target_; }
  const std::vector<IOInfo>& inputs() const { return inputs_; }
  const std::vector<IOInfo>& outputs() const { return outputs_; }
  // Index of the input named `name`, or -1.
  int input_index(const std::string& name) const;

  // Binds input `index`; the tensor is kept alive by the runner until run() returns.
  void set_input(size_t index, const ir::Tensor& t);
  // Binds input `index` to a tensor, sequence or optional (the runtime copies a sequence's tensors).
  void set_input_value(size_t index, const frontend::TestValue& v);
  void run();
  // A copy of output `index` of the last run.
  ir::Tensor output(size_t index) const;
  // A copy of output `index` of the last run as a tensor, sequence or optional.
  frontend::TestValue output_value(size_t index) const;
  // Calls `callback(user, step)` after every step of later runs (nullptr: off); see
  // onnxc_session_set_profiler.
  void set_profiler(void (*callback)(void* user, const struct onnxc_step_profile* step), void* user);
  // Bytes of the session arena (0 before the first run).
  uint64_t arena_bytes() const;
  // The model's KV cache pairs, (input index, output index) each (onnxc_model_cache_pair).
  std::vector<std::pair<size_t, size_t>> cache_pairs() const;
  // Keeps those caches in the session with `capacity` positions (onnxc_session_keep_cache): a run
  // whose past input is not set reads the previous present in place.
  void keep_cache(int64_t capacity);
  // Binds input `input` to the first positions of the cache kept for output `output` (filled by an
  // earlier run): `dims` is the past's shape, at most the cache's along its axis. The run then finds
  // that past in place and writes its new positions after it (a generation loop going back to `dims`).
  void bind_cache(size_t input, size_t output, const std::vector<int64_t>& dims);

 private:
  [[noreturn]] void fail(int status, const std::string& what) const;
  std::string path_, name_, target_;
  onnxc_model* model_ = nullptr;
  onnxc_session* session_ = nullptr;
  std::vector<IOInfo> inputs_, outputs_;
  std::vector<ir::Tensor> bound_;  // inputs borrowed by the runtime until the next run returns
  std::vector<std::vector<const char*>> string_ptrs_;  // string inputs' element pointers (into bound_)
};

// Fills a tensor of `dtype` and `dims` with reproducible pseudo-random values (floats ~ U(-1, 1),
// ints in [0, 8), bools 0/1) for benchmarks and smoke runs.
ir::Tensor random_tensor(ir::DType dtype, const std::vector<int64_t>& dims, uint64_t seed);

}  // namespace onnxc::tools
