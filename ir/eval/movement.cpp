// Evaluator: shape and data-movement ops. Shape, Size, Gather, Unsqueeze, Squeeze, Concat, Slice,
// Reshape, Expand, Transpose, Identity, Tile, Split, Flatten, Trilu, ConstantOfShape and Range.
// Each computes, for every output element, which input element it copies (see take()).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ir/eval/eval_internal.h"

namespace onnxc::ir::eval_detail {
namespace {

// Calls fn(position, flat index) for every element of a tensor with `dims`, in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& dims, F&& fn) {
  int64_t n = numel(dims);
  std::vector<int64_t> pos(dims.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(pos, flat);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++pos[a] < dims[a]) break;
      pos[a] = 0;
    }
  }
}

int64_t flat_of(const std::vector<int64_t>& pos, const std::vector<int64_t>& st) {
  int64_t f = 0;
  for (size_t a = 0; a < pos.size(); ++a) f += pos[a] * st[a];
  return f;
}

Tensor i64_vector(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>(DType::Int64, {static_cast<int64_t>(v.size())}, v);
}

std::vector<Tensor> eval_shape(Ctx& c) {
  const std::vector<int64_t>& d = c.in(0).dims();
  int64_t r = static_cast<int64_t>(d.size());
  auto clamp = [r](int64_t i) { return std::clamp(i < 0 ? i + r : i, int64_t{0}, r); };
  int64_t start = clamp(c.node.attr_int("start", 0)), end = clamp(c.node.attr_int("end", r));
  return {i64_vector(std::vector<int64_t>(d.begin() + start, d.begin() + std::max(start, end)))};
}

std::vector<Tensor> eval_size(Ctx& c) { return {Tensor::scalar<int64_t>(DType::Int64, c.in(0).numel())}; }

std::vector<Tensor> eval_identity(Ctx& c) { return {c.in(0)}; }

std::vector<Tensor> eval_gather(Ctx& c) {
  const Tensor &data = c.in(0), &ind = c.in(1);
  int64_t r = data.rank(), axis = normalize_axis(c, c.node.attr_int("axis", 0), r);
  std::vector<int64_t> indices = to_ints(ind), dims;
  int64_t n = data.dims()[axis];
  for (int64_t& i : indices) {
    user_check(i >= -n && i < n) << c.where() << "index " << i << " is out of range for a dim of " << n;
    if (i < 0) i += n;
  }
  dims.insert(dims.end(), data.dims().begin(), data.dims().begin() + axis);
  dims.insert(dims.end(), ind.dims().begin(), ind.dims().end());
  dims.insert(dims.end(), data.dims().begin() + axis + 1, data.dims().end());
  auto st = strides(data.dims());
  auto ist = strides(ind.dims());
  int64_t ri = ind.rank();
  std::vector<int64_t> idx;
  for_each_index(dims, [&](const std::vector<int64_t>& p, int64_t) {
    int64_t src = 0, k = 0;
    for (int64_t a = 0; a < axis; ++a) src += p[a] * st[a];
    for (int64_t a = 0; a < ri; ++a) k += p[axis + a] * ist[a];
    src += indices[k] * st[axis];
    for (int64_t a = axis + 1; a < r; ++a) src += p[a + ri - 1] * st[a];
    idx.push_back(src);
  });
  return {take(c, data, dims, idx)};
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<Tensor> eval_unsqueeze(Ctx& c) {
  const Tensor& x = c.in(0);
  auto axes = axes_arg(c, 1);
  user_check(axes.has_value()) << c.where() << "has no axes";
  int64_t out_rank = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : *axes) {
    int64_t k = normalize_axis(c, a, out_rank);
    user_check(!inserted[k]) << c.where() << "repeats axis " << a;
    inserted[k] = true;
  }
  std::vector<int64_t> dims;
  size_t j = 0;
  for (int64_t k = 0; k < out_rank; ++k) dims.push_back(inserted[k] ? 1 : x.dims()[j++]);
  return {take(c, x, dims, iota(x.numel()))};
}

std::vector<Tensor> eval_squeeze(Ctx& c) {
  const Tensor& x = c.in(0);
  auto axes = axes_arg(c, 1);
  std::vector<bool> drop(x.rank(), false);
  for (int64_t k = 0; k < x.rank(); ++k) drop[k] = !axes && x.dims()[k] == 1;
  for (int64_t a : axes.value_or(std::vector<int64_t>{})) {
    int64_t k = normalize_axis(c, a, x.rank());
    user_check(x.dims()[k] == 1) << c.where() << "cannot squeeze axis " << a << " of size " << x.dims()[k];
    drop[k] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < x.rank(); ++k)
    if (!drop[k]) dims.push_back(x.dims()[k]);
  return {take(c, x, dims, iota(x.numel()))};
}

std::vector<Tensor> eval_reshape(Ctx& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> dims = to_ints(c.in(1));
  bool allowzero = c.node.attr_int("allowzero", 0) != 0;
  int64_t infer = -1, known = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0 && !allowzero) {
      user_check(static_cast<int64_t>(k) < x.rank()) << c.where() << "copies dim " << k << " of a rank-" << x.rank() << " input";
      dims[k] = x.dims()[k];
    }
    if (dims[k] == -1) {
      user_check(infer < 0) << c.where() << "has more than one -1 in its shape";
      infer = static_cast<int64_t>(k);
    } else {
      user_check(dims[k] >= 0) << c.where() << "has an invalid dim " << dims[k];
      known *= dims[k];
    }
  }
  if (infer >= 0) {
    user_check(known != 0 && x.numel() % known == 0) << c.where() << "cannot infer the -1 dim";
    dims[infer] = x.numel() / known;
  }
  user_check(numel(dims) == x.numel()) << c.where() << "changes the element count";
  return {take(c, x, dims, iota(x.numel()))};
}

std::vector<Tensor> eval_expand(Ctx& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> dims = broadcast(c, {x.dims(), to_ints(c.in(1))});
  c.check_size(dims);
  return {take(c, x, dims, broadcast_index(x.dims(), dims))};
}

std::vector<Tensor> eval_transpose(Ctx& c) {
  const Tensor& x = c.in(0);
  int64_t r = x.rank();
  std::vector<int64_t> perm = c.node.attr_ints("perm");
  if (perm.empty())
    for (int64_t k = r; k-- > 0;) perm.push_back(k);
  user_check(static_cast<int64_t>(perm.size()) == r) << c.where() << "perm has " << perm.size() << " entries for rank " << r;
  std::vector<int64_t> dims, st = strides(x.dims()), idx;
  for (int64_t p : perm) dims.push_back(x.dims()[normalize_axis(c, p, r)]);
  for_each_index(dims, [&](const std::vector<int64_t>& pos, int64_t) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += pos[a] * st[perm[a] < 0 ? perm[a] + r : perm[a]];
    idx.push_back(src);
  });
  return {take(c, x, dims, idx)};
}

std::vector<Tensor> eval_concat(Ctx& c) {
  user_check(c.num_inputs() >= 1) << c.where() << "has no inputs";
  const Tensor& first = c.in(0);
  int64_t r = first.rank(), axis = normalize_axis(c, c.node.attr_int("axis", 0), r);
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const Tensor& t = c.in(k);
    user_check(t.rank() == r && t.dtype() == first.dtype()) << c.where() << "input " << k << " does not match input 0";
    for (int64_t a = 0; a < r; ++a)
      user_check(a == axis || t.dims()[a] == first.dims()[a]) << c.where() << "inputs differ off the concat axis";
    dims[axis] += t.dims()[axis];
  }
  // Concatenate into one flat buffer of source tensors: element (input k, flat i).
  std::vector<std::pair<size_t, int64_t>> src;
  for_each_index(dims, [&](const std::vector<int64_t>& pos, int64_t) {
    std::vector<int64_t> p = pos;
    size_t k = 0;
    while (p[axis] >= c.in(k).dims()[axis]) p[axis] -= c.in(k++).dims()[axis];
    src.emplace_back(k, flat_of(p, strides(c.in(k).dims())));
  });
  if (first.dtype() == DType::String) {
    std::vector<std::string> v;
    for (auto [k, i] : src) v.push_back(c.in(k).string_data()[i]);
    return {Tensor::strings(dims, std::move(v))};
  }
  Tensor out = c.make(first.dtype(), dims);
  size_t es = dtype_size(first.dtype());
  for (size_t e = 0; e < src.size(); ++e) {
    require_numeric(c.in(src[e].first));
    std::memcpy(static_cast<unsigned char*>(out.mutable_raw()) + e * es,
                static_cast<const unsigned char*>(c.in(src[e].first).raw()) + src[e].second * es, es);
  }
  return {out};
}

std::vector<Tensor> eval_slice(Ctx& c) {
  const Tensor& x = c.in(0);
  int64_t r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.num_inputs() == 1) {  // opset < 10: attributes
    starts = c.node.attr_ints("starts");
    ends = c.node.attr_ints("ends");
    axes = c.node.attr_ints("axes");
  } else {
    starts = to_ints(c.in(1));
    ends = to_ints(c.in(2));
    if (const Tensor* t = c.opt_in(3)) axes = to_ints(*t);
    if (const Tensor* t = c.opt_in(4)) steps = to_ints(*t);
  }
  if (axes.empty()) axes = iota(static_cast<int64_t>(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  user_check(ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size())
      << c.where() << "starts, ends, axes and steps differ in length";
  std::vector<int64_t> begin(r, 0), step(r, 1), dims = x.dims();
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = normalize_axis(c, axes[k], r), d = x.dims()[a], s = starts[k], e = ends[k], st = steps[k];
    user_check(st != 0) << c.where() << "has a zero step";
    if (s < 0) s = s < -d ? -1 : s + d;  // careful with INT64_MIN-like sentinels
    if (e < 0) e = e < -d ? -1 : e + d;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      dims[a] = std::max<int64_t>(0, (e - s + st - 1) / st);
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      dims[a] = std::max<int64_t>(0, (s - e + (-st) - 1) / (-st));
    }
    begin[a] = s;
    step[a] = st;
  }
  auto st = strides(x.dims());
  std::vector<int64_t> idx;
  for_each_index(dims, [&](const std::vector<int64_t>& pos, int64_t) {
    int64_t src = 0;
    for (int64_t a = 0; a < r; ++a) src += (begin[a] + pos[a] * step[a]) * st[a];
    idx.push_back(src);
  });
  return {take(c, x, dims, idx)};
}

std::vector<Tensor> eval_tile(Ctx& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> reps = to_ints(c.in(1)), dims = x.dims();
  user_check(static_cast<int64_t>(reps.size()) == x.rank()) << c.where() << "repeats must have one entry per dim";
  for (size_t a = 0; a < dims.size(); ++a) dims[a] *= reps[a];
  c.check_size(dims);
  auto st = strides(x.dims());
  std::vector<int64_t> idx;
  for_each_index(dims, [&](const std::vector<int64_t>& pos, int64_t) {
    int64_t src = 0;
    for (size_t a = 0; a < pos.size(); ++a) src += (pos[a] % x.dims()[a]) * st[a];
    idx.push_back(src);
  });
  return {take(c, x, dims, idx)};
}

std::vector<Tensor> eval_split(Ctx& c) {
  const Tensor& x = c.in(0);
  int64_t axis = normalize_axis(c, c.node.attr_int("axis", 0), x.rank()), d = x.dims()[axis];
  int64_t n = static_cast<int64_t>(c.node.num_outputs());
  std::vector<int64_t> split = c.opt_in(1) ? to_ints(c.in(1)) : c.node.attr_ints("split");
  if (split.empty()) {  // equal parts; with num_outputs (opset 18) the last may be smaller
    int64_t part = (d + n - 1) / n;
    for (int64_t k = 0; k < n; ++k) split.push_back(std::min(part, d - k * part));
  }
  user_check(static_cast<int64_t>(split.size()) == n && std::accumulate(split.begin(), split.end(), int64_t{0}) == d)
      << c.where() << "split sizes do not add up to the dim";
  std::vector<Tensor> out;
  auto st = strides(x.dims());
  int64_t offset = 0;
  for (int64_t s : split) {
    std::vector<int64_t> dims = x.dims(), idx;
    dims[axis] = s;
    for_each_index(dims, [&](const std::vector<int64_t>& pos, int64_t) {
      std::vector<int64_t> p = pos;
      p[axis] += offset;
      idx.push_back(flat_of(p, st));
    });
    out.push_back(take(c, x, dims, idx));
    offset += s;
  }
  return out;
}

std::vector<Tensor> eval_flatten(Ctx& c) {
  const Tensor& x = c.in(0);
  int64_t r = x.rank(), axis = c.node.attr_int("axis", 1);
  user_check(axis >= -r && axis <= r) << c.where() << "axis " << axis << " is out of range";
  if (axis < 0) axis += r;
  int64_t outer = numel(std::vector<int64_t>(x.dims().begin(), x.dims().begin() + axis));
  return {take(c, x, {outer, x.numel() / std::max<int64_t>(outer, 1)}, iota(x.numel()))};
}

std::vector<Tensor> eval_trilu(Ctx& c) {
  const Tensor& x = c.in(0);
  user_check(x.rank() >= 2) << c.where() << "needs rank >= 2";
  int64_t k = c.opt_in(1) ? scalar_int(c, c.in(1)) : 0;
  bool upper = c.node.attr_int("upper", 1) != 0;
  Tensor out = take(c, x, x.dims(), iota(x.numel()));
  int64_t rows = x.dims()[x.rank() - 2], cols = x.dims()[x.rank() - 1];
  size_t es = dtype_size(x.dtype());
  if (es == 0) throw NotEvaluable{};
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) std::memset(static_cast<unsigned char*>(out.mutable_raw()) + e * es, 0, es);
  }
  return {out};
}

std::vector<Tensor> eval_constant_of_shape(Ctx& c) {
  std::vector<int64_t> dims = to_ints(c.in(0));
  c.check_size(dims);
  const Attribute* a = c.node.attr("value");
  Tensor v = a && a->kind == Attribute::Kind::Tensor ? a->t : Tensor::scalar<float>(DType::Float32, 0.0f);
  user_check(v.numel() == 1) << c.where() << "value must have one element";
  return {take(c, v, dims, std::vector<int64_t>(static_cast<size_t>(numel(dims)), 0))};
}

std::vector<Tensor> eval_range(Ctx& c) {
  const Tensor &s = c.in(0), &l = c.in(1), &d = c.in(2);
  bool fl = float_lane(s.dtype());
  double start = scalar_f64(c, s), limit = scalar_f64(c, l), delta = scalar_f64(c, d);
  user_check(delta != 0) << c.where() << "has a zero delta";
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  if (!fl) {  // exact integer count
    int64_t is = scalar_int(c, s), il = scalar_int(c, l), id = scalar_int(c, d);
    n = id > 0 ? std::max<int64_t>(0, (il - is + id - 1) / id) : std::max<int64_t>(0, (is - il - id - 1) / -id);
  }
  Tensor out = c.make(s.dtype(), {n});
  for (int64_t k = 0; k < n; ++k) {
    if (fl) set_f64(out, k, start + static_cast<double>(k) * delta);
    else set_i64(out, k, scalar_int(c, s) + k * scalar_int(c, d));
  }
  return {out};
}

}  // namespace

void add_movement_evals(EvalTable& t) {
  t.add("Shape", eval_shape);
  t.add("Size", eval_size);
  t.add("Identity", eval_identity);
  t.add("Gather", eval_gather);
  t.add("Unsqueeze", eval_unsqueeze);
  t.add("Squeeze", eval_squeeze);
  t.add("Reshape", eval_reshape);
  t.add("Expand", eval_expand);
  t.add("Transpose", eval_transpose);
  t.add("Concat", eval_concat);
  t.add("Slice", eval_slice);
  t.add("Tile", eval_tile);
  t.add("Split", eval_split);
  t.add("Flatten", eval_flatten);
  t.add("Trilu", eval_trilu);
  t.add("ConstantOfShape", eval_constant_of_shape);
  t.add("Range", eval_range);
}

}  // namespace onnxc::ir::eval_detail
