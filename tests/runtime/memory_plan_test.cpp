// The arena planner (pure: sizes and live ranges in, offsets out) and the liveness it is fed (views extend
// their base, graph outputs live to the end).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "desc_builder.h"
#include "memory_plan.h"
#include "lifetimes.h"
#include "step_kinds.h"

namespace {

struct Plan {
  std::vector<uint64_t> offsets;
  uint64_t arena = 0;
  onnxc_status status = ONNXC_OK;
};

Plan plan(const std::vector<onnxc_buffer_request> &req, uint64_t alignment = 64) {
  Plan p;
  p.offsets.assign(req.size(), 12345);
  p.status = onnxc_plan_memory(req.data(), req.size(), alignment, p.offsets.data(), &p.arena);
  return p;
}

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// No two buffers live in a common step share a byte; all offsets aligned; all inside the arena.
void expect_valid(const std::vector<onnxc_buffer_request> &req, const Plan &p, uint64_t alignment = 64) {
  ASSERT_EQ(p.status, ONNXC_OK);
  for (size_t i = 0; i < req.size(); i++) {
    if (req[i].size == 0 || req[i].first_step < 0) continue;
    EXPECT_EQ(p.offsets[i] % alignment, 0u) << "buffer " << i;
    EXPECT_LE(p.offsets[i] + round_up(req[i].size, alignment), p.arena) << "buffer " << i;
    for (size_t j = 0; j < i; j++) {
      if (req[j].size == 0 || req[j].first_step < 0) continue;
      bool live_together = req[i].first_step <= req[j].last_step && req[j].first_step <= req[i].last_step;
      bool disjoint = p.offsets[i] + req[i].size <= p.offsets[j] || p.offsets[j] + req[j].size <= p.offsets[i];
      if (live_together) {
        EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " overlap";
      }
    }
  }
}

TEST(MemoryPlan, DeadBuffersAreReused) {
  std::vector<onnxc_buffer_request> req = {{100, 0, 1}, {100, 2, 3}, {100, 4, 5}};
  Plan p = plan(req);
  expect_valid(req, p);
  EXPECT_EQ(p.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(p.arena, 128u);
}

TEST(MemoryPlan, LiveBuffersNeverOverlapAndTouchingRangesCount) {
  // Buffer 1 is born in the step buffer 0 dies in (a kernel reading 0 and writing 1): both live there.
  std::vector<onnxc_buffer_request> req = {{64, 0, 1}, {64, 1, 2}, {64, 2, 3}};
  Plan p = plan(req);
  expect_valid(req, p);
  EXPECT_NE(p.offsets[0], p.offsets[1]);
  EXPECT_NE(p.offsets[1], p.offsets[2]);
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_EQ(p.arena, 128u);
}

TEST(MemoryPlan, OffsetsAndFootprintsAreAligned) {
  std::vector<onnxc_buffer_request> req = {{1, 0, 3}, {65, 0, 3}, {64, 0, 3}, {3, 0, 3}};
  Plan p = plan(req);
  expect_valid(req, p);
  EXPECT_EQ(p.arena, 128u + 64 + 64 + 64);
  Plan wide = plan(req, 256);
  expect_valid(req, wide, 256);
  EXPECT_EQ(wide.arena, 4 * 256u);
}

TEST(MemoryPlan, PicksTheSmallestGapThatFits) {
  std::vector<onnxc_buffer_request> req = {
      {1024, 0, 0},  // A: 0
      {640, 0, 9},   // B: 1024
      {384, 0, 9},   // C: 1664
      {320, 1, 9},   // D: 0 (A is dead from step 1)
      {192, 0, 0},   // G: 2048
      {128, 0, 9},   // H: 2240
      {128, 1, 9},   // E: gaps at step >= 1 are [320, 1024) and [2048, 2240): best fit is 2048
  };
  Plan p = plan(req);
  expect_valid(req, p);
  EXPECT_EQ(p.offsets, (std::vector<uint64_t>{0, 1024, 1664, 0, 2048, 2240, 2048}));
  EXPECT_EQ(p.arena, 2368u);
}

TEST(MemoryPlan, EmptyAndUnusedBuffersTakeNoSpace) {
  std::vector<onnxc_buffer_request> req = {{0, 0, 5}, {1000, -1, -1}, {64, 2, 2}};
  Plan p = plan(req);
  expect_valid(req, p);
  EXPECT_EQ(p.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(p.arena, 64u);
  Plan none = plan({});
  EXPECT_EQ(none.status, ONNXC_OK);
  EXPECT_EQ(none.arena, 0u);
}

TEST(MemoryPlan, RejectsBadInput) {
  EXPECT_EQ(plan({{64, 0, 1}}, 0).status, ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(plan({{64, 0, 1}}, 48).status, ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(plan({{64, 3, 1}}).status, ONNXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(plan({{UINT64_MAX - 10, 0, 1}}).status, ONNXC_ERR_SHAPE_MISMATCH);
  EXPECT_EQ(plan({{UINT64_MAX / 2, 0, 1}, {UINT64_MAX / 2, 0, 1}, {UINT64_MAX / 2, 0, 1}}).status,
            ONNXC_ERR_SHAPE_MISMATCH);
}

TEST(MemoryPlan, RandomPlansAreValidAndBeatNoReuse) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 200; round++) {
    int n = 1 + static_cast<int>(rng() % 60);
    std::vector<onnxc_buffer_request> req;
    uint64_t no_reuse = 0;
    for (int i = 0; i < n; i++) {
      int32_t first = static_cast<int32_t>(rng() % 40);
      int32_t last = first + static_cast<int32_t>(rng() % 10);
      uint64_t size = rng() % 5 == 0 ? 0 : 1 + rng() % 5000;
      req.push_back({size, first, last});
      no_reuse += round_up(size, 64);
    }
    Plan p = plan(req);
    expect_valid(req, p);
    EXPECT_LE(p.arena, no_reuse);
    if (HasFailure()) return;
  }
}

// Liveness over a descriptor: in -> a (step 0) -> b (step 1) -> c = f(av) (step 2), av a view of a, and an
// output view ov of the intermediate d (step 3).
TEST(Lifetimes, ViewsExtendTheirBaseAndOutputsLiveToTheEnd) {
  enum { IN, A, B, AV, C, D, OV, OUT, N };
  DescBuilder b("lifetimes");
  constexpr int32_t f = ONNXC_DTYPE_FLOAT;
  b.input("in", f, {});  // IN, then the rest in enum order
  b.intermediate("a", f, {});
  b.intermediate("b", f, {});
  b.view("av", f, {}, A);
  b.intermediate("c", f, {});
  b.intermediate("d", f, {});
  b.view("ov", f, {}, D);
  b.output("out", f, {});
  b.outputs = {OV, OUT};
  b.call(0, {IN, A});
  b.call(0, {A, B});
  b.call(0, {AV, C});
  b.call(0, {C, B, D});
  b.call(0, {D, OUT});
  const onnxc_model_desc &d = *b.get();
  std::vector<int32_t> root = {IN, A, B, A, C, D, D, OUT}, first(N), last(N);
  onnxc_compute_lifetimes(&d, onnxc_step_kinds, root.data(), first.data(), last.data());

  EXPECT_EQ(first[IN], -1) << "inputs are not arena tensors";
  EXPECT_EQ(first[A], 0);
  EXPECT_EQ(last[A], 2) << "the view av is read in step 2";
  EXPECT_EQ(first[AV], -1) << "views get no memory of their own";
  EXPECT_EQ(first[B], 1);
  EXPECT_EQ(last[B], 3);
  EXPECT_EQ(first[C], 2);
  EXPECT_EQ(last[C], 3);
  EXPECT_EQ(first[D], 3);
  EXPECT_EQ(last[D], 5) << "d is an output through its view: it lives past the last step";
  EXPECT_EQ(first[OUT], 4);
  EXPECT_EQ(last[OUT], 5);

  // Planned together: c must not land on a (a is still read through av while c is written).
  std::vector<onnxc_buffer_request> req;
  for (int i = 0; i < N; i++) req.push_back({first[i] >= 0 ? 256u : 0u, first[i], last[i]});
  Plan p = plan(req);
  expect_valid(req, p);
  EXPECT_NE(p.offsets[A], p.offsets[C]);
  EXPECT_NE(p.offsets[D], p.offsets[OUT]);
}

}  // namespace
