// Helpers for pass tests: run one registered pass on IR text and print the result.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/printer.h"
#include "ir_text.h"
#include "passes/pass.h"

namespace onnxc::testing {

// Parses `before`, runs the registered pass `pass` once and prints the graph.
inline std::string run_pass(const std::string& before, const std::string& pass) {
  ir::Model m = parse_model(dedent(before));
  const passes::PassInfo* info = passes::find_pass(pass);
  if (!info) throw std::runtime_error("no pass " + pass);
  info->make()->run(m);
  return ir::to_string(*m.graph);
}

// Same with several passes in order (e.g. a pass then "dce", to show only what survives).
inline std::string run_passes(const std::string& before, const std::vector<std::string>& names) {
  ir::Model m = parse_model(dedent(before));
  for (const std::string& p : names) {
    const passes::PassInfo* info = passes::find_pass(p);
    if (!info) throw std::runtime_error("no pass " + p);
    info->make()->run(m);
  }
  return ir::to_string(*m.graph);
}

// The text as the printer writes it (parse + print): lets expectations be written loosely spaced.
inline std::string canonical(const std::string& text) { return ir::to_string(*parse_model(dedent(text)).graph); }

}  // namespace onnxc::testing
