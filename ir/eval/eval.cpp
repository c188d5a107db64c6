// The evaluator's entry point and op table, the Constant op, and the element/index helpers the op
// families share.
#include "ir/eval/eval.h"

#include <algorithm>
#include <cstring>

#include "ir/eval/eval_internal.h"

namespace onnxc::ir {
namespace eval_detail {

const Tensor& Ctx::in(size_t i) const {
  const Tensor* t = opt_in(i);
  user_check(t) << where() << "input " << i << " is missing";
  return *t;
}

void Ctx::check_size(const std::vector<int64_t>& dims) const {
  int64_t n = 1;
  for (int64_t d : dims) {
    user_check(d >= 0) << where() << "negative output dim " << d;
    if (d != 0 && n > opt_.max_output_elements / d) throw NotEvaluable{};
    n *= d;
  }
  if (n > opt_.max_output_elements) throw NotEvaluable{};
}

Tensor Ctx::make(DType dt, const std::vector<int64_t>& dims) const {
  check_size(dims);
  if (dt == DType::String || dtype_size(dt) == 0) throw NotEvaluable{};
  return Tensor(dt, dims);
}

void set_f64(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(v); return;
    case DType::Float64: t.mutable_data<double>()[i] = v; return;
    case DType::Float16: t.mutable_data<uint16_t>()[i] = f32_to_f16(static_cast<float>(v)); return;
    case DType::BFloat16: t.mutable_data<uint16_t>()[i] = f32_to_bf16(static_cast<float>(v)); return;
    case DType::Bool: t.mutable_data<uint8_t>()[i] = v != 0; return;
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0: case DType::Float4E2M1:  // saturating, as Cast by default; a Cast's own attributes: eval_cast
      t.mutable_data<uint8_t>()[i] = f32_to_float8(static_cast<float>(v), t.dtype(), true);
      return;
    default:
      // Float to integer truncates toward zero (ONNX Cast); out-of-range values are undefined.
      if (!(v > -9.3e18 && v < 9.3e18)) throw NotEvaluable{};
      set_i64(t, i, static_cast<int64_t>(v));
  }
}

void set_i64(Tensor& t, int64_t i, int64_t v) {
  switch (t.dtype()) {
    case DType::Int64: t.mutable_data<int64_t>()[i] = v; return;
    case DType::Int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(v); return;
    case DType::Int16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(v); return;
    case DType::Int8: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(v); return;
    case DType::UInt8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v); return;
    case DType::Bool: t.mutable_data<uint8_t>()[i] = v != 0; return;
    case DType::UInt16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(v); return;
    case DType::UInt32: t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(v); return;
    case DType::UInt64: t.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(v); return;
    case DType::Int4: case DType::Int2: case DType::UInt4: case DType::UInt2: {
      // The low bits, as ONNX's Cast keeps them (signed types sign-extended into their byte).
      const int bits = dtype_packed_bits(t.dtype());
      const auto low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
      const bool negative = dtype_is_signed(t.dtype()) && (low >> (bits - 1));
      t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(negative ? low | ~((uint64_t{1} << bits) - 1) : low);
      return;
    }
    default: set_f64(t, i, static_cast<double>(v));
  }
}

void require_numeric(const Tensor& t) {
  if (t.dtype() == DType::String || t.dtype() == DType::Complex64 || t.dtype() == DType::Complex128 ||
      t.dtype() == DType::Undefined || (t.empty_data() && t.numel() > 0))
    throw NotEvaluable{};
}

std::vector<int64_t> to_ints(const Tensor& t) {
  require_numeric(t);
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) r[i] = t.get_i64(i);
  return r;
}

int64_t scalar_int(const Ctx& c, const Tensor& t) {
  require_numeric(t);
  user_check(t.numel() == 1) << c.where() << "expected a scalar, got " << t.numel() << " elements";
  return t.get_i64(0);
}

double scalar_f64(const Ctx& c, const Tensor& t) {
  require_numeric(t);
  user_check(t.numel() == 1) << c.where() << "expected a scalar, got " << t.numel() << " elements";
  return t.get_f64(0);
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

int64_t normalize_axis(const Ctx& c, int64_t axis, int64_t rank) {
  user_check(axis >= -rank && axis < rank) << c.where() << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast(const Ctx& c, const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      user_check(o == 1) << c.where() << "shapes cannot be broadcast (" << o << " vs " << d << ")";
      o = d;
    }
  }
  return out;
}

std::vector<int64_t> broadcast_index(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims) {
  size_t r = out_dims.size(), off = r - in_dims.size();
  std::vector<int64_t> in_strides = strides(in_dims), idx(static_cast<size_t>(numel(out_dims)));
  std::vector<int64_t> pos(r, 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t flat = 0;
    for (size_t a = off; a < r; ++a)
      if (in_dims[a - off] != 1) flat += pos[a] * in_strides[a - off];
    idx[i] = flat;
    for (size_t a = r; a-- > 0;) {  // odometer increment
      if (++pos[a] < out_dims[a]) break;
      pos[a] = 0;
    }
  }
  return idx;
}

Tensor take(const Ctx& c, const Tensor& src, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& idx) {
  if (src.dtype() == DType::String) {
    if (static_cast<int64_t>(idx.size()) > 1 << 20) throw NotEvaluable{};
    std::vector<std::string> v;
    v.reserve(idx.size());
    for (int64_t i : idx) v.push_back(src.string_data()[i]);
    return Tensor::strings(out_dims, std::move(v));
  }
  if (src.empty_data() && src.numel() > 0) throw NotEvaluable{};
  Tensor out = c.make(src.dtype(), out_dims);
  size_t es = dtype_size(src.dtype());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  auto* from = static_cast<const unsigned char*>(src.raw());
  for (size_t i = 0; i < idx.size(); ++i) std::memcpy(dst + i * es, from + idx[i] * es, es);
  return out;
}

std::optional<std::vector<int64_t>> axes_arg(const Ctx& c, size_t input_index) {
  if (const Tensor* t = c.opt_in(input_index)) return to_ints(*t);
  if (const Attribute* a = c.node.attr("axes")) return a->ints;
  return std::nullopt;
}

namespace {

std::vector<Tensor> eval_constant(Ctx& c) {
  auto t = constant_node_value(c.node);
  if (!t) throw NotEvaluable{};
  return {*t};
}

}  // namespace

const EvalTable& eval_table() {
  static const EvalTable t = [] {
    EvalTable t;
    add_elementwise_evals(t);
    add_movement_evals(t);
    add_reduce_evals(t);
    add_nn_evals(t);
    t.add("Constant", eval_constant);
    return t;
  }();
  return t;
}

}  // namespace eval_detail

using namespace eval_detail;

std::optional<Tensor> constant_node_value(const Node& n) {
  for (const Attribute& a : n.attributes()) {
    if (a.name == "value" && a.kind == Attribute::Kind::Tensor) return a.t;
    if (a.name == "value_float") return Tensor::scalar<float>(DType::Float32, a.f);
    if (a.name == "value_int") return Tensor::scalar<int64_t>(DType::Int64, a.i);
    if (a.name == "value_floats")
      return Tensor::from_vector<float>(DType::Float32, {static_cast<int64_t>(a.floats.size())}, a.floats);
    if (a.name == "value_ints")
      return Tensor::from_vector<int64_t>(DType::Int64, {static_cast<int64_t>(a.ints.size())}, a.ints);
    if (a.name == "value_string") return Tensor::strings({}, {a.s});
    if (a.name == "value_strings") return Tensor::strings({static_cast<int64_t>(a.strings.size())}, a.strings);
  }
  return std::nullopt;
}

bool can_evaluate(const std::string& domain, const std::string& op_type) {
  return eval_table().has_op(domain, op_type);
}

std::optional<std::vector<Tensor>> evaluate(const Node& node, const std::vector<const Tensor*>& inputs,
                                            const EvalOptions& opt) {
  const EvalTable::Entry* e = eval_table().find(node.domain(), node.op_type(), opt.opset);
  if (!e) return std::nullopt;
  Ctx c(node, inputs, opt);
  try {
    std::vector<Tensor> out = e->impl(c);
    for (const Tensor& t : out)
      if (t.numel() > opt.max_output_elements) return std::nullopt;
    return out;
  } catch (const NotEvaluable&) {
    return std::nullopt;
  }
}

}  // namespace onnxc::ir
