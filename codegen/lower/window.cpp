// Window functions (HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix (opset 17). Their
// output sizes are the values of scalar inputs: the extents come from the inferred shape (a constant the
// model declares, or a symbol a host step binds from the value), and each kernel checks at run time
// that the values it reads agree with them, so a model never returns an output of the wrong size.
#include <cmath>

#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;

const Halide::Type kF64 = Halide::Float(64);

// A float64 literal (Halide's Expr(double) would round it to float32).
Expr f64(double v) { return Halide::Internal::make_const(kF64, v); }

// `v`, provided `ok` (which reads input data) holds when the kernel runs; otherwise the run fails
// with `what`.
Expr checked(LowerContext& ctx, const Expr& ok, const Expr& v, const std::string& what) {
  ctx.checks_data = true;
  return Halide::require(ok, v, what);
}

// y[n] = Σ_k a_k · cos(2πkn / N), N = size (periodic) or size - 1 (symmetric), in float64.
std::vector<HTensor> cosine_window(LowerContext& ctx, std::vector<double> a) {
  Expr size = Halide::cast<int64_t>(element(ctx, 0, 0));
  const auto& shape = out_shape(ctx);
  Expr ok = size == Halide::cast<int64_t>(shape[0]);
  Expr n_den = Halide::cast(kF64, ctx.node.attr_int("periodic", 1) ? size : size - 1);
  std::string what = ctx.node.describe() + ": the size input does not match the output's length";
  return {define(ctx.node.op_type(), shape, out_dtype(ctx), [&](const Index& i) {
    Expr theta = f64(2 * M_PI) * Halide::cast(kF64, i[0]) / n_den;
    Expr y = f64(a[0]);
    for (size_t k = 1; k < a.size(); ++k) y += f64(a[k]) * Halide::cos(theta * f64(static_cast<double>(k)));
    return checked(ctx, ok, Halide::cast(halide_type(out_dtype(ctx)), y), what);
  })};
}

std::vector<HTensor> hann(LowerContext& ctx) { return cosine_window(ctx, {0.5, -0.5}); }
std::vector<HTensor> hamming(LowerContext& ctx) { return cosine_window(ctx, {25.0 / 46.0, -21.0 / 46.0}); }
std::vector<HTensor> blackman(LowerContext& ctx) { return cosine_window(ctx, {0.42, -0.5, 0.08}); }

// Triangular filters on the mel scale, as ONNX's reference builds them: num_mel_bins + 2 edges evenly
// spaced in mel (step = mel range / (num_mel_bins + 2)), mapped to spectrogram bins by
// floor((dft_length + 1) · hertz / sample_rate). Filter i rises from edge i to edge i + 1 and falls to
// edge i + 2; a zero-width rise puts 1 at its centre.
std::vector<HTensor> mel_weight_matrix(LowerContext& ctx) {
  Expr mels = Halide::cast<int64_t>(element(ctx, 0, 0)), dft = Halide::cast<int64_t>(element(ctx, 1, 0));
  Expr rate = Halide::cast(kF64, element(ctx, 2, 0));
  Expr lo = Halide::cast(kF64, element(ctx, 3, 0)), hi = Halide::cast(kF64, element(ctx, 4, 0));
  const auto& shape = out_shape(ctx);
  Expr ok = Halide::cast<int64_t>(shape[0]) == dft / 2 + 1 && Halide::cast<int64_t>(shape[1]) == mels;
  auto to_mel = [](Expr hz) { return f64(2595.0) * Halide::log(f64(1.0) + hz / f64(700.0)) / f64(std::log(10.0)); };
  Expr mel_lo = to_mel(lo), step = (to_mel(hi) - mel_lo) / Halide::cast(kF64, mels + 2);
  auto edge = [&](Expr k) {
    Expr hz = f64(700.0) * (Halide::pow(f64(10.0), (Halide::cast(kF64, k) * step + mel_lo) / f64(2595.0)) - f64(1.0));
    return Halide::cast<int64_t>(Halide::floor(Halide::cast(kF64, dft + 1) * hz / rate));
  };
  std::string what = ctx.node.describe() + ": num_mel_bins and dft_length do not match the output's shape";
  return {define("MelWeightMatrix", shape, out_dtype(ctx), [&](const Index& o) {
    Expr j = Halide::cast<int64_t>(o[0]), i = o[1];
    Expr l = edge(i), c = edge(i + 1), h = edge(i + 2);
    Expr rise = Halide::select(c == l, Halide::select(j == c, f64(1.0), f64(0.0)),
                               Halide::select(j >= l && j <= c, Halide::cast(kF64, j - l) / Halide::cast(kF64, c - l), f64(0.0)));
    Expr v = Halide::select(h > c && j >= c && j < h, Halide::cast(kF64, h - j) / Halide::cast(kF64, h - c), rise);
    return checked(ctx, ok, Halide::cast(halide_type(out_dtype(ctx)), v), what);
  })};
}

Registrar reg_Hann("", "HannWindow", KernelClass::Elementwise, hann);
Registrar reg_Hamming("", "HammingWindow", KernelClass::Elementwise, hamming);
Registrar reg_Blackman("", "BlackmanWindow", KernelClass::Elementwise, blackman);
Registrar reg_Mel("", "MelWeightMatrix", KernelClass::Elementwise, mel_weight_matrix);

}  // namespace
}  // namespace onnxc::codegen
