// ir/eval: one test per op family, with hand-computed expectations.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "ir/error.h"
#include "ir/eval/eval.h"

namespace onnxc::ir {
namespace {

Tensor I64(std::vector<int64_t> dims, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(DType::Int64, dims, v); }
Tensor F32(std::vector<int64_t> dims, std::vector<float> v) { return Tensor::from_vector<float>(DType::Float32, dims, v); }
Tensor Bool(std::vector<int64_t> dims, std::vector<uint8_t> v) { return Tensor::from_vector<uint8_t>(DType::Bool, dims, v); }
Tensor S64(int64_t v) { return Tensor::scalar<int64_t>(DType::Int64, v); }

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < t.numel(); ++i) r.push_back(t.get_i64(i));
  return r;
}
std::vector<double> floats(const Tensor& t) {
  std::vector<double> r;
  for (int64_t i = 0; i < t.numel(); ++i) r.push_back(t.get_f64(i));
  return r;
}

// Evaluates `op` on `inputs` (a missing optional input is an empty Tensor with dtype Undefined).
std::optional<std::vector<Tensor>> run(const std::string& op, std::vector<Tensor> inputs,
                                       const std::function<void(Node&)>& attrs = {}, int outputs = 1,
                                       EvalOptions opt = {}) {
  Graph g;
  std::vector<Value*> in;
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool absent = inputs[i].dtype() == DType::Undefined;
    in.push_back(absent ? nullptr : g.add_input("in" + std::to_string(i), Type::tensor(inputs[i].dtype())));
    ptrs.push_back(absent ? nullptr : &inputs[i]);
  }
  std::vector<std::string> outs;
  for (int i = 0; i < outputs; ++i) outs.push_back("out" + std::to_string(i));
  Node* n = g.add_node(op, in, outs);
  if (attrs) attrs(*n);
  return evaluate(*n, ptrs, opt);
}
Tensor run1(const std::string& op, std::vector<Tensor> inputs, const std::function<void(Node&)>& attrs = {}) {
  auto r = run(op, std::move(inputs), attrs);
  EXPECT_TRUE(r.has_value()) << op;
  return r ? r->at(0) : Tensor();
}

using V = std::vector<int64_t>;
using F = std::vector<double>;

// Variadic float ops round each partial result as the op does in f32: max + max is inf, and inf
// stays inf after adding -max (a double accumulator would give max). The kernel agrees.
TEST(Eval, VariadicSumRoundsEachStepInF32) {
  const float mx = std::numeric_limits<float>::max();
  auto r = run("Sum", {F32({1}, {mx}), F32({1}, {mx}), F32({1}, {-mx})});
  ASSERT_TRUE(r);
  EXPECT_TRUE(std::isinf((*r)[0].get_f64(0)) && (*r)[0].get_f64(0) > 0) << (*r)[0].get_f64(0);
  auto mean = run("Mean", {F32({1}, {mx}), F32({1}, {mx})});
  ASSERT_TRUE(mean);
  EXPECT_TRUE(std::isinf((*mean)[0].get_f64(0)));
}

TEST(Eval, ShapeAndSize) {
  Tensor x = F32({2, 3, 4}, std::vector<float>(24, 1.f));
  EXPECT_EQ(ints(run1("Shape", {x})), (V{2, 3, 4}));
  EXPECT_EQ(ints(run1("Shape", {x}, [](Node& n) { n.set_attr_int("start", -2); })), (V{3, 4}));
  EXPECT_EQ(ints(run1("Shape", {x}, [](Node& n) { n.set_attr_int("end", 1); })), (V{2}));
  Tensor s = run1("Size", {x});
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(ints(s), (V{24}));
}

TEST(Eval, GatherScalarNegativeAndAxis) {
  Tensor s = I64({3}, {7, 8, 9});
  Tensor g0 = run1("Gather", {s, S64(0)});
  EXPECT_EQ(g0.rank(), 0);
  EXPECT_EQ(ints(g0), (V{7}));
  EXPECT_EQ(ints(run1("Gather", {s, I64({1}, {-1})})), (V{9}));
  Tensor m = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor g = run1("Gather", {m, I64({2}, {2, 0})}, [](Node& n) { n.set_attr_int("axis", 1); });
  EXPECT_EQ(g.dims(), (V{2, 2}));
  EXPECT_EQ(ints(g), (V{3, 1, 6, 4}));
  EXPECT_THROW(run("Gather", {s, S64(3)}), UserError);
}

TEST(Eval, UnsqueezeSqueezeBothForms) {
  Tensor u = run1("Unsqueeze", {S64(5), I64({1}, {0})});
  EXPECT_EQ(u.dims(), (V{1}));
  Tensor u2 = run1("Unsqueeze", {I64({2}, {1, 2})}, [](Node& n) { n.set_attr_ints("axes", {0, -1}); });
  EXPECT_EQ(u2.dims(), (V{1, 2, 1}));
  Tensor s = run1("Squeeze", {u2, I64({1}, {2})});
  EXPECT_EQ(s.dims(), (V{1, 2}));
  EXPECT_EQ(run1("Squeeze", {u2}).dims(), (V{2}));
  EXPECT_THROW(run("Squeeze", {u2, I64({1}, {1})}), UserError);
}

TEST(Eval, ConcatAndSplit) {
  Tensor c = run1("Concat", {I64({1}, {1}), I64({2}, {2, 3}), I64({0}, {})}, [](Node& n) { n.set_attr_int("axis", 0); });
  EXPECT_EQ(ints(c), (V{1, 2, 3}));
  Tensor m = run1("Concat", {I64({2, 1}, {1, 2}), I64({2, 2}, {3, 4, 5, 6})}, [](Node& n) { n.set_attr_int("axis", -1); });
  EXPECT_EQ(m.dims(), (V{2, 3}));
  EXPECT_EQ(ints(m), (V{1, 3, 4, 2, 5, 6}));
  auto parts = run("Split", {m, I64({2}, {1, 2})}, [](Node& n) { n.set_attr_int("axis", 1); }, 2);
  ASSERT_TRUE(parts);
  EXPECT_EQ(ints((*parts)[0]), (V{1, 2}));
  EXPECT_EQ(ints((*parts)[1]), (V{3, 4, 5, 6}));
  auto equal = run("Split", {I64({5}, {1, 2, 3, 4, 5})}, {}, 3);  // ceil(5/3) = 2, 2, 1
  ASSERT_TRUE(equal);
  EXPECT_EQ(ints((*equal)[2]), (V{5}));
  auto attr = run("Split", {I64({4}, {1, 2, 3, 4})}, [](Node& n) { n.set_attr_ints("split", {3, 1}); }, 2);
  ASSERT_TRUE(attr);
  EXPECT_EQ(ints((*attr)[0]), (V{1, 2, 3}));
}

TEST(Eval, Slice) {
  Tensor x = I64({5}, {0, 1, 2, 3, 4});
  EXPECT_EQ(ints(run1("Slice", {x, I64({1}, {1}), I64({1}, {-1})})), (V{1, 2, 3}));
  EXPECT_EQ(ints(run1("Slice", {x, I64({1}, {-2}), I64({1}, {INT64_MAX})})), (V{3, 4}));
  EXPECT_EQ(ints(run1("Slice", {x, I64({1}, {-1}), I64({1}, {INT64_MIN}), I64({1}, {0}), I64({1}, {-2})})), (V{4, 2, 0}));
  Tensor m = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ints(run1("Slice", {m, I64({1}, {1}), I64({1}, {3}), I64({1}, {1})})), (V{2, 3, 5, 6}));
  // opset < 10: attributes
  Tensor a = run1("Slice", {m}, [](Node& n) {
    n.set_attr_ints("starts", {1});
    n.set_attr_ints("ends", {2});
  });
  EXPECT_EQ(ints(a), (V{4, 5, 6}));
}

TEST(Eval, CastAndCastLike) {
  Tensor f = F32({4}, {1.7f, -1.7f, 0.f, 2.f});
  Tensor i = run1("Cast", {f}, [](Node& n) { n.set_attr_int("to", 7); });
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(ints(i), (V{1, -1, 0, 2}));  // truncation toward zero
  Tensor b = run1("Cast", {f}, [](Node& n) { n.set_attr_int("to", 9); });
  EXPECT_EQ(ints(b), (V{1, 1, 0, 1}));
  Tensor h = run1("CastLike", {I64({1}, {3}), Tensor(DType::Float16, {0})});
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(floats(h), (F{3}));
}

TEST(Eval, IntArithmeticBroadcasts) {
  Tensor a = I64({2, 1}, {7, -7}), b = I64({2}, {2, 3});
  EXPECT_EQ(ints(run1("Add", {a, b})), (V{9, 10, -5, -4}));
  EXPECT_EQ(ints(run1("Sub", {a, b})), (V{5, 4, -9, -10}));
  EXPECT_EQ(ints(run1("Mul", {a, b})), (V{14, 21, -14, -21}));
  EXPECT_EQ(ints(run1("Div", {a, b})), (V{3, 2, -3, -2}));  // truncates toward zero
  EXPECT_EQ(ints(run1("Mod", {a, b})), (V{1, 1, 1, 2}));    // sign of the divisor
  EXPECT_EQ(ints(run1("Mod", {a, b}, [](Node& n) { n.set_attr_int("fmod", 1); })), (V{1, 1, -1, -1}));
  EXPECT_EQ(ints(run1("Pow", {I64({2}, {2, 3}), I64({}, {3})})), (V{8, 27}));
  EXPECT_EQ(run1("Add", {a, b}).dims(), (V{2, 2}));
  EXPECT_FALSE(run("Div", {a, I64({1}, {0})}).has_value());  // undefined: not folded
  EXPECT_THROW(run("Add", {I64({2}, {1, 2}), I64({3}, {1, 2, 3})}), UserError);
}

TEST(Eval, FloatArithmeticAndUnary) {
  Tensor a = F32({3}, {1.f, 4.f, -2.5f});
  EXPECT_EQ(floats(run1("Div", {a, F32({}, {2.f})})), (F{0.5, 2, -1.25}));
  EXPECT_EQ(floats(run1("Pow", {a, F32({}, {2.f})})), (F{1, 16, 6.25}));
  EXPECT_EQ(floats(run1("Neg", {a})), (F{-1, -4, 2.5}));
  EXPECT_EQ(floats(run1("Abs", {a})), (F{1, 4, 2.5}));
  EXPECT_EQ(floats(run1("Sqrt", {F32({2}, {4.f, 9.f})})), (F{2, 3}));
  EXPECT_EQ(floats(run1("Reciprocal", {F32({2}, {4.f, -0.5f})})), (F{0.25, -2}));
  EXPECT_EQ(floats(run1("Floor", {a})), (F{1, 4, -3}));
  EXPECT_EQ(floats(run1("Ceil", {a})), (F{1, 4, -2}));
  EXPECT_EQ(ints(run1("Abs", {I64({2}, {-3, 3})})), (V{3, 3}));
  EXPECT_FALSE(run("Sqrt", {I64({1}, {4})}).has_value());  // float-only op on ints
}

TEST(Eval, MinMaxVariadic) {
  Tensor m = run1("Max", {I64({3}, {1, 5, 3}), I64({1}, {2}), I64({3}, {0, 0, 4})});
  EXPECT_EQ(ints(m), (V{2, 5, 4}));
  EXPECT_EQ(floats(run1("Min", {F32({2}, {1.f, -1.f}), F32({}, {0.f})})), (F{0, -1}));
}

TEST(Eval, ComparisonsLogicWhere) {
  Tensor a = I64({3}, {1, 2, 3}), b = I64({}, {2});
  Tensor eq = run1("Equal", {a, b});
  EXPECT_EQ(eq.dtype(), DType::Bool);
  EXPECT_EQ(ints(eq), (V{0, 1, 0}));
  EXPECT_EQ(ints(run1("Less", {a, b})), (V{1, 0, 0}));
  EXPECT_EQ(ints(run1("Greater", {a, b})), (V{0, 0, 1}));
  EXPECT_EQ(ints(run1("Not", {eq})), (V{1, 0, 1}));
  Tensor t = Bool({2}, {1, 0}), f = Bool({2}, {1, 1});
  EXPECT_EQ(ints(run1("And", {t, f})), (V{1, 0}));
  EXPECT_EQ(ints(run1("Or", {t, Bool({2}, {0, 0})})), (V{1, 0}));
  Tensor w = run1("Where", {Bool({2, 1}, {1, 0}), F32({}, {-INFINITY}), F32({2}, {1.f, 2.f})});
  EXPECT_EQ(w.dims(), (V{2, 2}));
  EXPECT_EQ(floats(w), (F{-INFINITY, -INFINITY, 1, 2}));
}

TEST(Eval, RangeIntFloatNegative) {
  EXPECT_EQ(ints(run1("Range", {S64(0), S64(5), S64(2)})), (V{0, 2, 4}));
  EXPECT_EQ(ints(run1("Range", {S64(5), S64(0), S64(-2)})), (V{5, 3, 1}));
  EXPECT_EQ(run1("Range", {S64(5), S64(0), S64(1)}).numel(), 0);
  EXPECT_EQ(floats(run1("Range", {F32({}, {0.f}), F32({}, {1.f}), F32({}, {0.25f})})), (F{0, 0.25, 0.5, 0.75}));
}

TEST(Eval, ConstantOfShape) {
  Tensor z = run1("ConstantOfShape", {I64({2}, {2, 3})});
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(z.dims(), (V{2, 3}));
  Tensor one = run1("ConstantOfShape", {I64({1}, {4})}, [](Node& n) {
    Attribute a;
    a.name = "value";
    a.kind = Attribute::Kind::Tensor;
    a.t = I64({1}, {1});
    n.set_attr(a);
  });
  EXPECT_EQ(ints(one), (V{1, 1, 1, 1}));
  EXPECT_EQ(run1("ConstantOfShape", {I64({0}, {})}).rank(), 0);
}

TEST(Eval, ReshapeCopyInferAllowzero) {
  Tensor x = I64({2, 3, 4}, std::vector<int64_t>(24, 0));
  EXPECT_EQ(run1("Reshape", {x, I64({3}, {0, -1, 2})}).dims(), (V{2, 6, 2}));
  EXPECT_EQ(run1("Reshape", {x, I64({2}, {-1, 4})}).dims(), (V{6, 4}));
  Tensor empty = I64({0, 3}, {});
  EXPECT_EQ(run1("Reshape", {empty, I64({2}, {3, 0})}, [](Node& n) { n.set_attr_int("allowzero", 1); }).dims(), (V{3, 0}));
  EXPECT_THROW(run("Reshape", {x, I64({2}, {-1, -1})}), UserError);
}

TEST(Eval, ExpandTileTransposeIdentity) {
  Tensor e = run1("Expand", {I64({2, 1}, {1, 2}), I64({3}, {2, 1, 3})});
  EXPECT_EQ(e.dims(), (V{2, 2, 3}));
  EXPECT_EQ(ints(e), (V{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  Tensor t = run1("Tile", {I64({2}, {1, 2}), I64({1}, {3})});
  EXPECT_EQ(ints(t), (V{1, 2, 1, 2, 1, 2}));
  Tensor m = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor tr = run1("Transpose", {m});
  EXPECT_EQ(tr.dims(), (V{3, 2}));
  EXPECT_EQ(ints(tr), (V{1, 4, 2, 5, 3, 6}));
  Tensor x3 = I64({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run1("Transpose", {x3}, [](Node& n) { n.set_attr_ints("perm", {1, 0, 2}); }).dims(), (V{2, 1, 3}));
  EXPECT_EQ(ints(run1("Identity", {m})), ints(m));
}

TEST(Eval, ReduceIntsAndFloats) {
  Tensor m = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ints(run1("ReduceProd", {m})), (V{720}));
  Tensor s = run1("ReduceSum", {m, I64({1}, {1})}, [](Node& n) { n.set_attr_int("keepdims", 0); });
  EXPECT_EQ(s.dims(), (V{2}));
  EXPECT_EQ(ints(s), (V{6, 15}));
  Tensor mx = run1("ReduceMax", {m}, [](Node& n) { n.set_attr_ints("axes", {0}); });
  EXPECT_EQ(mx.dims(), (V{1, 3}));
  EXPECT_EQ(ints(mx), (V{4, 5, 6}));
  EXPECT_EQ(ints(run1("ReduceMin", {m})), (V{1}));
  EXPECT_EQ(floats(run1("ReduceMean", {F32({2}, {1.f, 2.f})})), (F{1.5}));
  Tensor noop = run1("ReduceSum", {m, I64({0}, {})}, [](Node& n) { n.set_attr_int("noop_with_empty_axes", 1); });
  EXPECT_EQ(noop.dims(), (V{2, 3}));
}

TEST(Eval, ConstantAttributeForms) {
  auto with = [](const std::function<void(Node&)>& f) { return run1("Constant", {}, f); };
  EXPECT_EQ(ints(with([](Node& n) { n.set_attr_int("value_int", 4); })), (V{4}));
  EXPECT_EQ(ints(with([](Node& n) { n.set_attr_ints("value_ints", {1, 2}); })), (V{1, 2}));
  EXPECT_EQ(floats(with([](Node& n) { n.set_attr_float("value_float", 0.5f); })), (F{0.5}));
  Tensor fs = with([](Node& n) {
    Attribute a;
    a.name = "value_floats";
    a.kind = Attribute::Kind::Floats;
    a.floats = {1.f, 2.f};
    n.set_attr(a);
  });
  EXPECT_EQ(floats(fs), (F{1, 2}));
  Tensor str = with([](Node& n) { n.set_attr_string("value_string", "hi"); });
  EXPECT_EQ(str.string_data(), (std::vector<std::string>{"hi"}));
  Tensor t = with([](Node& n) {
    Attribute a;
    a.name = "value";
    a.kind = Attribute::Kind::Tensor;
    a.t = I64({2}, {7, 8});
    n.set_attr(a);
  });
  EXPECT_EQ(ints(t), (V{7, 8}));
}

TEST(Eval, TriluFlattenClip) {
  Tensor m = I64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(ints(run1("Trilu", {m})), (V{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  EXPECT_EQ(ints(run1("Trilu", {m, S64(1)})), (V{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(ints(run1("Trilu", {m}, [](Node& n) { n.set_attr_int("upper", 0); })), (V{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  Tensor inf = F32({2, 2}, {-INFINITY, -INFINITY, -INFINITY, -INFINITY});
  EXPECT_EQ(floats(run1("Trilu", {inf, S64(1)})), (F{0, -INFINITY, 0, 0}));
  EXPECT_EQ(run1("Flatten", {I64({2, 3, 4}, std::vector<int64_t>(24, 0))}).dims(), (V{2, 12}));
  EXPECT_EQ(run1("Flatten", {I64({2, 3, 4}, std::vector<int64_t>(24, 0))}, [](Node& n) { n.set_attr_int("axis", 0); }).dims(),
            (V{1, 24}));
  EXPECT_EQ(floats(run1("Clip", {F32({3}, {-2.f, 0.5f, 3.f}), F32({}, {0.f}), F32({}, {1.f})})), (F{0, 0.5, 1}));
  EXPECT_EQ(floats(run1("Clip", {F32({2}, {-2.f, 3.f}), Tensor(), F32({}, {1.f})})), (F{-2, 1}));
  EXPECT_EQ(ints(run1("Clip", {I64({2}, {-2, 3})}, [](Node& n) { n.set_attr_float("min", 0.f); })), (V{0, 3}));
}

TEST(Eval, MatMulGemmSoftmaxLayerNorm) {
  Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6}), b = F32({3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor mm = run1("MatMul", {a, b});
  EXPECT_EQ(mm.dims(), (V{2, 2}));
  EXPECT_EQ(floats(mm), (F{4, 5, 10, 11}));
  Tensor batched = run1("MatMul", {F32({2, 1, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {1, 1, 1})});  // 1-D rhs
  EXPECT_EQ(batched.dims(), (V{2, 1}));
  EXPECT_EQ(floats(batched), (F{6, 15}));
  Tensor g = run1("Gemm", {a, F32({2, 3}, {1, 0, 0, 0, 1, 0}), F32({2}, {10, 20})}, [](Node& n) {
    n.set_attr_int("transB", 1);
    n.set_attr_float("alpha", 2.f);
  });
  EXPECT_EQ(floats(g), (F{12, 24, 18, 30}));
  Tensor sm = run1("Softmax", {F32({2, 2}, {0, 0, 1, -INFINITY})});
  EXPECT_EQ(floats(sm), (F{0.5, 0.5, 1, 0}));
  Tensor ln = run1("LayerNormalization", {F32({1, 2}, {1, 3}), F32({2}, {1, 2}), F32({2}, {0, 1})},
                   [](Node& n) { n.set_attr_float("epsilon", 0.f); });
  EXPECT_EQ(floats(ln), (F{-1, 3}));
}

TEST(Eval, DeclinesUnsupportedAndOversized) {
  EXPECT_FALSE(run("Conv", {F32({1, 1, 1}, {1.f}), F32({1, 1, 1}, {1.f})}).has_value());
  EXPECT_FALSE(can_evaluate("", "Conv"));
  EXPECT_TRUE(can_evaluate("ai.onnx", "Gather"));
  EXPECT_FALSE(can_evaluate("onnxc", "Gather"));
  EvalOptions small{10, kLatestOpset};
  EXPECT_FALSE(run("ConstantOfShape", {I64({2}, {4, 4})}, {}, 1, small).has_value());
  EXPECT_FALSE(run("Expand", {S64(1), I64({2}, {1 << 20, 1 << 20})}).has_value());
  EXPECT_TRUE(run("ConstantOfShape", {I64({2}, {2, 5})}, {}, 1, small).has_value());
}

}  // namespace
}  // namespace onnxc::ir
