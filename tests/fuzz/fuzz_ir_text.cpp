// libFuzzer target: arbitrary text through the IR text parser the pass tests use, then the printer
// and the verifier on whatever it accepts. Syntax errors are std::runtime_error by contract.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "passes/ir_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    onnxc::ir::Model m = onnxc::testing::parse_model(std::string(reinterpret_cast<const char*>(data), size));
    onnxc::ir::VerifyOptions vo;
    vo.require_types = false;
    onnxc::ir::verify(m, vo);
    (void)onnxc::ir::to_string(m);
  } catch (const std::runtime_error&) {  // InternalError is a logic_error: it escapes, a finding
  }
  return 0;
}
