// 8-bit float element types in kernels. A float8 tensor is held as its bytes (Halide UInt(8)), so the
// ops that only move data need nothing; the ops that read or write its values (Cast, CastLike,
// QuantizeLinear, DequantizeLinear, IsNaN, IsInf) convert through float32 with these, which compute
// what ir/float8.h computes for one scalar (same rounding, saturation and NaN rules).
#pragma once

#include <Halide.h>

#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/float8.h"

namespace onnxc::codegen {

// The value of float8 bits (UInt(8)) of type `t` as a Float(32) (exact: every float8 is a float32).
Halide::Expr float8_decode(const Halide::Expr& bits, ir::DType t);
// A Float(32) value as float8 bits of type `t` (UInt(8)), rounded to nearest even; `mode` applies to
// E8M0 only.
Halide::Expr float8_encode(const Halide::Expr& f32, ir::DType t, bool saturate,
                           ir::E8M0Round mode = ir::E8M0Round::Up);

}  // namespace onnxc::codegen
