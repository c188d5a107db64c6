// The test IR parser round-trips the printer's text and refuses what it cannot represent.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

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

namespace onnxc::testing {
namespace {

// Inputs fuzz_ir_text found: each is a clear parse error (std::runtime_error), never undefined
// behaviour or an internal error, and finfo.min printed to 9 digits still reads as -max.
TEST(IrText, RefusesWhatItCannotHold) {
  auto parse = [](const std::string& body) { return parse_model("graph g(%x: f32[2]) {\n" + body + "\n}\n"); };
  EXPECT_THROW(parse("  return %"), std::runtime_error);                              // no output name
  EXPECT_THROW(parse_model("graph g(%x: f32[1,22222222222222222222]) {\n  return %x\n}\n"), std::runtime_error);
  EXPECT_THROW(parse("  %c = const i64[1] {1e30}\n  return %c"), std::runtime_error);   // beyond int64
  EXPECT_THROW(parse("  %y: f32[2] = Relu(%x) {n=66666666666666666666}\n  return %y"), std::runtime_error);
  ir::Model m = parse("  %c = const f32[2] {-3.40282347e+38, 1e39}\n  return %c");
  const ir::Tensor& c = m.graph->outputs()[0]->constant();
  EXPECT_EQ(c.data<float>()[0], -std::numeric_limits<float>::max());
  EXPECT_EQ(c.data<float>()[1], std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace onnxc::testing
