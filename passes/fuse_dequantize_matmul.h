// fuse_dequantize_matmul: MatMul(A, DequantizeLinear(blocked constant int4/uint4/int8/uint8 weight))
// -> com.microsoft.MatMulNBits (see the .cpp for the pattern).
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

std::vector<FusionRule> dequantize_matmul_rules();

}  // namespace onnxc::passes
