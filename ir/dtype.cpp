// DType tables.
#include "ir/dtype.h"

#include <array>

namespace onnxc::ir {
namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
};
constexpr std::array<DTypeInfo, 27> kTable = {{
    {DType::Undefined, "undef", 0}, {DType::Float32, "f32", 4},    {DType::UInt8, "u8", 1},
    {DType::Int8, "i8", 1},         {DType::UInt16, "u16", 2},     {DType::Int16, "i16", 2},
    {DType::Int32, "i32", 4},       {DType::Int64, "i64", 8},      {DType::String, "str", 0},
    {DType::Bool, "bool", 1},       {DType::Float16, "f16", 2},    {DType::Float64, "f64", 8},
    {DType::UInt32, "u32", 4},      {DType::UInt64, "u64", 8},     {DType::Complex64, "c64", 8},
    {DType::Complex128, "c128", 16}, {DType::BFloat16, "bf16", 2},
    {DType::Float8E4M3FN, "f8e4m3fn", 1}, {DType::Float8E4M3FNUZ, "f8e4m3fnuz", 1},
    {DType::Float8E5M2, "f8e5m2", 1},     {DType::Float8E5M2FNUZ, "f8e5m2fnuz", 1},
    {DType::Float8E8M0, "f8e8m0", 1},     {DType::Float4E2M1, "f4e2m1", 1},
    {DType::UInt4, "u4", 1},        {DType::Int4, "i4", 1},        {DType::UInt2, "u2", 1},
    {DType::Int2, "i2", 1},
}};
// ONNX's codes have gaps (21-23 are not all held), so the table is searched rather than indexed.
const DTypeInfo& info(DType t) {
  for (const auto& e : kTable)
    if (e.type == t) return e;
  return kTable[0];
}
}  // namespace

size_t dtype_size(DType t) { return info(t).size; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& e : kTable)
    if (e.name == name) return e.type;
  return std::nullopt;
}
bool dtype_is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}
bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16: case DType::Int32:
    case DType::Int64: case DType::UInt32: case DType::UInt64: case DType::UInt4: case DType::Int4:
    case DType::UInt2: case DType::Int2: return true;
    default: return false;
  }
}
bool dtype_is_signed(DType t) {
  return t == DType::Int8 || t == DType::Int4 || t == DType::Int2 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64 ||
         dtype_is_float(t);
}
bool dtype_is_valid(int32_t code) { return code > 0 && info(static_cast<DType>(code)).type != DType::Undefined; }
int dtype_packed_bits(DType t) {
  switch (t) {
    case DType::UInt4: case DType::Int4: case DType::Float4E2M1: return 4;
    case DType::UInt2: case DType::Int2: return 2;
    default: return 0;
  }
}
bool dtype_subbyte_range(DType t, int* lo, int* hi) {
  int bits = dtype_packed_bits(t);
  if (bits == 0 || t == DType::Float4E2M1) return false;
  bool is_signed = t == DType::Int4 || t == DType::Int2;
  *lo = is_signed ? -(1 << (bits - 1)) : 0;
  *hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  return true;
}

}  // namespace onnxc::ir
