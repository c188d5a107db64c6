// Kernel cache files: <dir>/<key>.o, written through a temporary name and rename().
#include "codegen/emit/kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "codegen/version.h"

namespace onnxc::codegen {

namespace fs = std::filesystem;

namespace {
uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
}  // namespace

std::string KernelCache::default_dir() {
  if (const char* d = std::getenv("ONNXC_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/onnxc/kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/onnxc/kernels";
  return "";
}

std::string KernelCache::key(const std::string& canonical) {
  std::string s = std::string("onnxc ") + kOnnxcVersion + "\ncodegen " + kCodegenFingerprint + "\n" + canonical;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, fnv1a(s, 1469598103934665603ull),
                fnv1a(s, 0x9e3779b97f4a7c15ull));
  return buf;
}

std::string KernelCache::path(const std::string& key) const { return dir_ + "/" + key + ".o"; }

std::optional<std::string> KernelCache::lookup(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::error_code ec;
  std::string p = path(key);
  if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) > 0) return p;
  return std::nullopt;
}

void KernelCache::store(const std::string& key, const std::string& object_path) const {
  if (!enabled()) return;
  static std::atomic<int> counter{0};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::string tmp = path(key) + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  fs::copy_file(object_path, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, path(key), ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace onnxc::codegen
