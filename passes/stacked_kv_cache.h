// KV caches that exporters stack into one tensor, brought to the forms use_kv_cache keeps in place.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc::passes {

// The core form is a stacked append: present = Concat(axis 0) of Unsqueeze(Concat(P[j], n_j, axis a), 0)
// for j = 0..L-1, where P[j] is element j of P along axis 0 (Gather with a constant index, or a Squeeze
// of a one-element Slice or Split) and P's first dim is L. Its value is Concat(P, stack(n_j), axis a+1),
// and each per-element Concat(P[j], n_j) is element j of it. Two rewrites, by what the n_j read:
//  - no n_k depends on any per-element Concat (K and V of one layer, ONNX Runtime's GPT-2 past_i
//    [2, b, h, p, d]): present = Concat(P, Concat_j(Unsqueeze(n_j, 0)), axis a+1) and each P[j] ++ n_j
//    read as Gather(present, j); a graph input P and graph output present is then a plain
//    Concat(past, new) pair for use_kv_cache. Nested stacks ([L, 2, b, h, p, d]) fold level by level.
//  - layer k's new rows depend on layer j's attention (layers stacked into one input, [L, b, h, p, d]):
//    with P a graph input and present a graph output, a chain of onnxc.CacheAppend(prev, n_j; axis a+1,
//    layer j, grow) in the layers' order, each writing layer j's rows of the one stacked buffer (the first
//    link grows it by the new rows); each layer reads Gather(link_j, j). Codegen makes the links views of
//    the last one, so all share present's buffer (the session's cache when it keeps one).
// Stacked appends that fit neither (present not an output, P not an input, a static L that differs from
// the operand count) are left as they are, one line each in `why`; each rewrite is a line in `done`
// ("present: ..."). Returns whether anything changed.
bool stack_kv_cache(ir::Model& m, std::vector<std::string>* why = nullptr, std::vector<std::string>* done = nullptr);

}  // namespace onnxc::passes
