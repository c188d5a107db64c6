// GemmKernel: a minimal stand-in for kernel emission around one MatMul/Gemm lowering, plus a naive
// reference. See gemm_harness.h.
#include "gemm_harness.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include "codegen/emit/strict_float.h"
#include "codegen/lower/lower_util.h"
#include "codegen/target.h"
#include "ir/error.h"
#include "gpu_on_host.h"

namespace onnxc::codegen::testing {

using namespace Halide;

namespace {

std::string dims_str(const std::vector<int64_t>& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  return os.str() + "]";
}

// Operands in batched-matrix form: batch dims, rows, cols, and element offsets.
struct MatView {
  std::vector<int64_t> batch;
  int64_t rows = 1, cols = 1;
  bool trans = false;
};

MatView view_a(const GemmCase& c) {
  MatView v;
  if (c.a.size() == 1) return v.cols = c.a[0], v;
  v.batch.assign(c.a.begin(), c.a.end() - 2);
  v.trans = c.trans_a;
  v.rows = c.a[c.a.size() - (c.trans_a ? 1 : 2)];
  v.cols = c.a[c.a.size() - (c.trans_a ? 2 : 1)];
  return v;
}

MatView view_b(const GemmCase& c) {  // rows = K, cols = N
  MatView v;
  if (c.b.size() == 1) return v.rows = c.b[0], v;
  v.batch.assign(c.b.begin(), c.b.end() - 2);
  v.trans = c.trans_b;
  v.rows = c.b[c.b.size() - (c.trans_b ? 1 : 2)];
  v.cols = c.b[c.b.size() - (c.trans_b ? 2 : 1)];
  return v;
}

std::vector<int64_t> broadcast(const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  size_t r = std::max(x.size(), y.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t a = i + x.size() >= r ? x[i + x.size() - r] : 1;
    int64_t b = i + y.size() >= r ? y[i + y.size() - r] : 1;
    out[i] = a == 1 ? b : a;
  }
  return out;
}

// Offset of the matrix for output batch index `ob` in an operand with batch dims `batch`.
int64_t batch_offset(const std::vector<int64_t>& batch, const std::vector<int64_t>& out_batch,
                     const std::vector<int64_t>& ob, int64_t matrix_size) {
  int64_t off = 0;
  size_t shift = out_batch.size() - batch.size();
  for (size_t i = 0; i < batch.size(); ++i) off = off * batch[i] + (batch[i] == 1 ? 0 : ob[i + shift]);
  return off * matrix_size;
}

float bias_value(int64_t n) { return 0.1f * static_cast<float>(n % 7) - 0.3f; }

// Visits every output element with (index, Σ a·b, Σ |a·b|, c element or 0, |c|).
template <class F>
void for_each_output(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in, F&& f) {
  MatView va = view_a(c), vb = view_b(c);
  std::vector<int64_t> out_batch = broadcast(va.batch, vb.batch);
  int64_t nb = 1;
  for (int64_t x : out_batch) nb *= x;
  const int64_t M = va.rows, K = va.cols, N = vb.cols;
  int64_t idx = 0;
  std::vector<int64_t> ob(out_batch.size(), 0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t rem = bi;
    for (size_t d = out_batch.size(); d-- > 0;) ob[d] = rem % out_batch[d], rem /= out_batch[d];
    int64_t ao = batch_offset(va.batch, out_batch, ob, M * K);
    int64_t bo = batch_offset(vb.batch, out_batch, ob, K * N);
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n, ++idx) {
        double s = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = a.get_f64(ao + (va.trans ? k * M + m : m * K + k));
          double y = b.get_f64(bo + (vb.trans ? n * K + k : k * N + n));
          s += x * y;
          mag += std::fabs(x * y);
        }
        double cv = 0;
        if (c_in) {
          const auto& cd = c_in->dims();
          int64_t ci = 0;
          if (cd.size() == 2) ci = (cd[0] == 1 ? 0 : m) * cd[1] + (cd[1] == 1 ? 0 : n);
          if (cd.size() == 1) ci = cd[0] == 1 ? 0 : n;
          cv = c_in->get_f64(ci);
        }
        f(idx, n, s, mag, cv);
      }
    }
  }
}

Expr i32(int64_t v) { return Expr(static_cast<int32_t>(v)); }

}  // namespace

Target host_target() {
  Target t = get_jit_target_from_environment();
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  if (text.find("avx512_fp16") == std::string::npos) t = t.without_feature(Target::AVX512_SapphireRapids);
  return t;
}

std::string describe(const GemmCase& c) {
  std::ostringstream os;
  os << c.op << " " << ir::dtype_name(c.dtype) << " A" << dims_str(c.a) << (c.trans_a ? "ᵀ" : "") << " B"
     << dims_str(c.b) << (c.trans_b ? "ᵀ" : "") << (c.b_const ? " const" : "");
  if (c.c) os << " C" << dims_str(*c.c) << " alpha=" << c.alpha << " beta=" << c.beta;
  if (c.relu_bias_epilogue) os << " +relu(bias)";
  if (c.flatten_epilogue) os << " +flatten";
  if (!c.symbolic) os << " static";
  return os.str();
}

namespace {
std::vector<int64_t> product_shape(const GemmCase& c) {
  MatView va = view_a(c), vb = view_b(c);
  std::vector<int64_t> out = broadcast(va.batch, vb.batch);
  if (c.a.size() != 1) out.push_back(va.rows);
  if (c.b.size() != 1) out.push_back(vb.cols);
  return out;
}
}  // namespace

std::vector<int64_t> output_shape(const GemmCase& c) {
  std::vector<int64_t> out = product_shape(c);
  if (!c.flatten_epilogue || out.size() < 2) return out;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < out.size(); ++i) rows *= out[i];
  return {rows, out.back()};
}

HTensor GemmKernel::add_param(const std::string& name, const ir::Tensor& data, std::vector<bool> dynamic) {
  const int rank = static_cast<int>(data.rank());
  const Type type = halide_type(data.dtype());
  keep_.push_back(data);
  ImageParam p(type, rank, name);
  std::vector<int> extents(data.dims().rbegin(), data.dims().rend());
  p.set(Buffer<>(type, const_cast<void*>(keep_.back().raw()), extents));
  params_.push_back(p);
  HTensor h{Func(p), {}, data.dtype()};
  dynamic.resize(rank, false);
  for (int d = 0; d < rank; ++d) h.shape.push_back(dynamic[d] ? p.dim(rank - 1 - d).extent() : i32(data.dims()[d]));
  constrain_dense(p, h.shape);  // as kernel emission declares its ImageParams
  return h;
}

// The fused consumers a kernel emitter may compose on the result.
Func GemmKernel::compose_epilogues(Func result) const {
  Func out = result;
  const Type type = result.output_types().at(0);
  if (case_.relu_bias_epilogue) {
    std::vector<Var> vars = result.args();
    Func fused("epilogue");
    Expr bias = 0.1f * cast<float>(vars[0] % 7) - 0.3f;
    fused(vars) = max(result(vars) + cast(type, bias), cast(type, 0));
    out = fused;
  }
  if (case_.flatten_epilogue && out.dimensions() > 2) {
    // flat(n, row) = out(n, row % d1, (row / d1) % d2, ...): a Reshape fused after the product.
    std::vector<int64_t> dims = product_shape(case_);
    Var n("n"), row("row");
    std::vector<Expr> idx = {n};
    Expr rest = row;
    for (size_t i = dims.size() - 1; i-- > 0;) {
      idx.push_back(i == 0 ? rest : rest % i32(dims[i]));
      rest = rest / i32(dims[i]);
    }
    Func flat("flatten");
    flat(n, row) = out(idx);
    out = flat;
  }
  return out;
}

GemmKernel::GemmKernel(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in,
                       const Target& target, bool jit)
    : case_(c) {
  auto dynamic = [&](const std::vector<bool>& given, size_t rank, bool constant) {
    return given.empty() ? std::vector<bool>(rank, c.symbolic && !constant) : given;
  };
  std::vector<HTensor> in = {add_param("A", a, dynamic(c.a_dynamic, c.a.size(), false)),
                             add_param("B", b, dynamic(c.b_dynamic, c.b.size(), c.b_const))};
  const ir::Type type = ir::Type::tensor(c.dtype);
  std::vector<ir::Value*> values = {graph_.add_input("A", type),
                                    c.b_const ? graph_.add_initializer("B", b) : graph_.add_input("B", type)};
  std::vector<const ir::Tensor*> consts = {nullptr, c.b_const ? &keep_[1] : nullptr};
  if (c_in) {
    in.push_back(add_param("C", *c_in, dynamic({}, c_in->rank(), false)));
    values.push_back(graph_.add_input("C", type));
    consts.push_back(nullptr);
  }
  // onnxc.DynamicQuantMatMul: B is the int8 weight; its per-column scales are 1, so the result is
  // the row's dequantized int32 sums.
  const bool int8 = c.op == "DynamicQuantMatMul";
  if (int8) {
    ir::Tensor scale(ir::DType::Float32, {b.dims().back()});
    for (int64_t i = 0; i < scale.numel(); ++i) scale.mutable_data<float>()[i] = 1.0f;
    in.push_back(add_param("S", scale, {}));
    values.push_back(graph_.add_initializer("S", scale));
    consts.push_back(&keep_.back());
  }
  ir::Node* node = graph_.add_node(c.op, values, {"Y"}, int8 ? "onnxc" : "");
  if (int8 && c.wide_rows) node->set_attr_int("wide_rows", 1);
  if (c.op == "Gemm") {
    node->set_attr_int("transA", c.trans_a);
    node->set_attr_int("transB", c.trans_b);
    node->set_attr_float("alpha", c.alpha);
    node->set_attr_float("beta", c.beta);
  }

  std::vector<Expr> out_shape;
  for (int64_t d : product_shape(c)) out_shape.push_back(i32(d));
  auto dim_expr = [](const ir::Dim& d) { return i32(d.value()); };
  auto add_constant = [this](const std::string& hint, ir::Tensor data) { return add_param(hint, data, {}); };
  LowerContext ctx{*node, in, consts, {out_shape}, target, 17, dim_expr, add_constant, nullptr, KernelClass::MatMul, {}, {}, false, {}, 0};
  const OpLowering* lowering = find_lowering(int8 ? "onnxc" : "", c.op, ctx.opset);
  internal_check(lowering) << "no lowering registered for " << c.op;
  output_ = compose_epilogues(lowering->fn(ctx).at(0).func);
  if (ctx.schedule) ctx.schedule(output_, target);
  // As kernel emission does: IEEE float for the epilogue, fast-math for the accumulator.
  std::set<std::string> reassociable;
  for (const Func& f : ctx.reassociable) reassociable.insert(f.name());
  keep_ieee_semantics({output_}, reassociable);
  pipeline_ = Pipeline(output_);
  if (const char* dump = getenv("ONNXC_GEMM_STMT"))
    pipeline_.compile_to_lowered_stmt(dump, pipeline_.infer_arguments(), Text, target);
  // As kernel emission does, int8 products compile for the target with its dot products.
  const Target compile_target = int8 ? with_dot_products(target) : target;
  if (const char* dump = getenv("ONNXC_GEMM_ASM"))
    pipeline_.compile_to_assembly(dump, pipeline_.infer_arguments(), "gemm", compile_target);
  if (jit) pipeline_.compile_jit(compile_target);
}

int GemmKernel::jit_gpu_schedule_on_host() {
  const int loops = gpu_loops_to_host(output_);
  pipeline_.compile_jit(host_target());
  return loops;
}

void GemmKernel::run_into(ir::Tensor& out) {
  Buffer<> buf(halide_type(out.dtype()), out.mutable_raw(), std::vector<int>(out.dims().rbegin(), out.dims().rend()));
  pipeline_.realize(Realization(buf));
}

void GemmKernel::bind(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b) {
  case_ = c;
  auto set = [this](ImageParam& p, const ir::Tensor& t) {
    keep_.push_back(t);
    p.set(Buffer<>(halide_type(t.dtype()), const_cast<void*>(keep_.back().raw()),
                   std::vector<int>(t.dims().rbegin(), t.dims().rend())));
  };
  set(params_.at(0), a);
  if (!c.b_const) set(params_.at(1), b);
}

ir::Tensor GemmKernel::run() {
  ir::Tensor out(case_.dtype, output_shape(case_));
  run_into(out);
  return out;
}

ir::Tensor random_tensor(ir::DType t, const std::vector<int64_t>& dims, uint32_t seed) {
  ir::Tensor out(t, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-4, 4);
  for (int64_t i = 0; i < out.numel(); ++i) {
    switch (t) {
      case ir::DType::Float32: out.mutable_data<float>()[i] = uni(rng); break;
      case ir::DType::Float64: out.mutable_data<double>()[i] = uni(rng); break;
      case ir::DType::Float16: out.mutable_data<uint16_t>()[i] = ir::f32_to_f16(uni(rng)); break;
      case ir::DType::BFloat16: out.mutable_data<uint16_t>()[i] = ir::f32_to_bf16(uni(rng)); break;
      case ir::DType::Int32: out.mutable_data<int32_t>()[i] = small(rng); break;
      case ir::DType::Int8: out.mutable_data<int8_t>()[i] = static_cast<int8_t>(std::lround(127 * uni(rng))); break;
      case ir::DType::Int64: out.mutable_data<int64_t>()[i] = small(rng); break;
      case ir::DType::UInt32: out.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(small(rng) + 4); break;
      case ir::DType::UInt64: out.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(small(rng) + 4); break;
      default: internal_error << "random_tensor: unsupported dtype " << ir::dtype_name(t);
    }
  }
  return out;
}

std::vector<double> reference(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in) {
  std::vector<double> out;
  const bool gemm = c.op == "Gemm";
  for_each_output(c, a, b, c_in, [&](int64_t, int64_t n, double s, double, double cv) {
    double v = gemm ? c.alpha * s + c.beta * cv : s;
    if (c.relu_bias_epilogue) v = std::max(v + bias_value(n), 0.0);
    out.push_back(v);
  });
  return out;
}

std::vector<double> magnitude(const GemmCase& c, const ir::Tensor& a, const ir::Tensor& b, const ir::Tensor* c_in) {
  std::vector<double> out;
  const bool gemm = c.op == "Gemm";
  for_each_output(c, a, b, c_in, [&](int64_t, int64_t n, double, double mag, double cv) {
    double v = gemm ? std::fabs(c.alpha) * mag + std::fabs(c.beta * cv) : mag;
    if (c.relu_bias_epilogue) v += std::fabs(bias_value(n));
    out.push_back(v);
  });
  return out;
}

}  // namespace onnxc::codegen::testing
