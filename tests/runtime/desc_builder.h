// Hand-written model descriptors for the runtime's tests: one builder (DescBuilder) that either copies
// a descriptor (to corrupt or vary one field) or builds one fluently (symbol, tensor, host step...), a
// descriptor over a test's static arrays (HandPlan), the message of one that must fail to load, and a
// model with one session loaded from a descriptor.
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
  // `bytes` bytes of the weights blob from `offset` (the blob: set d.weights and d.weights_size).
  int32_t weight(const char *name, int32_t dtype, const std::vector<int32_t> &dims, uint64_t offset, uint64_t bytes) {
    int32_t id = tensor(name, dtype, ONNXC_TENSOR_WEIGHT, dims);
    tensors[id].weight_offset = offset;
    tensors[id].weight_bytes = bytes;
    return id;
  }
  // A host step running `op` over `args` (tensor ids, then scalar() args), binding `binds`.
  int32_t host(int32_t op, const std::vector<int32_t> &args, const std::vector<int32_t> &binds = {}) {
    steps.push_back(onnxc_step{op, 0, nullptr, ONNXC_STEP_HOST, 0, nullptr});
    int32_t k = static_cast<int32_t>(steps.size() - 1);
    set_args(k, args);
    set_binds(k, binds);
    return k;
  }

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

// A list field of a descriptor: a static array and its length (or nothing).
template <typename T>
struct StaticList {
  const T *items = nullptr;
  uint32_t count = 0;
  StaticList() = default;
  template <size_t N>
  StaticList(const T (&a)[N]) : items(a), count(static_cast<uint32_t>(N)) {}  // NOLINT: implicit by design
};

// A plan written by hand for a test: the arrays a descriptor points at, counted by their sizes.
struct HandPlan {
  const char *name;
  StaticList<const char *const> symbols;
  StaticList<uint32_t> expr_start;  // n_exprs + 1 entries
  const int64_t *expr_code;
  StaticList<onnxc_tensor_desc> tensors;
  StaticList<int32_t> inputs, outputs;
  StaticList<onnxc_kernel_desc> kernels;
  StaticList<onnxc_step> steps;
};

// A descriptor for `p` (ABI version, target "host", producer "test"), as a builder tests may edit.
inline DescBuilder hand_written(const HandPlan &p) {
  onnxc_model_desc d{};
  d.abi_version = ONNXC_ABI_VERSION;
  d.name = p.name;
  d.target = "host";
  d.producer = "test";
  d.n_symbols = p.symbols.count;
  d.symbols = p.symbols.items;
  d.n_exprs = p.expr_start.count ? p.expr_start.count - 1 : 0;
  d.expr_start = p.expr_start.items;
  d.expr_code = p.expr_code;
  d.n_tensors = p.tensors.count;
  d.tensors = p.tensors.items;
  d.n_inputs = p.inputs.count;
  d.inputs = p.inputs.items;
  d.n_outputs = p.outputs.count;
  d.outputs = p.outputs.items;
  d.n_kernels = p.kernels.count;
  d.kernels = p.kernels.items;
  d.n_steps = p.steps.count;
  d.steps = p.steps.items;
  return DescBuilder(d);
}

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
  LoadedDesc(const LoadedDesc &) = delete;
  LoadedDesc &operator=(const LoadedDesc &) = delete;
  onnxc_model *model = nullptr;
  onnxc_session *session = nullptr;
};

#endif
