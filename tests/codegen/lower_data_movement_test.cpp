// Data-movement and shape lowerings: Transpose, Concat (parts empty at run time), Split, Slice
// (negative, stepped, clamped, symbolic extents), Gather, Expand, Tile, Pad, Trilu, Shape, ConstantOfShape, Range,
// onnxc.SymbolicShape, onnxc.Copy into another shape.
#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

TEST(LowerDataMovement, TransposeConcatSplit) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 3});
  auto* y = b.input("y", DType::Float32, {n, 1});
  ir::Node* t = b.node("Transpose", {x}, {{"xt", ir::Type::tensor(DType::Float32, ir::Shape{3, n})}});
  t->set_attr_ints("perm", {1, 0});
  b.output(t->output());
  ir::Node* c = b.node("Concat", {y, x, y}, {{"cat", ir::Type::tensor(DType::Float32, ir::Shape{n, 5})}});
  c->set_attr_int("axis", 1);
  b.output(c->output());
  auto* sizes = b.const_i64("sizes", {1, 2});
  ir::Node* s = b.node("Split", {x, sizes}, {{"s0", ir::Type::tensor(DType::Float32, ir::Shape{n, 1})},
                                             {"s1", ir::Type::tensor(DType::Float32, ir::Shape{n, 2})}});
  s->set_attr_int("axis", 1);
  b.output(s->output(0));
  b.output(s->output(1));
  auto r = compile(b.model(), "tcs");
  LoadedModel lib(r.so_path);
  auto out = lib.run({HostTensor::f32({2, 3}, iota(6)), HostTensor::f32({2, 1}, {-1, -2})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {-1, 0, 1, 2, -1, -2, 3, 4, 5, -2}));
  EXPECT_TRUE(all_close(out[2].values<float>(), {0, 3}));
  EXPECT_TRUE(all_close(out[3].values<float>(), {1, 2, 4, 5}));
}

// Parts of run-time length, any of them empty (the first step of a generation concatenates an
// empty past), in a Concat fused with its consumer: an empty part has no row to read, and its read
// (bounds-checked even where the select skips it) is dropped by the kernel's specialization.
TEST(LowerDataMovement, ConcatOfEmptyPartsFused) {
  ModelBuilder b(13);
  Dim p = Dim::symbol("p"), s = Dim::symbol("s"), t = Dim::symbol("t");
  auto* x = b.input("x", DType::Float32, {2, p, 4});
  auto* y = b.input("y", DType::Float32, {2, s, 4});
  auto* z = b.input("z", DType::Float32, {2, t, 4});
  ir::Node* c = b.node("Concat", {x, y, z}, {{"cat", ir::Type::tensor(DType::Float32, ir::Shape{2, p + s + t, 4})}});
  c->set_attr_int("axis", 1);
  b.output(b.op("Mul", {c->output(), c->output()}, "sq", DType::Float32, {2, p + s + t, 4}));
  LoadedModel lib(compile(b.model(), "concat_empty_parts").so_path);
  const std::vector<std::array<int, 3>> lengths = {{0, 3, 2}, {3, 0, 2}, {3, 2, 0}, {0, 0, 2},
                                                   {0, 2, 0}, {2, 0, 0}, {1, 2, 3}, {40, 0, 300}};
  for (const auto& len : lengths) {
    std::vector<HostTensor> ins;
    std::vector<std::vector<float>> parts;
    for (int k = 0; k < 3; ++k) {
      parts.push_back(iota(2 * len[k] * 4, 100.0f * (k + 1)));
      for (float& e : parts.back()) e = e / 64 - 2;
      ins.push_back(HostTensor::f32({2, len[k], 4}, parts.back()));
    }
    std::vector<float> want;
    for (int batch = 0; batch < 2; ++batch)
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < len[k] * 4; ++i) {
          float e = parts[k][static_cast<size_t>(batch * len[k] * 4 + i)];
          want.push_back(e * e);
        }
    auto out = lib.run(ins);
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, len[0] + len[1] + len[2], 4}));
    EXPECT_EQ(out[0].values<float>(), want) << len[0] << ", " << len[1] << ", " << len[2];
  }
}

// More parts of run-time length than a kernel specializes on (kMaxEmptyReads), one of them a
// length that is an expression (a Slice's q - 1, empty where q is 1): any subset of them empty.
TEST(LowerDataMovement, ConcatOfManyEmptyPartsAndExpressionLengths) {
  constexpr int kParts = 6;  // the inputs; a seventh part is the slice of the last one
  ModelBuilder b(13);
  std::vector<ir::Value*> parts;
  Dim total = Dim(0);
  for (int k = 0; k < kParts; ++k) {
    Dim len = Dim::symbol("p" + std::to_string(k));
    parts.push_back(b.input("x" + std::to_string(k), DType::Float32, {2, len, 3}));
    total = total + len;
  }
  Dim q = Dim::symbol("p" + std::to_string(kParts - 1));
  auto* st = b.const_i64("st", {1});
  auto* en = b.const_i64("en", {INT64_MAX});
  auto* ax = b.const_i64("ax", {1});
  parts.push_back(b.op("Slice", {parts.back(), st, en, ax}, "tail", DType::Float32, {2, q - 1, 3}));
  total = total + (q - 1);
  ir::Node* c = b.node("Concat", parts, {{"cat", ir::Type::tensor(DType::Float32, ir::Shape{2, total, 3})}});
  c->set_attr_int("axis", 1);
  b.output(b.op("Mul", {c->output(), c->output()}, "sq", DType::Float32, {2, total, 3}));
  LoadedModel lib(compile(b.model(), "concat_many_empty_parts").so_path);
  const std::vector<std::array<int, kParts>> lengths = {{0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 2}, {1, 0, 2, 0, 0, 1},
                                                        {0, 0, 0, 0, 3, 1}, {2, 1, 0, 3, 1, 4}, {0, 5, 0, 0, 0, 1},
                                                        {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 7}};
  for (const auto& len : lengths) {
    std::vector<HostTensor> ins;
    std::vector<std::vector<float>> values;
    for (int k = 0; k < kParts; ++k) {
      values.push_back(iota(2 * len[k] * 3, 100.0f * (k + 1)));
      for (float& e : values.back()) e = e / 64 - 2;
      ins.push_back(HostTensor::f32({2, len[k], 3}, values.back()));
    }
    std::vector<float> want;
    int rows = 0;
    for (int batch = 0; batch < 2; ++batch) {
      for (int k = 0; k <= kParts; ++k) {
        const int part = std::min(k, kParts - 1), from = k == kParts ? 1 : 0;  // the slice skips a row
        for (int r = from; r < len[part]; ++r)
          for (int i = 0; i < 3; ++i) {
            float e = values[part][static_cast<size_t>((batch * len[part] + r) * 3 + i)];
            want.push_back(e * e);
          }
        if (batch == 0) rows += len[part] - from;
      }
    }
    SCOPED_TRACE(::testing::PrintToString(len));
    auto out = lib.run(ins);
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, rows, 3}));
    EXPECT_EQ(out[0].values<float>(), want);
  }
}

// A part whose length is an expression (v holds q - 1 rows, q being x's), read by a Concat fused
// with its consumer: empty where q is 1, and then not read.
TEST(LowerDataMovement, ConcatOfAnEmptyPartOfExpressionLength) {
  ModelBuilder b(13);
  Dim p = Dim::symbol("p"), q = Dim::symbol("q");
  auto* x = b.input("x", DType::Float32, {2, q, 3});
  auto* v = b.input("v", DType::Float32, {2, q - 1, 3});
  auto* y = b.input("y", DType::Float32, {2, p, 3});
  ir::Node* c = b.node("Concat", {y, v, x}, {{"cat", ir::Type::tensor(DType::Float32, ir::Shape{2, p + (q - 1) + q, 3})}});
  c->set_attr_int("axis", 1);
  b.output(b.op("Mul", {c->output(), c->output()}, "sq", DType::Float32, {2, p + (q - 1) + q, 3}));
  LoadedModel lib(compile(b.model(), "concat_expression_length").so_path);
  for (auto [lp, lq] : std::vector<std::pair<int, int>>{{2, 1}, {0, 1}, {0, 3}, {3, 4}, {1, 1}}) {
    SCOPED_TRACE(std::to_string(lp) + ", " + std::to_string(lq));
    const std::vector<int> rows = {lp, lq - 1, lq};
    std::vector<std::vector<float>> parts;
    for (int k = 0; k < 3; ++k) parts.push_back(iota(2 * rows[k] * 3, 10.0f * static_cast<float>(k) - 7));
    std::vector<float> want;
    for (int batch = 0; batch < 2; ++batch)
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < rows[k] * 3; ++i) {
          float e = parts[k][static_cast<size_t>(batch * rows[k] * 3 + i)];
          want.push_back(e * e);
        }
    auto out = lib.run({HostTensor::f32({2, lq, 3}, parts[2]), HostTensor::f32({2, lq - 1, 3}, parts[1]),
                        HostTensor::f32({2, lp, 3}, parts[0])});
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, lp + 2 * lq - 1, 3}));
    EXPECT_EQ(out[0].values<float>(), want);
  }
}

// x[1:] of a one-row x has no rows, a count known only at run time: the elementwise kernel after it
// writes nothing (its row loop, split into parallel tasks, was bounded from row -2048).
TEST(LowerDataMovement, SliceToNoRowsThenElementwise) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 4});
  auto* one = b.const_i64("one", {1});
  auto* big = b.const_i64("big", {INT64_MAX});
  auto* zero = b.const_i64("zero", {0});
  auto* rows = b.op("Slice", {x, one, big, zero}, "rows", DType::Float32, {n - 1, 4});
  b.output(b.op("Relu", {rows}, "y", DType::Float32, {n - 1, 4}));
  LoadedModel lib(compile(b.model(), "slice_no_rows").so_path);
  auto out = lib.run({HostTensor::f32({1, 4}, {1, -2, 3, -4})});
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{0, 4}));
  out = lib.run({HostTensor::f32({2, 4}, {1, -2, 3, -4, -5, 6, -7, 8})});
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(out[0].values<float>(), (std::vector<float>{0, 6, 0, 8}));
}

TEST(LowerDataMovement, SliceNegativeSteppedClampedSymbolic) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 6});
  // x[1:, -1:-7:-2] with ends clamped: rows 1..n-1, columns 5, 3, 1.
  auto* st = b.const_i64("st", {1, -1});
  auto* en = b.const_i64("en", {INT64_MAX, -100});
  auto* ax = b.const_i64("ax", {0, 1});
  auto* sp = b.const_i64("sp", {1, -2});
  b.output(b.op("Slice", {x, st, en, ax, sp}, "s", DType::Float32, {n - 1, 3}));
  auto r = compile(b.model(), "slice");
  LoadedModel lib(r.so_path);
  auto out = lib.run({HostTensor::f32({3, 6}, iota(18))});
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(all_close(out[0].values<float>(), {11, 9, 7, 17, 15, 13}));
}

TEST(LowerDataMovement, GatherExpandTile) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {3, 2});
  auto* idx = b.constant("idx", ir::Tensor::from_vector<int64_t>(DType::Int64, {2, 2}, {2, -3, 0, 1}));
  b.output(b.op("Gather", {x, idx}, "g", DType::Float32, {2, 2, 2}));
  auto* one = b.constant("one", ir::Tensor::scalar<int64_t>(DType::Int64, 1));
  ir::Node* g1 = b.node("Gather", {x, one}, {{"col", ir::Type::tensor(DType::Float32, ir::Shape{3})}});
  g1->set_attr_int("axis", 1);
  b.output(g1->output());
  auto* shape = b.const_i64("shape", {2, 3, 2});
  b.output(b.op("Expand", {x, shape}, "e", DType::Float32, {2, 3, 2}));
  auto* reps = b.const_i64("reps", {1, 2});
  b.output(b.op("Tile", {x, reps}, "t", DType::Float32, {3, 4}));
  auto out = compile_and_run(b.model(), {HostTensor::f32({3, 2}, iota(6))});
  EXPECT_TRUE(all_close(out[0].values<float>(), {4, 5, 0, 1, 0, 1, 2, 3}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {1, 3, 5}));
  auto e = iota(6);
  e.insert(e.end(), e.begin(), e.end());
  EXPECT_TRUE(all_close(out[2].values<float>(), e));
  EXPECT_TRUE(all_close(out[3].values<float>(), {0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5}));
}

TEST(LowerDataMovement, PadModesAndTrilu) {
  ModelBuilder b(13);
  auto* x = b.input("x", DType::Float32, {2, 3});
  auto* pads = b.const_i64("pads", {0, 2, 1, 1});  // [begin0, begin1, end0, end1]
  auto* val = b.constant("val", ir::Tensor::scalar<float>(DType::Float32, -1.0f));
  b.output(b.op("Pad", {x, pads, val}, "pc", DType::Float32, {3, 6}));
  for (const char* mode : {"reflect", "edge"}) {
    ir::Node* p = b.node("Pad", {x, pads}, {{std::string("p_") + mode, ir::Type::tensor(DType::Float32, ir::Shape{3, 6})}});
    p->set_attr_string("mode", mode);
    b.output(p->output());
  }
  b.output(b.op("Trilu", {x}, "upper", DType::Float32, {2, 3}));
  auto* k = b.constant("k", ir::Tensor::scalar<int64_t>(DType::Int64, -1));
  ir::Node* lo = b.node("Trilu", {x, k}, {{"lower", ir::Type::tensor(DType::Float32, ir::Shape{2, 3})}});
  lo->set_attr_int("upper", 0);
  b.output(lo->output());
  auto out = compile_and_run(b.model(), {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(all_close(out[0].values<float>(), {-1, -1, 1, 2, 3, -1, -1, -1, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1}));
  EXPECT_TRUE(all_close(out[1].values<float>(), {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}));
  EXPECT_TRUE(all_close(out[2].values<float>(), {1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6}));
  EXPECT_TRUE(all_close(out[3].values<float>(), {1, 2, 3, 0, 5, 6}));
  EXPECT_TRUE(all_close(out[4].values<float>(), {0, 0, 0, 4, 0, 0}));
}

TEST(LowerDataMovement, ShapeOpsFromSymbols) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n"), t = Dim::symbol("t");
  auto* x = b.input("x", DType::Float32, {n, t, 4});
  b.output(b.op("Shape", {x}, "shape", DType::Int64, {3}));
  auto* sh = b.const_i64("sh", {2, 3});
  ir::Node* cos = b.node("ConstantOfShape", {sh}, {{"filled", ir::Type::tensor(DType::Float32, ir::Shape{2, 3})}});
  ir::Attribute v;
  v.name = "value";
  v.kind = ir::Attribute::Kind::Tensor;
  v.t = ir::Tensor::from_vector<float>(DType::Float32, {1}, {2.5f});
  cos->set_attr(v);
  b.output(cos->output());
  ir::Node* ss = b.node("SymbolicShape", {x}, {{"dims", ir::Type::tensor(DType::Int64, ir::Shape{2})}}, "onnxc");
  ir::Attribute dims;
  dims.name = "dims";
  dims.kind = ir::Attribute::Kind::Strings;
  dims.strings = {"4*n", "t+1"};
  ss->set_attr(dims);
  b.output(ss->output());
  auto* start = b.constant("start", ir::Tensor::scalar<int64_t>(DType::Int64, 3));
  auto* limit = b.constant("limit", ir::Tensor::scalar<int64_t>(DType::Int64, 10));
  auto* delta = b.constant("delta", ir::Tensor::scalar<int64_t>(DType::Int64, 3));
  b.output(b.op("Range", {start, limit, delta}, "range", DType::Int64, {3}));
  auto r = compile(b.model(), "shapes");
  LoadedModel lib(r.so_path);
  auto out = lib.run({HostTensor::f32({2, 5, 4}, iota(40))});
  EXPECT_EQ(out[0].values<int64_t>(), (std::vector<int64_t>{2, 5, 4}));
  EXPECT_TRUE(all_close(out[1].values<float>(), std::vector<float>(6, 2.5f)));
  EXPECT_EQ(out[2].values<int64_t>(), (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(out[3].values<int64_t>(), (std::vector<int64_t>{3, 6, 9}));
}

// A reshape computed in a kernel (a view fused into its reader) reads the row-major element: splits
// and merges by factors that divide take the affine path, the rest (4 x 3n, where neither extent
// divides the other) the flat index. Each output is the input's elements in order.
TEST(LowerDataMovement, ReshapeInAKernelKeepsRowMajorOrder) {
  ModelBuilder b(13);
  Dim n = Dim::symbol("n");
  auto* x = b.input("x", DType::Float32, {n, 12});
  std::vector<ir::Shape> shapes = {{n, 3, 4}, {n * 3, 4}, {n * 2, 6}, {n * 12}, {Dim(1), n, 2, Dim(1), 6}, {4, n * 3}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    ir::Node* c = b.node("Copy", {x}, {{"r" + std::to_string(i), ir::Type::tensor(DType::Float32, shapes[i])}}, "onnxc");
    b.output(c->output());
  }
  auto r = compile(b.model(), "reshape");
  LoadedModel lib(r.so_path);
  auto out = lib.run({HostTensor::f32({2, 12}, iota(24))});
  ASSERT_EQ(out.size(), shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) EXPECT_TRUE(all_close(out[i].values<float>(), iota(24))) << "output " << i;
}

}  // namespace
}  // namespace onnxc::test
