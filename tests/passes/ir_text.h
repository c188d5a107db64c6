// Parses the IR printer's text form (ir/printer.h) back into a model, so pass tests are written as
// text: IR before -> run one pass -> IR expected. Covers what tests need: tensor types with symbolic
// dims, inline constants, attributes (a number with '.', 'e', inf or nan is a float, otherwise an
// int; lists likewise), one graph per text (no subgraphs), node names after '#'.
//
//   graph main(%x: f32[batch,seq,64]) {
//     %c = const i64[2] {0, 1}
//     %s: i64[3] = Shape(%x)
//     %y: f32[batch,seq,64] = Add(%x, %x) {axis=1}  # add_node
//     return %y: f32[batch,seq,64]
//   }
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnxc::testing {

// Throws std::runtime_error with the line number on a syntax error. The model gets opset 17 for
// the default domain unless the text starts with a printer "model ... opset=[...]" line.
ir::Model parse_model(const std::string& text);

// Trims each line's trailing spaces and the text's leading/trailing blank lines, and removes the
// common indentation: lets tests write expected IR as indented raw strings.
std::string dedent(const std::string& text);

}  // namespace onnxc::testing
