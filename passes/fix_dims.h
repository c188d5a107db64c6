// Fixing named symbolic dimensions to constants (`onnxc compile --fix-dims h=224,w=224`).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace onnxc::passes {

// Replaces each named symbol by its value in every type of the model: the graph's inputs and
// outputs, every node's outputs, value_info and the same in every subgraph. A model exported with
// dynamic image or sequence axes then compiles as if exported at that size: schedules see static
// extents (register blocks, tiles and forms chosen for the size), and the library refuses inputs of
// any other size at run time. Shape inference afterwards checks the fixed sizes against the model.
// UserError (naming the model file) for a symbol no graph input has, or a value below 1.
void fix_dims(ir::Model& model, const std::map<std::string, int64_t>& dims);

// Parses "SYM=N,SYM=N" (--fix-dims); UsageError-style messages via UserError on bad items.
std::map<std::string, int64_t> parse_fix_dims(const std::string& list);

}  // namespace onnxc::passes
