// The tools that link a model library for a target: the C compiler, ld and objcopy, and the ELF
// machine of the objects onnxc writes itself. A target of another architecture than this machine's
// (arm-64-linux on x86-64) uses the cross tools Debian packages as aarch64-linux-gnu-*.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <string>

namespace onnxc::codegen {

struct Toolchain {
  std::string cc = "cc", ld = "ld", objcopy = "objcopy";
  uint16_t elf_machine = 0;    // EM_X86_64, EM_AARCH64
  bool large_sections = true;  // the x86-64 large data model exists (SHF_X86_64_LARGE)
};

// The toolchain for `t`. Native targets use $CC (else cc); a cross target uses $ONNXC_CROSS_PREFIX
// (default aarch64-linux-gnu- for 64-bit ARM) before gcc, ld and objcopy. UserError when the target's
// architecture has no ELF machine onnxc knows, or a cross tool is not installed.
Toolchain toolchain_for(const Halide::Target& t);

}  // namespace onnxc::codegen
