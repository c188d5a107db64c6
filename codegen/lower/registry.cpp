// The lowering registry (one table keyed by domain and op type), HTensor element access and the ONNX
// dtype -> Halide type map.
#include <map>
#include <mutex>

#include "codegen/lower/lower.h"
#include "ir/error.h"

namespace onnxc::codegen {

namespace {
std::map<std::pair<std::string, std::string>, OpLowering>& table() {
  static std::map<std::pair<std::string, std::string>, OpLowering> t;
  return t;
}
std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }
}  // namespace

void register_lowering(OpLowering l) {
  std::lock_guard<std::mutex> lock(table_mutex());
  auto key = std::make_pair(canonical_domain(l.domain), l.op_type);
  internal_check(!table().count(key)) << "lowering for " << l.op_type << " registered twice";
  table().emplace(key, std::move(l));
}

const OpLowering* find_lowering(const std::string& domain, const std::string& op_type) {
  std::lock_guard<std::mutex> lock(table_mutex());
  auto it = table().find({canonical_domain(domain), op_type});
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const OpLowering*> all_lowerings() {
  std::lock_guard<std::mutex> lock(table_mutex());
  std::vector<const OpLowering*> r;
  for (const auto& [k, v] : table()) r.push_back(&v);
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
