// IEEE float semantics for the arithmetic a model writes: every float definition in a kernel is
// marked strict_float, except the contraction accumulators (MatMul, Conv, Einsum sums) a lowering
// names, whose summation order the schedule picks anyway and which need FMA contraction for speed.
#pragma once

#include <Halide.h>

#include <set>
#include <string>
#include <vector>

namespace onnxc::codegen {

// Marks the float values of every Func that `outputs` reach (their definitions and updates) as
// strict_float, so neither Halide's simplifier nor LLVM may reassociate, contract or assume no
// NaN/inf: `bias + (1 - mask) * finfo.min` stays `bias` where the mask is 1. Funcs named in
// `reassociable` keep fast-math. Call after scheduling (an rfactor'd Func is then included).
// A float select in those definitions is kept as a select of bit patterns, which Halide's simplifier
// may fold where a specialization decides its condition (strict_float leaves float selects alone).
void keep_ieee_semantics(const std::vector<Halide::Func>& outputs, const std::set<std::string>& reassociable);

// Adds to `p` (built from keep_ieee_semantics' outputs) the lowering pass that turns the selects of
// bit patterns that are left back into float selects, as LLVM would have them without the guard.
void restore_float_selects(Halide::Pipeline& p);

}  // namespace onnxc::codegen
