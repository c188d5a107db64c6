// `onnxc optimize`: run graph passes and write the processed model back as ONNX (fused ops are
// standard ONNX where ONNX has them, so another runtime can execute the result).
#include <cstdio>
#include <filesystem>

#include "frontend/onnx_export.h"
#include "ir/error.h"
#include "passes/fuse_attention.h"
#include "passes/legalize_symbolic_shapes.h"
#include "passes/pipeline.h"
#include "tools/args.h"
#include "tools/build.h"

namespace onnxc::tools {

int optimize_main(const std::vector<std::string>& args) {
  std::string in, out;
  PassOptions po;
  bool external = false;
  ArgParser p("optimize", "IN.onnx -o OUT.onnx [--passes LIST]",
              "Runs graph passes (simplification, fusion) on a model and writes the result as ONNX. The\n"
              "file is written atomically: on any error OUT is left as it was.");
  p.positional("IN", "the .onnx model to read", &in);
  p.option("output", 'o', "OUT", "the .onnx file to write", &out);
  p.option("passes", 0, "LIST", "default (the compile pipeline), none, or a comma list of pass names", &po.passes);
  p.option("no-fuse", 0, "LIST", no_fuse_help(), &po.no_fuse);
  p.option("dump-after", 0, "PASS", "print the IR after this pass to stderr", &po.dump_after);
  p.flag("timings", 0, "print per-pass times to stderr", &po.timings);
  add_quantize_option(p, &po.quantize);  // int4-weights writes com.microsoft.MatMulNBits, which ONNX Runtime runs
  add_fix_dims_option(p, &po.fix_dims);
  p.flag("external-data", 0, "write large tensors to OUT.data beside the model (for models > 2 GiB)", &external);
  p.epilog("Passes:\n" + pass_list_help());
  if (!p.parse(args)) return kExitOk;
  if (out.empty()) throw UsageError("missing output file: -o OUT.onnx");
  std::error_code ec;
  user_check(!std::filesystem::is_directory(out, ec)) << out << ": is a directory, not a file";
  // The KV cache in place (onnxc.CacheAppend) is for onnxc's runtime: other runtimes get the
  // model's own past/present ops.
  if (po.passes == "default") {
    po.passes.clear();
    for (const std::string& name : passes::default_pipeline())
      if (name != "use_kv_cache") po.passes += (po.passes.empty() ? "" : ",") + name;
  }
  ir::Model m = read_model(in);
  size_t before = m.graph->num_nodes();
  passes::FusionReport report;
  po.report = &report;
  optimize_model(m, po);
  // Standard ONNX out: shape helpers only codegen reads go back to Shape/Gather/Concat arithmetic.
  passes::legalize_symbolic_shapes(m);
  passes::expand_attention_masks_for_export(m);
  frontend::ExportOptions eo;
  eo.external_data = external;
  frontend::save_model(m, out, eo);
  std::string fused;
  for (const auto& [family, n] : report.counts())
    if (n) fused += (fused.empty() ? ", fused " : ", ") + std::to_string(n) + " " + family;
  std::printf("optimize: %s (%zu nodes) -> %s (%zu nodes, opset %lld%s)\n", in.c_str(), before, out.c_str(),
              m.graph->num_nodes(), static_cast<long long>(m.opset("")), fused.c_str());
  return kExitOk;
}

}  // namespace onnxc::tools
