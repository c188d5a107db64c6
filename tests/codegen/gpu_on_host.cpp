// GPU schedules run as serial host loops (see gpu_on_host.h).
#include "gpu_on_host.h"

#include <map>
#include <string>

namespace onnxc::codegen::testing {
namespace {

using Halide::DeviceAPI;
using Halide::MemoryType;
using Halide::Internal::Definition;
using Halide::Internal::ForType;

bool is_gpu_loop(ForType t) { return t == ForType::GPUBlock || t == ForType::GPUThread || t == ForType::GPULane; }

int to_host(Definition& def) {
  if (!def.defined()) return 0;
  int n = 0;
  for (Halide::Internal::Dim& d : def.schedule().dims()) {
    if (is_gpu_loop(d.for_type)) d.for_type = ForType::Serial, ++n;
    // Unrolling changes no value and makes the block's 64 accumulators x 16 k steps slow to JIT.
    if (d.for_type == ForType::Unrolled) d.for_type = ForType::Serial;
    if (d.device_api != DeviceAPI::None && d.device_api != DeviceAPI::Host) d.device_api = DeviceAPI::None;
  }
  for (Halide::Internal::Specialization& s : def.specializations()) n += to_host(s.definition);
  return n;
}

}  // namespace

int gpu_loops_to_host(const Halide::Func& output) {
  int n = 0;
  std::map<std::string, Halide::Internal::Function> funcs = Halide::Internal::find_transitive_calls(output.function());
  funcs.emplace(output.name(), output.function());
  for (auto& [name, f] : funcs) {
    MemoryType& m = f.schedule().memory_type();
    if (m == MemoryType::GPUShared || m == MemoryType::Register) m = MemoryType::Auto;
    n += to_host(f.definition());
    for (size_t i = 0; i < f.updates().size(); ++i) n += to_host(f.update(static_cast<int>(i)));
  }
  return n;
}

}  // namespace onnxc::codegen::testing
