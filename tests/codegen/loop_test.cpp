// Loop and Scan end to end: hand-built models compiled to a library (LOOP .. NEXT ranges, scan host
// steps) and run through the runtime's C API over 0, 1 and many iterations, ended by the trip count or
// by the condition, nested, with an If inside, and Scan with reversed inputs and a scan output on another axis; each
// result against the same computation written out as plain loops. And the shapes loops refuse.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ir/error.h"
#include "onnxc/runtime.h"
#include "opened_library.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;
using ir::Type;

Type f32(ir::Shape s) { return Type::tensor(DType::Float32, std::move(s)); }
Type i64(ir::Shape s) { return Type::tensor(DType::Int64, std::move(s)); }
Type boolean() { return Type::tensor(DType::Bool, ir::Shape{}); }

using Body = Subgraph;  // a loop body inside `outer`, reading outer values directly

void set_ints(ir::Node* n, const std::string& name, std::vector<int64_t> v) { n->set_attr_ints(name, std::move(v)); }

#ifdef HAVE_ONNXC_RUNTIME
// A compiled library through the runtime's C API: inputs and outputs as HostTensors.
struct Session : OpenedLibrary {
  using OpenedLibrary::OpenedLibrary;
  std::vector<HostTensor> run(std::vector<HostTensor> inputs) {
    uint8_t none = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      HostTensor& t = inputs[i];
      onnxc_tensor ot{static_cast<int32_t>(t.dtype), static_cast<int32_t>(t.dims.size()), t.dims.data(),
                      t.bytes.empty() ? &none : t.bytes.data()};
      EXPECT_EQ(onnxc_session_set_input(s, i, &ot), ONNXC_OK) << onnxc_session_last_error(s);
    }
    std::vector<HostTensor> r;
    if (onnxc_session_run(s) != ONNXC_OK) {
      ADD_FAILURE() << onnxc_session_last_error(s);
      return r;
    }
    for (size_t i = 0; i < onnxc_model_num_outputs(model); ++i) {
      onnxc_tensor o;
      EXPECT_EQ(onnxc_session_get_output(s, i, &o), ONNXC_OK) << onnxc_session_last_error(s);
      HostTensor h{static_cast<DType>(o.dtype), std::vector<int64_t>(o.dims, o.dims + o.rank), {}};
      size_t bytes = static_cast<size_t>(h.numel()) * (h.dtype == DType::Int64 ? 8 : 4);
      h.bytes.assign(static_cast<const uint8_t*>(o.data), static_cast<const uint8_t*>(o.data) + bytes);
      r.push_back(std::move(h));
    }
    return r;
  }
};

HostTensor scalar_i64(int64_t v) { return HostTensor::i64({}, {v}); }

// y, scan = Loop(M, cond, acc = x): acc = acc + x, scan row = acc, cond = i < stop.
// The reference: the same loop written out.
std::pair<std::vector<float>, std::vector<float>> reference_loop(int64_t m, int64_t stop, const std::vector<float>& x) {
  std::vector<float> acc = x, scan;
  bool cond = true;
  for (int64_t i = 0; i < m && cond; ++i) {
    for (size_t j = 0; j < acc.size(); ++j) acc[j] += x[j];
    scan.insert(scan.end(), acc.begin(), acc.end());
    cond = i < stop;
  }
  return {acc, scan};
}

TEST(Loop, TripCountConditionCarriedValueAndScanOutput) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n"), count = Dim::symbol("loop_count");
  auto* m = b.input("M", DType::Int64, {});
  auto* stop = b.input("stop", DType::Int64, {});
  auto* x = b.input("x", DType::Float32, {n});
  auto* cond0 = b.op("Constant", {}, "true", DType::Bool, {});
  cond0->producer()->set_attr([] {
    ir::Attribute a;
    a.name = "value";
    a.kind = ir::Attribute::Kind::Tensor;
    a.t = ir::Tensor::from_vector<uint8_t>(DType::Bool, {}, {1});
    return a;
  }());
  Body body(b.model().graph.get(), "body");
  auto* i = body.in("i", i64({}));
  body.in("c", boolean());
  auto* acc = body.in("acc", f32({n}));
  auto* next = body.op("Add", {acc, x}, "next", f32({n}));
  body.g->add_output(body.op("Less", {i, stop}, "go_on", boolean()));
  body.g->add_output(next);
  body.g->add_output(body.op("Identity", {next}, "row", f32({n})));
  ir::Node* loop = b.node("Loop", {m, cond0, x}, {{"y", f32({n})}, {"scan", f32({count, n})}});
  set_graph_attr(loop, "body", body);
  b.output(loop->output(0));
  b.output(loop->output(1));
  auto r = compile(std::move(b.model()), "loop_basic");
  Session s(r.so_path);
  ASSERT_NE(s.s, nullptr);
  struct Case {
    int64_t m, stop;
    std::vector<float> x;
  };
  for (const Case& c : {Case{0, 9, {1, 2}}, Case{1, 9, {1, 2}}, Case{4, 9, {1, -2, 3}}, Case{50, 2, {0.5f}},
                        Case{3, 9, {}}}) {
    auto out = s.run({scalar_i64(c.m), scalar_i64(c.stop), HostTensor::f32({int64_t(c.x.size())}, c.x)});
    ASSERT_EQ(out.size(), 2u);
    auto [y, scan] = reference_loop(c.m, c.stop, c.x);
    EXPECT_EQ(out[0].values<float>(), y) << "M=" << c.m << " stop=" << c.stop;
    EXPECT_EQ(out[1].values<float>(), scan) << "M=" << c.m << " stop=" << c.stop;
    int64_t rows = c.x.empty() ? std::min<int64_t>(c.m, c.stop + 1) : int64_t(scan.size() / c.x.size());
    EXPECT_EQ(out[1].dims, (std::vector<int64_t>{rows, int64_t(c.x.size())}));
  }
}

// acc = x; Loop(M): { Loop(K): { acc = acc + x } ; acc = acc * 2 }: nested loops, an inner loop's
// carried value carried again by the outer one, the inner trip count an outer value.
TEST(Loop, NestedLoops) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  auto* m = b.input("M", DType::Int64, {});
  auto* k = b.input("K", DType::Int64, {});
  auto* x = b.input("x", DType::Float32, {n});
  auto* two = b.const_f32("two", {}, {2});
  ir::Graph* main = b.model().graph.get();
  Body outer(main, "outer");
  outer.in("i", i64({}));
  auto* oc = outer.in("c", boolean());
  auto* oacc = outer.in("acc", f32({n}));
  Body inner(outer.g.get(), "inner");
  inner.in("j", i64({}));
  auto* ic = inner.in("c", boolean());
  auto* iacc = inner.in("acc", f32({n}));
  inner.g->add_output(inner.op("Identity", {ic}, "ic_out", boolean()));
  inner.g->add_output(inner.op("Add", {iacc, x}, "iacc_next", f32({n})));
  ir::Node* in_loop = outer.g->add_node("Loop", {k, nullptr, oacc}, {"inner_acc"});
  in_loop->set_name("inner_loop");
  in_loop->output()->set_type(f32({n}));
  set_graph_attr(in_loop, "body", inner);
  outer.g->add_output(outer.op("Identity", {oc}, "oc_out", boolean()));
  outer.g->add_output(outer.op("Mul", {in_loop->output(), two}, "oacc_next", f32({n})));
  ir::Node* loop = b.node("Loop", {m, nullptr, x}, {{"y", f32({n})}});
  set_graph_attr(loop, "body", outer);
  b.output(loop->output(0));
  auto r = compile(std::move(b.model()), "loop_nested");
  Session s(r.so_path);
  ASSERT_NE(s.s, nullptr);
  for (auto [mm, kk] : {std::pair<int64_t, int64_t>{0, 3}, {1, 0}, {2, 3}, {3, 1}}) {
    std::vector<float> xv = {1, -2}, acc = xv;
    for (int64_t a = 0; a < mm; ++a) {
      for (int64_t c = 0; c < kk; ++c)
        for (size_t j = 0; j < acc.size(); ++j) acc[j] += xv[j];
      for (float& v : acc) v *= 2;
    }
    auto out = s.run({scalar_i64(mm), scalar_i64(kk), HostTensor::f32({2}, xv)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].values<float>(), acc) << "M=" << mm << " K=" << kk;
  }
}

// acc = x; Loop(M): { acc = If(i < k, then: acc + x, else: acc - x) }: an If inside a loop body, its
// branches reading a carried value and an outer value, its condition from the iteration count.
TEST(Loop, IfInsideABody) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n");
  auto* m = b.input("M", DType::Int64, {});
  auto* k = b.input("k", DType::Int64, {});
  auto* x = b.input("x", DType::Float32, {n});
  Body body(b.model().graph.get(), "body");
  auto* i = body.in("i", i64({}));
  auto* c = body.in("c", boolean());
  auto* acc = body.in("acc", f32({n}));
  Body then_b(body.g.get(), "then"), else_b(body.g.get(), "else");
  then_b.g->add_output(then_b.op("Add", {acc, x}, "plus", f32({n})));
  else_b.g->add_output(else_b.op("Sub", {acc, x}, "minus", f32({n})));
  ir::Node* branch = body.g->add_node("If", {body.op("Less", {i, k}, "early", boolean())}, {"acc_next"});
  branch->set_name("branch");
  branch->output()->set_type(f32({n}));
  set_graph_attr(branch, "then_branch", then_b);
  set_graph_attr(branch, "else_branch", else_b);
  body.g->add_output(c);
  body.g->add_output(branch->output());
  ir::Node* loop = b.node("Loop", {m, nullptr, x}, {{"y", f32({n})}});
  set_graph_attr(loop, "body", body);
  b.output(loop->output(0));
  auto r = compile(std::move(b.model()), "loop_if");
  Session s(r.so_path);
  ASSERT_NE(s.s, nullptr);
  for (auto [mm, kk] : {std::pair<int64_t, int64_t>{0, 1}, {3, 1}, {4, 9}, {5, 0}}) {
    std::vector<float> xv = {2, -1}, acc = xv;
    for (int64_t it = 0; it < mm; ++it)
      for (size_t j = 0; j < acc.size(); ++j) acc[j] += it < kk ? xv[j] : -xv[j];
    auto out = s.run({scalar_i64(mm), scalar_i64(kk), HostTensor::f32({2}, xv)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].values<float>(), acc) << "M=" << mm << " k=" << kk;
  }
}

// s, z, x_again = Scan(s0, X) over T steps, X read last row first, z stacked along axis 1: s = s + x_t,
// z_t = s; x_again stacks each x_t last-first, which gives X back.
TEST(Scan, ReversedInputAndOutputsOnAxisOneAndReversed) {
  ModelBuilder b(17);
  Dim n = Dim::symbol("n"), t = Dim::symbol("t");
  auto* s0 = b.input("s0", DType::Float32, {n});
  auto* xs = b.input("X", DType::Float32, {t, n});
  Body body(b.model().graph.get(), "body");
  auto* s = body.in("s", f32({n}));
  auto* xt = body.in("xt", f32({n}));
  auto* next = body.op("Add", {s, xt}, "s_next", f32({n}));
  body.g->add_output(next);
  body.g->add_output(body.op("Identity", {next}, "z_t", f32({n})));
  body.g->add_output(body.op("Identity", {xt}, "x_t", f32({n})));
  ir::Node* scan = b.node("Scan", {s0, xs}, {{"s_final", f32({n})}, {"z", f32({n, t})}, {"x_again", f32({t, n})}});
  set_graph_attr(scan, "body", body);
  scan->set_attr_int("num_scan_inputs", 1);
  set_ints(scan, "scan_input_directions", {1});
  set_ints(scan, "scan_output_axes", {1, 0});
  set_ints(scan, "scan_output_directions", {0, 1});  // read backwards, stacked backwards: X again
  b.output(scan->output(0));
  b.output(scan->output(1));
  b.output(scan->output(2));
  auto r = compile(std::move(b.model()), "scan_reverse_axis1");
  Session sess(r.so_path);
  ASSERT_NE(sess.s, nullptr);
  for (int64_t steps : {0, 1, 3}) {
    const int64_t width = 2;
    std::vector<float> x, s_ref = {1, 10}, z(static_cast<size_t>(width * steps));
    for (int64_t i = 0; i < steps * width; ++i) x.push_back(float(i + 1));
    std::vector<float> st = s_ref;
    for (int64_t it = 0; it < steps; ++it) {
      int64_t row = steps - 1 - it;
      for (int64_t j = 0; j < width; ++j) {
        st[size_t(j)] += x[size_t(row * width + j)];
        z[size_t(j * steps + it)] = st[size_t(j)];
      }
    }
    auto out = sess.run({HostTensor::f32({width}, s_ref), HostTensor::f32({steps, width}, x)});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].values<float>(), st) << steps << " steps";
    EXPECT_EQ(out[1].values<float>(), z) << steps << " steps";
    EXPECT_EQ(out[1].dims, (std::vector<int64_t>{width, steps}));
    EXPECT_EQ(out[2].values<float>(), x) << steps << " steps";
    EXPECT_EQ(out[2].dims, (std::vector<int64_t>{steps, width}));
  }
}

// Scan-8: s_final, Y = Scan(s0 [b, 2], X [b, t, 2]) with the batch axis first and X read backwards:
// per batch entry s = s + x_t, y_t = s * x_t; batches of 3, 1 and 2 entries, 4, 1 and 0 steps.
TEST(Scan, Opset8BatchAxisAsAnOuterLoop) {
  ModelBuilder b(8);
  Dim bd = Dim::symbol("b"), t = Dim::symbol("t");
  auto* s0 = b.input("s0", DType::Float32, {bd, 2});
  auto* xs = b.input("X", DType::Float32, {bd, t, 2});
  Body body(b.model().graph.get(), "body");
  auto* s = body.in("s", f32({2}));
  auto* xt = body.in("xt", f32({2}));
  auto* next = body.op("Add", {s, xt}, "s_next", f32({2}));
  body.g->add_output(next);
  body.g->add_output(body.op("Mul", {next, xt}, "y_t", f32({2})));
  ir::Node* scan = b.node("Scan", {nullptr, s0, xs}, {{"s_final", f32({bd, 2})}, {"Y", f32({bd, t, 2})}});
  set_graph_attr(scan, "body", body);
  scan->set_attr_int("num_scan_inputs", 1);
  set_ints(scan, "directions", {1});
  b.output(scan->output(0));
  b.output(scan->output(1));
  auto r = compile(std::move(b.model()), "scan8_batch");
  Session sess(r.so_path);
  ASSERT_NE(sess.s, nullptr);
  for (auto [batch, steps] : {std::pair<int64_t, int64_t>{3, 4}, {1, 1}, {2, 0}}) {
    std::vector<float> s0v, x, sf, y(static_cast<size_t>(batch * steps * 2));
    for (int64_t i = 0; i < batch * 2; ++i) s0v.push_back(float(i) - 1.5f);
    for (int64_t i = 0; i < batch * steps * 2; ++i) x.push_back(float(i % 5) - 2);
    for (int64_t bb = 0; bb < batch; ++bb) {
      float st[2] = {s0v[size_t(bb * 2)], s0v[size_t(bb * 2 + 1)]};
      for (int64_t it = 0; it < steps; ++it)
        for (int64_t j = 0; j < 2; ++j) {
          float xv = x[size_t((bb * steps + steps - 1 - it) * 2 + j)];
          st[j] += xv;
          y[size_t((bb * steps + it) * 2 + j)] = st[j] * xv;
        }
      sf.insert(sf.end(), st, st + 2);
    }
    auto out = sess.run({HostTensor::f32({batch, 2}, s0v), HostTensor::f32({batch, steps, 2}, x)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].values<float>(), sf) << batch << "x" << steps;
    EXPECT_EQ(out[1].values<float>(), y) << batch << "x" << steps;
    EXPECT_EQ(out[1].dims, (std::vector<int64_t>{batch, steps, 2}));
  }
}
#endif

// A carried value that grows each iteration would need its tensor resized inside the loop: refused.
TEST(Loop, ACarriedValueThatChangesShapeIsRefused) {
  ModelBuilder b(17);
  auto* m = b.input("M", DType::Int64, {});
  auto* x = b.input("x", DType::Float32, {2});
  Body body(b.model().graph.get(), "body");
  body.in("i", i64({}));
  auto* c = body.in("c", boolean());
  auto* acc = body.in("acc", f32({2}));
  body.g->add_output(c);
  ir::Node* cat = body.g->add_node("Concat", {acc, acc}, {"grown"});
  cat->set_attr_int("axis", 0);
  cat->output()->set_type(f32({4}));
  body.g->add_output(cat->output());
  ir::Node* loop = b.node("Loop", {m, nullptr, x}, {{"y", f32({Dim::unknown()})}});
  set_graph_attr(loop, "body", body);
  b.output(loop->output(0));
  try {
    compile(std::move(b.model()), "loop_grows");
    FAIL() << "expected a UserError";
  } catch (const UserError& err) {
    EXPECT_NE(std::string(err.what()).find("a loop-carried value changes type or shape across iterations"), std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace onnxc::test
