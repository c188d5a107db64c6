// The .npy reader: magic, version, a Python-dict header ({'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }), then the raw C-order array. The header is parsed as strictly as NumPy's
// own reader: exactly the three keys, each once, a tuple of non-negative ints for the shape.
#include "tools/check/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <vector>

#include "ir/error.h"

namespace onnxc::check {
namespace {

struct NpyDType {
  const char* descr;  // without the byte-order character
  ir::DType dtype;
};
constexpr NpyDType kDTypes[] = {
    {"f4", ir::DType::Float32}, {"f8", ir::DType::Float64}, {"f2", ir::DType::Float16},
    {"i1", ir::DType::Int8},    {"i2", ir::DType::Int16},   {"i4", ir::DType::Int32},
    {"i8", ir::DType::Int64},   {"u1", ir::DType::UInt8},   {"u2", ir::DType::UInt16},
    {"u4", ir::DType::UInt32},  {"u8", ir::DType::UInt64},  {"b1", ir::DType::Bool},
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A recursive-descent reader of the one dict literal NumPy writes (and ast.literal_eval accepts).
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header h;
    std::set<std::string> seen;
    expect('{');
    while (!peek('}')) {
      std::string key = string_literal();
      expect(':');
      if (!seen.insert(key).second) fail("key '" + key + "' appears twice");
      if (key == "descr") {
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = shape();
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!peek(',')) break;
      expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != s_.size()) fail("text after the header dict");
    for (std::string k : {"descr", "fortran_order", "shape"})
      if (!seen.count(k)) fail("no '" + k + "' key");
    return h;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  [[noreturn]] void fail(const std::string& what) {
    user_error << path_ << ": malformed .npy header (" << what << " at column " << pos_ << "): " << s_;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted string");
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string v = s_.substr(pos_, end - pos_);
    if (v.find('\\') != std::string::npos) fail("escapes in strings");
    pos_ = end + 1;
    return v;
  }
  bool boolean() {
    skip_space();
    for (const char* w : {"True", "False"}) {
      size_t n = std::strlen(w);
      if (s_.compare(pos_, n, w) == 0 && (pos_ + n == s_.size() || !std::isalnum(static_cast<unsigned char>(s_[pos_ + n])))) {
        pos_ += n;
        return w[0] == 'T';
      }
    }
    fail("fortran_order must be True or False");
  }
  std::vector<int64_t> shape() {
    std::vector<int64_t> dims;
    expect('(');
    bool trailing_comma = false;
    while (!peek(')')) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '-') {
        user_error << path_ << ": .npy shape has a negative dim at column " << pos_ << ": " << s_;
      }
      size_t start = pos_;
      uint64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        v = v * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
        if (v > static_cast<uint64_t>(INT64_MAX)) fail("a dim beyond 2^63");
      }
      if (pos_ == start) fail("expected a dim");
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long
      dims.push_back(static_cast<int64_t>(v));
      trailing_comma = peek(',');
      if (!trailing_comma) break;
      expect(',');
    }
    expect(')');
    if (dims.size() == 1 && !trailing_comma) fail("a one-element shape needs a trailing comma: (n,)");
    return dims;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

// The file's bytes, refusing anything that is not a regular file (a device or FIFO never ends).
std::string read_regular_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  user_check(fd >= 0) << path << ": cannot open: " << std::strerror(errno);
  struct stat st {};
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  user_check(regular) << path << ": is not a regular file";
  std::ifstream f(path, std::ios::binary);
  user_check(f.good()) << path << ": cannot open file";
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(f.gcount()));
  return bytes;
}

}  // namespace

bool is_npy_file(const std::string& path) {
  // Not through an ifstream: opening a FIFO that way waits for a writer forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  char magic[6] = {};
  bool yes = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::read(fd, magic, 6) == 6 &&
             std::memcmp(magic, "\x93NUMPY", 6) == 0;
  ::close(fd);
  return yes;
}

ir::Tensor load_npy(const std::string& path) { return parse_npy(read_regular_file(path), path); }

ir::Tensor parse_npy(const std::string& bytes, const std::string& path) {
  user_check(bytes.size() >= 10 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0)
      << path << ": not a .npy file (no \\x93NUMPY magic)";
  int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  user_check((major == 1 || major == 2 || major == 3) && minor == 0)
      << path << ": unsupported .npy format version " << major << "." << minor;
  size_t header_len = 0, header_start = major == 1 ? 10 : 12;
  user_check(bytes.size() >= header_start) << path << ": truncated .npy header";
  for (size_t i = header_start; i-- > 8;) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[i]);
  user_check(header_len <= bytes.size() - header_start) << path << ": truncated .npy header";
  Header h = HeaderParser(bytes.substr(header_start, header_len), path).parse();

  user_check(h.descr.size() >= 2) << path << ": unsupported .npy dtype '" << h.descr << "'";
  char order = h.descr[0];
  user_check(order == '<' || order == '|' || order == '=')
      << path << ": big-endian .npy arrays are not supported (dtype '" << h.descr << "')";
  ir::DType dtype = ir::DType::Undefined;
  for (const NpyDType& d : kDTypes) {
    if (h.descr.substr(1) == d.descr) dtype = d.dtype;
  }
  user_check(dtype != ir::DType::Undefined) << path << ": unsupported .npy dtype '" << h.descr << "'";
  user_check(!h.fortran_order) << path << ": Fortran-order .npy arrays are not supported";

  size_t body = header_start + header_len;
  int64_t need = ir::checked_nbytes(dtype, h.shape);
  user_check(need >= 0) << path << ": .npy shape " << ir::dims_text(h.shape) << " holds more than 2^63 bytes";
  user_check(static_cast<uint64_t>(need) <= bytes.size() - body)
      << path << ": truncated .npy data (" << bytes.size() - body << " bytes, expected " << need << ")";
  ir::Tensor t(dtype, h.shape);
  if (t.nbytes()) std::memcpy(t.mutable_raw(), bytes.data() + body, t.nbytes());
  return t;
}

}  // namespace onnxc::check
