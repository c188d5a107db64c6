// libFuzzer target: arbitrary bytes as an ONNX TensorProto file (test data, `onnxc run --input`).
#include <cstddef>
#include <cstdint>

#include "frontend/tensor_io.h"
#include "ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    onnxc::ir::Tensor t = onnxc::frontend::parse_tensor_pb(data, size, "fuzz.pb");
    volatile size_t n = t.nbytes();  // the tensor must be usable: its size is consistent
    (void)n;
  } catch (const onnxc::UserError&) {
  }
  return 0;
}
