// The pass manager: named, timed, dumpable, verified pass runs (see pass_manager.h).
#include "passes/pass_manager.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "passes/pass.h"

namespace onnxc::passes {
namespace {

#ifdef NDEBUG
constexpr bool kDebugBuild = false;
#else
constexpr bool kDebugBuild = true;
#endif

// "fixpoint(a, b,c)" -> {"a", "b", "c"}; anything else -> nullopt.
std::optional<std::vector<std::string>> fixpoint_group(const std::string& entry) {
  const std::string head = "fixpoint(";
  if (entry.rfind(head, 0) != 0 || entry.back() != ')') return std::nullopt;
  std::vector<std::string> names;
  std::string cur;
  for (char c : entry.substr(head.size(), entry.size() - head.size() - 1)) {
    if (c == ',') {
      names.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  names.push_back(cur);
  return names;
}

std::string known_pass_names() {
  std::string s;
  for (const PassInfo& p : pass_registry()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace

void PassManager::run(ir::Model& model, const std::vector<std::string>& names) {
  // Check every name first, so a typo fails before any pass ran.
  for (const std::string& entry : names)
    for (const std::string& n : fixpoint_group(entry).value_or(std::vector<std::string>{entry}))
      user_check(find_pass(n)) << "unknown pass '" << n << "'; known passes: " << known_pass_names();
  for (const std::string& entry : names) {
    auto group = fixpoint_group(entry);
    if (!group) {
      run_one(model, entry);
      continue;
    }
    for (int it = 0; it < opt_.max_fixpoint_iterations; ++it) {
      bool changed = false;
      for (const std::string& n : *group) changed |= run_one(model, n);
      if (!changed) break;
    }
  }
  if (opt_.timings) print_timings(*opt_.timings);
}

bool PassManager::run_one(ir::Model& model, const std::string& name) {
  const PassInfo& info = *find_pass(name);
  bool changed = false;
  if (name == "infer_shapes") {  // the manager keeps its result (shape values, missing rules)
    infer(model, name);
  } else {
    if (info.needs_shapes && !shapes_fresh_) infer(model, "infer_shapes (before " + name + ")");
    auto t0 = std::chrono::steady_clock::now();
    PassContext ctx{&inference_, opt_.fusion_report, opt_.no_fuse, opt_.pass_options};
    changed = info.make()->run(model, ctx);
    record(name, changed, std::chrono::steady_clock::now() - t0);
    if (changed) shapes_fresh_ = false;
  }
  if (opt_.verify_each || kDebugBuild) {
    // Structure only: ops without an inference rule may leave types unknown, which is not the
    // pass's fault.
    try {
      ir::verify(model, ir::VerifyOptions{/*require_types=*/false});
    } catch (const std::exception& e) {
      internal_error << "the graph is invalid after pass '" << name << "': " << e.what();
    }
  }
  if (opt_.dump_after.count(name) || opt_.dump_after.count("all")) {
    std::ostream& os = opt_.dump_stream ? *opt_.dump_stream : std::cerr;
    os << "// ---- IR after " << name << (changed ? "" : " (unchanged)") << " ----\n" << ir::to_string(model);
  }
  if (opt_.after_pass) opt_.after_pass(name, changed, model);
  return changed;
}

void PassManager::infer(ir::Model& model, const std::string& why) {
  auto t0 = std::chrono::steady_clock::now();
  inference_ = ir::infer_shapes(model);
  shapes_fresh_ = true;
  record(why, false, std::chrono::steady_clock::now() - t0);
}

void PassManager::record(const std::string& name, bool changed, std::chrono::steady_clock::duration d) {
  auto it = std::find_if(timings_.begin(), timings_.end(), [&](const PassTiming& t) { return t.name == name; });
  if (it == timings_.end()) it = timings_.insert(timings_.end(), PassTiming{name});
  it->runs += 1;
  it->changed += changed ? 1 : 0;
  it->ms += std::chrono::duration<double, std::milli>(d).count();
}

void PassManager::print_timings(std::ostream& os) const {
  double total = 0;
  os << std::left << std::setw(50) << "pass" << std::right << std::setw(6) << "runs" << std::setw(9) << "changed"
     << std::setw(11) << "ms" << "\n";
  for (const PassTiming& t : timings_) {
    os << std::left << std::setw(50) << t.name << std::right << std::setw(6) << t.runs << std::setw(9) << t.changed
       << std::setw(11) << std::fixed << std::setprecision(2) << t.ms << "\n";
    total += t.ms;
  }
  os << std::left << std::setw(65) << "total" << std::right << std::setw(11) << std::fixed << std::setprecision(2)
     << total << "\n";
}

}  // namespace onnxc::passes
