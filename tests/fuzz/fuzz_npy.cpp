// libFuzzer target: arbitrary bytes as a NumPy .npy file (`onnxc run --input x=file.npy`).
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/error.h"
#include "tools/check/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    onnxc::check::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const onnxc::UserError&) {
  }
  return 0;
}
