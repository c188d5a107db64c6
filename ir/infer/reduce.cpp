// Reductions and ops along one axis: Reduce* (axes as attribute, or as input from opset 13 for
// ReduceSum and 18 for the rest; keepdims; noop_with_empty_axes), ArgMax/ArgMin, TopK, and the
// shape-keeping softmax family, CumSum, LpNormalization.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// Reduces a 1-D shape value to one element (ReduceProd of Shape(x) is numel).
void reduce_value(InferContext& ctx) {
  auto v = ctx.in_value(0);
  if (!v || ctx.in_rank(0) != 1 || v->empty()) return;
  const std::string& op = ctx.node().op_type();
  Dim r = (*v)[0];
  for (size_t i = 1; i < v->size(); ++i) {
    const Dim& d = (*v)[i];
    if (op == "ReduceProd") r = r * d;
    else if (op == "ReduceSum") r = r + d;
    else if (op == "ReduceMax") r = max(r, d);
    else if (op == "ReduceMin") r = min(r, d);
    else return;
  }
  if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") ctx.set_value(0, {r});
}

void infer_reduce(InferContext& ctx) {
  const auto& in = ctx.in_shape(0);
  DType dt = ctx.in_dtype(0);
  if (!in) {
    ctx.set_tensor(0, dt, std::nullopt);
    return;
  }
  int64_t r = static_cast<int64_t>(in->size());
  bool keep = ctx.node().attr_int("keepdims", 1) != 0;
  bool noop = ctx.node().attr_int("noop_with_empty_axes", 0) != 0;
  IntsArg axes = ints_arg(ctx, "axes", 1);
  if (axes.present && !axes.values) {  // reduced axes unknown
    std::optional<Shape> out;
    if (keep) {  // each dim is its input's or 1, as the data says: fresh symbols (or declared dims)
      out = Shape();
      for (int64_t i = 0; i < r; ++i)
        out->push_back((*in)[i].is_const() && (*in)[i].value() == 1 ? Dim(1) : ctx.fresh_dim(0, static_cast<size_t>(i), "reduced"));
    } else if (ctx.in_rank(1) == 1 && (*ctx.in_shape(1))[0].is_const() && (*ctx.in_shape(1))[0].value() <= r) {
      out = Shape();  // which dims remain depends on the axes' data: fresh symbols (or declared dims)
      for (int64_t i = 0; i < r - (*ctx.in_shape(1))[0].value(); ++i)
        out->push_back(ctx.fresh_dim(0, static_cast<size_t>(i), "reduced"));
    }
    ctx.set_tensor(0, dt, out);
    return;
  }
  std::vector<int64_t> ax = axes.values ? norm_axes(ctx, *axes.values, r) : std::vector<int64_t>();
  if (ax.empty() && noop) {
    same_as_input(ctx);
    return;
  }
  Shape out;
  for (int64_t i = 0; i < r; ++i) {
    bool reduced = ax.empty() || std::find(ax.begin(), ax.end(), i) != ax.end();
    if (!reduced) out.push_back((*in)[i]);
    else if (keep) out.push_back(Dim(1));
  }
  ctx.set_tensor(0, dt, out);
  reduce_value(ctx);
}

void infer_arg_reduce(InferContext& ctx) {
  const auto& in = ctx.in_shape(0);
  std::optional<Shape> out;
  if (in) {
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(in->size()));
    out = *in;
    if (ctx.node().attr_int("keepdims", 1)) (*out)[axis] = Dim(1);
    else out->erase(out->begin() + axis);
  }
  ctx.set_tensor(0, DType::Int64, out);
}

void infer_topk(InferContext& ctx) {
  const auto& in = ctx.in_shape(0);
  std::optional<Shape> out;
  if (in) {
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", -1), static_cast<int64_t>(in->size()));
    DimsArg k = dims_arg(ctx, "k", 1);
    out = *in;
    (*out)[axis] = k.values && k.values->size() == 1 ? (*k.values)[0] : Dim::unknown();
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  ctx.set_tensor(1, DType::Int64, out);
}

void infer_same(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

}  // namespace

void add_reduce_ops(OpTable& t) {
  t.add_all({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
             "ReduceLogSumExp", "ReduceSumSquare"},
            0, infer_reduce);
  t.add_all({"ArgMax", "ArgMin"}, 0, infer_arg_reduce);
  t.add_all({"TopK"}, kShapeArgs, infer_topk);
  t.add_all({"Softmax", "LogSoftmax", "Hardmax", "CumSum", "CumProd", "LpNormalization"}, 0, infer_same);
}

}  // namespace onnxc::ir
