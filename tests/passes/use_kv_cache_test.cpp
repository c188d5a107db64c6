// use_kv_cache: IR text before -> pass -> IR text expected. Past/present pairs (a graph input appended
// to and returned as a graph output) become onnxc.CacheAppend / onnxc.CacheScatter; anything else stays.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(UseKvCache, ConcatOfPastInputIntoPresentOutput) {
  EXPECT_EQ(run_passes(R"(
    graph main(%past: f32[1,2,p,4], %k: f32[1,2,s,4]) {
      %present: f32[1,2,p+s,4] = Concat(%past, %k) {axis=-2}
      return %present
    }
  )", {"use_kv_cache"}), canonical(R"(
    graph main(%past: f32[1,2,p,4], %k: f32[1,2,s,4]) {
      %present: f32[1,2,p+s,4] = onnxc.CacheAppend(%past, %k) {axis=2}
      return %present: f32[1,2,p+s,4]
    }
  )"));
}

TEST(UseKvCache, NearMissesStay) {
  // Not a cache pair: the first operand is no graph input (a past computed in the graph, or new rows
  // prepended to a past); the result is no graph output.
  std::string before = R"(
    graph main(%past: f32[1,2,p,4], %k: f32[1,2,s,4]) {
      %neg: f32[1,2,p,4] = Neg(%past)
      %a: f32[1,2,p+s,4] = Concat(%neg, %k) {axis=2}
      %b: f32[1,2,p+s,4] = Concat(%past, %k) {axis=2}
      %c: f32[1,2,p+s,4] = Add(%a, %b)
      %kn: f32[1,2,s,4] = Neg(%k)
      %d: f32[1,2,s+p,4] = Concat(%kn, %past) {axis=2}
      return %c, %d
    }
  )";
  EXPECT_EQ(run_passes(before, {"use_kv_cache"}), canonical(before));
}

TEST(UseKvCache, AttentionPastMovesIntoTheCache) {
  // GroupQueryAttention's form: 3-D Q, K, V with head counts, a 4-D past; the Attention then reads the
  // cache with its queries aligned to the last keys.
  EXPECT_EQ(run_passes(R"(
    graph main(%q: f32[1,s,64], %k: f32[1,s,32], %v: f32[1,s,32], %pk: f32[1,2,p,16], %pv: f32[1,2,p,16]) {
      %y: f32[1,s,64], %ok: f32[1,2,p+s,16], %ov: f32[1,2,p+s,16] = Attention(%q, %k, %v, %"", %pk, %pv) {is_causal=1, kv_num_heads=2, q_num_heads=4}
      return %y, %ok, %ov
    }
  )", {"use_kv_cache"}), canonical(R"(
    graph main(%q: f32[1,s,64], %k: f32[1,s,32], %v: f32[1,s,32], %pk: f32[1,2,p,16], %pv: f32[1,2,p,16]) {
      %ok: f32[1,2,p+s,16] = onnxc.CacheAppend(%pk, %k) {axis=2, heads=2}
      %ov: f32[1,2,p+s,16] = onnxc.CacheAppend(%pv, %v) {axis=2, heads=2}
      %y: f32[1,s,64] = Attention(%q, %ok, %ov) {is_causal=1, kv_num_heads=2, q_num_heads=4, __onnxc_causal_from_end=1}
      return %y: f32[1,s,64], %ok: f32[1,2,p+s,16], %ov: f32[1,2,p+s,16]
    }
  )"));
}

TEST(UseKvCache, TensorScatterKeepsTheModelsLength) {
  EXPECT_EQ(run_passes(R"(
    graph main(%cache: f32[2,8,4], %u: f32[2,1,4], %at: i64[2]) {
      %present: f32[2,8,4] = TensorScatter(%cache, %u, %at) {mode="circular"}
      return %present
    }
  )", {"use_kv_cache"}), canonical(R"(
    graph main(%cache: f32[2,8,4], %u: f32[2,1,4], %at: i64[2]) {
      %present: f32[2,8,4] = onnxc.CacheScatter(%cache, %u, %at) {axis=1, circular=1}
      return %present: f32[2,8,4]
    }
  )"));
}

}  // namespace
}  // namespace onnxc::testing
