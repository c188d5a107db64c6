// Kernel cache files: <dir>/<key>.o and <key>.o.check (its size and hash), written through
// temporary names and rename(), verified on every lookup.
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
  // The CUDA GEMM form picked by the environment (codegen/schedule/gpu_gemm.h) changes the kernel.
  if (const char* g = std::getenv("ONNXC_CUDA_GEMM"); g && *g) s += std::string("\ncuda_gemm ") + g;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, fnv1a(s, 1469598103934665603ull),
                fnv1a(s, 0x9e3779b97f4a7c15ull));
  return buf;
}

std::string KernelCache::path(const std::string& key) const { return dir_ + "/" + key + ".o"; }

namespace {

// "<size> <fnv1a-64 of the bytes>": what an entry must match to be used. An entry that does not
// (cut short by a full disk or a killed process, edited, its check file lost) is a miss.
std::optional<std::string> fingerprint_of(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  uint64_t h = 1469598103934665603ull, n = 0;
  unsigned char buf[65536];
  for (size_t r; (r = std::fread(buf, 1, sizeof buf, f)) > 0; n += r)
    for (size_t i = 0; i < r; ++i) h = (h ^ buf[i]) * 1099511628211ull;
  bool ok = !std::ferror(f);
  std::fclose(f);
  if (!ok) return std::nullopt;
  char out[48];
  std::snprintf(out, sizeof out, "%" PRIu64 " %016" PRIx64, n, h);
  return out;
}

std::string read_small(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  char buf[64];
  size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  return std::string(buf, n);
}

}  // namespace

std::optional<std::string> KernelCache::lookup(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::error_code ec;
  std::string p = path(key);
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::optional<std::string> fp = fingerprint_of(p);
  if (fp && *fp == read_small(p + ".check")) return p;
  // Damaged: drop it, so this compile rebuilds the kernel and stores a good copy.
  fs::remove(p, ec);
  fs::remove(p + ".check", ec);
  return std::nullopt;
}

void KernelCache::store(const std::string& key, const std::string& object_path) const {
  if (!enabled()) return;
  static std::atomic<int> counter{0};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::string tmp = path(key) + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  std::optional<std::string> fp = fingerprint_of(object_path);
  if (!fp) return;
  fs::copy_file(object_path, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) {
    std::FILE* f = std::fopen((tmp + ".check").c_str(), "wb");
    bool ok = f && std::fwrite(fp->data(), 1, fp->size(), f) == fp->size();
    if (f && std::fclose(f) != 0) ok = false;
    if (!ok) ec = std::make_error_code(std::errc::io_error);
  }
  // The check file first: a reader that sees the new object also sees its check (or a mismatch: a miss).
  if (!ec) fs::rename(tmp + ".check", path(key) + ".check", ec);
  if (!ec) fs::rename(tmp, path(key), ec);
  if (ec) {
    fs::remove(tmp, ec);
    fs::remove(tmp + ".check", ec);
  }
}

}  // namespace onnxc::codegen
