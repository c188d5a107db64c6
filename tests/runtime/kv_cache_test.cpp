// The KV cache through the public API, on hand-written descriptors: CACHE_APPEND (present = past ++ new)
// as a plain step, and with the session keeping the cache (onnxc_session_keep_cache): the previous
// present becomes the next past without a copy, only the new rows are written, the buffer stays put,
// capacity is enforced, and the heads form ([b, s, H * d] new rows into [b, H, T, d]).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "desc_builder.h"
#include "onnxc/runtime.h"

namespace {

using ::testing::HasSubstr;

// past [1, 2, p, 3] and new [1, 2, s, 3] (or, with heads, new [1, s, 2 * 3]) -> present [1, 2, p + s, 3].
struct CacheModel {
  DescBuilder b{"kv"};
  explicit CacheModel(bool heads) {
    int32_t p = b.symbol("past"), s = b.symbol("seq");
    int32_t one = b.constant(1), two = b.constant(2), three = b.constant(3), six = b.constant(6);
    int32_t total = b.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_ADD});
    int32_t past = b.input("past_key_values.0.key", ONNXC_DTYPE_FLOAT, {one, two, p, three});
    int32_t add = heads ? b.input("k", ONNXC_DTYPE_FLOAT, {one, s, six}) : b.input("k", ONNXC_DTYPE_FLOAT, {one, two, s, three});
    int32_t present = b.output("present.0.key", ONNXC_DTYPE_FLOAT, {one, two, total, three});
    b.host(ONNXC_HOST_CACHE_APPEND, {past, add, present, DescBuilder::scalar(two), DescBuilder::scalar(heads ? two : b.constant(0)),
            DescBuilder::scalar(b.constant(-1)), DescBuilder::scalar(b.constant(0))});
  }
};

// Element (h, t, d) of a [1, 2, T, 3] tensor laid out with `cap` positions.
float at(const onnxc_tensor &t, int64_t cap, int64_t h, int64_t pos, int64_t d) {
  return static_cast<const float *>(t.data)[(h * cap + pos) * 3 + d];
}

// Every element (h, pos, d) of the first `n` positions of a [x, 2, T, 3]-like cache holds 100 h + 10 pos + d.
void expect_positions(const onnxc_tensor &y, int64_t cap, int64_t n) {
  for (int64_t h = 0; h < 2; h++)
    for (int64_t pos = 0; pos < n; pos++)
      for (int64_t d = 0; d < 3; d++) EXPECT_EQ(at(y, cap, h, pos, d), 100 * h + 10 * pos + d) << h << " " << pos << " " << d;
}

// New rows for positions [from, from + n): value 100 h + 10 pos + d, in the [1, 2, n, 3] layout.
std::vector<float> rows(int64_t from, int64_t n) {
  std::vector<float> v;
  for (int64_t h = 0; h < 2; h++)
    for (int64_t pos = from; pos < from + n; pos++)
      for (int64_t d = 0; d < 3; d++) v.push_back(static_cast<float>(100 * h + 10 * pos + d));
  return v;
}

void set(onnxc_session *s, size_t i, std::vector<int64_t> &dims, std::vector<float> &data) {
  onnxc_tensor t{ONNXC_DTYPE_FLOAT, static_cast<int32_t>(dims.size()), dims.data(), data.data()};
  ASSERT_EQ(onnxc_session_set_input(s, i, &t), ONNXC_OK) << onnxc_session_last_error(s);
}

TEST(KvCache, AppendsAsAPlainStepWithoutAKeptCache) {
  CacheModel m(false);
  LoadedDesc l(m.b.get());
  ASSERT_NE(l.session, nullptr);
  ASSERT_EQ(onnxc_model_num_cache_pairs(l.model), 1u);
  size_t in = 9, out = 9;
  ASSERT_EQ(onnxc_model_cache_pair(l.model, 0, &in, &out), ONNXC_OK);
  EXPECT_EQ(in, 0u);
  EXPECT_EQ(out, 0u);
  std::vector<int64_t> pd = {1, 2, 2, 3}, nd = {1, 2, 1, 3};
  std::vector<float> past = rows(0, 2), add = rows(2, 1);
  set(l.session, 0, pd, past);
  set(l.session, 1, nd, add);
  ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  onnxc_tensor y;
  ASSERT_EQ(onnxc_session_get_output(l.session, 0, &y), ONNXC_OK);
  EXPECT_EQ(y.dims[2], 3);
  expect_positions(y, 3, 3);
}

void decode(bool heads) {
  CacheModel m(heads);
  LoadedDesc l(m.b.get());
  ASSERT_NE(l.session, nullptr);
  ASSERT_EQ(onnxc_session_keep_cache(l.session, 5), ONNXC_OK);
  // Prefill: an empty past, two new positions.
  std::vector<int64_t> pd = {1, 2, 0, 3}, nd = heads ? std::vector<int64_t>{1, 2, 6} : std::vector<int64_t>{1, 2, 2, 3};
  std::vector<float> none, add = rows(0, 2);
  if (heads) {  // [1, s, H * d]: position-major
    add.clear();
    for (int64_t pos = 0; pos < 2; pos++)
      for (int64_t h = 0; h < 2; h++)
        for (int64_t d = 0; d < 3; d++) add.push_back(static_cast<float>(100 * h + 10 * pos + d));
  }
  set(l.session, 0, pd, none);
  set(l.session, 1, nd, add);
  ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  onnxc_tensor y;
  EXPECT_EQ(onnxc_session_get_output(l.session, 0, &y), ONNXC_ERR_UNSUPPORTED);
  EXPECT_THAT(onnxc_session_last_error(l.session), HasSubstr("stays in the session's KV cache"));
  int64_t cap = 0;
  ASSERT_EQ(onnxc_session_get_cache(l.session, 0, &y, &cap), ONNXC_OK);
  const void *buffer = y.data;
  EXPECT_EQ(cap, 5);
  EXPECT_EQ(y.dims[2], 2);
  // Three decode steps, the past never set: it is the cache, in place.
  for (int64_t pos = 2; pos < 5; pos++) {
    std::vector<int64_t> one = heads ? std::vector<int64_t>{1, 1, 6} : std::vector<int64_t>{1, 2, 1, 3};
    std::vector<float> row = rows(pos, 1);  // one position: [h][d], the same order in both layouts
    set(l.session, 1, one, row);
    ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  }
  ASSERT_EQ(onnxc_session_get_cache(l.session, 0, &y, &cap), ONNXC_OK);
  EXPECT_EQ(y.data, buffer);  // the same buffer all along: nothing was reallocated or copied over
  EXPECT_EQ(y.dims[2], 5);
  expect_positions(y, cap, 5);
  // A sixth position does not fit: an error naming the capacity, not a write past the buffer.
  std::vector<int64_t> one = heads ? std::vector<int64_t>{1, 1, 6} : std::vector<int64_t>{1, 2, 1, 3};
  std::vector<float> row(6, 1.0f);
  set(l.session, 1, one, row);
  EXPECT_EQ(onnxc_session_run(l.session), ONNXC_ERR_OUT_OF_MEMORY);
  EXPECT_THAT(onnxc_session_last_error(l.session), HasSubstr("keeps a cache of 5"));
}

TEST(KvCache, DecodeStepsWriteOnlyTheirRowsIntoTheKeptBuffer) { decode(false); }
TEST(KvCache, HeadsFormWritesBsnhRowsIntoTheBnshCache) { decode(true); }

TEST(KvCache, KeepingAgainStartsANewSequence) {
  CacheModel m(false);
  LoadedDesc l(m.b.get());
  ASSERT_NE(l.session, nullptr);
  ASSERT_EQ(onnxc_session_keep_cache(l.session, 4), ONNXC_OK);
  std::vector<int64_t> pd = {1, 2, 0, 3}, nd = {1, 2, 1, 3};
  std::vector<float> none, add = rows(0, 1);
  set(l.session, 0, pd, none);
  set(l.session, 1, nd, add);
  ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  ASSERT_EQ(onnxc_session_keep_cache(l.session, 4), ONNXC_OK);
  set(l.session, 1, nd, add);
  EXPECT_EQ(onnxc_session_run(l.session), ONNXC_ERR_INVALID_ARGUMENT);  // the past must be set again
  EXPECT_EQ(onnxc_session_keep_cache(l.session, -1), ONNXC_ERR_INVALID_ARGUMENT);
}

// A stacked cache's chain (passes/stacked_kv_cache): past [2, 1, p, 3] holds two layers; each layer's
// rows [1, s, 3] are written by a link of its own, the first link's output a view of present.
struct StackedChain {
  DescBuilder b{"kv_stacked"};
  StackedChain() {
    int32_t p = b.symbol("past"), s = b.symbol("seq");
    int32_t zero = b.constant(0), one = b.constant(1), two = b.constant(2), three = b.constant(3);
    int32_t total = b.add_expr({ONNXC_EXPR_SYM, 0, ONNXC_EXPR_SYM, 1, ONNXC_EXPR_ADD});
    int32_t past = b.input("past_key_values", ONNXC_DTYPE_FLOAT, {two, one, p, three});
    int32_t n0 = b.input("k0", ONNXC_DTYPE_FLOAT, {one, s, three}), n1 = b.input("k1", ONNXC_DTYPE_FLOAT, {one, s, three});
    int32_t present = b.output("present", ONNXC_DTYPE_FLOAT, {two, one, total, three});
    int32_t link = b.view("present/through_layer", ONNXC_DTYPE_FLOAT, {two, one, total, three}, present);
    auto sc = DescBuilder::scalar;
    b.host(ONNXC_HOST_CACHE_APPEND, {past, n0, link, sc(two), sc(zero), sc(zero), sc(one)});
    b.host(ONNXC_HOST_CACHE_APPEND, {link, n1, present, sc(two), sc(zero), sc(one), sc(zero)});
  }
};

// Layer l's rows for positions [from, from + n): 100 l + 10 pos + d, [1, n, 3].
std::vector<float> layer_rows(int64_t l, int64_t from, int64_t n) {
  std::vector<float> v;
  for (int64_t pos = from; pos < from + n; pos++)
    for (int64_t d = 0; d < 3; d++) v.push_back(static_cast<float>(100 * l + 10 * pos + d));
  return v;
}

TEST(KvCache, StackedChainAppendsEachLayerAndKeepsOneBuffer) {
  StackedChain m;
  LoadedDesc l(m.b.get());
  ASSERT_NE(l.session, nullptr) << "the chain's views must load";
  ASSERT_EQ(onnxc_model_num_cache_pairs(l.model), 1u);
  // Without a kept cache: past (2 positions) copied once, each layer's row written by its link.
  std::vector<int64_t> pd = {2, 1, 2, 3}, nd = {1, 1, 3};
  std::vector<float> past = layer_rows(0, 0, 2), l1 = layer_rows(1, 0, 2), a0 = layer_rows(0, 2, 1), a1 = layer_rows(1, 2, 1);
  past.insert(past.end(), l1.begin(), l1.end());
  set(l.session, 0, pd, past);
  set(l.session, 1, nd, a0);
  set(l.session, 2, nd, a1);
  ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  onnxc_tensor y;
  ASSERT_EQ(onnxc_session_get_output(l.session, 0, &y), ONNXC_OK);
  EXPECT_EQ(y.dims[2], 3);
  expect_positions(y, 3, 3);
  // Kept: an empty past, then three steps reading it in place; one buffer throughout.
  ASSERT_EQ(onnxc_session_keep_cache(l.session, 4), ONNXC_OK);
  std::vector<int64_t> empty = {2, 1, 0, 3};
  std::vector<float> none;
  set(l.session, 0, empty, none);
  const void *buffer = nullptr;
  for (int64_t pos = 0; pos < 4; pos++) {
    std::vector<float> r0 = layer_rows(0, pos, 1), r1 = layer_rows(1, pos, 1);
    set(l.session, 1, nd, r0);
    set(l.session, 2, nd, r1);
    ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
    int64_t cap = 0;
    ASSERT_EQ(onnxc_session_get_cache(l.session, 0, &y, &cap), ONNXC_OK);
    EXPECT_EQ(cap, 4);
    if (!buffer) buffer = y.data;
    EXPECT_EQ(y.data, buffer);
  }
  EXPECT_EQ(y.dims[2], 4);
  expect_positions(y, 4, 4);
}

// TensorScatter's form: a cache of the model's own length 4, [1, 4, 2] (axis 1), rows written from
// write_indices[b]; kept, the present is the past's buffer and each step writes only its row.
TEST(KvCache, ScatterWritesItsRowsInPlaceWhenKept) {
  DescBuilder b("scatter");
  int32_t s = b.symbol("seq");
  int32_t one = b.constant(1), two = b.constant(2), four = b.constant(4), zero = b.constant(0);
  int32_t past = b.input("past", ONNXC_DTYPE_FLOAT, {one, four, two});
  int32_t upd = b.input("update", ONNXC_DTYPE_FLOAT, {one, s, two});
  int32_t idx = b.input("write_indices", ONNXC_DTYPE_INT64, {one});
  int32_t present = b.output("present", ONNXC_DTYPE_FLOAT, {one, four, two});
  b.host(ONNXC_HOST_CACHE_SCATTER, {past, upd, idx, present, DescBuilder::scalar(one), DescBuilder::scalar(zero)});
  LoadedDesc l(b.get());
  ASSERT_NE(l.session, nullptr);
  ASSERT_EQ(onnxc_model_num_cache_pairs(l.model), 1u);
  ASSERT_EQ(onnxc_session_keep_cache(l.session, 1), ONNXC_OK);  // the capacity is the model's: 4
  std::vector<int64_t> pd = {1, 4, 2}, ud = {1, 2, 2}, id = {1};
  std::vector<float> zeros(8, 0.0f), first = {1, 2, 3, 4};
  std::vector<int64_t> at0 = {0};
  set(l.session, 0, pd, zeros);
  set(l.session, 1, ud, first);
  onnxc_tensor it{ONNXC_DTYPE_INT64, 1, id.data(), at0.data()};
  ASSERT_EQ(onnxc_session_set_input(l.session, 2, &it), ONNXC_OK);
  ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  onnxc_tensor y;
  int64_t cap = 0;
  ASSERT_EQ(onnxc_session_get_cache(l.session, 0, &y, &cap), ONNXC_OK);
  const void *buffer = y.data;
  EXPECT_EQ(cap, 4);
  for (int64_t pos = 2; pos < 4; pos++) {
    std::vector<int64_t> d1 = {1, 1, 2}, at = {pos};
    std::vector<float> row = {static_cast<float>(10 * pos), static_cast<float>(10 * pos + 1)};
    set(l.session, 1, d1, row);
    onnxc_tensor ip{ONNXC_DTYPE_INT64, 1, id.data(), at.data()};
    ASSERT_EQ(onnxc_session_set_input(l.session, 2, &ip), ONNXC_OK);
    ASSERT_EQ(onnxc_session_run(l.session), ONNXC_OK) << onnxc_session_last_error(l.session);
  }
  ASSERT_EQ(onnxc_session_get_cache(l.session, 0, &y, &cap), ONNXC_OK);
  EXPECT_EQ(y.data, buffer);
  const float *v = static_cast<const float *>(y.data);
  EXPECT_EQ(std::vector<float>(v, v + 8), (std::vector<float>{1, 2, 3, 4, 20, 21, 30, 31}));
}

}  // namespace
