// Target -> link tools (see toolchain.h).
#include "codegen/emit/toolchain.h"

#include <elf.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "ir/error.h"

namespace onnxc::codegen {

namespace {

Halide::Target::Arch host_arch() {
#if defined(__x86_64__)
  return Halide::Target::X86;
#elif defined(__aarch64__)
  return Halide::Target::ARM;
#else
  return Halide::Target::ArchUnknown;
#endif
}

// True when `tool` names an executable file, or one in $PATH.
bool on_path(const std::string& tool) {
  if (tool.find('/') != std::string::npos) return access(tool.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/" + tool).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

Toolchain toolchain_for(const Halide::Target& t) {
  Toolchain tc;
  user_check(t.bits == 64 && (t.arch == Halide::Target::X86 || t.arch == Halide::Target::ARM))
      << "target '" << t.to_string() << "': onnxc links libraries for 64-bit x86 and ARM only";
  tc.elf_machine = t.arch == Halide::Target::X86 ? EM_X86_64 : EM_AARCH64;
  tc.large_sections = t.arch == Halide::Target::X86;
  if (t.arch == host_arch()) {
    if (const char* cc = std::getenv("CC"); cc && *cc) tc.cc = cc;
    return tc;
  }
  const char* p = std::getenv("ONNXC_CROSS_PREFIX");
  const std::string prefix = p && *p ? p : "aarch64-linux-gnu-";
  tc.cc = prefix + "gcc";
  tc.ld = prefix + "ld";
  tc.objcopy = prefix + "objcopy";
  for (const std::string* tool : {&tc.cc, &tc.ld, &tc.objcopy})
    user_check(on_path(*tool)) << "target '" << t.to_string() << "' is cross-compiled with " << *tool
                               << ", which is not installed (Debian: gcc-aarch64-linux-gnu; or set "
                               << "ONNXC_CROSS_PREFIX)";
  return tc;
}

}  // namespace onnxc::codegen
