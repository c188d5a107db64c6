// Tensor fingerprints: equal for equal dtype, dims and bytes, whichever storage holds them; changed
// by a change anywhere (in the word lanes, in the byte tail, in dims or dtype).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ir/tensor.h"

namespace onnxc::ir {
namespace {

TEST(Tensor, FingerprintFollowsContentsNotStorage) {
  std::vector<uint8_t> bytes(77);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 1);
  Tensor owned = Tensor::from_vector<uint8_t>(DType::UInt8, {77}, bytes);
  auto copy = std::make_shared<std::vector<uint8_t>>(bytes);
  Tensor viewed = Tensor::view(DType::UInt8, {77}, copy->data(), copy);
  EXPECT_EQ(owned.fingerprint(), viewed.fingerprint());

  for (size_t at : {0, 7, 31, 32, 63, 64, 76}) {  // lanes of the first and second block, the tail
    std::vector<uint8_t> changed = bytes;
    changed[at] ^= 1;
    EXPECT_NE(Tensor::from_vector<uint8_t>(DType::UInt8, {77}, changed).fingerprint(), owned.fingerprint()) << at;
  }
  EXPECT_NE(owned.reshaped({7, 11}).fingerprint(), owned.fingerprint());
  EXPECT_NE(Tensor::from_vector<uint8_t>(DType::Int8, {77}, bytes).fingerprint(), owned.fingerprint());
  std::vector<uint8_t> shorter(bytes.begin(), bytes.end() - 1);
  EXPECT_NE(Tensor::from_vector<uint8_t>(DType::UInt8, {76}, shorter).fingerprint(), owned.fingerprint());
  EXPECT_NE(Tensor::strings({2}, {"ab", "c"}).fingerprint(), Tensor::strings({2}, {"a", "bc"}).fingerprint());
}

}  // namespace
}  // namespace onnxc::ir
