// A CUDA "device" for the runtime's tests on machines without a GPU: the Halide device hooks a CUDA
// library's descriptor carries (copy_to_host, device_malloc, wrap/detach, device_free) backed by one flat
// pool of host memory, counting what the runtime asks of them. It stands in for no NVIDIA component: the
// hooks are the descriptor's calls into a library's Halide runtime, which is what these tests exercise.
#ifndef ONNXC_TESTS_RUNTIME_FAKE_CUDA_DEVICE_H
#define ONNXC_TESTS_RUNTIME_FAKE_CUDA_DEVICE_H

#include <HalideRuntime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

#include "desc_builder.h"

namespace fake_cuda {

constexpr uint64_t kBase = 0x10000;  // device addresses start here; address a is pool[a - kBase]

// Rounds n up to its 4 most significant bits, as Halide's CUDA runtime sizes the allocations it keeps.
inline uint64_t quantized(uint64_t n) {
  int shift = 0;
  while ((n >> shift) >= 16) shift++;
  return ((n + (uint64_t(1) << shift) - 1) >> shift) << shift;
}

struct FakeDevice {
  std::vector<uint8_t> pool = std::vector<uint8_t>(1 << 20);
  uint64_t next = kBase;
  std::map<uint64_t, uint64_t> allocations;  // address -> bytes: what device_malloc made, live
  // Freed allocations kept for reuse as Halide's CUDA runtime keeps them (halide_reuse_device_allocations
  // is on in every CUDA library): filed under the quantized size the buffer described when it was freed,
  // holding `bytes` of real memory; a later malloc of a size within 7/8 of `filed` takes one.
  struct Kept {
    uint64_t address, filed, bytes;
  };
  std::vector<Kept> kept;
  std::vector<uint64_t> arena_sizes;  // bytes of each 2-D uint8 allocation (the device arena)
  uint64_t arena = 0;                 // the address of the last one
  int mallocs = 0, frees = 0, uploads = 0, downloads = 0, wraps = 0, detaches = 0;
  bool bad_read = false;
  bool overflow = false;  // a copy or kernel touched bytes past the end of the allocation it used
  // Per kernel call: the device addresses of its input and output.
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  uint8_t *at(uint64_t address) { return &pool.at(address - kBase); }
  uint64_t alloc(uint64_t bytes) {
    uint64_t a = next;
    next += (bytes + 255) / 256 * 256 + 256;
    allocations[a] = bytes;
    mallocs++;
    return a;
  }
  // A device allocation of (at least) `bytes`, a kept one when one is filed under a fitting size.
  uint64_t malloc_like_halide(uint64_t bytes) {
    const uint64_t size = quantized(bytes);
    for (size_t i = 0; i < kept.size(); i++) {
      if (size <= kept[i].filed && size >= kept[i].filed / 8 * 7) {
        const Kept k = kept[i];
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
        allocations[k.address] = k.bytes;
        return k.address;
      }
    }
    return alloc(size);
  }
  // Notes an access of `bytes` at `address` that runs past the end of the allocation holding it.
  void touch(uint64_t address, uint64_t bytes) {
    auto it = allocations.upper_bound(address);
    if (it == allocations.begin() || address + bytes > std::prev(it)->first + std::prev(it)->second) overflow = true;
  }
};
inline FakeDevice dev;

inline const int fake_interface_storage = 0;
inline const void *fake_interface() { return &fake_interface_storage; }

inline uint64_t bytes(const halide_buffer_t *b) {
  uint64_t n = 1;
  for (int i = 0; i < b->dimensions; i++) n *= static_cast<uint64_t>(b->dim[i].extent);
  return n * b->type.bytes();
}

inline int fake_device_malloc(void *, void *buffer, const void *interface) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  if (b->device) return 0;
  b->device = dev.malloc_like_halide(bytes(b));
  b->device_interface = static_cast<const halide_device_interface_t *>(interface);
  if (b->dimensions == 2 && b->type.bits == 8) {
    dev.arena_sizes.push_back(bytes(b));
    dev.arena = b->device;
  }
  return 0;
}

inline int fake_wrap(void *, void *buffer, uint64_t handle, const void *interface) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  if (b->device) return halide_error_code_device_wrap_native_failed;  // as Halide: wrap only an empty handle
  b->device = handle;
  b->device_interface = static_cast<const halide_device_interface_t *>(interface);
  dev.wraps++;
  return 0;
}

inline int fake_detach(void *, void *buffer) {
  static_cast<halide_buffer_t *>(buffer)->device = 0;
  dev.detaches++;
  return 0;
}

inline int fake_device_free(void *, void *buffer) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  auto it = dev.allocations.find(b->device);
  if (it == dev.allocations.end()) {
    dev.bad_read = true;  // freeing what device_malloc never made
  } else {
    dev.kept.push_back({it->first, quantized(bytes(b)), it->second});
    dev.allocations.erase(it);
  }
  b->device = 0;
  dev.frees++;
  return 0;
}

inline int fake_copy_to_host(void *, void *buffer) {
  auto *b = static_cast<halide_buffer_t *>(buffer);
  dev.touch(b->device, bytes(b));
  std::memcpy(b->host, dev.at(b->device), bytes(b));
  b->flags &= ~uint64_t(halide_buffer_flag_device_dirty);
  dev.downloads++;
  return 0;
}

// What a Halide GPU pipeline does with a buffer it reads: upload it when host-dirty (allocating first
// if it has no device memory); read without a device handle or upload is a bug of the runtime.
inline void make_readable(halide_buffer_t *in) {
  if (!in->device && !(in->flags & halide_buffer_flag_host_dirty)) dev.bad_read = true;
  if (!in->device) fake_device_malloc(nullptr, in, fake_interface());
  if (in->flags & halide_buffer_flag_host_dirty) {
    dev.touch(in->device, bytes(in));
    std::memcpy(dev.at(in->device), in->host, bytes(in));
    in->flags &= ~uint64_t(halide_buffer_flag_host_dirty);
    dev.uploads++;
  }
}

// A CUDA descriptor whose device hooks are the fake device's.
inline void use_fake_device(DescBuilder &b) {
  b.d.target = "host-cuda";
  b.d.uses_cuda = 1;
  b.d.copy_to_host = fake_copy_to_host;
  b.d.device_free = fake_device_free;
  b.d.device_malloc = fake_device_malloc;
  b.d.wrap_native = fake_wrap;
  b.d.detach_native = fake_detach;
  b.d.device_interface = fake_interface;
}

}  // namespace fake_cuda

#endif
