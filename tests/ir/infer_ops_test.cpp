// Inference rules per op family on hand-built graphs: broadcasting, contractions, windows, slicing,
// reductions and the opset-dependent argument forms.
#include <gtest/gtest.h>

#include <limits>

#include "builder.h"
#include "ir/error.h"

namespace onnxc::ir {
namespace {

using test::Builder;
using test::sym;
using test::type_of;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

TEST(InferElementwise, BroadcastsSymbolicDims) {
  Builder b;
  Value* scores = b.input("s", DType::Float32, {sym("batch"), 4, sym("seq"), sym("seq")});
  Value* mask = b.input("m", DType::Float32, {sym("batch"), 1, 1, sym("seq")});
  Value* a = b.op("Add", {scores, mask});
  Value* c =
      b.op("Mul", {b.input("row", DType::Float32, {sym("seq")}), b.input("col", DType::Float32, {sym("batch"), 1})});
  Value* d = b.op("Sub", {b.input("p", DType::Float32, {sym("n")}), b.input("q", DType::Float32, {sym("m")})});
  Value* e = b.op("Where", {b.input("cond", DType::Bool, {sym("seq"), 1}), b.input("t", DType::Float16, {}),
                            b.input("f", DType::Float16, {1, 8})});
  Value* cmp = b.op("Less", {a, mask});
  b.infer();
  EXPECT_EQ(type_of(a), "f32[batch,4,seq,seq]");
  EXPECT_EQ(type_of(c), "f32[batch,seq]");
  EXPECT_EQ(type_of(d), "f32[max(m,n)]");  // valid broadcasting: equal, or one of them is 1
  EXPECT_EQ(type_of(e), "f16[seq,8]");
  EXPECT_EQ(type_of(cmp), "bool[batch,4,seq,seq]");
}

TEST(InferElementwise, CastAndVariadic) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {2, 3});
  Node* cast = b.node("Cast", {x});
  cast->set_attr_int("to", static_cast<int64_t>(DType::Float16));
  Value* sum = b.op("Sum", {x, b.input("y", DType::Float32, {3}), b.input("z", DType::Float32, {1, 1})});
  b.infer();
  EXPECT_EQ(type_of(cast->output(0)), "f16[2,3]");
  EXPECT_EQ(type_of(sum), "f32[2,3]");
}

TEST(InferMatMul, NumpyRulesIncludingVectors) {
  Builder c;
  Value* vk = c.input("k", DType::Float32, {64});
  Value* vw = c.input("w", DType::Float32, {64, 32});
  Value* vx = c.input("x", DType::Float32, {sym("batch"), sym("seq"), 64});
  Value* a = c.op("MatMul", {vk, vw});
  Value* m = c.op("MatMul", {vx, vk});
  Value* p = c.op("MatMul", {vx, vw});
  Value* q = c.op("MatMul", {c.input("q", DType::Float32, {2, 1, 5, 8}), c.input("r", DType::Float32, {3, 8, 7})});
  Node* gemm = c.node("Gemm", {c.input("ga", DType::Float32, {8, sym("n")}), c.input("gb", DType::Float32, {16, 8})});
  gemm->set_attr_int("transA", 1);
  gemm->set_attr_int("transB", 1);
  c.infer();
  EXPECT_EQ(type_of(a), "f32[32]");
  EXPECT_EQ(type_of(m), "f32[batch,seq]");
  EXPECT_EQ(type_of(p), "f32[batch,seq,32]");
  EXPECT_EQ(type_of(q), "f32[2,3,5,7]");
  EXPECT_EQ(type_of(gemm->output(0)), "f32[n,16]");
}

TEST(InferMatMul, Einsum) {
  Builder b;
  Node* bmm = b.node("Einsum",
                     {b.input("a", DType::Float32, {sym("b"), 3, 4}), b.input("c", DType::Float32, {sym("b"), 4, 5})});
  bmm->set_attr_string("equation", "bij,bjk->bik");
  Node* implicit = b.node("Einsum", {b.input("x", DType::Float32, {3, 4}), b.input("y", DType::Float32, {4, 5})});
  implicit->set_attr_string("equation", "ij,jk");
  Node* ell = b.node("Einsum", {b.input("e", DType::Float32, {2, 7, 3, 4})});
  ell->set_attr_string("equation", "...ij->...ji");
  b.infer();
  EXPECT_EQ(type_of(bmm->output(0)), "f32[b,3,5]");
  EXPECT_EQ(type_of(implicit->output(0)), "f32[3,5]");
  EXPECT_EQ(type_of(ell->output(0)), "f32[2,7,4,3]");
}

TEST(InferConv, OutputSizeFormulas) {
  Builder b;
  Value* img = b.input("img", DType::Float32, {1, 3, 224, 224});
  Node* stem = b.node("Conv", {img, b.input("w", DType::Float32, {64, 3, 7, 7})});
  stem->set_attr_ints("strides", {2, 2});
  stem->set_attr_ints("pads", {3, 3, 3, 3});
  Value* sx = b.input("sx", DType::Float32, {sym("N"), 3, sym("H"), sym("W")});
  Node* sym_conv = b.node("Conv", {sx, b.input("w3", DType::Float32, {8, 3, 3, 3})});
  sym_conv->set_attr_ints("strides", {2, 2});
  sym_conv->set_attr_ints("pads", {1, 1, 1, 1});
  Node* same = b.node("Conv", {sx, b.input("w5", DType::Float32, {8, 3, 5, 5})});
  same->set_attr_string("auto_pad", "SAME_UPPER");
  same->set_attr_ints("strides", {2, 2});
  Node* dilated = b.node("Conv", {img, b.input("wd", DType::Float32, {4, 3, 3, 3})});
  dilated->set_attr_ints("dilations", {2, 2});
  Node* pool = b.node("MaxPool", {b.input("p", DType::Float32, {1, 1, 4, 4})}, 2);
  pool->set_attr_ints("kernel_shape", {3, 3});
  pool->set_attr_ints("strides", {2, 2});
  pool->set_attr_int("ceil_mode", 1);
  Node* deconv = b.node("ConvTranspose", {b.input("d", DType::Float32, {1, 8, sym("H"), 5}),
                                          b.input("wt", DType::Float32, {8, 2, 3, 3})});
  deconv->set_attr_ints("strides", {2, 2});
  deconv->set_attr_int("group", 2);
  Value* gap = b.op("GlobalAveragePool", {sx});
  b.infer();
  EXPECT_EQ(type_of(stem->output(0)), "f32[1,64,112,112]");
  EXPECT_EQ(type_of(sym_conv->output(0)), "f32[N,8,floordiv(H-1,2)+1,floordiv(W-1,2)+1]");
  EXPECT_EQ(type_of(same->output(0)), "f32[N,8,ceildiv(H,2),ceildiv(W,2)]");
  EXPECT_EQ(type_of(dilated->output(0)), "f32[1,4,220,220]");
  EXPECT_EQ(type_of(pool->output(0)), "f32[1,1,2,2]");
  EXPECT_EQ(type_of(pool->output(1)), "i64[1,1,2,2]");
  EXPECT_EQ(type_of(deconv->output(0)), "f32[1,4,2*H+1,11]");
  EXPECT_EQ(type_of(gap), "f32[N,3,1,1]");
}

Value* slice(Builder& b, Value* x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
             std::vector<int64_t> steps = {}) {
  std::vector<Value*> ins{x, b.ints(starts), b.ints(ends), b.ints(axes)};
  if (!steps.empty()) ins.push_back(b.ints(steps));
  return b.op("Slice", ins);
}

TEST(InferSlice, ClampsSymbolically) {
  Builder b;
  Value* x = b.input("x", DType::Float32, {sym("seq"), 10});
  Value* last3 = slice(b, x, {-3}, {kEnd}, {0});
  Value* inner = slice(b, x, {1}, {-1}, {0});
  Value* head = slice(b, x, {0}, {4}, {0});
  Value* reversed = slice(b, x, {-1}, {std::numeric_limits<int64_t>::min()}, {0}, {-1});
  Value* clamped = slice(b, x, {-100}, {100}, {1});
  Value* strided = slice(b, x, {1}, {kEnd}, {-1}, {2});
  Value* backwards = slice(b, x, {8}, {1}, {1}, {-3});
  Value* halves = slice(b, x, {0}, {kEnd}, {0}, {2});
  b.infer();
  EXPECT_EQ(type_of(last3), "f32[min(3,seq),10]");
  EXPECT_EQ(type_of(inner), "f32[max(0,seq-2),10]");
  EXPECT_EQ(type_of(head), "f32[min(4,seq),10]");
  EXPECT_EQ(type_of(reversed), "f32[seq,10]");
  EXPECT_EQ(type_of(clamped), "f32[seq,10]");
  EXPECT_EQ(type_of(strided), "f32[seq,5]");
  EXPECT_EQ(type_of(backwards), "f32[seq,3]");
  EXPECT_EQ(type_of(halves), "f32[ceildiv(seq,2),10]");
}

TEST(InferSlice, BoundsFromShapeValues) {
  Builder b;
  Value* cache = b.input("cache", DType::Float32, {sym("total"), 8});
  Value* q = b.input("q", DType::Float32, {sym("seq"), 8});
  Value* seq = b.op("Slice", {b.op("Shape", {q}), b.ints({0}), b.ints({1})});
  Value* y = b.op("Slice", {cache, b.ints({0}), seq, b.ints({0})});
  Value* past = b.input("past_kv", DType::Float32, {sym("past"), 8});
  Value* cat = b.op("Concat", {past, q});
  Value* all =
      b.op("Slice", {cat, b.ints({0}), b.op("Slice", {b.op("Shape", {cat}), b.ints({0}), b.ints({1})}), b.ints({0})});
  b.infer();
  EXPECT_EQ(type_of(y), "f32[min(seq,total),8]");
  EXPECT_EQ(type_of(cat), "f32[past+seq,8]");
  EXPECT_EQ(type_of(all), "f32[past+seq,8]");
}

TEST(InferShapeOps, SplitSqueezeUnsqueezeByOpset) {
  Builder old(11);
  Value* x = old.input("x", DType::Float32, {sym("b"), 1, 6});
  Node* split = old.node("Split", {x}, 2);
  split->set_attr_int("axis", 2);
  split->set_attr_ints("split", {2, 4});
  Node* sq = old.node("Squeeze", {x});
  sq->set_attr_ints("axes", {1});
  Node* usq = old.node("Unsqueeze", {x});
  usq->set_attr_ints("axes", {0, -1});
  old.infer();
  EXPECT_EQ(type_of(split->output(0)), "f32[b,1,2]");
  EXPECT_EQ(type_of(split->output(1)), "f32[b,1,4]");
  EXPECT_EQ(type_of(sq->output(0)), "f32[b,6]");
  EXPECT_EQ(type_of(usq->output(0)), "f32[1,b,1,6,1]");

  Builder now(18);
  Value* y = now.input("y", DType::Float32, {sym("b"), 1, 7});
  Node* uneven = now.node("Split", {y}, 3);
  uneven->set_attr_int("axis", -1);
  uneven->set_attr_int("num_outputs", 3);
  Value* halves = now.op("Split", {now.input("h", DType::Float32, {2 * sym("n")})});
  now.attrs(halves).remove_trailing_inputs(1);
  Node* two = now.node("Split", {now.input("t", DType::Float32, {sym("n")})}, 2);
  Value* sq2 = now.op("Squeeze", {y, now.ints({1})});
  Value* usq2 = now.op("Unsqueeze", {y, now.ints({1})});
  now.infer();
  EXPECT_EQ(type_of(uneven->output(2)), "f32[b,1,1]");
  EXPECT_EQ(type_of(uneven->output(0)), "f32[b,1,3]");
  EXPECT_EQ(type_of(two->output(0)), "f32[ceildiv(n,2)]");
  EXPECT_EQ(type_of(two->output(1)), "f32[n-ceildiv(n,2)]");
  EXPECT_EQ(type_of(sq2), "f32[b,7]");
  EXPECT_EQ(type_of(usq2), "f32[b,1,1,7]");
}

TEST(InferReduce, AxesAsAttributeOrInputByOpset) {
  Builder old(11);
  Value* x = old.input("x", DType::Float32, {sym("b"), sym("s"), 64});
  Node* mean = old.node("ReduceMean", {x});
  mean->set_attr_ints("axes", {-1});
  Node* sum = old.node("ReduceSum", {x});
  sum->set_attr_ints("axes", {1});
  sum->set_attr_int("keepdims", 0);
  Node* all = old.node("ReduceMax", {x});
  old.infer();
  EXPECT_EQ(type_of(mean->output(0)), "f32[b,s,1]");
  EXPECT_EQ(type_of(sum->output(0)), "f32[b,64]");
  EXPECT_EQ(type_of(all->output(0)), "f32[1,1,1]");

  Builder now(18);
  Value* y = now.input("y", DType::Float32, {sym("b"), sym("s"), 64});
  Value* m = now.op("ReduceMean", {y, now.ints({-1})});
  Node* noop = now.node("ReduceSum", {y, now.ints({})});
  noop->set_attr_int("noop_with_empty_axes", 1);
  Node* arg = now.node("ArgMax", {y});
  arg->set_attr_int("axis", 1);
  arg->set_attr_int("keepdims", 0);
  Value* k = now.op("TopK", {y, now.ints({5})});
  now.infer();
  EXPECT_EQ(type_of(m), "f32[b,s,1]");
  EXPECT_EQ(type_of(noop->output(0)), "f32[b,s,64]");
  EXPECT_EQ(type_of(arg->output(0)), "i64[b,64]");
  EXPECT_EQ(type_of(k), "f32[b,s,5]");
}

TEST(InferIndex, GatherFamily) {
  Builder b;
  Value* emb = b.input("emb", DType::Float32, {1000, 64});
  Value* ids = b.input("ids", DType::Int64, {sym("batch"), sym("seq")});
  Value* tok = b.op("Gather", {emb, ids});
  Value* one = b.op("Gather", {b.input("h", DType::Float32, {sym("batch"), sym("seq"), 64}), b.ints({-1}, true)});
  b.attrs(one).set_attr_int("axis", 1);
  Value* nd = b.op("GatherND", {b.input("d", DType::Float32, {2, 3, 4}), b.input("i", DType::Int64, {sym("k"), 2})});
  Value* hot = b.op("OneHot", {ids, b.ints({10}, true), b.floats({0, 1})});
  b.infer();
  EXPECT_EQ(type_of(tok), "f32[batch,seq,64]");
  EXPECT_EQ(type_of(one), "f32[batch,64]");
  EXPECT_EQ(type_of(nd), "f32[k,4]");
  EXPECT_EQ(type_of(hot), "f32[batch,seq,10]");
}

TEST(InferNN, ResizeScalesStaySymbolic) {
  Builder b(13);
  Value* x = b.input("x", DType::Float32, {sym("N"), 3, sym("H"), sym("W")});
  Value* up = b.op("Resize", {x, nullptr, b.floats({1, 1, 2, 2})});
  Value* down = b.op("Resize", {x, nullptr, b.floats({1, 1, 0.5f, 0.5f})});
  Value* sized = b.op("Resize", {x, nullptr, nullptr, b.ints({1, 3, 32, 32})});
  b.infer();
  EXPECT_EQ(type_of(up), "f32[N,3,2*H,2*W]");
  EXPECT_EQ(type_of(down), "f32[N,3,floordiv(H,2),floordiv(W,2)]");
  EXPECT_EQ(type_of(sized), "f32[1,3,32,32]");
}

TEST(InferNN, RecurrentAndNormOutputs) {
  Builder b;
  Node* lstm = b.node("LSTM",
                      {b.input("x", DType::Float32, {sym("seq"), sym("batch"), 16}),
                       b.input("w", DType::Float32, {2, 128, 16}), b.input("r", DType::Float32, {2, 128, 32})},
                      3);
  lstm->set_attr_string("direction", "bidirectional");
  lstm->set_attr_int("hidden_size", 32);
  Node* ln =
      b.node("LayerNormalization",
             {b.input("h", DType::Float32, {sym("batch"), sym("seq"), 64}), b.input("g", DType::Float32, {64})}, 3);
  b.infer();
  EXPECT_EQ(type_of(lstm->output(0)), "f32[seq,2,batch,32]");
  EXPECT_EQ(type_of(lstm->output(2)), "f32[2,batch,32]");
  EXPECT_EQ(type_of(ln->output(0)), "f32[batch,seq,64]");
  EXPECT_EQ(type_of(ln->output(1)), "f32[batch,seq,1]");
}

}  // namespace
}  // namespace onnxc::ir

namespace onnxc::ir {
namespace {

TEST(InferSequence, ElementsOfKnownSequences) {
  test::Builder b;
  Value* x = b.input("x", DType::Float32, {2, 3, 4});
  Value* y = b.input("y", DType::Float32, {2, 5, 4});
  Value* seq = b.op("SequenceConstruct", {x, y});
  Value* stacked = b.op("ConcatFromSequence", {seq});
  b.attrs(stacked).set_attr_int("axis", 1);
  Value* second = b.op("SequenceAt", {seq, b.ints({-1}, true)});
  Value* len = b.op("SequenceLength", {b.op("SequenceInsert", {seq, x})});
  Value* parts = b.op("SplitToSequence", {x, b.ints({1, 3})});
  b.attrs(parts).set_attr_int("axis", 2);
  Value* part0 = b.op("SequenceAt", {parts, b.ints({0}, true)});
  InferenceResult r = b.infer();
  EXPECT_EQ(test::type_of(seq), "seq(f32[2,?,4])");
  EXPECT_EQ(test::type_of(stacked), "f32[2,8,4]");
  EXPECT_EQ(test::type_of(second), "f32[2,5,4]");
  EXPECT_EQ(shape_str(*shape_value(r, len)), "[3]");
  EXPECT_EQ(test::type_of(part0), "f32[2,3,1]");
}

}  // namespace
}  // namespace onnxc::ir
