// Step profiles for `onnxc bench --profile` (see profile.h).
#include "tools/profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <time.h>

#include "ir/error.h"
#include "onnxc/runtime.h"

namespace onnxc::tools {

void StepProfile::record(void* user, const onnxc_step_profile* s) {
  auto* self = static_cast<StepProfile*>(user);
  self->events_.push_back(
      {s->step, s->kernel, s->nodes, s->start_ns, s->end_ns, s->cpu_ns, s->flops, s->bytes, self->runs_});
}

double StepProfile::flops_per_run() const {
  double f = 0;
  for (const Event& e : events_)
    if (e.run == runs_ && e.flops > 0) f += e.flops;
  return f;
}

namespace {

// The (op, name) pairs of a kernel's node list, "MatMul 'a', Add 'b'". Views the kernel computes
// inline (onnxc.Copy) are left out when it has other nodes: they are not what it is known by.
std::vector<std::pair<std::string, std::string>> kernel_ops(const std::string& nodes) {
  std::vector<std::pair<std::string, std::string>> ops;
  size_t pos = 0;
  while (pos < nodes.size()) {
    size_t sp = nodes.find(' ', pos);
    std::string op = nodes.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    size_t q1 = nodes.find('\'', pos), q2 = q1 == std::string::npos ? q1 : nodes.find('\'', q1 + 1);
    ops.emplace_back(op, q2 == std::string::npos ? "" : nodes.substr(q1 + 1, q2 - q1 - 1));
    if (q2 == std::string::npos) break;
    size_t next = nodes.find(", ", q2);
    if (next == std::string::npos) break;
    pos = next + 2;
  }
  auto view = [](const auto& o) { return o.first == "onnxc.Copy"; };
  if (!std::all_of(ops.begin(), ops.end(), view)) ops.erase(std::remove_if(ops.begin(), ops.end(), view), ops.end());
  return ops;
}

// "MatMul+Add": the op types of a kernel's nodes, in order; a long chain keeps its first ops and
// its last, the kernel's root ("Slice+Slice+...+Attention").
std::string op_chain(const std::string& nodes) {
  auto ops = kernel_ops(nodes);
  std::string r;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i + 1 < ops.size() && r.size() + ops[i].first.size() + ops.back().first.size() > 56) {
      r += "+...";
      i = ops.size() - 2;
      continue;
    }
    r += (r.empty() ? "" : "+") + ops[i].first;
  }
  return r.empty() ? "?" : r;
}

// The first node's name, as an example of where the kernel runs.
std::string first_name(const std::string& nodes) {
  auto ops = kernel_ops(nodes);
  std::string n = ops.empty() ? "" : ops.front().second;
  return n.size() > 40 ? "..." + n.substr(n.size() - 37) : n;
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    r += c;
  }
  return r;
}

}  // namespace

void StepProfile::print_table(double run_ms, bool by_size) const {
  struct Row {
    std::string ops, example;
    double ns = 0, cpu_ns = 0, flops = 0, bytes = 0;
    int calls = 0;
    bool counted = false;
  };
  // Steps of one op chain at one size are one row (layers of a model compile to separate kernels
  // when their weights are baked in; their code and cost are the same).
  std::map<std::string, Row> rows;
  double total_ns = 0;
  for (const Event& e : events_) {
    std::string size = by_size ? "|" + std::to_string(e.flops) + "|" + std::to_string(e.bytes) : "";
    Row& r = rows[op_chain(e.nodes) + size];
    if (r.ops.empty()) r.ops = op_chain(e.nodes), r.example = first_name(e.nodes);
    r.ns += static_cast<double>(e.end_ns - e.start_ns);
    r.cpu_ns += static_cast<double>(e.cpu_ns);
    r.bytes += static_cast<double>(e.bytes);
    if (e.flops >= 0) r.flops += e.flops, r.counted = true;
    ++r.calls;
    total_ns += static_cast<double>(e.end_ns - e.start_ns);
  }
  std::vector<const Row*> order;
  for (const auto& [k, r] : rows) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const Row* a, const Row* b) { return a->ns > b->ns; });
  const double runs = std::max(1, runs_);
  std::printf("\nprofile   %d step-timed run(s): kernels %.3f ms per run (the timed runs above: median %.3f ms)\n",
              runs_, total_ns / runs / 1e6, run_ms);
  // cpu: CPU time of all threads during the kernel; GFLOP per CPU-second is the kernel's speed per
  // core while it runs, whatever else shares the machine (wall / cpu shows the threads it kept busy).
  std::printf("%9s %6s %6s %9s %8s %8s %7s  %-36s %s\n", "ms/run", "share", "calls", "GFLOP/s", "per-cpu", "GB/s",
              "cpu/ms", "kernel (ops)", "e.g. node");
  for (const Row* r : order) {
    char gf[32] = "-", gfc[32] = "-";
    if (r->counted && r->ns > 0) std::snprintf(gf, sizeof gf, "%.1f", r->flops / r->ns);
    if (r->counted && r->cpu_ns > 0) std::snprintf(gfc, sizeof gfc, "%.1f", r->flops / r->cpu_ns);
    std::printf("%9.3f %5.1f%% %6.0f %9s %8s %8.1f %7.2f  %-36s %s\n", r->ns / runs / 1e6, 100.0 * r->ns / total_ns,
                r->calls / runs, gf, gfc, r->bytes / r->ns, r->cpu_ns / std::max(1.0, r->ns), r->ops.c_str(),
                r->example.c_str());
  }
}

void StepProfile::write_chrome_trace(const std::string& path) const {
  std::ofstream f(path);
  user_check(f.good()) << "cannot write the trace '" << path << "'";
  uint64_t t0 = events_.empty() ? 0 : events_.front().start_ns;
  f << "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    f << "  {\"name\": \"" << json_escape(op_chain(e.nodes)) << "\", \"cat\": \"kernel\", \"ph\": \"X\", \"pid\": 1, "
      << "\"tid\": 1, \"ts\": " << static_cast<double>(e.start_ns - t0) / 1e3
      << ", \"dur\": " << static_cast<double>(e.end_ns - e.start_ns) / 1e3 << ", \"args\": {\"run\": " << e.run
      << ", \"step\": " << e.step << ", \"kernel\": \"" << json_escape(e.kernel) << "\", \"nodes\": \""
      << json_escape(e.nodes) << "\", \"flops\": " << e.flops << ", \"bytes\": " << e.bytes << "}}"
      << (i + 1 < events_.size() ? ",\n" : "\n");
  }
  f << "], \"displayTimeUnit\": \"ms\"}\n";
  user_check(f.good()) << "writing the trace '" << path << "' failed";
}

}  // namespace onnxc::tools
