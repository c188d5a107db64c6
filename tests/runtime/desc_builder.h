// Hand-written model descriptors for the runtime's tests: one builder (DescBuilder) that either copies
// a descriptor (to corrupt or vary one field) or builds one fluently (symbol, tensor, kernel, step...),
// the message of one that must fail to load, and a model with one session loaded from a descriptor.
#ifndef ONNXC_TESTS_RUNTIME_DESC_BUILDER_H
#define ONNXC_TESTS_RUNTIME_DESC_BUILDER_H

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onnxc/model_abi.h"
#include "onnxc/runtime.h"

struct DescBuilder {
  // An empty descriptor named `name` (this ABI version, target "host", producer "test") to fill with
  // the fluent calls below.
  explicit DescBuilder(const char *name) {
    d.abi_version = ONNXC_ABI_VERSION;
    d.name = name;
    d.target = "host";
    d.producer = "test";
    expr_start = {0};
  }
  // Moved, not copied: tensors and steps point into arrays the builder owns.
  DescBuilder(DescBuilder &&) = default;
  DescBuilder &operator=(DescBuilder &&) = default;
  DescBuilder(const DescBuilder &) = delete;
  DescBuilder &operator=(const DescBuilder &) = delete;

  explicit DescBuilder(const onnxc_model_desc &src) : d(src) {
    expr_start.assign(src.expr_start, src.expr_start + src.n_exprs + 1);
    expr_code.assign(src.expr_code, src.expr_code + src.expr_start[src.n_exprs]);
    tensors.assign(src.tensors, src.tensors + src.n_tensors);
    for (auto &t : tensors) t.dims = keep(std::vector<int32_t>(t.dims, t.dims + t.rank));
    inputs.assign(src.inputs, src.inputs + src.n_inputs);
    outputs.assign(src.outputs, src.outputs + src.n_outputs);
    kernels.assign(src.kernels, src.kernels + src.n_kernels);
    steps.assign(src.steps, src.steps + src.n_steps);
    for (auto &s : steps) {
      s.args = keep(std::vector<int32_t>(s.args, s.args + s.n_args));
      if (s.binds) s.binds = keep(std::vector<int32_t>(s.binds, s.binds + s.n_binds));
    }
  }

  // Appends an expression; returns its id.
  int32_t add_expr(const std::vector<int64_t> &code) {
    expr_code.insert(expr_code.end(), code.begin(), code.end());
    expr_start.push_back(static_cast<uint32_t>(expr_code.size()));
    return static_cast<int32_t>(expr_start.size() - 2);
  }
  void set_dims(int32_t tensor, const std::vector<int32_t> &dims) {
    tensors[tensor].rank = static_cast<int32_t>(dims.size());
    tensors[tensor].dims = keep(dims);
  }
  void set_args(int32_t step, const std::vector<int32_t> &args) {
    steps[step].n_args = static_cast<int32_t>(args.size());
    steps[step].args = keep(args);
  }
  void set_binds(int32_t step, const std::vector<int32_t> &binds) {
    steps[step].n_binds = static_cast<int32_t>(binds.size());
    steps[step].binds = binds.empty() ? nullptr : keep(binds);
  }

  // ---- fluent construction: each call returns the id it made ----

  // A new symbol; returns the expression that is just that symbol (a dim or a scalar arg).
  int32_t symbol(const char *name) {
    if (symbol_names.empty()) symbol_names.assign(d.symbols, d.symbols + d.n_symbols);
    symbol_names.push_back(name);
    d.symbols = symbol_names.data();
    d.n_symbols = static_cast<uint32_t>(symbol_names.size());
    return add_expr({ONNXC_EXPR_SYM, static_cast<int64_t>(symbol_names.size() - 1)});
  }
  int32_t constant(int64_t v) { return add_expr({ONNXC_EXPR_CONST, v}); }
  // A step argument that passes expression `expr` as an int64 scalar.
  static int32_t scalar(int32_t expr) { return -expr - 1; }

  // A tensor (or, with `value` not ONNXC_VALUE_TENSOR, a sequence or optional of `dtype`, rank 0)
  // with dims given as expression ids; inputs and outputs are listed as such.
  int32_t tensor(const char *name, int32_t dtype, int32_t kind, const std::vector<int32_t> &dims,
                 int32_t value = ONNXC_VALUE_TENSOR) {
    onnxc_tensor_desc t{};
    t.name = name;
    t.dtype = dtype;
    t.kind = kind;
    t.view_of = -1;
    t.value = value;
    tensors.push_back(t);
    int32_t id = static_cast<int32_t>(tensors.size() - 1);
    set_dims(id, dims);
    if (kind == ONNXC_TENSOR_INPUT) inputs.push_back(id);
    if (kind == ONNXC_TENSOR_OUTPUT) outputs.push_back(id);
    return id;
  }
  int32_t input(const char *name, int32_t dtype, const std::vector<int32_t> &dims) {
    return tensor(name, dtype, ONNXC_TENSOR_INPUT, dims);
  }
  int32_t output(const char *name, int32_t dtype, const std::vector<int32_t> &dims) {
    return tensor(name, dtype, ONNXC_TENSOR_OUTPUT, dims);
  }
  int32_t intermediate(const char *name, int32_t dtype, const std::vector<int32_t> &dims) {
    return tensor(name, dtype, ONNXC_TENSOR_INTERMEDIATE, dims);
  }
  // A view of tensor `of` (its bytes, other dims).
  int32_t view(const char *name, int32_t dtype, const std::vector<int32_t> &dims, int32_t of) {
    int32_t id = tensor(name, dtype, ONNXC_TENSOR_VIEW, dims);
    tensors[id].view_of = of;
    return id;
  }
  // `bytes` bytes of the weights blob from `offset` (the blob: set d.weights and d.weights_size).
  int32_t weight(const char *name, int32_t dtype, const std::vector<int32_t> &dims, uint64_t offset, uint64_t bytes) {
    int32_t id = tensor(name, dtype, ONNXC_TENSOR_WEIGHT, dims);
    tensors[id].weight_offset = offset;
    tensors[id].weight_bytes = bytes;
    return id;
  }
  // A kernel: a plain function standing for a Halide argv entry point.
  int32_t kernel(const char *name, int (*fn)(void **args)) {
    kernels.push_back(onnxc_kernel_desc{name, fn});
    return static_cast<int32_t>(kernels.size() - 1);
  }

  // Steps. `field` is the step's `kernel` field: a kernel id, a host op or a target step, by kind.
  int32_t step(int32_t kind, int32_t field, const std::vector<int32_t> &args = {}, const std::vector<int32_t> &binds = {}) {
    steps.emplace_back();
    int32_t k = static_cast<int32_t>(steps.size() - 1);
    set_step(k, kind, field, args, binds);
    return k;
  }
  // Replaces step k whole.
  void set_step(int32_t k, int32_t kind, int32_t field, const std::vector<int32_t> &args = {},
                const std::vector<int32_t> &binds = {}) {
    steps[k] = onnxc_step{field, 0, nullptr, kind, 0, nullptr};
    set_args(k, args);
    set_binds(k, binds);
  }
  // Kernel `kernel` over `args` (tensor ids, then scalar() args).
  int32_t call(int32_t kernel, const std::vector<int32_t> &args) { return step(ONNXC_STEP_KERNEL, kernel, args); }
  // A host step running `op` over `args` (tensor ids, then scalar() args), binding `binds`.
  int32_t host(int32_t op, const std::vector<int32_t> &args, const std::vector<int32_t> &binds = {}) {
    return step(ONNXC_STEP_HOST, op, args, binds);
  }
  // When bool tensor `cond` is false, go on at step `target`.
  int32_t branch(int32_t target, int32_t cond) { return step(ONNXC_STEP_BRANCH, target, {cond}); }
  int32_t jump(int32_t target) { return step(ONNXC_STEP_JUMP, target); }
  // A loop head over {iter, trip, cond}, leaving for step `exit`; its body ends with next(this step).
  int32_t loop(int32_t exit, int32_t iter, int32_t trip, int32_t cond) {
    return step(ONNXC_STEP_LOOP, exit, {iter, trip, cond});
  }
  int32_t next(int32_t head) { return step(ONNXC_STEP_NEXT, head); }

  // The descriptor over the current vectors (valid while the builder lives and is not changed).
  const onnxc_model_desc *get() {
    d.n_exprs = static_cast<uint32_t>(expr_start.size() - 1);
    d.expr_start = expr_start.data();
    d.expr_code = expr_code.data();
    d.n_tensors = static_cast<uint32_t>(tensors.size());
    d.tensors = tensors.data();
    d.n_inputs = static_cast<uint32_t>(inputs.size());
    d.inputs = inputs.data();
    d.n_outputs = static_cast<uint32_t>(outputs.size());
    d.outputs = outputs.data();
    d.n_kernels = static_cast<uint32_t>(kernels.size());
    d.kernels = kernels.data();
    d.n_steps = static_cast<uint32_t>(steps.size());
    d.steps = steps.data();
    return &d;
  }

  onnxc_model_desc d{};
  std::vector<const char *> symbol_names;  // filled by symbol(); else d.symbols is the source's
  std::vector<uint32_t> expr_start;
  std::vector<int64_t> expr_code;
  std::vector<onnxc_tensor_desc> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<onnxc_kernel_desc> kernels;
  std::vector<onnxc_step> steps;

 private:
  const int32_t *keep(std::vector<int32_t> v) {
    arrays.push_back(std::move(v));
    return arrays.back().data();
  }
  std::deque<std::vector<int32_t>> arrays;  // deque: pointers into earlier arrays stay valid
};

// The message of a descriptor that must fail to load with `want` (and leave no model behind).
inline std::string load_error(const onnxc_model_desc *d, onnxc_status want = ONNXC_ERR_LOAD_FAILED) {
  onnxc_model *model = nullptr;
  onnxc_status st = onnxc_model_from_desc(d, &model);
  EXPECT_EQ(st, want) << onnxc_status_string(st);
  EXPECT_EQ(model, nullptr);
  onnxc_model_free(model);
  return onnxc_last_error();
}

inline std::string load_error(DescBuilder &b, onnxc_status want = ONNXC_ERR_LOAD_FAILED) { return load_error(b.get(), want); }

// A model loaded from a descriptor (which must outlive it) with one session; both freed on scope exit.
struct LoadedDesc {
  explicit LoadedDesc(const onnxc_model_desc *d) {
    EXPECT_EQ(onnxc_model_from_desc(d, &model), ONNXC_OK) << onnxc_last_error();
    if (model) {
      EXPECT_EQ(onnxc_session_create(model, nullptr, &session), ONNXC_OK) << onnxc_last_error();
    }
  }
  ~LoadedDesc() {
    onnxc_session_free(session);
    onnxc_model_free(model);
  }
  // Frees the session now (the model stays), for checks of what must not outlive it.
  void free_session() {
    onnxc_session_free(session);
    session = nullptr;
  }
  LoadedDesc(const LoadedDesc &) = delete;
  LoadedDesc &operator=(const LoadedDesc &) = delete;
  onnxc_model *model = nullptr;
  onnxc_session *session = nullptr;
};

#endif
