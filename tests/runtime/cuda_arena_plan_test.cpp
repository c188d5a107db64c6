// The device arena's plan under symbolic shapes, without a GPU (the fake device of
// fake_cuda_device.h): tensors live in a common step never share device bytes, at any of several shapes.
#include <gtest/gtest.h>

#include <HalideRuntime.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "desc_builder.h"
#include "fake_cuda_device.h"
#include "onnxc/runtime.h"

namespace {

using namespace fake_cuda;

// A graph whose tensors have sizes of several forms of two symbols, so that the planner packs them
// differently at each shape. Every kernel records the device ranges it read and wrote; after each run
// the ranges of tensors live in a common step must be disjoint, the view must read its base's range,
// and the outputs must equal a reference computed here (overlapping ranges would corrupt them).
struct Call {
  std::vector<uint64_t> in;
  uint64_t out, out_bytes;
};
std::vector<Call> calls;

float *floats(halide_buffer_t *b) {
  make_readable(b);
  return reinterpret_cast<float *>(dev.at(b->device));
}

// out[i] = 2 in0[i % |in0|] + in1[i % |in1|] + 1 (no in1 for the unary kernel).
int mix(halide_buffer_t *in0, halide_buffer_t *in1, halide_buffer_t *out) {
  const float *a = floats(in0), *b = in1 ? floats(in1) : nullptr;
  if (!out->device) fake_device_malloc(nullptr, out, fake_interface());
  auto *y = reinterpret_cast<float *>(dev.at(out->device));
  int na = in0->dim[0].extent, nb = in1 ? in1->dim[0].extent : 1;
  for (int i = 0; i < out->dim[0].extent; i++) y[i] = 2 * a[i % na] + (b ? b[i % nb] : 0.0f) + 1;
  out->flags = halide_buffer_flag_device_dirty;
  calls.push_back({{in0->device, in1 ? in1->device : 0}, out->device, bytes(out)});
  return 0;
}
int unary(void **args) {
  return mix(static_cast<halide_buffer_t *>(args[0]), nullptr, static_cast<halide_buffer_t *>(args[1]));
}
int binary(void **args) {
  return mix(static_cast<halide_buffer_t *>(args[0]), static_cast<halide_buffer_t *>(args[1]),
             static_cast<halide_buffer_t *>(args[2]));
}

std::vector<float> mix_ref(const std::vector<float> &a, const std::vector<float> *b, size_t n) {
  std::vector<float> y(n);
  for (size_t i = 0; i < n; i++) y[i] = 2 * a[i % a.size()] + (b ? (*b)[i % b->size()] : 0.0f) + 1;
  return y;
}

TEST(CudaBookkeeping, LiveTensorsNeverShareDeviceBytesAtAnyShape) {
  dev = FakeDevice();
  DescBuilder g("fake_cuda_plan");
  use_fake_device(g);
  int32_t n = g.symbol("n"), m = g.symbol("m");
  int32_t two_n_1 = g.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_CONST, 2, ONNXC_EXPR_MUL, ONNXC_EXPR_CONST, 1, ONNXC_EXPR_ADD});
  int32_t n_m = g.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_MUL});
  enum { GX, GW, GA, GB, GC, GD, GDV, GE, GY, GDO };
  g.input("x", ONNXC_DTYPE_FLOAT, {n});
  g.input("w", ONNXC_DTYPE_FLOAT, {m});
  g.intermediate("a", ONNXC_DTYPE_FLOAT, {n});
  g.intermediate("b", ONNXC_DTYPE_FLOAT, {two_n_1});
  g.intermediate("c", ONNXC_DTYPE_FLOAT, {n_m});
  g.intermediate("d", ONNXC_DTYPE_FLOAT, {two_n_1});
  g.view("dv", ONNXC_DTYPE_FLOAT, {n}, GD);
  g.intermediate("e", ONNXC_DTYPE_FLOAT, {two_n_1});
  g.output("y", ONNXC_DTYPE_FLOAT, {n_m});
  g.view("do", ONNXC_DTYPE_FLOAT, {n}, GD);
  g.outputs.push_back(GDO);
  int32_t u = g.kernel("unary", unary), bi = g.kernel("binary", binary);
  g.call(u, {GX, GA});         // 0: a = f(x)
  g.call(bi, {GA, GW, GB});    // 1: b = f(a, w)
  g.call(bi, {GB, GX, GC});    // 2: c = f(b, x)
  g.call(bi, {GC, GA, GD});    // 3: d = f(c, a)
  g.call(u, {GDV, GE});        // 4: e = f(dv)
  g.call(bi, {GE, GC, GY});    // 5: y = f(e, c)
  // Live steps of each arena root (outputs, and d through the output view, to the end: 6).
  const std::map<int, std::pair<int, int>> live = {{GA, {0, 3}}, {GB, {1, 2}}, {GC, {2, 5}},
                                                    {GD, {3, 6}}, {GE, {4, 5}}, {GY, {5, 6}}};
  const int writer[] = {-1, -1, 0, 1, 2, 3, -1, 4, 5};  // the step writing each root

  LoadedDesc loaded(g.get());
  ASSERT_NE(loaded.session, nullptr);
  onnxc_session *s = loaded.session;
  for (auto [nv, mv] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 5}, {17, 2}, {64, 64}, {5, 3}, {40, 1}}) {
    SCOPED_TRACE("n=" + std::to_string(nv) + " m=" + std::to_string(mv));
    std::vector<float> x(static_cast<size_t>(nv)), w(static_cast<size_t>(mv));
    for (size_t i = 0; i < x.size(); i++) x[i] = 0.25f * static_cast<float>(i % 9) - 1;
    for (size_t i = 0; i < w.size(); i++) w[i] = 0.5f * static_cast<float>(i % 5);
    onnxc_tensor tx{ONNXC_DTYPE_FLOAT, 1, &nv, x.data()}, tw{ONNXC_DTYPE_FLOAT, 1, &mv, w.data()};
    ASSERT_EQ(onnxc_session_set_input(s, 0, &tx), ONNXC_OK);
    ASSERT_EQ(onnxc_session_set_input(s, 1, &tw), ONNXC_OK);
    calls.clear();
    ASSERT_EQ(onnxc_session_run(s), ONNXC_OK) << onnxc_session_last_error(s);
    ASSERT_EQ(calls.size(), 6u);

    size_t N = static_cast<size_t>(nv), NM = static_cast<size_t>(nv * mv), B = 2 * N + 1;
    auto a = mix_ref(x, nullptr, N), b = mix_ref(a, &w, B), c = mix_ref(b, &x, NM), d = mix_ref(c, &a, B);
    auto e = mix_ref(std::vector<float>(d.begin(), d.begin() + static_cast<long>(N)), nullptr, B), y = mix_ref(e, &c, NM);
    onnxc_tensor ty, tdo;
    ASSERT_EQ(onnxc_session_get_output(s, 0, &ty), ONNXC_OK);
    ASSERT_EQ(onnxc_session_get_output(s, 1, &tdo), ONNXC_OK);
    for (size_t i = 0; i < NM; i++) ASSERT_FLOAT_EQ(static_cast<float *>(ty.data)[i], y[i]) << i;
    for (size_t i = 0; i < N; i++) ASSERT_FLOAT_EQ(static_cast<float *>(tdo.data)[i], d[i]) << i;

    EXPECT_EQ(calls[4].in[0], calls[3].out) << "the view dv reads d's range";
    for (const auto &[p, lp] : live) {
      for (const auto &[q, lq] : live) {
        if (p >= q || lp.second < lq.first || lq.second < lp.first) continue;
        const Call &cp = calls[static_cast<size_t>(writer[p])], &cq = calls[static_cast<size_t>(writer[q])];
        EXPECT_TRUE(cp.out + cp.out_bytes <= cq.out || cq.out + cq.out_bytes <= cp.out)
            << "tensors " << p << " and " << q << " are live together but share device bytes";
      }
    }
  }
  EXPECT_FALSE(dev.bad_read);
  EXPECT_LE(dev.arena_sizes.size(), 4u) << "the arena grows only with a larger plan";
  loaded.free_session();
  EXPECT_TRUE(dev.allocations.empty());
}

}  // namespace
