// The whole-graph reference run for numeric tests: every node through the IR's evaluator (ir/eval),
// onnxc.SymbolicShape evaluated from the symbols bound by the inputs' shapes.
#pragma once

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/eval/eval.h"
#include "ir/eval/symbolic_shape.h"
#include "ir/graph.h"

namespace onnxc::testing {

// Runs `g` on concrete inputs with the reference evaluator (ir/eval), node by node; symbols are
// bound from the inputs' declared shapes for onnxc.SymbolicShape.
inline std::vector<ir::Tensor> run_reference(const ir::Graph& g, const std::vector<ir::Tensor>& inputs) {
  std::map<const ir::Value*, ir::Tensor> env;
  std::map<std::string, int64_t> symbols;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ir::Value* in = g.inputs()[i];
    env[in] = inputs.at(i);
    for (size_t k = 0; in->shape() && k < in->shape()->size(); ++k)
      if ((*in->shape())[k].is_symbol()) symbols[(*in->shape())[k].name()] = inputs[i].dims().at(k);
  }
  for (const ir::Value* c : g.initializers()) env[c] = c->constant();
  for (const ir::Node* n : g.nodes()) {
    std::optional<std::vector<ir::Tensor>> out;
    if (ir::is_symbolic_shape(*n)) {
      auto t = ir::evaluate_symbolic_shape(*n, symbols);
      if (t) out = std::vector<ir::Tensor>{*t};
    } else {
      std::vector<const ir::Tensor*> in;
      for (const ir::Value* v : n->inputs()) in.push_back(v ? &env.at(v) : nullptr);
      out = ir::evaluate(*n, in, ir::EvalOptions{int64_t{1} << 26});
    }
    if (!out) throw std::runtime_error("reference evaluator cannot run " + n->describe());
    for (size_t i = 0; i < n->num_outputs(); ++i)
      if (n->output(i)) env[n->output(i)] = (*out)[i];
  }
  std::vector<ir::Tensor> r;
  for (const ir::Value* o : g.outputs()) r.push_back(env.at(o));
  return r;
}

// Largest |got - want| / (1 + |want|) over all elements; inf if shapes differ.
inline double max_error(const ir::Tensor& got, const ir::Tensor& want) {
  if (got.dims() != want.dims()) return INFINITY;
  double e = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.get_f64(i), b = want.get_f64(i);
    if (a == b) continue;  // also equal infinities
    e = std::max(e, std::fabs(a - b) / (1 + std::fabs(b)));
  }
  return e;
}

}  // namespace onnxc::testing
