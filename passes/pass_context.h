// What a pass sees besides the model: shapes from the latest inference, where fusions report, and
// which fusions are turned off. The pass manager builds it from PipelineOptions.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/infer/infer.h"

namespace onnxc::passes {

// What the fusions did on a model: each fusion that fired and each near miss with its reason.
struct FusedEntry {
  std::string rule, family;
  int nodes_replaced = 0;
  std::string where;  // the match root: its node name, else its output's name; "graph/..." in subgraphs
};
struct NearMiss {
  std::string rule, family, where, reason;
  int matched = 0;  // op nodes the best attempt matched: the ranking
};
struct FusionReport {
  std::vector<FusedEntry> fused;
  // Canonicalization rules that fired (family "canonical"), in model order: not fusions, so not
  // counted; `onnxc inspect --fusions --canonical` lists them.
  std::vector<FusedEntry> canonical;
  std::vector<NearMiss> near_misses;
  // Fusions fired per family; every known family is present (0 when none fired).
  std::map<std::string, int> counts() const;
  // Near misses, best (most nodes matched) first.
  std::vector<NearMiss> ranked_near_misses() const;
};

// The families a rule may belong to (counts, --no-fuse). Add a family here when a new kind of
// fusion appears; "attention" covers every attention form.
const std::vector<std::string>& fusion_families();

// What a pass sees besides the model (set up by the pass manager).
struct PassContext {
  const ir::InferenceResult* shapes = nullptr;  // fresh when the pass's PassInfo has needs_shapes
  FusionReport* report = nullptr;               // where fusions record; may be null
  std::set<std::string> disabled;               // fusion families or rule names turned off
  // Settings of opt-in passes from the command line, "pass.key" -> value ("quantize_int4_weights.block").
  std::map<std::string, std::string> options;
};

}  // namespace onnxc::passes
