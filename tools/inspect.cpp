// `onnxc inspect`: a model at a glance (producer, opsets, inputs and outputs with symbolic shapes, op
// histogram, parameters, external data, ops codegen lacks), or its IR text before/after passes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "passes/pass_context.h"
#include "tools/args.h"
#include "tools/build.h"
#include "tools/json.h"

namespace onnxc::tools {
namespace {

void count_ops(const ir::Graph& g, std::map<std::string, int>& hist, int& subgraph_nodes, bool nested) {
  for (const ir::Node* n : g.nodes()) {
    ++hist[(n->domain().empty() ? "" : n->domain() + ".") + n->op_type()];
    if (nested) ++subgraph_nodes;
    for (const ir::Graph* sg : n->subgraphs()) count_ops(*sg, hist, subgraph_nodes, true);
  }
}

void print_rows(const char* label, const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  bool first = true;
  for (const auto& [a, b] : rows) {
    std::printf("%-11s %s%s  %s\n", first ? label : "", a.c_str(), std::string(w - a.size(), ' ').c_str(), b.c_str());
    first = false;
  }
  if (rows.empty()) std::printf("%-11s (none)\n", label);
}

void print_summary(const std::string& path, const ir::Model& m) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  std::printf("%-11s %s (%s)\n", "model", path.c_str(), human_bytes(ec ? 0 : size).c_str());
  std::string producer = m.producer_name + (m.producer_version.empty() ? "" : " " + m.producer_version);
  std::printf("%-11s %s\n", "producer", producer.empty() ? "(not set)" : producer.c_str());
  std::printf("%-11s %lld\n", "ir version", static_cast<long long>(m.ir_version));
  std::string opsets;
  for (const ir::OpsetImport& o : m.opset_imports) {
    opsets += (opsets.empty() ? "" : ", ") + (o.domain.empty() ? std::string("ai.onnx") : o.domain) + " " +
              std::to_string(o.version);
  }
  std::printf("%-11s %s\n", "opsets", opsets.c_str());
  const ir::Graph& g = *m.graph;

  std::vector<std::pair<std::string, std::string>> rows;
  for (const ir::Value* v : g.inputs()) {
    if (!v->is_constant()) rows.emplace_back(v->name(), v->type().str());
  }
  print_rows("inputs", rows);
  rows.clear();
  for (const ir::Value* v : g.outputs()) rows.emplace_back(v->name(), v->type().str());
  print_rows("outputs", rows);

  int64_t params = 0, external = 0;
  uint64_t bytes = 0, external_bytes = 0;
  for (const ir::Value* v : g.initializers()) {
    const ir::Tensor& t = v->constant();
    uint64_t nb = static_cast<uint64_t>(t.numel()) * ir::dtype_size(t.dtype());
    params += t.numel();
    bytes += nb;
    // Loaded without external data: such tensors have dims but no bytes.
    if (t.empty_data() && t.numel() > 0 && t.dtype() != ir::DType::String) {
      ++external;
      external_bytes += nb;
    }
  }
  std::printf("%-11s %s elements in %zu initializers (%s)\n", "parameters", with_commas(params).c_str(),
              g.initializers().size(), human_bytes(bytes).c_str());
  if (external) {
    std::printf("%-11s yes: %lld tensors (%s) in files beside the model\n", "ext. data",
                static_cast<long long>(external), human_bytes(external_bytes).c_str());
  } else {
    std::printf("%-11s no\n", "ext. data");
  }

  std::map<std::string, int> hist;
  int sub = 0;
  count_ops(g, hist, sub, false);
  std::vector<std::pair<std::string, int>> ops(hist.begin(), hist.end());
  std::stable_sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::printf("%-11s %zu nodes, %zu op types%s\n", "ops", g.num_nodes(), ops.size(),
              sub ? (" (+" + std::to_string(sub) + " nodes in subgraphs)").c_str() : "");
  size_t w = 0;
  for (const auto& o : ops) w = std::max(w, o.first.size());
  for (const auto& [op, n] : ops) std::printf("            %s%s %5d\n", op.c_str(), std::string(w - op.size(), ' ').c_str(), n);
}

// What codegen would lack after the default passes; one line, never fatal for inspect.
void print_coverage(ir::Model m) {
  try {
    optimize_model(m, PassOptions{});
    std::vector<std::string> un = unsupported_ops(m);
    if (un.empty()) {
      std::printf("%-11s every op left after the default passes (%zu nodes) has a lowering\n", "codegen",
                  m.graph->num_nodes());
      return;
    }
    std::printf("%-11s %zu nodes have no lowering after the default passes:\n", "codegen", un.size());
    for (const std::string& u : un) std::printf("            %s\n", u.c_str());
  } catch (const UserError& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::printf("%-11s the default passes failed: %s\n", "codegen", msg.c_str());
  }
}

// `{"name": .., "type": "f32[batch,seq,64]", "dtype": "f32", "shape": [.., "seq", 64]}`; shape null when the
// rank is unknown, a symbolic or derived dim as its text.
std::string value_json(const ir::Value* v) {
  std::string shape = "null";
  if (v->type().has_rank()) {
    shape = "[";
    for (const ir::Dim& d : *v->shape()) {
      shape += (shape.size() > 1 ? ", " : "") + (d.is_const() ? std::to_string(d.value()) : json_str(d.str()));
    }
    shape += "]";
  }
  return "{\"name\": " + json_str(v->name()) + ", \"type\": " + json_str(v->type().str()) +
         ", \"dtype\": " + json_str(std::string(ir::dtype_name(v->dtype()))) + ", \"shape\": " + shape + "}";
}

// `inspect --json`: the summary as one JSON object (what print_summary and print_coverage print).
void print_summary_json(const std::string& path, const ir::Model& m, bool coverage) {
  const ir::Graph& g = *m.graph;
  std::string out = "{\"model\": " + json_str(path) + ", \"graph_name\": " + json_str(g.name()) +
                    ", \"producer_name\": " + json_str(m.producer_name) +
                    ", \"producer_version\": " + json_str(m.producer_version) + ", \"domain\": " + json_str(m.domain) +
                    ", \"model_version\": " + std::to_string(m.model_version) + ", \"doc_string\": " +
                    json_str(m.doc_string) + ", \"ir_version\": " + std::to_string(m.ir_version) + ",\n \"opsets\": {";
  for (size_t i = 0; i < m.opset_imports.size(); ++i) {
    const ir::OpsetImport& o = m.opset_imports[i];
    out += (i ? ", " : "") + json_str(o.domain.empty() ? "ai.onnx" : o.domain) + ": " + std::to_string(o.version);
  }
  out += "}, \"metadata\": {";
  for (size_t i = 0; i < m.metadata_props.size(); ++i) {
    out += (i ? ", " : "") + json_str(m.metadata_props[i].first) + ": " + json_str(m.metadata_props[i].second);
  }
  out += "},\n \"inputs\": [";
  bool first = true;
  for (const ir::Value* v : g.inputs()) {
    if (v->is_constant()) continue;
    out += (first ? "" : ", ") + value_json(v);
    first = false;
  }
  out += "],\n \"outputs\": [";
  for (size_t i = 0; i < g.outputs().size(); ++i) out += (i ? ", " : "") + value_json(g.outputs()[i]);
  int64_t params = 0;
  for (const ir::Value* v : g.initializers()) params += v->constant().numel();
  std::map<std::string, int> hist;
  int sub = 0;
  count_ops(g, hist, sub, false);
  out += "],\n \"parameters\": " + std::to_string(params) + ", \"initializers\": " +
         std::to_string(g.initializers().size()) + ", \"nodes\": " + std::to_string(g.num_nodes()) +
         ", \"subgraph_nodes\": " + std::to_string(sub) + ",\n \"ops\": {";
  first = true;
  for (const auto& [op, n] : hist) {
    out += (first ? "" : ", ") + json_str(op) + ": " + std::to_string(n);
    first = false;
  }
  out += "},\n \"unsupported\": ";
  if (!coverage) {
    out += "null";
  } else {
    // As print_coverage: the default passes first; a failure there is reported, not thrown.
    try {
      ir::Model opt = read_model(path);
      optimize_model(opt, PassOptions{});
      std::vector<std::string> un = unsupported_ops(opt);
      out += "[";
      for (size_t i = 0; i < un.size(); ++i) out += (i ? ", " : "") + json_str(un[i]);
      out += "]";
    } catch (const UserError& e) {
      out += "null, \"passes_error\": " + json_str(e.what());
    }
  }
  std::printf("%s}\n", out.c_str());
}

// `inspect --fusions`: what fired (rule, nodes replaced, where) and the near misses with reasons.
void print_fusions(const passes::FusionReport& r, bool json, bool canonical) {
  if (json) {
    std::printf("%s\n", fusion_report_json(r, canonical).c_str());
    return;
  }
  std::vector<passes::NearMiss> misses = r.ranked_near_misses();
  std::string counts;
  for (const auto& [family, n] : r.counts()) counts += (counts.empty() ? "" : ", ") + family + " " + std::to_string(n);
  std::printf("%-11s %zu fired, %zu near misses (%s)\n", "fusions", r.fused.size(), misses.size(), counts.c_str());
  for (size_t i = 0; i < r.fused.size(); ++i) {
    const passes::FusedEntry& e = r.fused[i];
    std::printf("%-11s %-16s %3d nodes  %s\n", i ? "" : "fused", e.rule.c_str(), e.nodes_replaced, e.where.c_str());
  }
  for (size_t i = 0; i < misses.size(); ++i) {
    const passes::NearMiss& e = misses[i];
    std::printf("%-11s %-16s %3d nodes  %s: %s\n", i ? "" : "near miss", e.rule.c_str(), e.matched, e.where.c_str(),
                e.reason.c_str());
  }
  if (!canonical) return;
  std::printf("%-11s %zu fired\n", "canonical", r.canonical.size());
  for (const passes::FusedEntry& e : r.canonical)
    std::printf("%-11s %-22s %3d nodes  %s\n", "", e.rule.c_str(), e.nodes_replaced, e.where.c_str());
}

}  // namespace

int inspect_main(const std::vector<std::string>& args) {
  std::string model, passes_arg;
  PassOptions po;
  bool ir_text = false, list_passes = false, no_coverage = false, fusions = false, json = false, canonical = false;
  ArgParser p("inspect", "MODEL [--ir] [--passes LIST] [--dump-after PASS] [--timings]",
              "Describes an ONNX model: producer, IR version, opset imports, inputs and outputs with dtypes\n"
              "and symbolic shapes, op histogram, parameter count and bytes, external data, and which ops\n"
              "codegen cannot lower after the default passes. --ir prints the IR text instead.");
  p.positional("MODEL", "the .onnx file (not needed with --list-passes)", &model, false);
  p.flag("ir", 0, "print the IR text (as imported, or after --passes)", &ir_text);
  p.option("passes", 0, "LIST", "run these passes first and print the IR after them:\n"
                                "default, or a comma list of pass names", &passes_arg);
  p.option("dump-after", 0, "PASS", "print the IR after this pass of the pipeline (--passes, default: the\n"
                                    "default pipeline); repeated passes print each time", &po.dump_after);
  p.flag("timings", 0, "print per-pass times of the pipeline", &po.timings);
  p.flag("no-coverage", 0, "skip the codegen coverage line (it runs the default passes)", &no_coverage);
  p.flag("list-passes", 0, "list the registered passes and the default pipeline", &list_passes);
  p.flag("fusions", 0, "run the passes (default pipeline unless --passes) and list each fusion that\n"
                       "fired (rule, nodes replaced, where) and each near miss with its reason", &fusions);
  p.flag("canonical", 0, "with --fusions, also list the rules of the canonicalize pass that fired\n"
                         "(pow_square, div_exact_reciprocal, einsum_matmul, attention_rows, ...)", &canonical);
  p.flag("json", 0, "print the summary (or with --fusions, {\"fused\": [...], \"near_misses\": [...],\n"
                    "\"counts\": {...}}) as JSON", &json);
  p.option("no-fuse", 0, "LIST", no_fuse_help(), &po.no_fuse);
  p.epilog("Examples:\n  onnxc inspect model.onnx\n  onnxc inspect model.onnx --passes default\n"
           "  onnxc inspect model.onnx --dump-after constant_folding --timings\n"
           "  onnxc inspect model.onnx --fusions [--json] [--no-fuse gelu]");
  add_external_path_option(p);
  if (!p.parse(args)) return kExitOk;
  if (list_passes) {
    std::fputs(pass_list_help().c_str(), stdout);
    return kExitOk;
  }
  if (model.empty()) throw UsageError("missing MODEL");
  if (canonical && !fusions) throw UsageError("--canonical goes with --fusions");
  if (fusions) {
    ir::Model m = read_model(model);
    passes::FusionReport report;
    po.passes = passes_arg.empty() ? "default" : passes_arg;
    po.report = &report;
    po.dump = &std::cerr;
    optimize_model(m, po);
    print_fusions(report, json, canonical);
    return kExitOk;
  }

  const bool run_passes = !passes_arg.empty() || !po.dump_after.empty() || po.timings;
  if (!ir_text && !run_passes) {
    frontend::ImportOptions io;
    io.load_external_data = false;  // cheap, and shows which tensors live outside the file
    require_file(model);
    user_check(!is_library_path(model)) << model << ": is a compiled library; inspect reads .onnx models";
    ir::Model m = frontend::load_model(model, io);
    if (json) {
      print_summary_json(model, m, !no_coverage);
      return kExitOk;
    }
    print_summary(model, m);
    if (!no_coverage) print_coverage(read_model(model));
    return kExitOk;
  }
  if (json) throw UsageError("--json goes with the summary or --fusions, not with --ir or --passes");
  ir::Model m = read_model(model);
  if (run_passes) {
    po.passes = passes_arg.empty() ? "default" : passes_arg;
    po.dump = &std::cout;
    optimize_model(m, po);
    std::cout.flush();
  }
  // --dump-after / --timings alone print just those; --ir or --passes print the final IR.
  if (ir_text || !passes_arg.empty()) std::fputs(ir::to_string(m).c_str(), stdout);
  return kExitOk;
}

}  // namespace onnxc::tools
