// Sliding-window geometry shared by pooling and convolution: kernel, strides, dilations and the
// begin padding (explicit pads, or derived from auto_pad SAME_UPPER/SAME_LOWER and the inferred
// output extent), for the spatial dims 2.. of an [N, C, spatial...] tensor.
#pragma once

#include <vector>

#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {

struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<Halide::Expr> pad_begin, pad_end;  // per spatial dim

  int spatial() const { return static_cast<int>(kernel.size()); }
  // Input position of output position `o` and kernel offset `r` along spatial dim i.
  Halide::Expr input_pos(int i, const Halide::Expr& o, const Halide::Expr& r) const {
    return o * static_cast<int32_t>(strides[i]) - pad_begin[i] + r * static_cast<int32_t>(dilations[i]);
  }
};

// Reads the window attributes of a pooling or convolution node. `x` is the input, `out` the output
// extents; `kernel` the kernel's spatial extents when not an attribute (Conv takes them from W).
Window read_window(const LowerContext& ctx, const HTensor& x, const std::vector<Halide::Expr>& out,
                   std::vector<int64_t> kernel = {});

}  // namespace onnxc::codegen
