// The test IR parser round-trips the printer's text.
#include <gtest/gtest.h>

#include "test_util.h"

namespace onnxc::testing {
namespace {

TEST(IrText, RoundTripsPrinterOutput) {
  std::string text = dedent(R"(
    graph main(%x: f32[batch,seq,64], %onnx::m: i64[2]) {
      %c = const i64[2] {0, 1}
      %f = const f32[] {-inf}
      %s: i64[3] = Shape(%x)
      %y: f32[4*batch,seq-1,floordiv(seq,2)], %"" = Split(%x, %c) {axis=1, eps=9.99999975e-06, ints=[1, 2], fl=[0.5, 1], names=["a", "b"]}  # split node
      %t: f32[?r] = onnxc.SymbolicShape(%x) {dims=["4*batch"], value=tensor i64[2] {3, 4}}
      %u: unknown = Add(%onnx::m, %"")
      return %y: f32[4*batch,seq-1,floordiv(seq,2)], %s: i64[3]
    }
  )");
  EXPECT_EQ(canonical(text), text);
}

}  // namespace
}  // namespace onnxc::testing
