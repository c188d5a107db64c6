// Runs a list of named passes: times each one, dumps the IR after the passes asked for, verifies the
// graph after each pass (always in debug builds, on request otherwise) and re-runs shape inference
// before passes that need it. A list entry "fixpoint(a,b,c)" repeats its passes until none of them
// changes the model, at most `max_fixpoint_iterations` times.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/infer/infer.h"
#include "passes/pass_context.h"

namespace onnxc::passes {

struct PipelineOptions {
  std::set<std::string> dump_after;     // pass names whose output IR is dumped; "all" = every pass
  std::ostream* dump_stream = nullptr;  // where dumps go; null = std::cerr
  bool verify_each = false;             // ir::verify after every pass (always on in debug builds)
  std::ostream* timings = nullptr;      // if set, a table of per-pass times is written here at the end
  int max_fixpoint_iterations = 8;
  // Called after every pass run (name, whether it changed the model, the model).
  std::function<void(const std::string&, bool, const ir::Model&)> after_pass;
  FusionReport* fusion_report = nullptr;  // fusions record what fired and near misses here
  std::set<std::string> no_fuse;          // fusion families or rule names turned off (--no-fuse)
  std::map<std::string, std::string> pass_options;  // PassContext::options
};

struct PassTiming {
  std::string name;
  int runs = 0;
  int changed = 0;  // runs that changed the model
  double ms = 0;
};

class PassManager {
 public:
  explicit PassManager(PipelineOptions opt = {}) : opt_(std::move(opt)) {}
  // Runs `names` in order on `model`. UserError for an unknown pass name (the message lists the
  // known ones); InternalError, naming the pass, if the graph fails verification after it.
  void run(ir::Model& model, const std::vector<std::string>& names);
  // Per pass name, in first-run order; accumulated over run() calls.
  const std::vector<PassTiming>& timings() const { return timings_; }
  // Shape values from the latest inference run (valid until the next rewrite).
  const ir::InferenceResult& inference() const { return inference_; }

 private:
  bool run_one(ir::Model& model, const std::string& name);
  void infer(ir::Model& model, const std::string& why);
  void record(const std::string& name, bool changed, std::chrono::steady_clock::duration d);
  void print_timings(std::ostream& os) const;

  PipelineOptions opt_;
  std::vector<PassTiming> timings_;
  ir::InferenceResult inference_;
  bool shapes_fresh_ = false;
};

}  // namespace onnxc::passes
