// The weights object and the symbol reader (see elf_object.h). The weights object's layout: ELF
// header, the blob at offset 64, then .symtab, .strtab, .shstrtab and the section headers. Sections:
// null, the blob, .symtab, .strtab, .shstrtab, and an empty .note.GNU-stack (the object needs no
// executable stack).
#include "codegen/emit/elf_object.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

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

namespace {
struct Names {
  std::string shstr = std::string(1, '\0'), str = std::string(1, '\0');
  uint32_t blob, symtab, strtab, shstrtab, stack, sym;
  Names(bool large, const std::string& symbol) {
    blob = add_string(shstr, large ? ".lrodata.onnxc_weights" : ".rodata.onnxc_weights");
    symtab = add_string(shstr, ".symtab"), strtab = add_string(shstr, ".strtab");
    shstrtab = add_string(shstr, ".shstrtab"), stack = add_string(shstr, ".note.GNU-stack");
    sym = add_string(str, symbol);
  }
};
}  // namespace

WeightsObject::WeightsObject(const WeightsBlob& blob, std::string symbol, uint64_t large_from, uint16_t machine)
    : blob_(blob), symbol_(std::move(symbol)), large_(blob.size > large_from), machine_(machine) {
  Names names(large_, symbol_);
  symtab_at_ = align8(kBlobAt + blob.size);
  strtab_at_ = symtab_at_ + 2 * sizeof(Elf64_Sym);
  shstrtab_at_ = strtab_at_ + names.str.size();
  headers_at_ = align8(shstrtab_at_ + names.shstr.size());
}

uint64_t WeightsObject::size() const { return headers_at_ + kSections * sizeof(Elf64_Shdr); }

void WeightsObject::write(std::ostream& out) const {
  const WeightsBlob& blob = blob_;
  Names names(large_, symbol_);
  Elf64_Sym syms[2] = {};
  syms[1].st_name = names.sym;
  syms[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
  syms[1].st_other = STV_HIDDEN;
  syms[1].st_shndx = 1;
  syms[1].st_size = blob.size;

  Elf64_Shdr sh[kSections] = {};
  auto section = [&](int i, uint32_t name, uint32_t type, uint64_t flags, uint64_t offset, uint64_t size,
                     uint32_t link, uint32_t info, uint64_t align, uint64_t entsize) {
    sh[i].sh_name = name, sh[i].sh_type = type, sh[i].sh_flags = flags, sh[i].sh_offset = offset;
    sh[i].sh_size = size, sh[i].sh_link = link, sh[i].sh_info = info, sh[i].sh_addralign = align;
    sh[i].sh_entsize = entsize;
  };
  section(1, names.blob, SHT_PROGBITS, SHF_ALLOC | (large_ ? kShfX86_64Large : 0), kBlobAt, blob.size, 0, 0, 64, 0);
  section(2, names.symtab, SHT_SYMTAB, 0, symtab_at_, sizeof syms, 3, 1, 8, sizeof(Elf64_Sym));  // info: first global
  section(3, names.strtab, SHT_STRTAB, 0, strtab_at_, names.str.size(), 0, 0, 1, 0);
  section(4, names.shstrtab, SHT_STRTAB, 0, shstrtab_at_, names.shstr.size(), 0, 0, 1, 0);
  section(5, names.stack, SHT_PROGBITS, 0, headers_at_, 0, 0, 0, 1, 0);

  Elf64_Ehdr eh = {};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
  eh.e_type = ET_REL;
  eh.e_machine = machine_;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = headers_at_;
  eh.e_ehsize = sizeof eh;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = kSections;
  eh.e_shstrndx = 4;
  static_assert(sizeof(Elf64_Ehdr) == kBlobAt);

  static const char zeros[64] = {};
  auto put = [&](const void* p, uint64_t n) { out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); };
  auto pad_to = [&](uint64_t at, uint64_t to) {  // gaps: 64-byte alignment, and the page before gathered weights
    internal_check(to >= at) << "weights object layout";
    for (; at < to; at += std::min<uint64_t>(to - at, sizeof zeros)) put(zeros, std::min<uint64_t>(to - at, sizeof zeros));
  };
  put(&eh, sizeof eh);
  uint64_t at = kBlobAt;
  for (const WeightsBlob::Piece& piece : blob.pieces) {  // streamed from each weight's own storage
    pad_to(at, kBlobAt + piece.offset);
    put(piece.tensor.raw(), piece.tensor.nbytes());
    at = kBlobAt + piece.offset + piece.tensor.nbytes();
  }
  internal_check(at == kBlobAt + blob.size) << "weights blob size " << blob.size << " but pieces end at " << at - kBlobAt;
  pad_to(at, symtab_at_);
  put(syms, sizeof syms);
  put(names.str.data(), names.str.size());
  put(names.shstr.data(), names.shstr.size());
  pad_to(shstrtab_at_ + names.shstr.size(), headers_at_);
  put(sh, sizeof sh);
}

std::vector<std::string> elf_defined_globals(const std::string& bytes) {
  auto fits = [&](uint64_t at, uint64_t n) { return at <= bytes.size() && n <= bytes.size() - at; };
  Elf64_Ehdr eh;
  internal_check(fits(0, sizeof eh)) << "object too short for an ELF header";
  std::memcpy(&eh, bytes.data(), sizeof eh);
  internal_check(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
                 eh.e_shentsize == sizeof(Elf64_Shdr) && fits(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)))
      << "not an ELF64 object";
  auto header = [&](uint64_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  std::vector<std::string> names;
  for (uint64_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr symtab = header(i);
    if (symtab.sh_type != SHT_SYMTAB) continue;
    internal_check(symtab.sh_link < eh.e_shnum && fits(symtab.sh_offset, symtab.sh_size)) << "ELF symbol table";
    Elf64_Shdr strtab = header(symtab.sh_link);
    internal_check(fits(strtab.sh_offset, strtab.sh_size)) << "ELF string table";
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + symtab.sh_offset + at, sizeof sym);
      int bind = ELF64_ST_BIND(sym.st_info);
      if ((bind != STB_GLOBAL && bind != STB_WEAK) || sym.st_shndx == SHN_UNDEF) continue;
      internal_check(sym.st_name < strtab.sh_size) << "ELF symbol name";
      const char* name = bytes.data() + strtab.sh_offset + sym.st_name;
      names.emplace_back(name, strnlen(name, strtab.sh_size - sym.st_name));
    }
  }
  return names;
}

}  // namespace onnxc::codegen
