// Float32 elementary functions written in Halide IR that vectorize, contract to FMA instructions
// under strict_float and keep IEEE results at the edges of the float range.
#pragma once

#include <Halide.h>

namespace onnxc::codegen {

// a * b + c for Float(32) values, rounded once: LLVM's llvm.fma.f32, which strict_float leaves
// alone (Halide 14 has no fma of its own, and strict_float forbids LLVM to contract a * b + c).
// Halide emits a vector call lane by lane; LLVM's SLP vectorizer makes it one vfmadd (x86 with
// FMA), fmla (ARM) or fma.rn (PTX). A target without FMA gets libm's fmaf, exact but slow.
Halide::Expr fused_multiply_add(const Halide::Expr& a, const Halide::Expr& b, const Halide::Expr& c);

// e^x for a Float(32) x, every lane in straight-line code (no gathers, no libm calls). Within
// 1.02 ulp of the exact value for every float (checked exhaustively; 99.6% correctly rounded,
// none more than one float away from the correctly rounded result), including the subnormal
// results x in [-103.97, -87.34], which come out rounded once, not flushed. NaN gives that NaN,
// +inf and x > 88.7228 give +inf, -inf and x < -103.973 give +0; e^±0 = 1 exactly.
Halide::Expr exp_f32(const Halide::Expr& x);

}  // namespace onnxc::codegen
