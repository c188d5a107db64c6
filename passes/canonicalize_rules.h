// The canonical spellings as rules on the fusion driver (fusion.h), family "canonical": each has a
// name that `onnxc inspect --fusions --canonical` reports and PassContext::disabled turns off (the
// CLI's --no-fuse takes fusion families only). canonicalize()
// runs the three sets in this order, each over the graph and every subgraph in program order.
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

// One op respelled (canonicalize.cpp): pow_square, reciprocal_div, div_exact_reciprocal,
// einsum_matmul, rotary_batch_caches.
std::vector<FusionRule> canonical_op_rules();

// Views around the scores (canonicalize_views.cpp): merge_split_add, swap_through_flat_view,
// view_before_rows.
std::vector<FusionRule> canonical_view_rules();

// Attention over a column of scores as the row form (canonicalize_attention_rows.cpp): attention_rows.
// Run after the others, so the chain it rebuilds is already in canonical spelling.
std::vector<FusionRule> canonical_row_rules();

}  // namespace onnxc::passes
