// The .npy reader: magic, version, a Python-dict header ({'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }), then the raw C-order array.
#include "tools/check/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
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

// The text of the value of `key` in the header dict, up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) k = header.find("\"" + key + "\"");
  user_check(k != std::string::npos) << path << ": .npy header has no '" << key << "'";
  size_t colon = header.find(':', k);
  user_check(colon != std::string::npos) << path << ": malformed .npy header";
  size_t start = colon + 1, depth = 0, i = start;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string v = header.substr(start, i - start);
  size_t b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t");
  return b == std::string::npos ? "" : v.substr(b, e - b + 1);
}

}  // namespace

bool is_npy_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[6] = {};
  f.read(magic, 6);
  return f.gcount() == 6 && std::memcmp(magic, "\x93NUMPY", 6) == 0;
}

ir::Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  user_check(f.good()) << path << ": cannot open file";
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  user_check(bytes.size() >= 10 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0)
      << path << ": not a .npy file (no \\x93NUMPY magic)";
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else {
    user_check(major == 2 || major == 3) << path << ": unsupported .npy format version " << major;
    user_check(bytes.size() >= 12) << path << ": truncated .npy header";
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  }
  user_check(header_start + header_len <= bytes.size()) << path << ": truncated .npy header";
  std::string header(bytes.data() + header_start, header_len);

  std::string descr = dict_value(header, "descr", path);
  user_check(descr.size() >= 4 && (descr.front() == '\'' || descr.front() == '"'))
      << path << ": unsupported .npy dtype " << descr;
  descr = descr.substr(1, descr.size() - 2);
  char order = descr[0];
  user_check(order == '<' || order == '|' || order == '=')
      << path << ": big-endian .npy arrays are not supported (dtype '" << descr << "')";
  ir::DType dtype = ir::DType::Undefined;
  for (const NpyDType& d : kDTypes) {
    if (descr.substr(1) == d.descr) dtype = d.dtype;
  }
  user_check(dtype != ir::DType::Undefined) << path << ": unsupported .npy dtype '" << descr << "'";
  user_check(dict_value(header, "fortran_order", path) == "False")
      << path << ": Fortran-order .npy arrays are not supported";

  std::string shape_text = dict_value(header, "shape", path);
  user_check(shape_text.size() >= 2 && shape_text.front() == '(' && shape_text.back() == ')')
      << path << ": malformed .npy shape " << shape_text;
  std::vector<int64_t> dims;
  std::string item;
  for (char c : shape_text.substr(1, shape_text.size() - 2) + ",") {
    if (c == ',') {
      size_t b = item.find_first_not_of(' ');
      if (b != std::string::npos) {
        char* end = nullptr;
        long long v = std::strtoll(item.c_str() + b, &end, 10);
        user_check(*end == '\0' || *end == ' ' || *end == 'L') << path << ": malformed .npy shape " << shape_text;
        dims.push_back(v);
      }
      item.clear();
    } else {
      item += c;
    }
  }
  ir::Tensor t(dtype, dims);
  size_t body = header_start + header_len;
  user_check(bytes.size() - body >= t.nbytes())
      << path << ": truncated .npy data (" << bytes.size() - body << " bytes, expected " << t.nbytes() << ")";
  if (t.nbytes()) std::memcpy(t.mutable_raw(), bytes.data() + body, t.nbytes());
  return t;
}

}  // namespace onnxc::check
