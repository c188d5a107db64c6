// Element-wise comparison of an output with its reference, and the report table.
#include "tools/check/compare.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "ir/dtype.h"
#include "ir/float8.h"

namespace onnxc::check {
namespace {

std::string fmt_double(double v, int digits = 9) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fmt_err(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string element_str(const ir::Tensor& t, int64_t i) {
  using ir::DType;
  switch (t.dtype()) {
    case DType::String: return "\"" + t.string_data()[static_cast<size_t>(i)] + "\"";
    case DType::Bool: return t.get_i64(i) ? "true" : "false";
    case DType::UInt64: return std::to_string(t.data<uint64_t>()[i]);
    case DType::Float16: case DType::BFloat16: return fmt_double(t.get_f64(i), 5);
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0: case DType::Float4E2M1: return fmt_double(t.get_f64(i), 4);
    case DType::Float32: return fmt_double(t.get_f64(i), 9);
    case DType::Float64: return fmt_double(t.get_f64(i), 17);
    default: return std::to_string(t.get_i64(i));
  }
}

// Orders candidate worst elements: larger error first, NaN errors count as the largest.
double sort_key(double err) { return std::isnan(err) ? std::numeric_limits<double>::infinity() : err; }

// Keeps the `cap` failing elements with the largest errors (flat index + error), cheaply.
class WorstList {
 public:
  explicit WorstList(size_t cap) : cap_(cap) {}
  void add(int64_t flat, double err) {
    if (cap_ == 0) return;
    double key = sort_key(err);
    if (items_.size() == cap_ && key <= items_.back().second) return;
    items_.emplace_back(flat, key);
    std::stable_sort(items_.begin(), items_.end(), [](auto& a, auto& b) { return a.second > b.second; });
    if (items_.size() > cap_) items_.pop_back();
  }
  const std::vector<std::pair<int64_t, double>>& items() const { return items_; }

 private:
  size_t cap_;
  std::vector<std::pair<int64_t, double>> items_;
};

void compare_floats(const ir::Tensor& a, const ir::Tensor& e, const Tolerance& tol, TensorReport& r,
                    WorstList& worst) {
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < r.numel; ++i) {
    double x = a.get_f64(i), y = e.get_f64(i);
    if (std::isfinite(x) && std::isfinite(y)) diff2 += (x - y) * (x - y), ref2 += y * y;
    bool ok;
    double abs_err, rel_err;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
      abs_err = ok ? 0 : std::numeric_limits<double>::quiet_NaN();
      rel_err = abs_err;
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
      abs_err = ok ? 0 : std::numeric_limits<double>::infinity();
      rel_err = abs_err;
    } else {
      abs_err = std::fabs(x - y);
      ok = abs_err <= tol.atol + tol.rtol * std::fabs(y);
      rel_err = y != 0 ? abs_err / std::fabs(y) : (abs_err > 0 ? std::numeric_limits<double>::infinity() : 0);
    }
    // A NaN error (NaN against a number) is the worst there is, and stays the maximum.
    if (std::isnan(abs_err) || (!std::isnan(r.max_abs_err) && abs_err > r.max_abs_err)) r.max_abs_err = abs_err;
    if (y != 0 && (std::isnan(rel_err) || (!std::isnan(r.max_rel_err) && rel_err > r.max_rel_err))) {
      r.max_rel_err = rel_err;
    }
    if (!ok) {
      ++r.mismatches;
      worst.add(i, abs_err);
    }
  }
  r.norm_rel_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? std::numeric_limits<double>::quiet_NaN() : 0);
}

void compare_exact(const ir::Tensor& a, const ir::Tensor& e, TensorReport& r, WorstList& worst) {
  r.exact = true;
  for (int64_t i = 0; i < r.numel; ++i) {
    bool ok;
    double err = 0;
    if (a.dtype() == ir::DType::String) {
      ok = a.string_data()[static_cast<size_t>(i)] == e.string_data()[static_cast<size_t>(i)];
      err = ok ? 0 : 1;
    } else if (a.dtype() == ir::DType::UInt64) {
      uint64_t x = a.data<uint64_t>()[i], y = e.data<uint64_t>()[i];
      ok = x == y;
      err = ok ? 0 : (x > y ? static_cast<double>(x - y) : static_cast<double>(y - x));
    } else {
      int64_t x = a.get_i64(i), y = e.get_i64(i);
      ok = x == y;
      err = ok ? 0 : std::fabs(static_cast<double>(x) - static_cast<double>(y));
    }
    if (!ok) {
      ++r.mismatches;
      r.max_abs_err = std::max(r.max_abs_err, err);
      worst.add(i, err);
    }
  }
}

}  // namespace

std::vector<int64_t> unravel_index(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size(), 0);
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] > 0) {
      idx[k] = flat % dims[k];
      flat /= dims[k];
    }
  }
  return idx;
}

std::string index_str(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? "," : "") + std::to_string(index[i]);
  return s + "]";
}

std::string tensor_type_str(const ir::Tensor& t) {
  return std::string(ir::dtype_name(t.dtype())) + index_str(t.dims());
}

TensorReport compare_tensors(const std::string& name, const ir::Tensor& actual, const ir::Tensor& expected,
                             const Tolerance& tol, size_t max_worst) {
  TensorReport r;
  r.name = name;
  if (actual.dtype() != expected.dtype()) {
    r.ok = false;
    r.problem = "dtype " + std::string(ir::dtype_name(actual.dtype())) + ", expected " +
                std::string(ir::dtype_name(expected.dtype()));
    return r;
  }
  if (actual.dims() != expected.dims()) {
    r.ok = false;
    r.problem = "shape " + index_str(actual.dims()) + ", expected " + index_str(expected.dims());
    return r;
  }
  r.numel = expected.numel();
  WorstList worst(max_worst);
  ir::DType dt = expected.dtype();
  if (ir::dtype_is_float(dt) || ir::dtype_is_narrow_float(dt)) {  // 8-bit floats by value (NaN == NaN)
    compare_floats(actual, expected, tol, r, worst);
  } else if (dt == ir::DType::String || dt == ir::DType::Bool || ir::dtype_is_integer(dt)) {
    compare_exact(actual, expected, r, worst);
  } else {
    // Complex and other exotic dtypes: byte equality is the only honest check we can make here.
    r.exact = true;
    if (!actual.same_contents(expected)) {
      r.mismatches = r.numel;
      r.problem = "contents differ (dtype " + std::string(ir::dtype_name(dt)) + " compared bytewise)";
    }
  }
  r.ok = r.mismatches == 0 && r.problem.empty();
  for (const auto& [flat, err] : worst.items()) {
    ElementError el;
    el.index = unravel_index(flat, expected.dims());
    el.actual = element_str(actual, flat);
    el.expected = element_str(expected, flat);
    if (r.exact) {
      el.abs_err = err;
    } else {
      double x = actual.get_f64(flat), y = expected.get_f64(flat);
      el.abs_err = std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : std::fabs(x - y);
      el.rel_err = y != 0 ? el.abs_err / std::fabs(y) : std::numeric_limits<double>::infinity();
    }
    r.worst.push_back(std::move(el));
  }
  return r;
}

namespace {

// Prints rows of cells with every column padded to its widest cell.
std::string aligned(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream os;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    os << line << "\n";
  }
  return os.str();
}

}  // namespace

std::string format_reports(const std::string& title, const std::vector<TensorReport>& reports,
                           const Tolerance& tol) {
  std::ostringstream os;
  os << title << "  (rtol " << fmt_double(tol.rtol, 3) << ", atol " << fmt_double(tol.atol, 3) << ")\n";
  std::vector<std::vector<std::string>> rows = {{"output", "max abs err", "max rel err", "norm rel err", "mismatches", "result"}};
  for (const TensorReport& r : reports) {
    std::string mism = r.problem.empty() || r.numel ? std::to_string(r.mismatches) + "/" + std::to_string(r.numel) : "-";
    std::string result = r.ok ? "ok" : (r.problem.empty() ? "MISMATCH" : "MISMATCH: " + r.problem);
    if (!r.problem.empty() && !r.numel) {
      rows.push_back({r.name, "-", "-", "-", "-", result});
    } else if (r.exact) {
      rows.push_back({r.name, r.mismatches ? fmt_err(r.max_abs_err) : "0", "(exact)", "-", mism, result});
    } else {
      rows.push_back({r.name, fmt_err(r.max_abs_err), fmt_err(r.max_rel_err), fmt_err(r.norm_rel_err), mism, result});
    }
  }
  os << aligned(rows, "  ");
  for (const TensorReport& r : reports) {
    if (r.worst.empty()) continue;
    os << "  worst elements of '" << r.name << "':\n";
    std::vector<std::vector<std::string>> w = {{"index", "actual", "expected", "abs err", "rel err"}};
    for (const ElementError& e : r.worst) {
      w.push_back({index_str(e.index), e.actual, e.expected, fmt_err(e.abs_err), r.exact ? "-" : fmt_err(e.rel_err)});
    }
    os << aligned(w, "    ");
  }
  return os.str();
}

namespace {

const char* value_kind_name(frontend::TestValue::Kind k) {
  using K = frontend::TestValue::Kind;
  return k == K::Tensor ? "a tensor" : k == K::Sequence ? "a sequence" : "an optional";
}

}  // namespace

TensorReport compare_values(const std::string& name, const frontend::TestValue& actual,
                            const frontend::TestValue& expected, const Tolerance& tol, size_t max_worst) {
  using K = frontend::TestValue::Kind;
  if (actual.kind == K::Tensor && expected.kind == K::Tensor)
    return compare_tensors(name, actual.tensor, expected.tensor, tol, max_worst);
  TensorReport r;
  r.name = name;
  r.exact = true;
  auto problem = [&r](std::string what) {
    r.ok = false;
    r.problem = std::move(what);
    return r;
  };
  if (actual.kind != expected.kind)
    return problem(std::string("is ") + value_kind_name(actual.kind) + " but the reference is " + value_kind_name(expected.kind));
  if (actual.kind == K::Optional && actual.elements.empty() != expected.elements.empty())
    return problem(actual.elements.empty() ? "is an empty optional but the reference holds a value"
                                           : "holds a value but the reference is an empty optional");
  if (actual.elements.size() != expected.elements.size())
    return problem("has " + std::to_string(actual.elements.size()) + " items but the reference has " +
                   std::to_string(expected.elements.size()));
  for (size_t i = 0; i < actual.elements.size(); ++i) {
    std::string item = actual.kind == K::Optional ? name : name + "[" + std::to_string(i) + "]";
    TensorReport e = compare_values(item, actual.elements[i], expected.elements[i], tol, max_worst);
    if (!e.ok) return e;
    r.numel += e.numel;
    r.exact = r.exact && e.exact;
    r.max_abs_err = std::max(r.max_abs_err, e.max_abs_err);
    r.max_rel_err = std::max(r.max_rel_err, e.max_rel_err);
    r.norm_rel_err = std::max(r.norm_rel_err, e.norm_rel_err);
  }
  return r;
}

}  // namespace onnxc::check
