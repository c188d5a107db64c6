// libFuzzer target: arbitrary bytes as an .onnx file through the frontend (wire scan, protobuf,
// validation, import, ONNX shape inference) and the IR verifier. A UserError is the expected
// answer to bad bytes; anything else (a crash, a sanitizer report, an InternalError) is a finding.
#include <cstddef>
#include <cstdint>

#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "ir/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnxc::frontend::ImportOptions opt;
  opt.load_external_data = false;  // never open files named by fuzzed bytes
  try {
    onnxc::ir::Model m = onnxc::frontend::load_model_from_memory(data, size, "fuzz.onnx", opt);
    onnxc::ir::VerifyOptions vo;
    vo.require_types = false;
    onnxc::ir::verify(m, vo);
  } catch (const onnxc::UserError&) {
  }
  return 0;
}
