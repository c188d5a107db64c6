// Target strings accepted by `onnxc compile --target`: `host` (the machine compiling), `x86-64-avx512`
// (a named feature set), `cuda` (host CPU + CUDA, compute capability 8.0), or any Halide target string.
#pragma once

#include <Halide.h>

#include <string>

namespace onnxc::codegen {

// The Halide target a name stands for; UserError for an unknown name.
Halide::Target parse_target(const std::string& name);

}  // namespace onnxc::codegen
