// The fused Attention's CUDA schedule (codegen/schedule/gpu_attention.cpp) checked without a GPU: its
// loop nest, run on the CPU (gpu_on_host.h), against a double-precision reference of the ONNX
// function and against the CPU streaming kernel, for query and key lengths with tails, GQA, 3-D
// layouts, causal with and without a past, an empty past, float (with -inf and finfo.min) and bool
// masks, sliding windows, fully masked rows (0, or NaN for a fused Softmax), head sizes other than 64, lengths known
// only at run time (and the one-row copy they bring), float16 inputs, keys up to a few thousand; and
// its PTX for sm_80/sm_90: the K/V tiles in shared memory, no local memory, no score buffer in device
// memory.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/emit/strict_float.h"
#include "codegen/lower/lower_util.h"
#include "gpu_on_host.h"
#include "ir/onnxc_attrs.h"

namespace onnxc::codegen::testing {
namespace {

using Halide::Buffer;
using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using ir::DType;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kFloatMin = -std::numeric_limits<float>::max();

enum class Mask { None, Float, Bool };

Expr i32(int64_t v) { return Expr(static_cast<int32_t>(v)); }

struct Case {
  int b = 1, hq = 2, hkv = 2, sq = 40, skv = 70, past = 0, dk = 64, dv = 64;
  bool causal = false;
  int left_window = -1, right_window = -1;  // opset 25's sliding window (-1: none)
  Mask mask = Mask::None;
  bool rows_nan = false;     // ir::kMaskedRowsNan: a fully masked row gives NaN (a fused Softmax)
  bool three_d = false;      // [b, s, h*d] layouts
  bool symbolic = false;     // sequence lengths (query, keys, past) known only at run time
  bool past_inputs = false;  // past_key/past_value given even when past == 0
  // The query length as an expression equal to its symbol but not one (max(max(min(64, s), s),
  // min(64, s)), bert_op13's), which Halide's CSE splits with a let where the kernel selects a copy.
  bool seq_expr = false;
  DType dtype = DType::Float32;
  int total() const { return past + skv; }
  bool has_past() const { return past > 0 || past_inputs; }
};

std::string describe(const Case& c) {
  std::ostringstream os;
  os << "b" << c.b << " hq" << c.hq << " hkv" << c.hkv << " sq" << c.sq << " skv" << c.skv << " past" << c.past
     << " dk" << c.dk << " dv" << c.dv << (c.causal ? " causal" : "") << " window " << c.left_window << ","
     << c.right_window
     << (c.mask == Mask::Float ? " float-mask" : c.mask == Mask::Bool ? " bool-mask" : "")
     << (c.rows_nan ? " rows-nan" : "") << (c.three_d ? " 3-D" : "") << (c.symbolic ? " symbolic" : "") << (c.seq_expr ? " seq-expr" : "")
     << (c.dtype == DType::Float16 ? " f16" : "");
  return os.str();
}

// The mask of row i (of sq) at key t (of total): row 1 masked whole (-inf / false), row 2 all
// finfo.min (float masks: a row that is not masked, its scores all shifted alike), else a pattern.
float float_mask(int i, int t) {
  if (i == 1) return kNegInf;
  if (i == 2) return kFloatMin;
  if ((i + t) % 5 == 0) return kNegInf;
  return 0.25f * std::sin(0.1f * static_cast<float>(t + 3 * i));
}
bool bool_mask(int i, int t) { return i != 1 && (3 * i + t) % 4 != 0; }

// Inputs, in 4-D [b, h, s, d] order, rounded to float16 where the case is f16.
struct Data {
  std::vector<float> q, k, v, pk, pv;
};

std::vector<float> random(size_t n, uint32_t seed, float amp, DType dt) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-amp, amp);
  std::vector<float> v(n);
  for (float& x : v) x = dt == DType::Float16 ? static_cast<float>(Halide::float16_t(uni(rng))) : uni(rng);
  return v;
}

Data make_data(const Case& c) {
  auto n = [](int a, int b, int s, int d) { return static_cast<size_t>(a) * b * s * d; };
  return {random(n(c.b, c.hq, c.sq, c.dk), 1, 1.0f, c.dtype), random(n(c.b, c.hkv, c.skv, c.dk), 2, 3.0f, c.dtype),
          random(n(c.b, c.hkv, c.skv, c.dv), 3, 1.0f, c.dtype), random(n(c.b, c.hkv, c.past, c.dk), 4, 3.0f, c.dtype),
          random(n(c.b, c.hkv, c.past, c.dv), 5, 1.0f, c.dtype)};
}

// The ONNX function in double, scores rounded to float as a float32 graph stores them (so a
// finfo.min mask behaves as it does there). Result in 4-D order.
std::vector<double> reference(const Case& c, const Data& x) {
  const int T = c.total(), rep = c.hq / c.hkv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.dk));
  auto K = [&](int b, int h, int t, int d) {
    return t < c.past ? x.pk[((static_cast<size_t>(b) * c.hkv + h) * c.past + t) * c.dk + d]
                      : x.k[((static_cast<size_t>(b) * c.hkv + h) * c.skv + t - c.past) * c.dk + d];
  };
  auto V = [&](int b, int h, int t, int d) {
    return t < c.past ? x.pv[((static_cast<size_t>(b) * c.hkv + h) * c.past + t) * c.dv + d]
                      : x.v[((static_cast<size_t>(b) * c.hkv + h) * c.skv + t - c.past) * c.dv + d];
  };
  std::vector<double> y(static_cast<size_t>(c.b) * c.hq * c.sq * c.dv);
  for (int b = 0; b < c.b; ++b)
    for (int h = 0; h < c.hq; ++h)
      for (int i = 0; i < c.sq; ++i) {
        std::vector<float> s(T);
        for (int t = 0; t < T; ++t) {
          double dot = 0;
          for (int d = 0; d < c.dk; ++d)
            dot += double(x.q[((static_cast<size_t>(b) * c.hq + h) * c.sq + i) * c.dk + d]) * K(b, h / rep, t, d);
          float v = static_cast<float>(dot) * scale;
          if (c.mask == Mask::Float) v = v + float_mask(i, t);
          if (c.mask == Mask::Bool && !bool_mask(i, t)) v = kNegInf;
          if (c.causal && t > i + c.past) v = kNegInf;
          if (c.left_window >= 0 && i + c.past - t > c.left_window) v = kNegInf;
          if (c.right_window >= 0 && t - (i + c.past) > c.right_window) v = kNegInf;
          s[t] = v;
        }
        double mx = -INFINITY, sum = 0;
        for (float v : s) mx = std::max(mx, double(v));
        std::vector<double> p(T);
        for (int t = 0; t < T; ++t) sum += p[t] = mx == -INFINITY ? 0.0 : std::exp(double(s[t]) - mx);
        for (int d = 0; d < c.dv; ++d) {
          double acc = 0;
          for (int t = 0; t < T; ++t) acc += p[t] * V(b, h / rep, t, d);
          double out = sum == 0 ? (c.rows_nan ? NAN : 0.0) : acc / sum;
          y[((static_cast<size_t>(b) * c.hq + h) * c.sq + i) * c.dv + d] = out;
        }
      }
  return y;
}

// One Attention node lowered and scheduled for `target` outside kernel emission, as emission does
// it (inputs as dense ImageParams, the lowering's own schedule, IEEE semantics but for the
// contractions), JIT-compiled for the host; with `on_host` the GPU loops become host loops first.
class Kernel {
 public:
  Kernel(const Case& c, const Data& x, const Halide::Target& target, bool on_host) : c_(c) {
    const int64_t b = c.b;
    // Run-time lengths as kernel emission passes them: int64 scalar parameters, cast to int32.
    auto add = [&](const std::string& name, const std::vector<float>& v, int h, int s, int d, const char* sym) {
      std::vector<int64_t> dims = c.three_d && name.find("past") == std::string::npos
                                      ? std::vector<int64_t>{b, s, int64_t(h) * d}
                                      : std::vector<int64_t>{b, h, s, d};
      std::vector<float> data = c.three_d && dims.size() == 3 ? to_3d(v, h, s, d) : v;
      if (!c.symbolic) return param(name, data, dims, -1, Expr());
      auto [it, added] = symbols_.try_emplace(sym, Halide::Param<int64_t>(std::string("len_") + sym));
      it->second.set(s);
      Expr len = Halide::cast<int32_t>(it->second);
      if (c.seq_expr && std::string(sym) == "sq") {
        Expr m = Halide::min(64, len);  // bert_op13's query length, as its Slice of position ids gives it
        len = Halide::max(Halide::max(m, len), m);
      }
      return param(name, data, dims, dims.size() == 3 ? 1 : 2, len);
    };
    const ir::Type type = ir::Type::tensor(c.dtype);
    std::vector<ir::Value*> values;
    std::vector<HTensor> in;
    auto input = [&](const std::string& name, HTensor t) {
      values.push_back(graph_.add_input(name, t.dtype == DType::Bool ? ir::Type::tensor(DType::Bool) : type));
      in.push_back(std::move(t));
    };
    input("q", add("q", x.q, c.hq, c.sq, c.dk, "sq"));
    input("k", add("k", x.k, c.hkv, c.skv, c.dk, "skv"));
    input("v", add("v", x.v, c.hkv, c.skv, c.dv, "skv"));
    const int T = c.total();
    if (c.mask != Mask::None) {
      std::vector<float> m;
      for (int i = 0; i < c.sq; ++i)
        for (int t = 0; t < T; ++t) m.push_back(c.mask == Mask::Float ? float_mask(i, t) : bool_mask(i, t));
      if (c.mask == Mask::Float) input("mask", param("mask", m, {c.sq, T}, -1, Expr(), DType::Float32));
      else input("mask", param("mask", m, {1, 1, c.sq, T}, -1, Expr(), DType::Bool));
    } else if (c.has_past()) {
      values.push_back(nullptr);
      in.emplace_back();
    }
    if (c.has_past()) {
      input("past_key", add("past_key", x.pk, c.hkv, c.past, c.dk, "past"));
      input("past_value", add("past_value", x.pv, c.hkv, c.past, c.dv, "past"));
    }
    ir::Node* node = graph_.add_node("Attention", values, {"Y"});
    if (c.three_d) {
      node->set_attr_int("q_num_heads", c.hq);
      node->set_attr_int("kv_num_heads", c.hkv);
    }
    if (c.causal) node->set_attr_int("is_causal", 1);
    if (c.left_window >= 0) node->set_attr_int("left_window_size", c.left_window);
    if (c.right_window >= 0) node->set_attr_int("right_window_size", c.right_window);
    if (c.rows_nan) node->set_attr_int(ir::kMaskedRowsNan, 1);
    Expr sq = in[0].shape[c.three_d ? 1 : 2];
    std::vector<Expr> y_shape = c.three_d ? std::vector<Expr>{i32(b), sq, i32(int64_t(c.hq) * c.dv)}
                                          : std::vector<Expr>{i32(b), i32(c.hq), sq, i32(c.dv)};
    ConstInputs consts;
    consts.assign(in.size(), nullptr);
    const int64_t opset = c.left_window >= 0 || c.right_window >= 0 ? 25 : 23;
    LowerContext ctx{*node, in, consts, {y_shape}, target, opset, nullptr, nullptr, nullptr,
                     KernelClass::Attention, {}, {}, false, {}};
    const OpLowering* lowering = find_lowering("", "Attention", opset);
    output_ = lowering->fn(ctx).at(0).func;
    output_.compute_root();
    if (ctx.schedule) ctx.schedule(output_, target);
    std::set<std::string> reassociable;
    for (const Func& f : ctx.reassociable) reassociable.insert(f.name());
    keep_ieee_semantics({output_}, reassociable);
    pipeline_ = Halide::Pipeline(output_);
    for (const auto& [cond, msg] : ctx.requirements) pipeline_.add_requirement(cond, msg);
    if (on_host) gpu_loops_ = gpu_loops_to_host(output_);
  }

  int gpu_loops() const { return gpu_loops_; }
  Halide::Pipeline& pipeline() { return pipeline_; }

  // The result in 4-D order, as floats.
  std::vector<float> run() {
    Halide::Target host = Halide::get_jit_target_from_environment().without_feature(
        Halide::Target::AVX512_SapphireRapids);
    pipeline_.compile_jit(host);
    const Halide::Type t = c_.dtype == DType::Float16 ? Halide::Float(16) : Halide::Float(32);
    std::vector<int> dims = c_.three_d ? std::vector<int>{c_.hq * c_.dv, c_.sq, c_.b}
                                       : std::vector<int>{c_.dv, c_.sq, c_.hq, c_.b};
    Buffer<> out(t, dims);
    pipeline_.realize(Halide::Realization(out));
    std::vector<float> y;
    for (size_t i = 0; i < out.number_of_elements(); ++i) {
      const void* p = static_cast<const uint8_t*>(out.data()) + i * t.bytes();
      y.push_back(t.bits() == 16 ? static_cast<float>(*static_cast<const Halide::float16_t*>(p))
                                 : *static_cast<const float*>(p));
    }
    return c_.three_d ? from_3d(y) : y;
  }

 private:
  static std::vector<float> to_3d_impl(const std::vector<float>& x, int b, int h, int s, int d, bool back) {
    std::vector<float> y(x.size());
    for (int i = 0; i < b; ++i)
      for (int j = 0; j < h; ++j)
        for (int t = 0; t < s; ++t)
          for (int e = 0; e < d; ++e) {
            const size_t four = ((static_cast<size_t>(i) * h + j) * s + t) * d + e;
            const size_t three = ((static_cast<size_t>(i) * s + t) * h + j) * d + e;
            if (back) y[four] = x[three];
            else y[three] = x[four];
          }
    return y;
  }
  std::vector<float> to_3d(const std::vector<float>& x, int h, int s, int d) const {
    return to_3d_impl(x, c_.b, h, s, d, false);
  }
  std::vector<float> from_3d(const std::vector<float>& y) const {
    return to_3d_impl(y, c_.b, c_.hq, c_.sq, c_.dv, true);
  }

  // A dense ImageParam holding `v` (converted to the case's type, or bool), its dim `sym` (ONNX
  // order; -1: none) of run-time extent `len`.
  HTensor param(const std::string& name, const std::vector<float>& v, const std::vector<int64_t>& dims, int sym,
                const Expr& len, DType dt = DType::Undefined) {
    if (dt == DType::Undefined) dt = c_.dtype;
    const Halide::Type t = halide_type(dt);
    std::vector<int> extents(dims.rbegin(), dims.rend());
    // An empty tensor (an empty past) still gets a host pointer: Halide takes a buffer without one for
    // a bounds query and computes nothing.
    Buffer<> buf = v.empty() ? Buffer<>(t, &empty_storage_, extents) : Buffer<>(t, extents);
    for (size_t i = 0; i < v.size(); ++i) {
      void* p = static_cast<uint8_t*>(buf.data()) + i * t.bytes();
      if (dt == DType::Bool) *static_cast<bool*>(p) = v[i] != 0;
      else if (dt == DType::Float16) *static_cast<Halide::float16_t*>(p) = Halide::float16_t(v[i]);
      else *static_cast<float*>(p) = v[i];
    }
    buffers_.push_back(buf);
    ImageParam p(t, static_cast<int>(dims.size()), name);
    p.set(buf);
    params_.push_back(p);
    HTensor h{Func(p), {}, dt};
    const int rank = static_cast<int>(dims.size());
    for (int d = 0; d < rank; ++d) h.shape.push_back(d == sym ? len : i32(dims[d]));
    constrain_dense(p, h.shape);
    return h;
  }

  Case c_;
  ir::Graph graph_{"attention_test"};
  std::deque<Buffer<>> buffers_;
  std::vector<ImageParam> params_;
  std::map<std::string, Halide::Param<int64_t>> symbols_;
  uint64_t empty_storage_ = 0;
  Func output_;
  Halide::Pipeline pipeline_;
  int gpu_loops_ = 0;
};

const Halide::Target kCuda80("host-cuda-cuda_capability_80");

// Whether `got` is the reference's value: NaN where it is NaN (a fully masked row under a fused
// Softmax), exactly 0 for a fully masked row otherwise, else within atol + rtol·|ref|.
::testing::AssertionResult matches(const std::vector<float>& got, const std::vector<double>& ref, double rtol,
                                   double atol) {
  if (got.size() != ref.size()) return ::testing::AssertionFailure() << got.size() << " values, not " << ref.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref[i];
    if (std::isnan(r) != std::isnan(g) || (!std::isnan(r) && std::abs(g - r) > atol + rtol * std::abs(r)))
      return ::testing::AssertionFailure() << "element " << i << ": " << g << ", reference " << r;
  }
  return ::testing::AssertionSuccess();
}

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

void check(const Case& c) {
  SCOPED_TRACE(describe(c));
  const Data x = make_data(c);
  const std::vector<double> ref = reference(c, x);
  Kernel gpu(c, x, kCuda80, /*on_host=*/true);
  ASSERT_GT(gpu.gpu_loops(), 0) << "no GPU loops in the CUDA schedule";
  const std::vector<float> y = gpu.run();
  const bool f16 = c.dtype == DType::Float16;
  EXPECT_TRUE(matches(y, ref, f16 ? 2e-3 : 2e-5, f16 ? 2e-3 : 2e-5)) << "CUDA schedule on the host vs reference";
  Kernel cpu(c, x, Halide::get_jit_target_from_environment(), /*on_host=*/false);
  EXPECT_EQ(cpu.gpu_loops(), 0);
  EXPECT_TRUE(matches(y, widen(cpu.run()), f16 ? 2e-3 : 1e-5, f16 ? 2e-3 : 1e-6)) << "CUDA schedule vs CPU kernel";
}

TEST(GpuAttention, OnHostMatchesShapes) {
  check({});                                          // tails in query rows and keys
  check({.sq = 16, .skv = 32});                       // whole tiles
  check({.hq = 4, .hkv = 2, .sq = 17, .skv = 33});    // GQA
  check({.hq = 3, .hkv = 1, .sq = 5, .skv = 9});      // MQA, shorter than a tile
  check({.b = 2, .sq = 33, .skv = 65, .three_d = true});
  check({.sq = 20, .skv = 41, .dk = 32, .dv = 48});  // head sizes that do not fill the lanes evenly
  check({.sq = 9, .skv = 19, .dk = 8, .dv = 8});
  check({.sq = 7, .skv = 45, .dk = 128, .dv = 128});  // four head-dim elements per lane
  check({.sq = 1, .skv = 50});                        // one query row known when compiling
}

TEST(GpuAttention, OnHostMatchesMasks) {
  check({.sq = 50, .skv = 50, .causal = true});
  check({.sq = 13, .skv = 13, .past = 20, .causal = true});  // causal below a past
  check({.sq = 11, .skv = 7, .past = 30});
  check({.sq = 21, .skv = 40, .mask = Mask::Float});  // -inf, a fully masked row, a finfo.min row
  check({.sq = 21, .skv = 40, .mask = Mask::Float, .rows_nan = true});
  check({.sq = 18, .skv = 37, .mask = Mask::Bool});
  check({.sq = 18, .skv = 37, .mask = Mask::Bool, .rows_nan = true});
  check({.sq = 18, .skv = 37, .causal = true, .mask = Mask::Float});
  check({.sq = 40, .skv = 70, .left_window = 5, .right_window = 3});  // rows with few keys
  check({.sq = 10, .skv = 70, .past = 6, .left_window = 40, .right_window = 0});
}

TEST(GpuAttention, OnHostMatchesRunTimeLengths) {
  check({.sq = 37, .skv = 50, .symbolic = true});
  check({.sq = 1, .skv = 50, .symbolic = true});  // the one-row copy (a decoding step)
  check({.sq = 1, .skv = 9, .past = 24, .symbolic = true});
  check({.sq = 12, .skv = 12, .past = 0, .causal = true, .symbolic = true, .past_inputs = true});  // empty past
  check({.sq = 12, .skv = 12, .past = 5, .causal = true, .symbolic = true, .past_inputs = true});
}

// HF BERT-like exports (bert_op13, hf_bert_ts): the query length an expression of its symbol, an
// additive float mask. On an H100 the kernel trapped: the one-row copy's stages were computed in the
// tiled branch too, over 16 rows with bounds of one (the in-kernel bounds check is a `trap;`).
TEST(GpuAttention, OnHostMatchesWithALengthExpression) {
  check({.sq = 7, .skv = 7, .mask = Mask::Float, .symbolic = true, .seq_expr = true});
  check({.sq = 1, .skv = 7, .mask = Mask::Float, .symbolic = true, .seq_expr = true});
}

TEST(GpuAttention, OnHostMatchesFloat16) {
  check({.sq = 20, .skv = 45, .causal = true, .dtype = DType::Float16});
}

TEST(GpuAttention, OnHostMatchesLongSequences) {
  check({.hq = 1, .hkv = 1, .sq = 40, .skv = 2049});
  check({.hq = 1, .hkv = 1, .sq = 70, .skv = 3000, .causal = true, .symbolic = true});
}

// The CUDA build of the kernel (PTX for sm_80 and sm_86, no GPU needed): K and V tiles go through
// shared memory with barriers between the stages, nothing lives in local memory (the per-thread
// score and probs · V sums stay in registers), and the only global stores are the output's: the
// score matrix is never written to device memory. The host code allocates no device buffer for an
// intermediate (halide_device_malloc only for the kernel's inputs and output, which Halide copies).
TEST(GpuAttention, CudaKernelKeepsScoresOnChip) {
  const std::vector<Case> cases = {
      {.sq = 128, .skv = 128, .causal = true},
      {.sq = 37, .skv = 50, .symbolic = true},  // two kernels: tiles and the one-row copy
      {.sq = 21, .skv = 40, .mask = Mask::Float, .rows_nan = true},
      {.sq = 20, .skv = 45, .dtype = DType::Float16},
  };
  auto dir = std::filesystem::temp_directory_path() / "onnxc_attention_ptx";
  std::filesystem::create_directories(dir);
  for (int cap : {80, 86}) {  // Halide 14 knows capabilities up to 8.6; ptxas takes the sm_80 PTX to sm_90
    const Halide::Target cuda("host-cuda-cuda_capability_" + std::to_string(cap));
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      SCOPED_TRACE(describe(c) + " sm_" + std::to_string(cap));
      Kernel k(c, make_data(c), cuda, /*on_host=*/false);
      const std::string path = (dir / "attention.s").string();
      if (const char* stmt = getenv("ONNXC_ATTENTION_STMT"))
        k.pipeline().compile_to_lowered_stmt(std::string(stmt) + "_sm" + std::to_string(cap) + "_" + std::to_string(i),
                                             k.pipeline().infer_arguments(), Halide::Text, cuda);
      k.pipeline().compile_to_assembly(path, k.pipeline().infer_arguments(), "attention", cuda);
      std::ifstream f(path);
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      // The host assembly embeds the PTX module as string data; these words occur only there.
      const size_t ptx = text.find("Generated by LLVM NVPTX");
      ASSERT_NE(ptx, std::string::npos) << "no PTX in the CUDA build";
      const std::string kernel = text.substr(ptx), host = text.substr(0, ptx);
      EXPECT_NE(kernel.find(".target sm_" + std::to_string(cap)), std::string::npos);
      EXPECT_NE(kernel.find("ld.shared.f32"), std::string::npos) << "K/V tiles not read from shared memory";
      EXPECT_NE(kernel.find("st.shared.f32"), std::string::npos);
      EXPECT_NE(kernel.find("bar.sync"), std::string::npos);
      EXPECT_NE(kernel.find("fma.rn.f32"), std::string::npos);
      EXPECT_EQ(kernel.find("__local_depot"), std::string::npos) << "local memory (spilled per-thread values)";
      // Global stores: the output only (one store instruction per head-dim element a lane writes).
      size_t stores = 0;
      for (size_t at = kernel.find("st.global"); at != std::string::npos; at = kernel.find("st.global", at + 1))
        ++stores;
      EXPECT_GT(stores, 0u);
      EXPECT_LE(stores, 8u) << "global stores beyond the output's";
      // One device allocation at most per buffer the host copies (inputs and output), none for
      // an intermediate: Halide names device allocations of intermediates after their Func.
      EXPECT_EQ(host.find("attn_scores"), std::string::npos) << "scores allocated by the host";
    }
  }
}

}  // namespace
}  // namespace onnxc::codegen::testing
