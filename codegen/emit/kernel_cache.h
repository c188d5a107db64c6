// The on-disk kernel cache: compiled kernel objects keyed by a hash of the kernel's canonical form,
// the target, the onnxc version and a fingerprint of the codegen sources, so recompiling a model (or
// compiling another with the same kernels) skips Halide and LLVM for every kernel seen before.
#pragma once

#include <optional>
#include <string>

namespace onnxc::codegen {

class KernelCache {
 public:
  // dir "" disables the cache.
  explicit KernelCache(std::string dir) : dir_(std::move(dir)) {}
  // $ONNXC_CACHE_DIR, else $XDG_CACHE_HOME/onnxc/kernels, else ~/.cache/onnxc/kernels.
  static std::string default_dir();
  // The cache key of a kernel (its canonical text already names the target).
  static std::string key(const std::string& canonical);

  bool enabled() const { return !dir_.empty(); }
  // Path of the cached object for `key`, if present and intact (size and hash match its .check
  // file); a damaged entry is removed and reported as a miss, so the caller rebuilds it.
  std::optional<std::string> lookup(const std::string& key) const;
  // Copies `object_path` into the cache (atomically: concurrent compilers never see half a file).
  // Failures to write are ignored: the cache is an optimisation.
  void store(const std::string& key, const std::string& object_path) const;

 private:
  std::string path(const std::string& key) const;
  std::string dir_;
};

}  // namespace onnxc::codegen
