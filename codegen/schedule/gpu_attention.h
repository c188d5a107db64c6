// The fused attention on CUDA targets: the streaming stages of attention.h (online softmax over key
// tiles) as one kernel, one thread block per (query tile, head, batch), the query tile, the running
// state and each key tile's K and V rows in shared memory. The CPU schedules live in attention.cpp,
// which dispatches here for GPU targets.
#pragma once

#include <Halide.h>

#include "codegen/schedule/attention.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

// The tiling of one thread block: `rows` query rows (thread y) by `lanes` threads (thread x, one
// warp), key tiles of `keys` keys. Head-dim stages give each lane ceil(d / lanes) neighbouring
// elements of the head dim.
struct GpuAttentionTile {
  int rows = 16;
  int keys = 32;
  int lanes = 32;
  int threads() const { return rows * lanes; }
  // Shared memory of one block (4-byte accumulators): the query tile, the running state (max, sum,
  // accumulator per output element), one key tile of K and of V, its scores and exponentials, and
  // five per-row statistics.
  int shared_bytes(int rows_q, int dk, int dv) const {
    return 4 * (rows_q * dk + 3 * rows_q * dv + keys * (dk + dv) + 2 * rows_q * keys + 5 * rows_q);
  }
};

// The tile for a GPU target (d.gpu): one for every CUDA capability onnxc targets (sm_80+); 36 KiB of
// shared memory for heads of 64, under the 48 KiB a block gets without opting in.
GpuAttentionTile gpu_attention_tile(const TargetDesc& d);

// Sizes the streaming stages `s` (tq, tk, block) for a GPU target: the tile above, one key tile per
// merge of the running state (block = 1); a one-row copy (tq == 1) stays one row.
void size_attention_stages_gpu(AttentionStages& s, const TargetDesc& d);

// Whether the GPU schedule takes these stages: static head sizes (its shared tiles have constant
// sizes) that fit the shared memory of one block. Otherwise attention on GPU is materialized.
bool gpu_streams_attention(const AttentionStages& s);

// Schedules one copy of the stages into `nest` (out4's definition or its one-row specialization);
// out4 is the 4-D result y4 (d, q, h, b), computed in the kernel's blocks.
void schedule_attention_gpu(Halide::Func out4, Halide::Stage nest, AttentionStages& s, const Halide::Target& t);

}  // namespace onnxc::codegen
