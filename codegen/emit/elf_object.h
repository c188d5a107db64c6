// ELF objects onnxc writes and reads itself: the weights blob as a relocatable object (x86-64 or
// AArch64), one
// data symbol over it, so linking a model needs no assembler pass that copies hundreds of megabytes
// once more; and the symbol list of an object, for the archive index (archive.h).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/emit/plan.h"

namespace onnxc::codegen {

// An ET_REL object whose one section holds `blob` (64-byte aligned) and whose one symbol, `symbol`,
// is a hidden global object spanning it: visible to the plan object it is linked with, never
// exported from a shared library. A blob over `large_from` bytes goes to .lrodata
// (SHF_X86_64_LARGE), which linkers place after .bss, so 32-bit PC-relative code references to
// everything else never have to cross it. The layout is fixed on construction, so the object's
// size is known before a byte is written (an archive member header states it first). It keeps a
// reference to `blob` and reads the weights' storage only in write(): the blob (and the tensors it
// points into) must outlive every call to write().
class WeightsObject {
 public:
  WeightsObject(const WeightsBlob& blob, std::string symbol, uint64_t large_from, uint16_t machine);
  uint64_t size() const;
  // Streams the object: headers, then each weight from its own storage, then the tables.
  void write(std::ostream& out) const;

 private:
  static constexpr int kSections = 6;
  const WeightsBlob& blob_;
  std::string symbol_;
  bool large_;
  uint16_t machine_;
  uint64_t symtab_at_ = 0, strtab_at_ = 0, shstrtab_at_ = 0, headers_at_ = 0;
};

// The defined global and weak symbols of the ELF64 relocatable object `bytes` (what an archive's
// symbol index lists for it). InternalError when `bytes` is not such an object.
std::vector<std::string> elf_defined_globals(const std::string& bytes);

}  // namespace onnxc::codegen
