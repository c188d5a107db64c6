// NumPy `.npy` files (format versions 1.0, 2.0 and 3.0) as ir::Tensor: little-endian or
// byte-order-free dtypes, C order. Enough for `onnxc run --input name=x.npy`.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace onnxc::check {

// Reads an .npy file. UserError naming the file for anything unsupported or malformed (big-endian,
// Fortran order, object or unicode arrays, a truncated body).
ir::Tensor load_npy(const std::string& path);
// The same from the file's bytes; `path` names it in messages (the fuzz target's entry point).
ir::Tensor parse_npy(const std::string& bytes, const std::string& path);

// True if the file starts with the .npy magic ("\x93NUMPY").
bool is_npy_file(const std::string& path);

}  // namespace onnxc::check
