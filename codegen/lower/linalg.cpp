// Det: the determinant of each trailing n×n matrix, for a static n up to 5, by cofactor expansion in
// float64 (n! products: 120 at n = 5). Larger or run-time n is reported as unsupported.
#include <functional>

#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;

constexpr int64_t kMaxDetOrder = 5;

// det of the submatrix on `rows` × `cols`, expanding along the first row.
Expr cofactor_det(const std::function<Expr(int, int)>& a, const std::vector<int>& rows, const std::vector<int>& cols) {
  if (rows.size() == 1) return a(rows[0], cols[0]);
  Expr sum;
  std::vector<int> rest(rows.begin() + 1, rows.end());
  for (size_t c = 0; c < cols.size(); ++c) {
    std::vector<int> minor_cols = cols;
    minor_cols.erase(minor_cols.begin() + static_cast<long>(c));
    Expr term = a(rows[0], cols[c]) * cofactor_det(a, rest, minor_cols);
    sum = !sum.defined() ? term : (c % 2 ? sum - term : sum + term);
  }
  return sum;
}

std::vector<HTensor> det(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  user_check(rank >= 2) << ctx.node.describe() << ": Det needs [..., n, n]";
  const int64_t* n = Halide::Internal::as_const_int(x.shape[rank - 1]);
  user_check(n && *n <= kMaxDetOrder) << ctx.node.describe() << ": Det is supported for a static n up to "
                                      << kMaxDetOrder << " only";
  std::vector<int> idx;
  for (int i = 0; i < *n; ++i) idx.push_back(i);
  return {define("det", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    auto a = [&](int i, int j) {
      Index k = o;
      k.push_back(i);
      k.push_back(j);
      return Halide::cast<double>(x.at(k));
    };
    return cofactor_det(a, idx, idx);
  })};
}

Registrar reg_Det("", "Det", KernelClass::Elementwise, det);

}  // namespace
}  // namespace onnxc::codegen
