// Reading and writing protobuf files. Before parsing, the top level of the file is walked as raw
// wire format against a small schema: that is what lets a truncated model say "truncated" and a
// PNG or text file say "not an ONNX model" instead of protobuf's bare "parse failed".
#include "frontend/proto_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>
#include <memory>
#include <set>
#include <sstream>

#include "ir/error.h"

namespace onnxc::frontend {

const WireSchema kModelSchema{
    "an ONNX model",
    {{1, 0, "ir_version"}, {2, 2, "producer_name"}, {3, 2, "producer_version"}, {4, 2, "domain"},
     {5, 0, "model_version"}, {6, 2, "doc_string"}, {7, 2, "graph"}, {8, 2, "opset_import"},
     {14, 2, "metadata_props"}, {20, 2, "training_info"}, {25, 2, "functions"}}};

const WireSchema kTensorSchema{
    "an ONNX TensorProto",
    {{1, 0, "dims", true}, {2, 0, "data_type"}, {3, 2, "segment"}, {4, 5, "float_data", true},
     {5, 0, "int32_data", true}, {6, 2, "string_data"}, {7, 0, "int64_data", true}, {8, 2, "name"},
     {9, 2, "raw_data"}, {10, 1, "double_data", true}, {11, 0, "uint64_data", true}, {12, 2, "doc_string"},
     {13, 2, "external_data"}, {14, 0, "data_location"}}};

const WireSchema kSequenceSchema{
    "an ONNX SequenceProto",
    {{1, 2, "name"}, {2, 0, "elem_type"}, {3, 2, "tensor_values"}, {4, 2, "sparse_tensor_values"},
     {5, 2, "sequence_values"}, {6, 2, "map_values"}, {7, 2, "optional_values"}}};

const WireSchema kOptionalSchema{
    "an ONNX OptionalProto",
    {{1, 2, "name"}, {2, 0, "elem_type"}, {3, 2, "tensor_value"}, {4, 2, "sparse_tensor_value"},
     {5, 2, "sequence_value"}, {6, 2, "map_value"}, {7, 2, "optional_value"}}};

namespace {

// The bytes of a regular file, memory-mapped.
class FileBytes {
 public:
  explicit FileBytes(const std::string& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; load() then refuses it.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    user_check(fd >= 0) << path << ": cannot open: " << std::strerror(errno);
    try {
      load(fd, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    user_check(size_ <= static_cast<size_t>(INT_MAX))
        << path << ": is " << (size_ >> 20) << " MiB; a single protobuf file is limited to 2 GiB "
        << "(models this large must keep their weights in external data files)";
  }
  ~FileBytes() {
    if (map_) ::munmap(map_, size_);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  // Maps a regular file. Anything else is refused before a byte is read: a device such as
  // /dev/zero never ends and a FIFO may never deliver, so neither can be a model or tensor file.
  void load(int fd, const std::string& path) {
    struct stat st {};
    user_check(::fstat(fd, &st) == 0) << path << ": cannot read: " << std::strerror(errno);
    user_check(!S_ISDIR(st.st_mode)) << path << ": is a directory, not a file";
    user_check(S_ISREG(st.st_mode)) << path << ": is "
                                    << (S_ISFIFO(st.st_mode)  ? "a FIFO"
                                        : S_ISCHR(st.st_mode) ? "a character device"
                                        : S_ISBLK(st.st_mode) ? "a block device"
                                        : S_ISSOCK(st.st_mode) ? "a socket"
                                                               : "not a regular file")
                                    << "; onnxc reads models and tensors only from regular files";
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0 || size_ > static_cast<size_t>(INT_MAX)) return;  // nothing to map, or refused
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    user_check(p != MAP_FAILED) << path << ": cannot map: " << std::strerror(errno);
    map_ = p;
    data_ = static_cast<const uint8_t*>(p);
  }

  void* map_ = nullptr;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

struct Scan {
  enum Kind { Ok, Truncated, Foreign } kind = Ok;
  std::string detail;
  std::set<int> present;  // known field numbers seen
};

// Walks the top-level fields of a serialized message.
Scan scan_wire(const uint8_t* p, size_t n, const WireSchema& schema) {
  Scan s;
  size_t pos = 0;
  auto varint = [&](uint64_t& v) -> int {  // 0 ok, 1 runs past the end, 2 malformed
    v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos >= n) return 1;
      uint8_t b = p[pos++];
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return 0;
    }
    return 2;
  };
  auto fail = [&](Scan::Kind k, const std::string& d) {
    s.kind = k;
    s.detail = d;
    return s;
  };
  while (pos < n) {
    size_t at = pos;
    uint64_t tag;
    int r = varint(tag);
    if (r == 1) return fail(Scan::Truncated, "the file ends inside a field tag at offset " + std::to_string(at));
    uint64_t number = tag >> 3;
    int wt = static_cast<int>(tag & 7);
    if (r == 2 || number == 0 || number > 536870911 || wt == 3 || wt == 4 || wt > 5)
      return fail(Scan::Foreign, "offset " + std::to_string(at) + " holds no valid protobuf field");
    const WireSchema::Field* f = nullptr;
    for (const auto& k : schema.fields)
      if (static_cast<uint64_t>(k.number) == number) f = &k;
    std::string fname = f ? std::string("'") + f->name + "'" : "#" + std::to_string(number);
    if (f && wt != f->wire_type && !(f->repeated_scalar && wt == 2))
      return fail(Scan::Foreign, "offset " + std::to_string(at) + " holds field " + fname + " with the wrong encoding");
    if (f) s.present.insert(f->number);
    uint64_t len = 0;
    switch (wt) {
      case 0:
        r = varint(len);
        if (r == 1) return fail(Scan::Truncated, "the file ends inside field " + fname);
        if (r == 2) return fail(Scan::Foreign, "offset " + std::to_string(at) + " holds a malformed number");
        continue;
      case 1: len = 8; break;
      case 5: len = 4; break;
      case 2:
        r = varint(len);
        if (r == 1) return fail(Scan::Truncated, "the file ends inside the length of field " + fname);
        if (r == 2) return fail(Scan::Foreign, "offset " + std::to_string(at) + " holds a malformed length");
        break;
    }
    if (len > n - pos) {
      return fail(Scan::Truncated, "field " + fname + " at offset " + std::to_string(at) + " needs " +
                                       std::to_string(len) + " bytes but only " +
                                       std::to_string(n - pos) + " remain");
    }
    pos += len;
  }
  if (s.present.empty() && n > 0) return fail(Scan::Foreign, "it has none of the expected fields");
  return s;
}

// Protobuf's own default: each ONNX subgraph level costs three (node, attribute, graph).
constexpr int kNestingLimit = 100;

bool parse_bytes(const uint8_t* p, size_t n, google::protobuf::MessageLite& msg, int nesting_limit) {
  google::protobuf::io::ArrayInputStream in(p, static_cast<int>(n));
  google::protobuf::io::CodedInputStream coded(&in);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(nesting_limit);
  return msg.ParsePartialFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

// A guess at what a foreign file is, for the message.
std::string looks_like(const uint8_t* p, size_t n) {
  auto starts = [&](const char* magic, size_t len) { return n >= len && std::memcmp(p, magic, len) == 0; };
  if (starts("\x89PNG", 4)) return "a PNG image";
  if (starts("\xff\xd8\xff", 3)) return "a JPEG image";
  if (starts("GIF8", 4)) return "a GIF image";
  if (starts("%PDF", 4)) return "a PDF document";
  if (starts("PK\x03\x04", 4)) return "a zip archive";
  if (starts("\x7f" "ELF", 4)) return "an ELF binary";
  if (starts("\x1f\x8b", 2)) return "a gzip archive";
  if (starts("\x93NUMPY", 6)) return "a NumPy array";
  size_t k = n < 512 ? n : 512;
  size_t text = 0;
  for (size_t i = 0; i < k; ++i)
    if (std::isprint(p[i]) || p[i] == '\n' || p[i] == '\r' || p[i] == '\t' || p[i] >= 0x80) ++text;
  if (k >= 4 && text == k) return "a text file";
  return "";
}

}  // namespace

void read_proto_file(const std::string& path, google::protobuf::MessageLite& msg, const WireSchema& schema,
                     std::initializer_list<int> require) {
  FileBytes bytes(path);
  parse_proto_bytes(bytes.data(), bytes.size(), path, msg, schema, require);
}

void parse_proto_bytes(const uint8_t* p, size_t n, const std::string& path, google::protobuf::MessageLite& msg,
                       const WireSchema& schema, std::initializer_list<int> require) {
  user_check(n <= static_cast<size_t>(INT_MAX)) << path << ": is " << (n >> 20) << " MiB; a protobuf message is "
                                                << "limited to 2 GiB";
  user_check(n > 0) << path << ": is empty (0 bytes), not " << schema.what;
  std::string guess = looks_like(p, n);
  auto foreign = [&](const std::string& why) {
    user_error << path << ": is not " << schema.what
               << (guess.empty() ? " (" + why + ")" : " (it looks like " + guess + ")");
  };
  Scan s = scan_wire(p, n, schema);
  if (s.kind == Scan::Foreign || (s.kind == Scan::Truncated && !guess.empty())) foreign(s.detail);
  user_check(s.kind == Scan::Ok) << path << ": is truncated (" << n << " bytes): " << s.detail;

  if (!parse_bytes(p, n, msg, kNestingLimit)) {
    if (!guess.empty()) foreign("");
    // Protobuf fails without saying why; a deeper limit that parses tells nesting from corruption.
    // Even that one stays bounded: the limit is what protects the stack from hostile input.
    std::unique_ptr<google::protobuf::MessageLite> probe(msg.New());
    user_check(!parse_bytes(p, n, *probe, 10 * kNestingLimit))
        << path << ": nests messages more than " << kNestingLimit
        << " levels deep (subgraphs inside subgraphs); onnxc refuses models nested this deeply";
    user_error << path << ": is not " << schema.what
               << ": its protobuf data is corrupt (a nested message does not parse)";
  }
  for (int f : require) {
    if (s.present.count(f)) continue;
    const char* name = "?";
    for (const auto& k : schema.fields)
      if (k.number == f) name = k.name;
    if (!guess.empty()) foreign("");
    user_error << path << ": is not " << schema.what << ": it has no '" << name << "' (a truncated file?)";
  }
}

std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void write_file_atomically(const std::string& path, const std::function<bool(int fd)>& write, bool durable) {
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  user_check(fd >= 0) << path << ": cannot create a file there: " << std::strerror(errno);
  std::string tmp(name.data());
  bool ok = false;
  std::string why;
  try {
    ok = write(fd);
    if (!ok) why = std::strerror(errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ok = ok && ::fchmod(fd, 0644) == 0;
  ok = ok && (!durable || ::fsync(fd) == 0);
  if (::close(fd) != 0) ok = false;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    why = std::strerror(errno);
    ok = false;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    user_error << path << ": write failed" << (why.empty() ? "" : ": " + why);
  }
}

void write_proto_file(const google::protobuf::MessageLite& msg, const std::string& path, bool durable) {
  size_t size = msg.ByteSizeLong();
  user_check(size <= static_cast<size_t>(INT_MAX))
      << path << ": the serialized message would be " << (size >> 20)
      << " MiB; a protobuf file is limited to 2 GiB (write large tensors as external data)";
  write_file_atomically(path, [&](int fd) { return msg.SerializeToFileDescriptor(fd); }, durable);
}

}  // namespace onnxc::frontend
