// The stages of the fused attention kernel (codegen/lower/attention.cpp builds them) and their
// schedule: per (batch, head, query tile), K/V tiles streamed through an online softmax.
#pragma once

#include "codegen/lower/lower.h"

namespace onnxc::codegen {

// Funcs of one attention kernel. Query rows are q = qo * tq + qi, keys kt * tk + j; Halide argument
// order (innermost first) is given per Func. `state` is the running (max, sum, accumulator) per
// output element, updated once per key tile; `y4` is the [b, h, sq, dv] result (argument order
// d, q, h, b). `head_dim_v` is the static value head size, or 0 when only known at run time.
struct AttentionStages {
  Halide::Func q_tile;      // (qi, d, qo, h, b): the scaled query tile, transposed
  Halide::Func scores_acc;  // (qi, j, kt, qo, h, b): Q·Kᵀ accumulation over the head dim
  Halide::Func scores;      // (qi, j, kt, qo, h, b): scores with scale, softcap and masks applied
  Halide::Func tile_max;    // (qi, kt, qo, h, b)
  Halide::Func probs;       // (qi, j, kt, qo, h, b): exp(score - tile max)
  Halide::Func tile_sum;    // (qi, kt, qo, h, b)
  Halide::Func tile_acc;    // (d, qi, kt, qo, h, b): probs · V of one key tile
  Halide::Func state;       // (d, qi, qo, h, b), updated over the key-tile RDom
  Halide::Func y4;          // (d, q, h, b)
  Halide::RDom rd, rj, rk;  // head dim (scores), keys of a tile (sums, probs · V), key tiles (state)
  int tq = 32, tk = 64;
  int head_dim_v = 0;
};

// Schedules the stages; `output` is the kernel output Func that reads y4 (y4 itself, or the 3-D
// [b, s, h*dv] form of it).
void schedule_attention(Halide::Func output, AttentionStages s, const Halide::Target& t);

}  // namespace onnxc::codegen
