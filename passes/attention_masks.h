// What attention fusion (fuse_attention.cpp) knows about masks: how one applies to the scores,
// whether it broadcasts to them without growing them, and whether it is the causal mask that
// Attention's is_causal stands for (square, a slice of a constant causal buffer, or a Trilu of a
// -inf fill).
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"
#include "passes/fusion.h"

namespace onnxc::passes::attn {

// Fill values at least this large in magnitude absorb any realistic score: s + fill == fill in f32.
constexpr double kHugeNegative = -1e30;

// The value of a one-element constant, else nullopt.
std::optional<double> scalar(const ir::Value* v);

// How a mask applies to the scores: added (float), or a Where's bool condition that keeps
// (Where(c, scores, fill)) or drops (masked_fill: Where(c, fill, scores)) the scores it marks.
enum class MaskForm { kAdditive, kKeep, kDrop };

bool dims_equal(const ir::Dim& a, const ir::Dim& b);

// Equal, or two symbolic extents the model's own ops require to be equal at run time that inference
// left as different expressions. Never a 1 against another extent (a broadcast).
bool dims_match(const ir::Dim& a, const ir::Dim& b);

// Whether `m` broadcasts to `s` without growing it: rank <= and each dim 1 or equal.
bool broadcasts_to(const ir::Shape& m, const ir::Shape& s);
std::string not_broadcastable(const ir::Shape* mask, const ir::Shape& scores);

// Whether `mask` is the causal mask of these square scores.
bool is_causal_mask(ir::Value* mask, const ir::Shape& scores, MaskForm form);

// GPT-2's causal mask sliced from a constant buffer: the row offset r0 (element (i, j) kept iff
// j <= i + r0), or nullopt when `mask` is no such slice.
std::optional<ir::Dim> sliced_causal_offset(ir::Value* mask, const ir::Shape& scores, MaskForm form,
                                            const FusionContext& c);

// A mask the checks above would call causal were it square and unshifted (a constant causal
// pattern or a slice of one): only to say why such a mask was kept.
bool looks_causal(ir::Value* mask, MaskForm form);

}  // namespace onnxc::passes::attn
