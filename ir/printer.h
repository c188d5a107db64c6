// Stable text form of the IR, for golden tests, `onnxc inspect --ir` and `--dump-after`. The same
// graph always prints the same text: value names as given, attributes in their stored order,
// constants as values when small and as a fingerprint otherwise.
#pragma once

#include <ostream>
#include <string>

#include "ir/graph.h"

namespace onnxc::ir {

struct PrintOptions {
  int max_inline_elements = 8;  // constants with more elements print as a fingerprint
};

void print_graph(std::ostream& os, const Graph& g, const PrintOptions& opt = {}, int indent = 0);
void print_model(std::ostream& os, const Model& m, const PrintOptions& opt = {});
std::string to_string(const Graph& g, const PrintOptions& opt = {});
std::string to_string(const Model& m, const PrintOptions& opt = {});
std::string tensor_summary(const Tensor& t, int max_inline_elements = 8);

}  // namespace onnxc::ir
