// Helpers for fusion tests: run passes with a fusion report, and evaluate a whole graph with the IR's
// reference evaluator (double precision per element) to compare a model before and after fusion.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/eval/eval.h"
#include "ir/printer.h"
#include "ir_text.h"
#include "test_util.h"
#include "passes/fusion.h"
#include "passes/pass.h"
#include "reference_eval.h"

namespace onnxc::testing {

// Runs the registered passes `names` in order with a pass context that records into `report`.
inline void run_with_report(ir::Model& m, const std::vector<std::string>& names, passes::FusionReport* report,
                            std::set<std::string> disabled = {}) {
  passes::PassContext ctx;
  ctx.report = report;
  ctx.disabled = std::move(disabled);
  for (const std::string& p : names) {
    const passes::PassInfo* info = passes::find_pass(p);
    if (!info) throw std::runtime_error("no pass " + p);
    info->make()->run(m, ctx);
  }
}

// IR text after the passes (report optional).
inline std::string fuse(const std::string& before, const std::vector<std::string>& names,
                        passes::FusionReport* report = nullptr) {
  ir::Model m = parse_model(dedent(before));
  passes::FusionReport local;
  run_with_report(m, names, report ? report : &local);
  return ir::to_string(*m.graph);
}

// Evaluates the graph (reference_eval.h); returns the graph outputs by name.
inline std::map<std::string, ir::Tensor> eval_graph(const ir::Model& m, const std::map<std::string, ir::Tensor>& inputs) {
  std::vector<ir::Tensor> in;
  for (const ir::Value* v : m.graph->inputs()) in.push_back(inputs.at(v->name()));
  std::vector<ir::Tensor> out = run_reference(*m.graph, in);
  std::map<std::string, ir::Tensor> res;
  for (size_t i = 0; i < out.size(); ++i) res[m.graph->outputs()[i]->name()] = out[i];
  return res;
}

// Random f32 inputs (static shapes), the same for `seed`.
inline std::map<std::string, ir::Tensor> random_inputs(const ir::Model& m, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.5f, 2.0f);
  std::map<std::string, ir::Tensor> in;
  for (const ir::Value* v : m.graph->inputs()) {
    std::vector<int64_t> dims = *ir::shape_as_ints(*v->shape());
    ir::Tensor t(ir::DType::Float32, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = dist(rng);
    in[v->name()] = t;
  }
  return in;
}

// The model's outputs before and after `names` agree within rtol/atol, and the passes fused.
inline void expect_same_values(const std::string& text, const std::vector<std::string>& names,
                               double rtol = 1e-5, double atol = 1e-6) {
  ir::Model before = parse_model(dedent(text));
  ir::Model after = parse_model(dedent(text));
  passes::FusionReport report;
  run_with_report(after, names, &report);
  EXPECT_FALSE(report.fused.empty()) << "nothing fused:\n" << ir::to_string(*after.graph);
  auto in = random_inputs(before);
  auto want = eval_graph(before, in), got = eval_graph(after, in);
  for (const auto& [name, w] : want) {
    const ir::Tensor& g = got.at(name);
    ASSERT_EQ(g.numel(), w.numel()) << name;
    for (int64_t i = 0; i < w.numel(); ++i)
      ASSERT_NEAR(g.get_f64(i), w.get_f64(i), atol + rtol * std::fabs(w.get_f64(i))) << name << "[" << i << "]";
  }
}

}  // namespace onnxc::testing
