// Test helpers: model builder, minimal plan executor over onnxc_model_desc.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <HalideRuntime.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "test_util.h"

namespace onnxc::test {

namespace {
thread_local std::string kernel_error;
void record_kernel_error(void*, const char* msg) { kernel_error = msg ? msg : ""; }
}  // namespace

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

ModelBuilder::ModelBuilder(int64_t opset) { m_.opset_imports.push_back({"", opset}); }

ir::Value* ModelBuilder::input(const std::string& name, ir::DType dt, ir::Shape shape) {
  return m_.graph->add_input(name, ir::Type::tensor(dt, std::move(shape)));
}

ir::Value* ModelBuilder::constant(const std::string& name, ir::Tensor t) {
  return m_.graph->add_initializer(name, std::move(t));
}

ir::Value* ModelBuilder::const_i64(const std::string& name, std::vector<int64_t> v) {
  return constant(name, ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {int64_t(v.size())}, v));
}

ir::Value* ModelBuilder::const_f32(const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
  return constant(name, ir::Tensor::from_vector<float>(ir::DType::Float32, std::move(dims), v));
}

ir::Node* ModelBuilder::node(const std::string& op, const std::vector<ir::Value*>& ins,
                             const std::vector<std::pair<std::string, ir::Type>>& outs, const std::string& domain) {
  std::vector<std::string> names;
  for (const auto& o : outs) names.push_back(o.first);
  ir::Node* n = m_.graph->add_node(op, ins, names, domain);
  n->set_name(op + "_" + std::to_string(m_.graph->num_nodes()));
  for (size_t i = 0; i < outs.size(); ++i)
    if (n->output(i)) n->output(i)->set_type(outs[i].second);
  return n;
}

ir::Value* ModelBuilder::op(const std::string& op, const std::vector<ir::Value*>& ins, const std::string& out,
                            ir::DType dt, ir::Shape shape) {
  return node(op, ins, {{out, ir::Type::tensor(dt, std::move(shape))}})->output();
}

LoadedModel::LoadedModel(const std::string& so_path) {
  handle_ = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto entry = reinterpret_cast<onnxc_model_entry_fn>(dlsym(handle_, ONNXC_MODEL_ENTRY_SYMBOL));
  if (!entry) throw std::runtime_error("no onnxc_model_entry in " + so_path);
  desc_ = entry();
  // Halide's default error handler aborts: record the message and let the kernel return its code.
  if (desc_->set_error_handler) desc_->set_error_handler(record_kernel_error);
}

LoadedModel::~LoadedModel() {
  if (handle_) dlclose(handle_);
}

namespace {

halide_type_t halide_type_of(int32_t dtype) {
  switch (static_cast<ir::DType>(dtype)) {
    case ir::DType::Float32: return {halide_type_float, 32, 1};
    case ir::DType::Float64: return {halide_type_float, 64, 1};
    case ir::DType::Float16: return {halide_type_float, 16, 1};
    case ir::DType::BFloat16: return {halide_type_bfloat, 16, 1};
    case ir::DType::Int8: return {halide_type_int, 8, 1};
    case ir::DType::Int16: return {halide_type_int, 16, 1};
    case ir::DType::Int32: return {halide_type_int, 32, 1};
    case ir::DType::Int64: return {halide_type_int, 64, 1};
    case ir::DType::UInt16: return {halide_type_uint, 16, 1};
    case ir::DType::UInt32: return {halide_type_uint, 32, 1};
    case ir::DType::UInt64: return {halide_type_uint, 64, 1};
    case ir::DType::Bool: return {halide_type_uint, 1, 1};  // Halide's Bool(), one byte per element
    default: return {halide_type_uint, 8, 1};
  }
}

int64_t eval_expr(const onnxc_model_desc* d, uint32_t e, const std::vector<int64_t>& sym) {
  std::vector<int64_t> st;
  for (uint32_t i = d->expr_start[e]; i < d->expr_start[e + 1]; ++i) {
    int64_t op = d->expr_code[i];
    if (op == ONNXC_EXPR_CONST) { st.push_back(d->expr_code[++i]); continue; }
    if (op == ONNXC_EXPR_SYM) { st.push_back(sym.at(d->expr_code[++i])); continue; }
    if (op == ONNXC_EXPR_NEG) { st.back() = -st.back(); continue; }
    int64_t b = st.back(); st.pop_back();
    int64_t a = st.back(), r = 0;
    auto fdiv = [](int64_t x, int64_t y) { int64_t q = x / y; return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q; };
    switch (op) {
      case ONNXC_EXPR_ADD: r = a + b; break;
      case ONNXC_EXPR_SUB: r = a - b; break;
      case ONNXC_EXPR_MUL: r = a * b; break;
      case ONNXC_EXPR_FLOORDIV: r = fdiv(a, b); break;
      case ONNXC_EXPR_CEILDIV: r = -fdiv(-a, b); break;
      case ONNXC_EXPR_MOD: r = a - fdiv(a, b) * b; break;
      case ONNXC_EXPR_MIN: r = std::min(a, b); break;
      case ONNXC_EXPR_MAX: r = std::max(a, b); break;
      default: throw std::runtime_error("bad expr op");
    }
    st.back() = r;
  }
  return st.at(0);
}

size_t dtype_bytes(int32_t dt) { return std::max<size_t>(1, ir::dtype_size(static_cast<ir::DType>(dt))); }

}  // namespace

std::vector<HostTensor> LoadedModel::run(const std::vector<HostTensor>& inputs) const {
  const onnxc_model_desc* d = desc_;
  if (inputs.size() != d->n_inputs) throw std::runtime_error("wrong number of inputs");
  std::vector<int64_t> sym(d->n_symbols, -1);
  for (uint32_t i = 0; i < d->n_inputs; ++i) {
    const onnxc_tensor_desc& t = d->tensors[d->inputs[i]];
    if (static_cast<size_t>(t.rank) != inputs[i].dims.size()) throw std::runtime_error("input rank mismatch");
    for (int k = 0; k < t.rank; ++k) {
      uint32_t e = t.dims[k];
      if (d->expr_start[e + 1] - d->expr_start[e] == 2 && d->expr_code[d->expr_start[e]] == ONNXC_EXPR_SYM)
        sym[d->expr_code[d->expr_start[e] + 1]] = inputs[i].dims[k];
    }
  }
  std::vector<int64_t> ev(d->n_exprs);
  for (uint32_t e = 0; e < d->n_exprs; ++e) ev[e] = eval_expr(d, e, sym);
  std::vector<std::vector<uint8_t>> storage(d->n_tensors);
  std::vector<halide_buffer_t> bufs(d->n_tensors);
  std::vector<std::vector<halide_dimension_t>> hdims(d->n_tensors);
  std::vector<uint8_t*> host(d->n_tensors, nullptr);
  auto numel = [&](const onnxc_tensor_desc& t) {
    int64_t n = 1;
    for (int k = 0; k < t.rank; ++k) n *= ev[t.dims[k]];
    return n;
  };
  for (uint32_t i = 0; i < d->n_inputs; ++i) {
    storage[d->inputs[i]] = inputs[i].bytes;
    // An empty input still gets a non-NULL pointer, as the runtime gives it: Halide reads a NULL
    // host as a bounds query (the kernel then computes nothing).
    if (storage[d->inputs[i]].empty()) storage[d->inputs[i]].resize(1);
  }
  for (uint32_t id = 0; id < d->n_tensors; ++id) {
    const onnxc_tensor_desc& t = d->tensors[id];
    if (t.kind == ONNXC_TENSOR_WEIGHT) host[id] = const_cast<uint8_t*>(d->weights + t.weight_offset);
    else if (t.kind != ONNXC_TENSOR_VIEW) {
      // Inputs keep the caller's alignment (any, as model_abi.h allows); intermediates and outputs sit at
      // 64-byte aligned addresses, as the runtime's arena places them (kernels may load them aligned:
      // a vector's storage of malloc's 16-byte alignment made an AVX2 norm kernel fault).
      if (t.kind == ONNXC_TENSOR_INPUT) {
        host[id] = storage[id].data();
      } else {
        storage[id].assign(numel(t) * dtype_bytes(t.dtype) + 64 + 64, 0xcd);
        const auto at = reinterpret_cast<uintptr_t>(storage[id].data());
        host[id] = storage[id].data() + ((64 - at % 64) % 64);
      }
    }
  }
  for (uint32_t id = 0; id < d->n_tensors; ++id) {
    const onnxc_tensor_desc& t = d->tensors[id];
    if (t.kind == ONNXC_TENSOR_VIEW) host[id] = host[t.view_of];
    hdims[id].resize(t.rank);
    int64_t stride = 1;
    for (int k = t.rank - 1, hd = 0; k >= 0; --k, ++hd) {
      hdims[id][hd] = {0, static_cast<int32_t>(ev[t.dims[k]]), static_cast<int32_t>(stride), 0};
      stride *= ev[t.dims[k]];
    }
    halide_buffer_t& b = bufs[id];
    b = halide_buffer_t{};
    b.host = host[id];
    b.type = halide_type_of(t.dtype);
    b.dimensions = t.rank;
    b.dim = hdims[id].data();
  }
  std::vector<int64_t> scalars;
  for (uint32_t s = 0; s < d->n_steps; ++s) {
    const onnxc_step& st = d->steps[s];
    if (st.kind != ONNXC_STEP_KERNEL) throw std::runtime_error("host steps run in the runtime: use its C API");
    scalars.assign(st.n_args, 0);
    std::vector<void*> args(st.n_args);
    for (int a = 0; a < st.n_args; ++a) {
      int32_t v = st.args[a];
      if (v >= 0) args[a] = &bufs[v];
      else {
        scalars[a] = ev[-v - 1];
        args[a] = &scalars[a];
      }
    }
    kernel_error.clear();
    int rc = d->kernels[st.kernel].fn(args.data());
    if (rc != 0)
      throw std::runtime_error("kernel " + std::string(d->kernels[st.kernel].name) + " failed: " + std::to_string(rc) +
                               ": " + kernel_error);
  }
  std::vector<HostTensor> outs;
  for (uint32_t i = 0; i < d->n_outputs; ++i) {
    const onnxc_tensor_desc& t = d->tensors[d->outputs[i]];
    HostTensor h;
    h.dtype = static_cast<ir::DType>(t.dtype);
    for (int k = 0; k < t.rank; ++k) h.dims.push_back(ev[t.dims[k]]);
    const uint8_t* p = t.kind == ONNXC_TENSOR_VIEW ? host[t.view_of] : host[d->outputs[i]];
    h.bytes.assign(p, p + numel(t) * dtype_bytes(t.dtype));
    outs.push_back(std::move(h));
  }
  return outs;
}

std::string temp_dir(const std::string& hint) {
  std::string tmpl = (std::filesystem::temp_directory_path() / ("onnxc-test-" + hint + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

codegen::CompileResult compile(const ir::Model& m, const std::string& name, const std::string& target) {
  codegen::CompileOptions o;
  o.name = name;
  o.out_dir = temp_dir(name);
  o.target = target;
  o.cache_dir = ONNXC_TEST_CACHE_DIR;
  return codegen::compile_model(m, o);
}

std::vector<HostTensor> compile_and_run(const ir::Model& m, const std::vector<HostTensor>& inputs,
                                        const std::string& name, const std::string& target) {
  auto r = compile(m, name, target);
  LoadedModel lib(r.so_path);
  auto out = lib.run(inputs);
  std::filesystem::remove_all(std::filesystem::path(r.so_path).parent_path());
  return out;
}

::testing::AssertionResult all_close(const std::vector<float>& a, const std::vector<float>& e, double rtol,
                                     double atol) {
  if (a.size() != e.size())
    return ::testing::AssertionFailure() << "size " << a.size() << " != expected " << e.size();
  int bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < a.size(); ++i) {
    bool same_nan = std::isnan(a[i]) && std::isnan(e[i]);
    bool same_inf = std::isinf(a[i]) && a[i] == e[i];
    if (same_nan || same_inf || std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i])) continue;
    if (bad++ < 8) os << "\n  [" << i << "] " << a[i] << " vs expected " << e[i];
  }
  if (!bad) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << a.size() << " elements differ:" << os.str();
}

}  // namespace onnxc::test
