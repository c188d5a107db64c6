// The weights object (see elf_object.h). Layout: ELF header, the blob at offset 64, then .symtab,
// .strtab, .shstrtab and the section headers. Sections: null, the blob, .symtab, .strtab,
// .shstrtab, and an empty .note.GNU-stack (the object needs no executable stack).
#include "codegen/emit/elf_object.h"

#include <elf.h>

#include <cstring>
#include <fstream>

#include "ir/error.h"

namespace onnxc::codegen {

namespace {

constexpr uint64_t kBlobAt = 64;  // right after the 64-byte ELF header, already 64-byte aligned

constexpr uint64_t kShfX86_64Large = 0x10000000;  // SHF_X86_64_LARGE (System V x86-64 ABI)

uint64_t align8(uint64_t v) { return (v + 7) / 8 * 8; }

// Appends `s` and its NUL to a string table; returns its offset there.
uint32_t add_string(std::string& table, const std::string& s) {
  uint32_t at = static_cast<uint32_t>(table.size());
  table += s;
  table.push_back('\0');
  return at;
}

}  // namespace

void write_weights_object(const std::string& path, const WeightsBlob& blob, const std::string& symbol,
                          uint64_t large_from) {
  const bool large = blob.size > large_from;
  std::string shstr(1, '\0'), str(1, '\0');
  const uint32_t n_blob = add_string(shstr, large ? ".lrodata.onnxc_weights" : ".rodata.onnxc_weights");
  const uint32_t n_symtab = add_string(shstr, ".symtab"), n_strtab = add_string(shstr, ".strtab");
  const uint32_t n_shstrtab = add_string(shstr, ".shstrtab"), n_stack = add_string(shstr, ".note.GNU-stack");
  const uint32_t n_sym = add_string(str, symbol);

  Elf64_Sym syms[2] = {};
  syms[1].st_name = n_sym;
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
  syms[1].st_other = STV_HIDDEN;
  syms[1].st_shndx = 1;
  syms[1].st_size = blob.size;

  const uint64_t symtab_at = align8(kBlobAt + blob.size), strtab_at = symtab_at + sizeof syms;
  const uint64_t shstrtab_at = strtab_at + str.size(), headers_at = align8(shstrtab_at + shstr.size());

  Elf64_Shdr sh[6] = {};
  auto section = [&](int i, uint32_t name, uint32_t type, uint64_t flags, uint64_t offset, uint64_t size,
                     uint32_t link, uint32_t info, uint64_t align, uint64_t entsize) {
    sh[i].sh_name = name, sh[i].sh_type = type, sh[i].sh_flags = flags, sh[i].sh_offset = offset;
    sh[i].sh_size = size, sh[i].sh_link = link, sh[i].sh_info = info, sh[i].sh_addralign = align;
    sh[i].sh_entsize = entsize;
  };
  section(1, n_blob, SHT_PROGBITS, SHF_ALLOC | (large ? kShfX86_64Large : 0), kBlobAt, blob.size, 0, 0, 64, 0);
  section(2, n_symtab, SHT_SYMTAB, 0, symtab_at, sizeof syms, 3, 1, 8, sizeof(Elf64_Sym));  // info: first global
  section(3, n_strtab, SHT_STRTAB, 0, strtab_at, str.size(), 0, 0, 1, 0);
  section(4, n_shstrtab, SHT_STRTAB, 0, shstrtab_at, shstr.size(), 0, 0, 1, 0);
  section(5, n_stack, SHT_PROGBITS, 0, headers_at, 0, 0, 0, 1, 0);

  Elf64_Ehdr eh = {};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
  eh.e_type = ET_REL;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = headers_at;
  eh.e_ehsize = sizeof eh;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 6;
  eh.e_shstrndx = 4;
  static_assert(sizeof(Elf64_Ehdr) == kBlobAt);

  std::ofstream f(path, std::ios::binary);
  static const char zeros[64] = {};
  auto put = [&](const void* p, uint64_t n) { f.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); };
  auto pad_to = [&](uint64_t at, uint64_t to) {
    internal_check(to >= at && to - at <= sizeof zeros) << "weights object layout";
    put(zeros, to - at);
  };
  put(&eh, sizeof eh);
  uint64_t at = kBlobAt;
  for (const WeightsBlob::Piece& piece : blob.pieces) {  // streamed from each weight's own storage
    pad_to(at, kBlobAt + piece.offset);
    put(piece.tensor.raw(), piece.tensor.nbytes());
    at = kBlobAt + piece.offset + piece.tensor.nbytes();
  }
  internal_check(at == kBlobAt + blob.size) << "weights blob size " << blob.size << " but pieces end at " << at - kBlobAt;
  pad_to(at, symtab_at);
  put(syms, sizeof syms);
  put(str.data(), str.size());
  put(shstr.data(), shstr.size());
  pad_to(shstrtab_at + shstr.size(), headers_at);
  put(sh, sizeof sh);
  f.close();
  user_check(f.good()) << "cannot write " << path << " (" << blob.size << " bytes of weights; is the disk full?)";
}

}  // namespace onnxc::codegen
