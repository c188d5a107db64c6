// External data files: location checks, one read-only mapping per file, tensors as views into it.
#include "frontend/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

std::shared_ptr<MappedFile> ExternalDataReader::map(const std::string& what, const std::string& location) {
  auto it = files_.find(location);
  if (it != files_.end()) return it->second;
  std::string where = model_path_ + ": external data of " + what;
  user_check(!location.empty()) << where << " has no 'location'";
  user_check(location[0] != '/') << where << ": location '" << location
                                 << "' is an absolute path; it must be relative to the model's folder";
  for (size_t start = 0; start <= location.size();) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    user_check(location.compare(start, end - start, "..") != 0)
        << where << ": location '" << location << "' leaves the model's folder ('..')";
    start = end + 1;
  }
  std::string path = base_dir_ + "/" + location;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  user_check(fd >= 0) << where << ": cannot open external data file '" << path << "': " << std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    user_error << where << ": external data file '" << path << "' is not a regular file";
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* p = nullptr;
  if (size > 0) {
    p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      user_error << where << ": cannot map external data file '" << path << "': " << std::strerror(e);
    }
  }
  ::close(fd);
  auto file = std::make_shared<MappedFile>(p, size);
  files_[location] = file;
  return file;
}

ir::Tensor ExternalDataReader::read(const std::string& what, ir::DType dtype, std::vector<int64_t> dims,
                                    const std::string& location, int64_t offset, int64_t length) {
  std::string where = model_path_ + ": external data of " + what;
  user_check(dtype != ir::DType::String) << where << ": string tensors cannot be stored as external data";
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  uint64_t need = static_cast<uint64_t>(numel) * ir::dtype_size(dtype);
  user_check(offset >= 0) << where << ": negative offset " << offset;
  user_check(length < 0 || static_cast<uint64_t>(length) == need)
      << where << ": length " << length << " does not match the " << need << " bytes its dtype and shape need";
  auto file = map(what, location);
  user_check(static_cast<uint64_t>(offset) <= file->size() && need <= file->size() - static_cast<uint64_t>(offset))
      << where << ": bytes " << offset << ".." << static_cast<uint64_t>(offset) + need << " lie beyond the end of '"
      << location << "' (" << file->size() << " bytes)";
  if (need == 0) return ir::Tensor(dtype, std::move(dims));
  const uint8_t* data = file->data() + offset;
  if (reinterpret_cast<uintptr_t>(data) % ir::dtype_size(dtype) != 0) {  // unaligned: copy
    ir::Tensor t(dtype, std::move(dims));
    std::memcpy(t.mutable_raw(), data, need);
    return t;
  }
  return ir::Tensor::view(dtype, std::move(dims), data, std::shared_ptr<const void>(file, data));
}

}  // namespace onnxc::frontend
