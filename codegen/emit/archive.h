// A static library (`ar` format, GNU/System V flavour, with its symbol index) written by onnxc
// itself. `ar rcs` copies its input objects once into a temporary archive and then, since binutils
// 2.36, copies that into place once more: for a model whose weights are hundreds of megabytes that
// was most of a warm compile. Here each member is streamed once, the weights straight from their
// tensors (no separate weights object on disk).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace onnxc::codegen {

struct ArchiveMember {
  std::string name;                           // at most 15 characters (no long-name table)
  std::vector<std::string> symbols;           // the defined globals the index maps to this member
  uint64_t size = 0;                          // bytes `write` puts out, exactly
  std::function<void(std::ostream&)> write;
};

// Writes `path` (replacing it): the archive magic, the symbol index ("/", or "/SYM64/" when an offset
// does not fit 32 bits), then each member, deterministic (date, uid and gid 0; mode 644). UserError
// when the file cannot be written; InternalError when a member writes other than `size` bytes.
void write_archive(const std::string& path, const std::vector<ArchiveMember>& members);

}  // namespace onnxc::codegen
