// Partitioning and plan emission as text: which nodes share a kernel, views, weights, copy kernels
// for graph outputs; the generated plan C for a tiny model against a golden file; unsupported ops
// reported all at once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/emit/kernel_builder.h"
#include "codegen/emit/plan.h"
#include "codegen/partition.h"
#include "codegen/target.h"
#include "ir/error.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

const char* kind_text(codegen::TensorKind k) {
  static const char* names[] = {"input", "output", "intermediate", "weight", "view"};
  return names[static_cast<int>(k)];
}

// One line per tensor and per kernel: "kernel <ops> (<inputs>) -> (<outputs>)".
std::string partition_text(const codegen::Partition& p) {
  std::ostringstream os;
  for (const auto& t : p.tensors) {
    os << "tensor " << t.name << ": " << kind_text(t.kind) << " " << ir::dtype_name(t.dtype) << ir::shape_str(t.shape);
    if (t.view_of >= 0) os << " of " << p.tensors[t.view_of].name;
    os << "\n";
  }
  for (const auto& k : p.steps) {
    os << "kernel";
    if (const codegen::KernelStep* ks = k.kernel())
      for (const ir::Node* n : ks->graph->nodes()) os << " " << n->op_type();
    os << " (";
    for (size_t i = 0; i < k.inputs.size(); ++i) os << (i ? ", " : "") << p.tensors[k.inputs[i]].name;
    os << ") -> (";
    for (size_t i = 0; i < k.outputs.size(); ++i) os << (i ? ", " : "") << p.tensors[k.outputs[i]].name;
    os << ")\n";
  }
  return os.str();
}

// scores = MatMul(q, k) * 0.25 + mask; softmax; a reshape view; the input also returned.
ir::Model attention_like() {
  ModelBuilder b(17);
  Dim t = Dim::symbol("t");
  auto* q = b.input("q", DType::Float32, {t, 8});
  auto* kt = b.const_f32("kt", {8, 4}, std::vector<float>(32, 0.5f));
  auto* mask = b.input("mask", DType::Float32, {t, 4});
  auto* scale = b.const_f32("scale", {}, {0.25f});
  auto* s = b.op("MatMul", {q, kt}, "s", DType::Float32, {t, 4});
  auto* sc = b.op("Mul", {s, scale}, "sc", DType::Float32, {t, 4});
  auto* sm = b.op("Add", {sc, mask}, "sm", DType::Float32, {t, 4});
  auto* p = b.op("Softmax", {sm}, "p", DType::Float32, {t, 4});
  auto* shape = b.const_i64("shape", {-1});
  auto* flat = b.op("Reshape", {p, shape}, "flat", DType::Float32, {4 * t});
  auto* e = b.op("Exp", {flat}, "e", DType::Float32, {4 * t});
  b.output(b.op("Neg", {e}, "y", DType::Float32, {4 * t}));
  b.output(q);
  return std::move(b.model());
}

TEST(Partition, FusesEpilogueSoftmaxAndViews) {
  ir::Model m = attention_like();
  codegen::Partition p = codegen::partition_model(m);
  EXPECT_EQ(partition_text(p),
            "tensor q: input f32[t,8]\n"
            "tensor mask: input f32[t,4]\n"
            "tensor p: intermediate f32[t,4]\n"
            "tensor flat: view f32[4*t] of p\n"
            "tensor kt: weight f32[8,4]\n"
            "tensor scale: weight f32[]\n"
            "tensor sm: intermediate f32[t,4]\n"
            "tensor y: output f32[4*t]\n"
            "tensor q: output f32[t,8]\n"
            "kernel MatMul Mul Add (q, kt, scale, mask) -> (sm)\n"
            "kernel Softmax (sm) -> (p)\n"
            "kernel Exp Neg (flat) -> (y)\n"
            "kernel Copy (q) -> (q)\n");
}

// Skip-norm: the residual Add before a norm is never a kernel of its own when it can be fused.
// Read once by the norm only: inlined into the norm kernel (lower_norm_test checks its values).
// Its sum also read later (pre-LN residual stream) after a GEMM: the GEMM's epilogue writes the sum
// once and the norm reads it. A sum of two non-GEMM values read again after the norm: see below.
TEST(Partition, ResidualAddBeforeNormJoinsNormOrGemmEpilogue) {
  ModelBuilder b(17);
  Dim t = Dim::symbol("t");
  auto* x = b.input("x", DType::Float32, {t, 8});
  auto* r = b.input("r", DType::Float32, {t, 8});
  auto* w = b.const_f32("w", {8, 8}, std::vector<float>(64, 0.125f));
  auto* g = b.const_f32("g", {8}, std::vector<float>(8, 1.0f));
  auto ln = [&](ir::Value* in, const std::string& name) {
    return b.node("LayerNormalization", {in, g}, {{name, ir::Type::tensor(DType::Float32, ir::Shape{t, 8})}})->output();
  };
  auto* s1 = b.op("Add", {x, r}, "s1", DType::Float32, {t, 8});
  auto* h1 = ln(s1, "h1");                                             // post-LN: LN(x + r)
  auto* proj = b.op("MatMul", {h1, w}, "proj", DType::Float32, {t, 8});
  auto* s2 = b.op("Add", {proj, x}, "s2", DType::Float32, {t, 8});   // pre-LN stream: s2 read twice
  auto* h2 = ln(s2, "h2");
  b.output(b.op("Add", {h2, s2}, "y", DType::Float32, {t, 8}));
  codegen::Partition p = codegen::partition_model(b.model());
  std::string text = partition_text(p);
  EXPECT_NE(text.find("kernel Add LayerNormalization (x, r, g) -> (h1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel MatMul Add (h1, w, x) -> (s2)\n"), std::string::npos) << text;
  EXPECT_EQ(p.steps.size(), 4u) << text;  // Add+LN, MatMul+residual, LN, the last Add
}

// A residual sum of two non-GEMM values (GPT-2's token + position embeddings, x + attn_out) read by
// the norm and again after it: the norm kernel writes the sum as a second output (2 kernels, not
// 3), with the same values as the graph. A reader before the norm keeps the sum a kernel of its own
// (joining would make a path leave the norm kernel and come back).
TEST(Partition, ResidualSumReadTwiceIsWrittenByTheNormKernel) {
  auto model = [](bool reader_first) {
    ModelBuilder b(17);
    auto* x = b.input("x", DType::Float32, {3, 8});
    auto* r = b.input("r", DType::Float32, {3, 8});
    auto* g = b.const_f32("g", {8}, {1.0f, 0.5f, 2.0f, 1.0f, -1.0f, 1.5f, 1.0f, 0.25f});
    auto* s = b.op("Add", {x, r}, "s", DType::Float32, {3, 8});
    ir::Value* early = reader_first ? b.op("Neg", {s}, "early", DType::Float32, {3, 8}) : nullptr;
    auto* h = b.node("LayerNormalization", {s, g}, {{"h", ir::Type::tensor(DType::Float32, ir::Shape{3, 8})}})->output();
    auto* y = b.op("Add", {h, s}, "y", DType::Float32, {3, 8});  // the next residual reads the sum
    b.output(early ? b.op("Add", {y, early}, "z", DType::Float32, {3, 8}) : y);
    return std::move(b.model());
  };
  ir::Model m = model(false);
  codegen::Partition p = codegen::partition_model(m);
  std::string text = partition_text(p);
  EXPECT_NE(text.find("kernel Add LayerNormalization (x, r, g) -> (s, h)\n"), std::string::npos) << text;
  EXPECT_EQ(p.steps.size(), 2u) << text;
  std::vector<float> xv(24), rv(24);
  for (int i = 0; i < 24; ++i) xv[i] = std::sin(0.7f * i) * 3, rv[i] = std::cos(0.3f * i);
  auto out = compile_and_run(m, {HostTensor::f32({3, 8}, xv), HostTensor::f32({3, 8}, rv)}, "residual_norm")[0].values<float>();
  const float gv[8] = {1.0f, 0.5f, 2.0f, 1.0f, -1.0f, 1.5f, 1.0f, 0.25f};
  for (int row = 0; row < 3; ++row) {
    double mean = 0, var = 0;
    for (int c = 0; c < 8; ++c) mean += xv[row * 8 + c] + rv[row * 8 + c];
    mean /= 8;
    for (int c = 0; c < 8; ++c) var += std::pow(xv[row * 8 + c] + rv[row * 8 + c] - mean, 2);
    var /= 8;
    for (int c = 0; c < 8; ++c) {
      double sum = xv[row * 8 + c] + rv[row * 8 + c];
      double want = (sum - mean) / std::sqrt(var + 1e-5) * gv[c] + sum;
      EXPECT_NEAR(out[row * 8 + c], want, 1e-4) << row << "," << c;
    }
  }
  codegen::Partition early = codegen::partition_model(model(true));
  std::string early_text = partition_text(early);
  EXPECT_NE(early_text.find("kernel Add (x, r) -> (s)\n"), std::string::npos) << early_text;
  EXPECT_EQ(early.steps.size(), 3u) << early_text;  // the sum, LN, then Neg and the Adds
}

TEST(Partition, UnsupportedOpsAreAllListed) {
  ModelBuilder b;
  auto* x = b.input("x", DType::Float32, {2});
  auto* a = b.op("FancyOp", {x}, "a", DType::Float32, {2});
  auto* c = b.op("OtherOp", {a}, "c", DType::Float32, {2});
  b.output(b.op("Relu", {c}, "y", DType::Float32, {2}));
  try {
    codegen::partition_model(b.model());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("FancyOp (FancyOp node 'FancyOp_1')"), std::string::npos) << msg;
    EXPECT_NE(msg.find("OtherOp (OtherOp node 'OtherOp_2')"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("Relu"), std::string::npos) << msg;
  }
}

// The plan C of a small model, byte for byte. Regenerate with ONNXC_UPDATE_GOLDEN=1 after an
// intended change, and review the diff.
TEST(Partition, PlanCMatchesGolden) {
  ModelBuilder b(17);
  Dim batch = Dim::symbol("batch");
  auto* x = b.input("x", DType::Float32, {batch, 4});
  auto* w = b.const_f32("w", {4}, {1, 2, 3, 4});
  auto* a = b.op("Add", {x, w}, "a", DType::Float32, {batch, 4});
  auto* shape = b.const_i64("shape", {-1, 2});
  auto* r = b.op("Reshape", {a, shape}, "r", DType::Float32, {2 * batch, 2});
  b.output(b.op("Softmax", {r}, "y", DType::Float32, {2 * batch, 2}));
  b.output(x);
  codegen::Partition p = codegen::partition_model(b.model());
  Halide::Target t = codegen::parse_target("x86-64-avx512").with_feature(Halide::Target::NoRuntime);
  std::vector<codegen::BuiltKernel> built;
  for (const auto& k : p.steps) built.push_back(codegen::build_kernel(k, p, t, "x86-64-avx512"));
  auto plan = codegen::make_plan(p, built, "golden", "x86-64-avx512", false);
  std::string text = codegen::generate_plan_c(plan);
  // The thread pool and scratch hooks are the same text in every plan and have their own tests
  // (HostRuntime.*); the golden file pins what this model's plan adds around them.
  const std::string hooks = codegen::host_runtime_c();
  size_t at = text.find(hooks);
  ASSERT_NE(at, std::string::npos) << "the plan does not carry the host runtime hooks";
  text.replace(at, hooks.size(), "/* host_runtime_c() */\n");
  std::string path = std::string(ONNXC_SOURCE_DIR) + "/tests/codegen/golden/plan_add_reshape_softmax.c";
  if (std::getenv("ONNXC_UPDATE_GOLDEN")) std::ofstream(path) << text;
  std::ifstream f(path);
  std::string expected((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(text, expected) << "golden file " << path << " differs; ONNXC_UPDATE_GOLDEN=1 rewrites it";
}

}  // namespace
}  // namespace onnxc::test
