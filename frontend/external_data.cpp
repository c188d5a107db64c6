// External data files: location checks, one read-only mapping per file, tensors as views into it.
#include "frontend/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "frontend/subbyte.h"
#include "ir/error.h"

namespace onnxc::frontend {

// A whole file mapped read-only; tensors hold it alive through shared_ptr aliasing.
class MappedFile {
 public:
  MappedFile(void* p, size_t n) : data_(p), size_(n) {}
  ~MappedFile() {
    if (data_) ::munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_;
  size_t size_;
};

namespace {

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

// Opens `location` below the directory `base` one component at a time with O_NOFOLLOW, so the
// decision is made on what is really there, not on the text of the path: a symbolic link
// anywhere on the way, an absolute path or '..' is refused. Returns the descriptor, or -1 and `why`.
int open_inside(const std::string& base, const std::string& location, std::string& why) {
  if (location[0] == '/') {
    why = "is an absolute path; it must be relative to the model's folder";
    return -1;
  }
  std::vector<std::string> parts;
  for (size_t start = 0; start <= location.size();) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    std::string part = location.substr(start, end - start);
    if (part == "..") {
      why = "leaves the model's folder ('..')";
      return -1;
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  if (parts.empty()) {
    why = "is the model's folder, not a regular file";
    return -1;
  }
  Fd dir(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) {
    why = "cannot open the model's folder '" + base + "': " + std::strerror(errno);
    return -1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    struct stat st {};
    if (::fstatat(dir.fd, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      why = "cannot open it: " + std::string(std::strerror(errno));
      return -1;
    }
    std::string prefix = last ? "is " : "passes through '" + parts[i] + "', which is ";
    if (S_ISLNK(st.st_mode)) {
      why = prefix + "a symbolic link; external data must be a regular file inside the model's folder";
      return -1;
    }
    if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) {
      why = prefix + kind_of(st.st_mode) + ", not a " + (last ? "regular file" : "folder");
      return -1;
    }
    // O_NONBLOCK: should the entry be swapped for a FIFO after the check, open does not hang.
    int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    Fd next(::openat(dir.fd, parts[i].c_str(), flags));
    if (next.fd < 0) {
      why = "cannot open it: " + std::string(std::strerror(errno));
      return -1;
    }
    std::swap(dir.fd, next.fd);
  }
  return dir.release();
}

// Opens `location` when its real path lies inside one of `allowed` (--allow-external-path): the
// user vouched for those folders, so links and absolute paths that resolve there are fine.
int open_allowed(const std::string& base, const std::string& location, const std::vector<std::string>& allowed) {
  std::string path = location[0] == '/' ? location : base + "/" + location;
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return -1;
  std::string target(real);
  std::free(real);
  for (const std::string& dir : allowed) {
    char* d = ::realpath(dir.c_str(), nullptr);
    if (!d) continue;
    std::string root(d);
    std::free(d);
    if (root != "/" && target.compare(0, root.size() + 1, root + "/") != 0) continue;
    return ::open(target.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  return -1;
}

}  // namespace

std::shared_ptr<MappedFile> ExternalDataReader::map(const std::string& what, const std::string& location) {
  auto it = files_.find(location);
  if (it != files_.end()) return it->second;
  std::string where = model_path_ + ": external data of " + what;
  user_check(!location.empty()) << where << " has no 'location'";
  std::string why;
  Fd fd(open_inside(base_dir_, location, why));
  if (fd.fd < 0 && !allowed_.empty()) fd.fd = open_allowed(base_dir_, location, allowed_);
  user_check(fd.fd >= 0) << where << ": location '" << location << "' " << why
                         << (allowed_.empty() ? "" : " (and it does not resolve into an --allow-external-path folder)");
  struct stat st {};
  user_check(::fstat(fd.fd, &st) == 0 && S_ISREG(st.st_mode))
      << where << ": location '" << location << "' is " << kind_of(st.st_mode) << ", not a regular file";
  size_t size = static_cast<size_t>(st.st_size);
  void* p = nullptr;
  if (size > 0) {
    p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
    user_check(p != MAP_FAILED) << where << ": cannot map external data file '" << location
                                << "': " << std::strerror(errno);
  }
  auto file = std::make_shared<MappedFile>(p, size);
  files_[location] = file;
  return file;
}

ir::Tensor ExternalDataReader::read(const std::string& what, ir::DType dtype, std::vector<int64_t> dims,
                                    const std::string& location, int64_t offset, int64_t length) {
  std::string where = model_path_ + ": external data of " + what;
  user_check(dtype != ir::DType::String) << where << ": string tensors cannot be stored as external data";
  int64_t bytes = ir::checked_nbytes(dtype, dims);
  if (bytes > 0 && ir::dtype_packed_bits(dtype)) bytes = static_cast<int64_t>(packed_size(dtype, bytes));
  user_check(bytes >= 0) << where << ": shape " << ir::dims_text(dims) << " has a negative dim or over 2^63 bytes";
  uint64_t need = static_cast<uint64_t>(bytes);
  user_check(offset >= 0) << where << ": negative offset " << offset;
  user_check(length < 0 || static_cast<uint64_t>(length) == need)
      << where << ": length " << length << " does not match the " << need << " bytes its dtype and shape need";
  auto file = map(what, location);
  user_check(static_cast<uint64_t>(offset) <= file->size() && need <= file->size() - static_cast<uint64_t>(offset))
      << where << ": bytes " << offset << ".." << static_cast<uint64_t>(offset) + need << " lie beyond the end of '"
      << location << "' (" << file->size() << " bytes)";
  if (need == 0) return ir::Tensor(dtype, std::move(dims));
  const uint8_t* data = file->data() + offset;
  if (ir::dtype_packed_bits(dtype)) return unpack_subbyte(dtype, std::move(dims), data);
  if (reinterpret_cast<uintptr_t>(data) % ir::dtype_size(dtype) != 0) {  // unaligned: copy
    ir::Tensor t(dtype, std::move(dims));
    std::memcpy(t.mutable_raw(), data, need);
    return t;
  }
  return ir::Tensor::view(dtype, std::move(dims), data, std::shared_ptr<const void>(file, data));
}

}  // namespace onnxc::frontend
