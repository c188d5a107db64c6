// The stages of the fused attention kernel (codegen/lower/attention.cpp builds them) and their
// schedule: per (batch, head, query tile), K/V tiles streamed through a softmax by blocks of keys.
#pragma once

#include <optional>

#include "codegen/lower/lower.h"

namespace onnxc::codegen {

// Funcs of one attention kernel. Query rows are q = qo * tq + qi, keys kt * tk + j, key tiles
// kt = kb * block + rt; Halide argument order (innermost first) is given per Func. `tiles` keeps
// one block's key tiles (acc, max, sum); `state` is the running (max, sum, accumulator) per output
// element, updated once per block of `block` key tiles; `y4` is the [b, h, sq, dv] result
// (argument order d, q, h, b).
struct AttentionStages {
  Halide::Func q_tile;      // (qi, d, qo, h, b): the scaled query tile, transposed
  Halide::Func keys;        // (d, j, kt, h, b): K rows of key tile kt (past first; clamped past the end)
  Halide::Func values;      // (d, j, kt, h, b): V rows of key tile kt, likewise (both inline on CPU)
  Halide::Func scores_acc;  // (qi, j, kt, qo, h, b): Q·Kᵀ accumulation over the head dim
  Halide::Func scores;      // (qi, j, kt, qo, h, b): scores with scale, softcap and masks applied
  Halide::Func tile_max;    // (qi, kt, qo, h, b)
  Halide::Func probs;       // (qi, j, kt, qo, h, b): exp(score - tile max)
  Halide::Func tile_sum;    // (qi, kt, qo, h, b)
  Halide::Func tile_acc;    // (d, qi, kt, qo, h, b): probs · V of one key tile
  Halide::Func tiles;       // (d, qi, kt, qo, h, b): Tuple(tile_acc, tile_max, tile_sum)
  Halide::Func block_max;   // (qi, kb, qo, h, b): max over the block's tiles
  Halide::Func weight;      // (qi, kt, qo, h, b): exp(tile max - block max)
  Halide::Func block_sum;   // (qi, kb, qo, h, b): Σ tile_sum · weight
  Halide::Func block_acc;   // (d, qi, kb, qo, h, b): Σ tile_acc · weight
  Halide::Func state;       // (d, qi, qo, h, b), updated over the block RDom
  Halide::Func y4;          // (d, q, h, b)
  // Head dim (scores), keys of a tile (sums, probs · V), tiles of a block, blocks (state).
  Halide::RDom rd, rj, rt, rk;
  int tq = 32, tk = 64, block = 4;
  int head_dim_v = 0, head_dim_k = 0;  // static head sizes of V and of Q/K (0: known at run time)
  // Where past_key/past_value may be empty at run time: that condition (undefined otherwise). The
  // stages that read the past are specialized on it, so an empty past is never bounds-checked.
  Halide::Expr empty_past;
};

// The streaming kernel: `tiles` for any number of query rows and, where the query length is known only
// at run time, `row`, the same stages with one-row tiles, which y4 selects when `one_row` holds (a
// decoding step); the kernel is specialized on it, so each call runs one copy. Without `row`, y4 is
// tiles.y4.
struct AttentionKernel {
  AttentionStages tiles;
  std::optional<AttentionStages> row;
  Halide::Expr one_row;
  Halide::Func y4;  // (d, q, h, b)
};

// Schedules the stages; `output` is the kernel output Func that reads y4 (y4 itself, or the 3-D
// [b, s, h*dv] form of it).
void schedule_attention(Halide::Func output, const AttentionKernel& k, const Halide::Target& t);

// Sets the tile sizes of `s` for `t` (GPU targets: gpu_attention.h; CPU targets keep the lowering's).
void size_attention_stages(AttentionStages& s, const Halide::Target& t);

// Whether the streaming kernel above has a schedule for `t` and stages `s` (CPU targets; CUDA with
// static head sizes, gpu_attention.h). Elsewhere, and when the scores are an output, attention is
// lowered in its materialized form: the score matrix computed whole.
bool streams_attention(const Halide::Target& t, const AttentionStages& s);

// The materialized form: `stages` (scores, max, exp, sum, probs·V) computed root as reductions, then
// y4 (when it is not itself the kernel's output) and `output` as elementwise kernels.
// `empty_past` as in AttentionStages: the updates of `reads_past` (stages that read the past) are
// specialized on it.
void schedule_materialized_attention(Halide::Func output, const std::vector<Halide::Func>& stages,
                                     const std::vector<Halide::Func>& reads_past, const Halide::Expr& empty_past,
                                     Halide::Func y4, bool y4_is_output, const Halide::Target& t);

}  // namespace onnxc::codegen
