// Writes the weights blob straight into a relocatable ELF object (x86-64), one data symbol over it,
// so linking a model needs no assembler pass that copies hundreds of megabytes once more.
#pragma once

#include <string>

#include "codegen/emit/plan.h"

namespace onnxc::codegen {

// `path` becomes an ET_REL object whose one section holds `blob` (64-byte aligned) and whose one
// symbol, `symbol`, is a hidden global object spanning it: visible to the plan object it is linked
// with, never exported from a shared library. A blob over `large_from` bytes goes to .lrodata
// (SHF_X86_64_LARGE), which linkers place after .bss, so 32-bit PC-relative code references to
// everything else never have to cross it. UserError when the file cannot be written.
void write_weights_object(const std::string& path, const WeightsBlob& blob, const std::string& symbol,
                          uint64_t large_from);

}  // namespace onnxc::codegen
