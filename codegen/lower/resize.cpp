// Resize (opsets 10-19) and Upsample: separable interpolation, axis by axis, as ONNX's reference
// defines it. Per axis, an output coordinate maps to an input coordinate x (coordinate_transformation
// _mode), whose n neighbours (n = 2 nearest/linear, 4 cubic; edge-clamped) are weighted by
// coefficients of the fraction of x; the output is the sum over all neighbour combinations. Opset
// 18's axes (scales, sizes and roi list only those axes), keep_aspect_ratio_policy and antialias
// (a downsampling filter stretched by 1/scale, so n grows with 1/scale: a scale given at run time
// needs static extents, whose ratio bounds it from below; the kernel checks that bound).
#include <cmath>
#include <optional>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

struct Axis {
  std::vector<Expr> idx, coef;  // neighbour input indices (clamped) and their weights
  Expr outside;                 // tf_crop_and_resize: the coordinate left the input (extrapolate)
};

// An axis's neighbours and weights as small tables over the output position, computed once per
// kernel run: the element expression then stays small (inlining the cubic coefficients of several
// axes into it blew up Halide's GPU lowering), and CPU kernels stop recomputing them per element.
struct AxisTables {
  Halide::Func idx, coef, outside;  // (k, position), (k, position), (position)
};

std::vector<Expr> cubic(Expr t, float a) {
  Expr s = t + 1.0f, u = 1.0f - t, v = u + 1.0f;
  return {((a * s - 5 * a) * s + 8 * a) * s - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1.0f,
          ((a + 2) * u - (a + 3)) * u * u + 1.0f, ((a * v - 5 * a) * v + 8 * a) * v - 4 * a};
}

// Antialiased linear or cubic weights for a downscale s < 1 (the filter stretched by 1/s): n taps
// from offset `start` (the neighbours left of x first), normalized to sum to 1. The taps are those of
// `s_low` <= s, a bound known when compiling (s itself when it is known): the taps a larger s has are
// among them, and the others weigh exactly 0 (beyond the filter's support), so the sum is unchanged.
std::vector<Expr> antialiased(Expr t, double s_low, Expr s, bool cubic_mode, float a) {
  int start = static_cast<int>(std::floor((cubic_mode ? -2.0 : -1.0) / s_low) + 1);
  int n = 2 - 2 * start;
  std::vector<Expr> c;
  Expr total = 0.0f;
  for (int k = 0; k < n; ++k) {
    Expr u = Halide::abs(s * (static_cast<float>(start + k) - t));
    Expr w;
    if (cubic_mode) {
      Expr near = ((a + 2) * u - (a + 3)) * u * u + 1.0f;
      Expr far = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
      w = Halide::select(u <= 1.0f, near, u < 2.0f, far, 0.0f);
    } else {
      w = Halide::clamp(1.0f - u, 0.0f, 1.0f);
    }
    c.push_back(w);
    total = total + w;
  }
  for (Expr& w : c) w = w / total;
  return c;
}

std::vector<Expr> nearest(Expr t, const std::string& mode) {
  Expr zero = 0.0f, one = 1.0f;
  Expr down;  // 1 when the left neighbour is chosen
  if (mode == "round_prefer_ceil") down = t < 0.5f;
  else if (mode == "floor") down = Halide::Internal::const_true();
  else if (mode == "ceil") down = Halide::Internal::const_false();
  else down = t <= 0.5f;  // round_prefer_floor
  down = down && t < 1.0f;  // an integral coordinate (t == 1) is its own neighbour
  return {Halide::select(down, one, zero), Halide::select(down, zero, one)};
}

class Resizer {
 public:
  explicit Resizer(LowerContext& ctx) : ctx_(ctx), x_(ctx.in[0]), out_(out_shape(ctx)) {
    const ir::Node& n = ctx.node;
    bool v10 = ctx.opset < 11 || n.op_type() == "Upsample";
    mode_ = n.attr_string("mode", "nearest");
    coord_ = v10 ? "asymmetric" : n.attr_string("coordinate_transformation_mode", "half_pixel");
    nearest_mode_ = v10 ? "floor" : n.attr_string("nearest_mode", "round_prefer_floor");
    cubic_a_ = n.attr_float("cubic_coeff_a", -0.75f);
    exclude_ = n.attr_int("exclude_outside", 0) != 0;
    extrapolation_ = n.attr_float("extrapolation_value", 0.0f);
    scales_input_ = v10 ? 1 : 2;
    user_check(mode_ == "nearest" || mode_ == "linear" || mode_ == "cubic")
        << n.describe() << ": mode '" << mode_ << "' is not supported";
    antialias_ = n.attr_int("antialias", 0) != 0 && mode_ != "nearest";
    keep_ = n.attr_string("keep_aspect_ratio_policy", "stretch");
    user_check(keep_ == "stretch" || keep_ == "not_larger" || keep_ == "not_smaller")
        << n.describe() << ": keep_aspect_ratio_policy '" << keep_ << "' is not one of stretch, not_larger, not_smaller";
    int r = x_.rank();
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (axes.empty())
      for (int d = 0; d < r; ++d) axes.push_back(d);
    pos_.assign(static_cast<size_t>(r), -1);
    for (size_t i = 0; i < axes.size(); ++i) {
      int d = normalize_axis(axes[i], r, n);
      pos_[static_cast<size_t>(d)] = static_cast<int>(i);
      axes_.push_back(d);
    }
  }

  HTensor run() {
    if (std::vector<int> dims = separable_dims(); !dims.empty()) return run_separable(dims);
    int r = x_.rank();
    HTensor h = define("Resize", out_, out_dtype(ctx_), [&](const Index& o) {
      std::vector<Axis> axes;
      for (int d = 0; d < r; ++d) axes.push_back(tabled_axis(d, o[d]));
      Expr sum = 0.0f, outside = Halide::Internal::const_false();
      Index i(r);
      std::function<void(int, Expr)> walk = [&](int d, Expr w) {
        if (d == r) {
          sum = sum + w * Halide::cast<float>(x_.at(i));
          return;
        }
        for (size_t k = 0; k < axes[d].idx.size(); ++k) {
          i[d] = axes[d].idx[k];
          walk(d + 1, axes[d].coef.size() == 1 ? w : w * axes[d].coef[k]);
        }
      };
      walk(0, 1.0f);
      for (const auto& a : axes)
        if (a.outside.defined()) outside = outside || a.outside;
      Halide::Type ot = halide_type(out_dtype(ctx_));
      Expr v = ot.is_float() ? sum : Halide::round(sum);
      return checked(Halide::select(outside, Halide::cast(ot, extrapolation_), Halide::cast(ot, v)));
    });
    schedule_with({});
    return h;
  }

 private:
  // The resized dims (innermost first) when the kernel interpolates one axis at a time, the order of
  // ONNX's reference (the innermost axis first, for every index of the outer ones; then the next
  // axis over those results) and of PyTorch's bilinear upsampling: linear or cubic, floating-point
  // output, no extrapolation, at least two resized dims, on a CPU. Else empty: the kernel sums every
  // neighbour combination per output element, n^dims products each with its input gathered along
  // the innermost axis. Separable, an output element costs n gathers in the first stage's fraction
  // in/out of the elements and n dense loads per further axis: an 8× bilinear upsampling gathers
  // 16× less. (Only where an outer axis shrinks more than it has taps, which CNN graphs do not do,
  // is the first stage larger than the output; it is never larger than the input.)
  std::vector<int> separable_dims() {
    if (mode_ == "nearest" || coord_ == "tf_crop_and_resize" || !halide_type(out_dtype(ctx_)).is_float() ||
        is_gpu(ctx_.target))
      return {};
    std::vector<int> dims;
    Halide::Var probe("probe");
    for (int d = x_.rank() - 1; d >= 0; --d)
      if (axis(d, probe).coef.size() > 1) dims.push_back(d);  // else passed through
    scale_checks_.clear();  // the probes' checks; the kernel's axes add them again
    return dims.size() >= 2 ? dims : std::vector<int>{};
  }

  // One stage per dim of `dims` (innermost first): stage k interpolates dim dims[k] of stage k−1
  // (the input first), the dims before it at their output extents; the last stage is the result.
  HTensor run_separable(const std::vector<int>& dims) {
    std::vector<Expr> shape = x_.shape;
    std::function<Expr(const Index&)> prev = [x = x_](const Index& i) { return Halide::cast<float>(x.at(i)); };
    std::vector<Stage> stages;
    HTensor h;
    for (size_t k = 0; k < dims.size(); ++k) {
      const int d = dims[k];
      shape[static_cast<size_t>(d)] = out_[d];
      const bool last = k + 1 == dims.size();
      auto body = [&, d, prev](const Index& o) {
        Axis a = tabled_axis(d, o[d]);
        Expr sum = 0.0f;
        Index i = o;
        for (size_t j = 0; j < a.idx.size(); ++j) {
          i[d] = a.idx[j];
          sum = sum + a.coef[j] * prev(i);
        }
        return last ? checked(Halide::cast(halide_type(out_dtype(ctx_)), sum)) : sum;
      };
      h = define(last ? "Resize" : "resize_axis" + std::to_string(d), shape,
                 last ? out_dtype(ctx_) : ir::DType::Float32, body);
      if (!last) stages.push_back({h.func, shape.back()});
      prev = [stage = h](const Index& i) { return stage.at(i); };
    }
    schedule_with(stages);
    return h;
  }

  // y under the run-time antialias scale checks, if any.
  Expr checked(Expr y) {
    if (scale_checks_.empty()) return y;
    Expr ok = scale_checks_[0];
    for (size_t k = 1; k < scale_checks_.size(); ++k) ok = ok && scale_checks_[k];
    ctx_.checks_data = true;
    return Halide::require(ok, y, "Resize: a run-time scale does not give the output extents the model declares");
  }

  // An intermediate of the separable form and the extent of its innermost dim.
  struct Stage {
    Halide::Func f;
    Expr row;
  };

  // The tables computed whole, then each intermediate stage over its whole extent (its rows are read
  // by several output rows: innermost dim vectorized, the others fused into parallel tasks of about
  // kGrain elements), then the output.
  void schedule_with(const std::vector<Stage>& stages) {
    ctx_.schedule = [tables = tables_, stages](Halide::Func out, const Halide::Target& t) {
      constexpr int kGrain = 16384;
      for (Halide::Func f : tables) f.compute_root();
      for (const Stage& s : stages) {
        Halide::Func f = s.f;
        std::vector<Halide::Var> v = f.args();
        f.compute_root().vectorize(v[0], t.natural_vector_size<float>(), Halide::TailStrategy::GuardWithIf);
        Halide::Var rows = fuse_vars(f, v, 1), task("resize_task"), row("resize_row");
        f.split(rows, task, row, Halide::max(1, kGrain / Halide::max(1, s.row)), Halide::TailStrategy::GuardWithIf)
            .parallel(task);
      }
      schedule_output(out, KernelClass::DataMovement, t);
    };
  }

  bool has_scales() const {
    return has_input(ctx_, scales_input_) && !Halide::Internal::is_const_zero(ctx_.in[scales_input_].shape[0]);
  }

  // The scale of dim d (output / input extent), from the scales input or the sizes; 1 for a dim
  // that `axes` leaves out. keep_aspect_ratio_policy uses one scale for all: the smallest (or
  // largest) of sizes / extent.
  Expr scale(int d) {
    int p = pos_[static_cast<size_t>(d)];
    if (p < 0) return 1.0f;
    if (has_scales()) return Halide::cast<float>(element(ctx_, scales_input_, p));
    if (keep_ != "stretch") {
      Expr best;
      for (size_t i = 0; i < axes_.size(); ++i) {
        Expr sc = Halide::cast<float>(element(ctx_, 3, static_cast<int>(i))) / Halide::cast<float>(x_.shape[axes_[i]]);
        best = !best.defined() ? sc : keep_ == "not_larger" ? Halide::min(best, sc) : Halide::max(best, sc);
      }
      return best;
    }
    return Halide::cast<float>(out_[d]) / Halide::cast<float>(x_.shape[d]);
  }

  // The scale of dim d when it is known while compiling (antialias sizes its filter by it).
  std::optional<double> static_scale(int d) {
    Expr s = Halide::Internal::simplify(Halide::cast<double>(scale(d)));
    if (const double* c = Halide::Internal::as_const_float(s)) return *c;
    return std::nullopt;
  }

  // axis(d, o) evaluated through tables over the output position o.
  Axis tabled_axis(int d, Expr o) {
    Halide::Var k("k"), p("p");
    Axis direct = axis(d, p);
    if (direct.coef.size() == 1 && !direct.outside.defined()) return axis(d, o);  // pass-through
    int n = static_cast<int>(direct.idx.size());
    Halide::Func idx("resize_idx"), coef("resize_coef");
    Expr iv = direct.idx[n - 1], cv = direct.coef[n - 1];
    for (int j = n - 2; j >= 0; --j) {
      iv = Halide::select(k == j, direct.idx[j], iv);
      cv = Halide::select(k == j, direct.coef[j], cv);
    }
    idx(k, p) = iv;
    coef(k, p) = cv;
    tables_.insert(tables_.end(), {idx, coef});
    Axis a;
    for (int j = 0; j < n; ++j) {
      a.idx.push_back(idx(j, o));
      a.coef.push_back(coef(j, o));
    }
    if (direct.outside.defined()) {
      Halide::Func out("resize_outside");
      out(p) = direct.outside;
      tables_.push_back(out);
      a.outside = out(o);
    }
    return a;
  }

  Axis axis(int d, Expr o) {
    Expr in = x_.shape[d];
    Axis a;
    int p = pos_[static_cast<size_t>(d)];
    if (p < 0) {  // a dim `axes` leaves out
      a.idx = {o};
      a.coef = {Expr(1.0f)};
      return a;
    }
    // Unresized dims (extent and scale statically equal) read straight through.
    if (Halide::Internal::equal(in, out_[d]) && !(has_input(ctx_, scales_input_) && !const_ints(ctx_, scales_input_))) {
      auto sc = const_floats(ctx_, scales_input_);
      bool unit = !sc || sc->empty() || (*sc)[p] == 1.0;
      if (unit && coord_ != "tf_crop_and_resize") {
        a.idx = {o};
        a.coef = {Expr(1.0f)};
        return a;
      }
    }
    Expr s = scale(d), of = Halide::cast<float>(o), inf = Halide::cast<float>(in);
    Expr out_w = s * inf;  // the reference's (fractional) output width
    Expr x;
    if (coord_ == "align_corners") {
      x = Halide::select(out_w == 1.0f, 0.0f, of * (inf - 1.0f) / (out_w - 1.0f));
    } else if (coord_ == "asymmetric") {
      x = of / s;
    } else if (coord_ == "pytorch_half_pixel") {
      x = Halide::select(out_w == 1.0f, -0.5f, (of + 0.5f) / s - 0.5f);
    } else if (coord_ == "half_pixel_symmetric") {
      // Opset 19: half_pixel, shifted so the sampled span stays centred when the output extent is
      // the fractional s · in rounded down.
      Expr adjust = Halide::cast<float>(out_[d]) / out_w;
      x = (inf / 2.0f) * (1.0f - adjust) + (of + 0.5f) / s - 0.5f;
    } else if (coord_ == "tf_half_pixel_for_nn") {
      x = (of + 0.5f) / s;
    } else if (coord_ == "tf_crop_and_resize") {
      int r = static_cast<int>(axes_.size());  // roi lists starts, then ends, of the resized axes
      Expr lo = Halide::cast<float>(element(ctx_, 1, p)), hi = Halide::cast<float>(element(ctx_, 1, p + r));
      x = Halide::select(out_w == 1.0f, (hi - lo) * (inf - 1.0f) / 2.0f, of * (hi - lo) * (inf - 1.0f) / (out_w - 1.0f));
      x = x + lo * (inf - 1.0f);
      a.outside = x < 0.0f || x > inf - 1.0f;
    } else {
      user_check(coord_ == "half_pixel") << ctx_.node.describe() << ": coordinate_transformation_mode '" << coord_
                                         << "' is not supported";
      x = (of + 0.5f) / s - 0.5f;
    }
    // Exactly as the reference's arithmetic: no reciprocal multiplication for a division by a
    // constant scale (3/4 as x * 1.3333334 would move a coordinate off a .5 tie).
    x = Halide::strict_float(x);
    Expr fl = Halide::floor(x);
    Expr t = Halide::select(x == fl, 1.0f, x - fl);  // in (0, 1]: the left neighbour is preferred
    std::vector<Expr> c = mode_ == "cubic" ? cubic(t, cubic_a_) : mode_ == "linear"
                              ? std::vector<Expr>{1.0f - t, t} : nearest(t, nearest_mode_);
    if (antialias_) {
      if (std::optional<double> ss = static_scale(d)) {
        if (*ss < 1.0) c = antialiased(t, *ss, Expr(static_cast<float>(*ss)), mode_ == "cubic", cubic_a_);
      } else {
        // A scale given at run time: the output extent is floor(in * s), so s >= out / in, and s < 1
        // exactly when out < in. The taps are sized for out / in; the kernel checks the bound.
        const int64_t* in_c = Halide::Internal::as_const_int(in);
        const int64_t* out_c = Halide::Internal::as_const_int(out_[d]);
        user_check(in_c && out_c && has_scales() && coord_ != "tf_crop_and_resize")
            << ctx_.node.describe() << ": antialias with scales given at run time needs the input and output extents "
            << "known when compiling (and not tf_crop_and_resize)";
        if (*out_c < *in_c) {
          // floor(in * s) = out with the product exact (float64; ONNX's reference computes it so) means
          // s >= out / in exactly; a bound any lower could add taps (compile time grows with them).
          double low = static_cast<double>(*out_c) / static_cast<double>(*in_c);
          c = antialiased(t, low, s, mode_ == "cubic", cubic_a_);
          Expr s64 = Halide::cast<double>(s);
          scale_checks_.push_back(s64 * Halide::Internal::make_const(s64.type(), *in_c) >=
                                      Halide::Internal::make_const(s64.type(), *out_c) &&
                                  s64 < Halide::Internal::make_one(s64.type()));
        }
      }
    }
    int n = static_cast<int>(c.size());
    Expr base = Halide::cast<int32_t>(Halide::ceil(x)) - n / 2;
    Expr total = 0.0f;
    for (int k = 0; k < n; ++k) {
      Expr j = base + k;
      if (exclude_) c[k] = Halide::select(j >= 0 && j < in, c[k], 0.0f);
      total = total + c[k];
      a.idx.push_back(Halide::clamp(j, 0, in - 1));
    }
    if (exclude_)
      for (auto& e : c) e = e / total;
    a.coef = c;
    return a;
  }

  LowerContext& ctx_;
  const HTensor& x_;
  std::vector<Expr> out_;
  std::string mode_, coord_, nearest_mode_;
  float cubic_a_, extrapolation_;
  bool exclude_, antialias_;
  std::string keep_;
  std::vector<int> pos_;    // per dim: its position in `axes`, -1 when not resized
  std::vector<int> axes_;   // the resized dims, in the order scales/sizes/roi list them
  int scales_input_;
  std::vector<Halide::Func> tables_;
  std::vector<Expr> scale_checks_;  // run-time antialias scales: at least the bound, below 1
};

std::vector<HTensor> resize(LowerContext& ctx) { return {Resizer(ctx).run()}; }

Registrar reg_Resize("", "Resize", {10, ir::kLatestOpset}, KernelClass::DataMovement, resize);  // opset 9 and below: Upsample
Registrar reg_Upsample("", "Upsample", KernelClass::DataMovement, resize);

}  // namespace

}  // namespace onnxc::codegen
