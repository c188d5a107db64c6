// Links a compiled model: the plan C file, the weights blob and the kernel and runtime objects become
// libNAME.a and libNAME.so (through the target's C compiler: `cc`, $CC, or a cross compiler), plus
// the header NAME.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/emit/plan.h"
#include "codegen/emit/toolchain.h"

namespace onnxc::codegen {

struct LibraryFiles {
  std::string a_path, so_path, header_path, plan_c_path;
  uint64_t library_bytes = 0;  // size of the .so
};

// Builds the libraries in `out_dir`, using `work_dir` for intermediates. `objects` are the kernel
// objects and the Halide runtime object. Only onnxc_model_<name> and onnxc_model_entry stay global:
// each library keeps its kernels and its own Halide runtime to itself, so several models link into
// one program (statically or not) without clashing. `tools` link for the kernels' target.
LibraryFiles build_library(const PlanDescription& plan, const std::vector<std::string>& objects,
                           const std::string& out_dir, const std::string& work_dir, const Toolchain& tools);

// Runs a command (argv[0] looked up in PATH); InternalError with its output when it fails.
void run_command(const std::vector<std::string>& argv, const std::string& log_path);

}  // namespace onnxc::codegen
