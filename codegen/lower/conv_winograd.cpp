// Winograd convolution F(m×m, 3×3) for float32 3×3 stride-1 convolutions on a CPU (conv.cpp picks
// it per convolution, see winograd_tile). Each m×m tile of the output is computed from the (m+2)²
// input tile d around it as Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A, summed over input channels:
//   - the weights' transform U = G g Gᵀ is done here, at compile time, in double, rounded once;
//   - the input tiles' transform V = Bᵀ d B is computed per image, after the zero-padded planes
//     every CPU convolution builds (ShiftedInput), tiles numbered so that the GEMM reads a row
//     block of tiles at consecutive addresses;
//   - the (m+2)² element-wise products summed over channels are (m+2)² GEMMs, each
//     [M × C] · [C × tiles], on the register-blocked kernel vectorized over output channels;
//   - the output transform Aᵀ M A runs in vectors of output channels; the outputs it leaves
//     non-finite are summed again the direct way (IEEE NaN / ±inf per output as the direct form),
//     and the output Func reads the result (bias and any fused epilogue) as conv_channels' does.
// F(2×2, 3×3) does 16 products per 4 outputs against 36 (2.25× fewer), F(4×4, 3×3) 36 per 16
// (4× fewer) with larger rounding error (its transforms have entries up to 8 and 1/24).
#include <cstdlib>
#include <cstring>

#include "codegen/lower/conv_input.h"
#include "codegen/lower/conv_winograd.h"
#include "codegen/schedule/conv.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

// The transforms, row-major: Bᵀ is a×a, G is a×3, Aᵀ is m×a (a = m + 2); interpolation points 0, ±1
// (m = 2) and 0, ±1, ±2 (m = 4), as in Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks" (2015).
struct Transforms {
  std::vector<double> bt, g, at;
};

Transforms transforms(int m) {
  if (m == 2)
    return {{1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1},
            {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1},
            {1, 1, 1, 0, 0, 1, -1, -1}};
  return {{4, 0, -5, 0, 1, 0, 0, -4, -4, 1, 1, 0, 0, 4, -4, -1, 1, 0,
           0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1},
          {1.0 / 4, 0, 0, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6,
           1.0 / 24, 1.0 / 12, 1.0 / 6, 1.0 / 24, -1.0 / 12, 1.0 / 6, 0, 0, 1},
          {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1}};
}

// sum_k coef[k] · term(k) over the nonzero coefficients, ±1 without a multiply.
Expr weighted_sum(const std::vector<double>& coef, const std::function<Expr(int)>& term) {
  Expr s;
  for (size_t k = 0; k < coef.size(); ++k) {
    if (coef[k] == 0) continue;
    Expr t = term(static_cast<int>(k));
    const bool neg = coef[k] < 0;
    const double mag = neg ? -coef[k] : coef[k];
    if (mag != 1) t = t * static_cast<float>(mag);
    if (!s.defined()) s = neg ? -t : t;
    else s = neg ? s - t : s + t;
  }
  return s.defined() ? s : Expr(0.0f);
}

// U[mo, e, c, i] = (G W[m] [c] Gᵀ)[e] for output channel m = mo·width + i (zero past M): the weights'
// transform per (output, input) channel, packed in panels of `width` output channels, each panel
// k-major over the input channels so one GEMM step reads `width` consecutive floats.
ir::Tensor transformed_weights(const ir::Tensor& w, int m, int width) {
  const Transforms tr = transforms(m);
  const int a = m + 2;
  const int64_t mm = w.dims()[0], cc = w.dims()[1], panels = (mm + width - 1) / width;
  ir::Tensor out(ir::DType::Float32, {panels, static_cast<int64_t>(a * a), cc, width});
  const auto* src = static_cast<const float*>(w.raw());
  auto* dst = static_cast<float*>(out.mutable_raw());
  for (int64_t o = 0; o < mm; ++o) {
    for (int64_t c = 0; c < cc; ++c) {
      const float* g = src + (o * cc + c) * 9;
      double gg[6][3];  // G g
      for (int r = 0; r < a; ++r)
        for (int j = 0; j < 3; ++j) {
          gg[r][j] = 0;
          for (int k = 0; k < 3; ++k) gg[r][j] += tr.g[r * 3 + k] * static_cast<double>(g[k * 3 + j]);
        }
      for (int r = 0; r < a; ++r)
        for (int s = 0; s < a; ++s) {
          double u = 0;
          for (int j = 0; j < 3; ++j) u += gg[r][j] * tr.g[s * 3 + j];
          const int64_t e = r * a + s;
          dst[(((o / width) * a * a + e) * cc + c) * width + o % width] = static_cast<float>(u);
        }
    }
  }
  return out;
}

}  // namespace

int winograd_tile(const LowerContext& ctx, const Window& win, const std::vector<Expr>& out, int64_t channels, int64_t m_ext) {
  if (win.spatial() != 2) return 0;
  for (int s = 0; s < 2; ++s) {
    if (win.kernel[s] != 3 || win.strides[s] != 1 || win.dilations[s] != 1) return 0;
    if (!Halide::Internal::as_const_int(win.pad_begin[s]) || !Halide::Internal::as_const_int(out[s + 2])) return 0;
  }
  // The default is the target's choice; "0" (or any other value) keeps the direct form.
  const char* force = std::getenv("ONNXC_CONV_WINOGRAD");
  if (force && std::strcmp(force, "auto") != 0)
    return std::strcmp(force, "2") == 0 ? 2 : std::strcmp(force, "4") == 0 ? 4 : 0;
  const int64_t oh = *Halide::Internal::as_const_int(out[2]), ow = *Halide::Internal::as_const_int(out[3]);
  return choose_winograd_tile(channels, m_ext, oh, ow, describe(ctx.target));
}

std::vector<HTensor> conv_winograd(LowerContext& ctx, const Window& win, int tile) {
  using Halide::Var;
  const HTensor& x = ctx.in[0];
  const ir::Tensor& wt = *ctx.const_in.data(1);
  const auto& shape = out_shape(ctx);
  const int m = tile, a = tile + 2;
  const Transforms tr = transforms(m);
  const int32_t oh = static_cast<int32_t>(*Halide::Internal::as_const_int(shape[2]));
  const int32_t ow = static_cast<int32_t>(*Halide::Internal::as_const_int(shape[3]));
  ConvWinogradFuncs g;
  g.tile = m;
  g.tiles_h = (oh + m - 1) / m;
  g.tiles_w = (ow + m - 1) / m;
  g.m_extent = static_cast<int>(wt.dims()[0]);
  g.channels = static_cast<int>(wt.dims()[1]);
  g.block = choose_winograd_block(g.m_extent, g.channels, g.tiles_h, g.tiles_w, m, describe(ctx.target));
  // The planes padded at the end so that every tile's (m+2)² window lies inside them: zeros past the
  // image, whatever the tiles' overhang.
  Window padded = win;
  for (int s = 0; s < 2; ++s) {
    const int32_t need = (s == 0 ? g.tiles_h : g.tiles_w) * m + 2;
    padded.pad_end[s] = Halide::Internal::simplify(need - x.shape[s + 2] - win.pad_begin[s]);
  }
  std::vector<Expr> grid_out = {shape[0], shape[1], Expr(g.tiles_h * m), Expr(g.tiles_w * m)};
  ShiftedInput in(x, padded, grid_out);
  g.input = in.planes;
  g.input_rows = in.interiors;
  g.input_copies = in.copies;
  const Expr pw = in.plane[1];

  // V(t, c, e, n) = (Bᵀ d B)[e] of the input tile t = th · tiles_w + tw, channel c: written by one
  // update over the tile grid, so that the GEMM's rows read it at addresses linear in t.
  Var t("t"), c("c"), e("e"), n("n");
  g.tile_grid = Halide::RDom(0, g.tiles_w, 0, g.tiles_h, "wino_tiles");
  const Expr tw = g.tile_grid.x, th = g.tile_grid.y;
  auto d = [&](int i, int j) { return in.planes((th * m + i) * pw + tw * m + j, 0, c, n); };
  std::vector<Expr> cases;
  for (int eu = 0; eu < a; ++eu)
    for (int ev = 0; ev < a; ++ev) {
      std::vector<double> bu(tr.bt.begin() + eu * a, tr.bt.begin() + (eu + 1) * a);
      std::vector<double> bv(tr.bt.begin() + ev * a, tr.bt.begin() + (ev + 1) * a);
      cases.push_back(weighted_sum(bu, [&](int i) { return weighted_sum(bv, [&](int j) { return d(i, j); }); }));
    }
  auto by_index = [](const Expr& idx, const std::vector<Expr>& values) {
    Expr r = values.back();
    for (int k = static_cast<int>(values.size()) - 2; k >= 0; --k) r = Halide::select(idx == k, values[k], r);
    return r;
  };
  g.transformed = Func("wino_input");
  g.transformed(t, c, e, n) = Halide::undef<float>();
  g.transformed(th * g.tiles_w + tw, c, e, n) = by_index(e, cases);

  // The products: gemm(i, t, e, mo, n) = sum_c U[mo, e, c, i] · V(t, c, e, n) over flat tiles t.
  const int width = g.block.width;
  HTensor u = ctx.add_constant("winograd_weights", transformed_weights(wt, m, width));
  Var i("i"), mo("mo");
  g.k = Halide::RDom(0, g.channels, "wino_c");
  g.acc = Func("wino_acc");
  g.acc(i, t, e, mo, n) = 0.0f;
  g.acc(i, t, e, mo, n) += u.at({mo, e, g.k.x, i}) * g.transformed(t, g.k.x, e, n);
  ctx.reassociable.push_back(g.acc);
  g.gemm = Func("wino_gemm");
  g.gemm(i, t, e, mo, n) = g.acc(i, t, e, mo, n);

  // Y(i, xx, yy, mo, n) = (Aᵀ M A)[yy % m, xx % m] of the tile holding output pixel (yy, xx).
  Var xx("xx"), yy("yy");
  const Expr tt = (yy / m) * g.tiles_w + xx / m;
  std::vector<Expr> outs;
  for (int v = 0; v < m; ++v)
    for (int h = 0; h < m; ++h) {
      std::vector<double> av(tr.at.begin() + v * a, tr.at.begin() + (v + 1) * a);
      std::vector<double> ah(tr.at.begin() + h * a, tr.at.begin() + (h + 1) * a);
      outs.push_back(weighted_sum(av, [&](int eu) {
        return weighted_sum(ah, [&](int ev) { return g.gemm(i, tt, eu * a + ev, mo, n); });
      }));
    }
  g.result = Func("wino_output");
  g.result(i, xx, yy, mo, n) = by_index((yy % m) * m + xx % m, outs);

  // IEEE exactness: a NaN or ±inf input makes non-finite every output of the tiles whose window
  // holds it (an inf may come out as NaN), where the direct form makes non-finite only the outputs
  // whose own 3×3 window holds it. Every output that the direct form makes non-finite is non-finite
  // here too (each input reaches, through Bᵀ, G and Aᵀ's nonzero entries, every output whose window
  // holds it), so the outputs Winograd leaves finite need nothing; the others are summed again the
  // direct way over all input channels, in an update whose domain is empty unless the output is
  // not finite (one compare per output on the finite path).
  const Expr wino = g.result(i, xx, yy, mo, n);
  g.exact = Func("wino_exact");
  g.exact(i, xx, yy, mo, n) = Halide::select(Halide::is_finite(wino), wino, 0.0f);
  g.redo = Halide::RDom(0, 3, 0, 3, 0, g.channels, "wino_redo");
  g.redo.where(!Halide::is_finite(wino));
  const Expr channel = Halide::min(mo * width + i, g.m_extent - 1);  // the last panel's padding lanes
  g.exact(i, xx, yy, mo, n) += in.planes((yy + g.redo.y) * pw + xx + g.redo.x, 0, g.redo.z, n) *
                               Halide::cast<float>(ctx.in[1].at({channel, g.redo.z, g.redo.y, g.redo.x}));
  for (Func f : {g.input, g.transformed, g.acc, g.gemm, g.result, g.exact}) f.compute_root();
  ctx.schedule = [g](Func output, const Halide::Target& t) { schedule_conv_winograd(g, output, t); };

  auto vars = make_vars(static_cast<int>(shape.size()));
  Index o = onnx_index(vars);
  Expr val = g.exact(o[1] % width, o[3], o[2], o[1] / width, o[0]);
  if (has_input(ctx, 2)) val = val + Halide::cast<float>(ctx.in[2].at({o[1]}));
  Func y("conv");
  y(vars) = val;
  return {HTensor{y, shape, out_dtype(ctx)}};
}

}  // namespace onnxc::codegen
