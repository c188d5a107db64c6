// The lowering registry (keyed by op and opset range, as the op table), HTensor element access and the
// ONNX dtype -> Halide type map.
#include <mutex>

#include "codegen/lower/lower.h"
#include "ir/error.h"

namespace onnxc::codegen {

namespace {
ir::OpImplTable<OpLowering>& table() {
  static ir::OpImplTable<OpLowering> t;
  return t;
}
std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void register_lowering(OpLowering l) {
  std::lock_guard<std::mutex> lock(table_mutex());
  ir::OpKey key(l.domain, l.op_type);
  l.domain = key.domain;
  ir::OpsetRange range = l.range;
  internal_check(table().add(key, range, std::move(l)))
      << "lowering for " << key.str() << " opsets " << range.str() << " overlaps one registered before";
}

const OpLowering* find_lowering(const std::string& domain, const std::string& op_type, int64_t opset) {
  if (opset <= 0) opset = ir::kLatestOpset;  // a domain the model does not import (a node a pass wrote)
  std::lock_guard<std::mutex> lock(table_mutex());
  const auto* e = table().find(domain, op_type, opset);
  return e ? &e->impl : nullptr;
}

const OpLowering& lowering_for(const ir::Node& n, int64_t opset) {
  if (const OpLowering* l = find_lowering(n.domain(), n.op_type(), opset)) return *l;
  std::string lowered = lowered_opsets(n.domain(), n.op_type());
  user_error << n.describe() << ": op " << ir::OpKey(n.domain(), n.op_type()).str() << " has no lowering for opset "
             << opset << (lowered.empty() ? std::string(" (no opset of it is supported)") : " (supported: opsets " + lowered + ")");
}

std::string lowered_opsets(const std::string& domain, const std::string& op_type) {
  std::lock_guard<std::mutex> lock(table_mutex());
  std::string r;
  for (const auto* e : table().entries_of(domain, op_type)) r += (r.empty() ? "" : ", ") + e->range.str();
  return r;
}

std::vector<const OpLowering*> all_lowerings() {
  std::lock_guard<std::mutex> lock(table_mutex());
  std::vector<const OpLowering*> r;
  for (const auto* e : table().all()) r.push_back(&e->impl);
  return r;
}

Halide::Expr HTensor::at(const std::vector<Halide::Expr>& onnx_index) const {
  internal_check(static_cast<int>(onnx_index.size()) == rank())
      << "HTensor::at: index of rank " << onnx_index.size() << " for tensor of rank " << rank();
  std::vector<Halide::Expr> args(onnx_index.rbegin(), onnx_index.rend());
  return func(args);
}

Halide::Type halide_type(ir::DType t) {
  using ir::DType;
  switch (t) {
    case DType::Float32: return Halide::Float(32);
    case DType::Float64: return Halide::Float(64);
    case DType::Float16: return Halide::Float(16);
    case DType::BFloat16: return Halide::BFloat(16);
    case DType::Int8: return Halide::Int(8);
    case DType::Int16: return Halide::Int(16);
    case DType::Int32: return Halide::Int(32);
    case DType::Int64: return Halide::Int(64);
    case DType::Bool: return Halide::Bool();  // one byte per element in memory, as Halide stores bools
    case DType::UInt8: case DType::UInt4: case DType::UInt2: return Halide::UInt(8);  // sub-byte: unpacked
    case DType::Int4: case DType::Int2: return Halide::Int(8);
    case DType::UInt16: return Halide::UInt(16);
    case DType::UInt32: return Halide::UInt(32);
    case DType::UInt64: return Halide::UInt(64);
    // 8- and 4-bit floats are held as their bits (float4e2m1 one code a byte); codegen/lower/float8.h
    // converts them where values matter.
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0: case DType::Float4E2M1: return Halide::UInt(8);
    default: user_error << "dtype " << ir::dtype_name(t) << " is not supported by code generation";
  }
}

}  // namespace onnxc::codegen
