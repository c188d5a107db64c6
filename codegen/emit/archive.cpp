// The archive writer (see archive.h). Layout: "!<arch>\n"; a member header (60 bytes of
// space-padded ASCII fields) and the index: a big-endian count, one big-endian member-header offset
// per symbol, then the NUL-terminated names; then each member's header and bytes, every member
// padded to an even size with '\n'.
#include "codegen/emit/archive.h"

#include <cstring>
#include <fstream>

#include "ir/error.h"

namespace onnxc::codegen {

namespace {

constexpr uint64_t kHeader = 60;

uint64_t even(uint64_t n) { return n + (n & 1); }

// One 60-byte member header.
std::string member_header(const std::string& name, const std::string& mode, uint64_t size) {
  std::string size_text = std::to_string(size);
  user_check(size_text.size() <= 10) << "archive member '" << name << "' is " << size
                                     << " bytes, over the ar format's 10-digit limit";
  internal_check(name.size() <= 16) << "archive member name '" << name << "' is too long";
  auto field = [](std::string s, size_t width) { return s.append(width - s.size(), ' '); };
  std::string h = field(name, 16) + field("0", 12) + field("0", 6) + field("0", 6) + field(mode, 8) +
                  field(size_text, 10) + "`\n";
  internal_check(h.size() == kHeader) << "archive header layout";
  return h;
}

void put_big_endian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The index member's contents for offset width `w` (4 or 8 bytes), given each member's header offset.
std::string index_body(const std::vector<ArchiveMember>& members, const std::vector<uint64_t>& at, int w) {
  std::string body, names;
  uint64_t count = 0;
  for (const ArchiveMember& m : members) count += m.symbols.size();
  put_big_endian(body, count, w);
  for (size_t i = 0; i < members.size(); ++i)
    for (const std::string& s : members[i].symbols) {
      put_big_endian(body, at[i], w);
      names += s;
      names.push_back('\0');
    }
  return body + names;
}

// Each member's header offset when the index body is `index_size` bytes.
std::vector<uint64_t> member_offsets(const std::vector<ArchiveMember>& members, uint64_t index_size) {
  std::vector<uint64_t> at;
  uint64_t pos = 8 + kHeader + even(index_size);
  for (const ArchiveMember& m : members) {
    at.push_back(pos);
    pos += kHeader + even(m.size);
  }
  return at;
}

}  // namespace

void write_archive(const std::string& path, const std::vector<ArchiveMember>& members) {
  // The index's size does not depend on the offsets' values, only on their width.
  const std::vector<uint64_t> zeros(members.size());
  std::vector<uint64_t> at = member_offsets(members, index_body(members, zeros, 4).size());
  bool wide = !at.empty() && at.back() > UINT32_MAX;
  if (wide) at = member_offsets(members, index_body(members, at, 8).size());
  std::string index = index_body(members, at, wide ? 8 : 4);

  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  user_check(f.is_open()) << "cannot write " << path;
  f << "!<arch>\n" << member_header(wide ? "/SYM64/" : "/", "0", index.size()) << index;
  if (index.size() & 1) f << '\n';
  for (size_t i = 0; i < members.size(); ++i) {
    const ArchiveMember& m = members[i];
    internal_check(static_cast<uint64_t>(f.tellp()) == at[i]) << "archive member '" << m.name << "' offset";
    f << member_header(m.name + "/", "644", m.size);
    m.write(f);
    internal_check(!f.good() || static_cast<uint64_t>(f.tellp()) == at[i] + kHeader + m.size)
        << "archive member '" << m.name << "' wrote other than its " << m.size << " bytes";
    if (m.size & 1) f << '\n';
  }
  f.close();
  user_check(f.good()) << "cannot write " << path << " (is the disk full?)";
}

}  // namespace onnxc::codegen
