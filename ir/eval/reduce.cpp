// Evaluator: reductions (ReduceSum, ReduceProd, ReduceMax, ReduceMin, ReduceMean) over attribute or
// input axes, with keepdims and noop_with_empty_axes.
#include <cmath>
#include <limits>

#include "ir/eval/eval_internal.h"

namespace onnxc::ir::eval_detail {
namespace {

std::vector<Tensor> eval_reduce(Ctx& c) {
  const std::string& op = c.node.op_type();
  const Tensor& x = c.in(0);
  require_numeric(x);
  int64_t r = x.rank();
  std::vector<int64_t> axes = axes_arg(c, 1).value_or(std::vector<int64_t>{});
  if (axes.empty()) {
    if (c.node.attr_int("noop_with_empty_axes", 0)) return {x};
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  }
  std::vector<bool> reduced(r, false);
  for (int64_t a : axes) reduced[normalize_axis(c, a, r)] = true;
  bool keep = c.node.attr_int("keepdims", 1) != 0;
  std::vector<int64_t> kept_dims, out_dims;  // kept_dims: reduced axes as 1, for indexing
  for (int64_t a = 0; a < r; ++a) {
    kept_dims.push_back(reduced[a] ? 1 : x.dims()[a]);
    if (!reduced[a] || keep) out_dims.push_back(kept_dims.back());
  }
  bool fl = float_lane(x.dtype());
  if (op == "ReduceMean" && !fl) throw NotEvaluable{};
  int64_t n = numel(kept_dims);
  double init = op == "ReduceProd" ? 1 : op == "ReduceMax" ? -INFINITY : op == "ReduceMin" ? INFINITY : 0;
  int64_t iinit = op == "ReduceProd" ? 1
                  : op == "ReduceMax" ? std::numeric_limits<int64_t>::min()
                  : op == "ReduceMin" ? std::numeric_limits<int64_t>::max() : 0;
  std::vector<double> accf(n, init);
  std::vector<int64_t> acci(n, iinit);
  // Walk the input; each element folds into the accumulator of its kept position.
  std::vector<int64_t> out_strides = strides(kept_dims), pos(r, 0);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t o = 0;
    for (int64_t a = 0; a < r; ++a)
      if (!reduced[a]) o += pos[a] * out_strides[a];
    if (fl) {
      double v = x.get_f64(e), &acc = accf[o];
      acc = op == "ReduceProd" ? acc * v : op == "ReduceMax" ? std::fmax(acc, v) : op == "ReduceMin" ? std::fmin(acc, v) : acc + v;
    } else {
      int64_t v = x.get_i64(e), &acc = acci[o];
      acc = op == "ReduceProd" ? acc * v : op == "ReduceMax" ? std::max(acc, v) : op == "ReduceMin" ? std::min(acc, v) : acc + v;
    }
    for (int64_t a = r; a-- > 0;) {
      if (++pos[a] < x.dims()[a]) break;
      pos[a] = 0;
    }
  }
  if (x.numel() == 0 && (op == "ReduceMax" || op == "ReduceMin") && !fl) throw NotEvaluable{};
  Tensor out = c.make(x.dtype(), out_dims);
  double count = static_cast<double>(x.numel()) / static_cast<double>(std::max<int64_t>(n, 1));
  for (int64_t k = 0; k < n; ++k) {
    if (fl) set_f64(out, k, op == "ReduceMean" ? accf[k] / count : accf[k]);
    else set_i64(out, k, acci[k]);
  }
  return {out};
}

}  // namespace

void add_reduce_evals(EvalTable& t) {
  for (const char* op : {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean"}) t.add(op, eval_reduce);
}

}  // namespace onnxc::ir::eval_detail
