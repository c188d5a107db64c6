// Sub-patterns and checks shared by the normalization fusions (layer, RMS, skip): the optional
// `* scale + bias` after the normalized value, and turning the captures into the fused op's inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

// x (captured "x"), or Cast(x) to a float type (captured "xf" either way): the fp32 island that
// exporters of half-precision models put around a norm. The bare input is tried first, so a near
// miss reports what failed further on rather than a missing Cast.
Pattern norm_input();
// The normalized value, optionally cast back: wrap the core with this before with_affine.
Pattern cast_back(const Pattern& core);
// "" when the input cast (if any) is to a float type and the normalized value ("normed") is back
// in x's dtype.
std::string check_casts(const Match& m);

// core, Mul(core, scale), Add(core, bias), Add(Mul(core, scale), bias) — largest first; captures
// "normed" (the core), "scale" and "bias" when present.
Pattern with_affine(const Pattern& core, bool bias);

// "" when scale and bias (those captured) cover exactly the last k dims of x (leading 1s allowed
// on constants), have x's dtype and do not broadcast x; or when no scale is captured and x's last
// k dims are static (the fused op then gets a scale of ones).
std::string check_norm_affine(const Match& m, const FusionContext& c, const ir::Value* x, int64_t k);

// {x, scale, bias}: scale of ones when absent, leading 1s dropped from constants; bias only when
// captured and `with_bias`.
std::vector<ir::Value*> norm_affine_inputs(const Match& m, RewriteBuilder& b, ir::Value* x, int64_t k, bool with_bias);

// The captured "eps" as a float.
float eps_of(const Match& m);

}  // namespace onnxc::passes
