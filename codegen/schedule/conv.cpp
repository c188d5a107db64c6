// Convolution schedules (see conv.h).
#include "codegen/schedule/conv.h"

#include <algorithm>
#include <cmath>

#include "codegen/schedule/schedule.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

using namespace Halide;

namespace {

// The input planes' loops inside whatever loop they are computed at: the zero fill and the row
// writes vectorized, a row's last vector masked (Predicate): under GuardWithIf a row shorter than a
// vector (a 7×7 image on AVX-512) was copied one float at a time. The rows of a plane are disjoint
// (the flat index is injective in the coordinates), which Halide cannot prove for extents known
// only at run time. The first `strided` updates read their rows with a stride (a strided
// convolution's phases), and a masked strided load is a gather (AVX-512's vgatherdps: a third of a
// 3×3 stride-2 depthwise kernel's time over 112×112, whose phase rows are 56 = 3·16 + 8 long). A
// row whose length is known when compiling is copied in the widest vectors (down to a quarter of
// the natural width) that divide it, so no load is masked; GuardWithIf kept the mask, and Halide
// refuses ShiftInwards for updates.
void vectorize_planes(Func planes, const std::vector<RDom>& rows, int vec, size_t strided = 0) {
  planes.vectorize(planes.args()[0], vec, TailStrategy::RoundUp);
  for (size_t i = 0; i < rows.size(); ++i) {
    int width = vec;
    const int64_t* len = i < strided ? Internal::as_const_int(rows[i][0].extent()) : nullptr;
    if (len && *len % vec != 0)
      for (int w = vec / 2; w >= std::max(4, vec / 4); w /= 2)
        if (*len % w == 0) {
          width = w;
          break;
        }
    planes.update(static_cast<int>(i)).allow_race_conditions().vectorize(rows[i][0], width, TailStrategy::Predicate);
  }
}

// The input's phase planes computed before the products, in parallel over (channel, image): whole
// (at root), or one image at a time at the output's loop over images `at_image`, so that a batch's
// planes are not all written before the first is read (at b8 they no longer fit in cache).
void schedule_planes(Func planes, const std::vector<RDom>& rows, size_t copies, const Target& t, Func output = Func(),
                     Var at_image = Var()) {
  Var c = planes.args()[2], in = planes.args()[3], ch("conv_ch");
  if (output.defined()) planes.compute_at(output, at_image);
  else planes.compute_root();
  planes.fuse(c, in, ch).parallel(ch);
  // The halo's zeros (conv.cpp's halo_zeros, the updates after the `copies` interiors) are a few
  // short runs per channel: as parallel loops of their own, each costs a task dispatch for little work.
  for (size_t i = 0; i < rows.size(); ++i) {
    Stage s = planes.update(static_cast<int>(i)).fuse(c, in, ch);
    if (i < copies) s.parallel(ch);
  }
  vectorize_planes(planes, rows, t.natural_vector_size<float>());
}

// The pixel panels' tail: a register block computes a whole panel (place_register_block), so under
// GuardWithIf the last panel reads up to width − 1 pixels past the image, which the planes hold
// (zeros) but an input read in place does not. Shifted inwards, the last panel overlaps the one
// before it and recomputes a few pixels, each with the same sum in the same order.
TailStrategy panel_tail(const ConvGemmFuncs& g) {
  return g.input_in_place ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf;
}

// Image rows per output tile: the fewest that give a tile kPanels panels of pixels; for a static
// row width, up to twice that many when more rows waste less of the tile's last panel.
Expr tile_rows(const Expr& row_pixels, int width) {
  constexpr int kPanels = 4;
  const int want = kPanels * width;
  const int64_t* rp = Internal::as_const_int(row_pixels);
  if (!rp) return max(1, (want + row_pixels - 1) / row_pixels);
  const int64_t least = std::max<int64_t>(1, (want + *rp - 1) / *rp);
  int64_t best = least;
  double best_use = 0;
  for (int64_t r = least; r <= 2 * least; ++r) {
    const int64_t px = r * *rp, padded = (px + width - 1) / width * width;
    const double use = static_cast<double>(px) / static_cast<double>(padded);
    if (use > best_use + 1e-9) best = r, best_use = use;
  }
  return static_cast<int32_t>(best);
}

// A pointwise convolution read in place whose register block can be R whole image rows starting
// on a vector boundary (R·W pixels a multiple of the vector, 2 to 8 vectors, H a multiple of R): the
// output is stored straight from the accumulators, bias, residual and activation applied as each
// block's sums are final, with no products buffer between them. Loop nest (outermost first):
//   parallel task over (tile of image rows, group of output channels)
//     for each block of R rows: for each register block of `rb` channels:
//       acc (R·W pixels × rb) = 0; for k: FMAs; then the output rows of the block from acc
// Only where the block's input (K × R·W floats) stays in L1 while the group's channel blocks pass,
// and the block holds at least kMinRows channels (a row block of 7 vectors leaves AVX2 one: each
// input vector would be loaded for a single FMA). On AVX-512 (ResNet-50's 56×56 convs of K = 64:
// 2 rows, 7 vectors × 3 channels) 17-24% less CPU time per layer than the flat panels, the same
// sums in the same order; where the input overflows L1 (K = 128 at 28×28, K = 256 at 56×56) it was
// 1.3-1.8x slower, and single rows of 56/28 pixels (not a vector multiple, every load split
// across cache lines, 1/8 of the lanes idle) 1.1-1.5x slower.
bool schedule_conv_row_blocks(ConvGemmFuncs g, Func output, const Target& t, const Expr& tile_r) {
  constexpr int kTasks = 8, kMinRows = 3;
  const int64_t* rp = Internal::as_const_int(g.row_pixels);
  const int64_t* ps = Internal::as_const_int(g.p_extent);
  const int64_t* rs = Internal::as_const_int(tile_r);
  if (!g.input_in_place || !rp || !ps || !rs || output.dimensions() != 4 || *rp < 1) return false;
  const TargetDesc d = describe(t);
  const int vec = t.natural_vector_size<float>();
  const int64_t w = *rp, h = *ps / *rp;
  int64_t rows = 1;
  while (rows <= h && (rows * w) % vec != 0) ++rows;
  if (rows > h || h % rows != 0) return false;
  const int64_t vecs = rows * w / vec;
  int64_t k = 1;
  for (int i = 0; i < g.k.dimensions(); ++i) {
    const int64_t* e = Internal::as_const_int(g.k[i].extent());
    if (!e) return false;
    k *= *e;
  }
  const int rb = std::min<int>(16, d.accumulator_budget() / static_cast<int>(std::max<int64_t>(1, vecs)));
  if (vecs < 2 || vecs > 8 || rb < kMinRows || k * rows * w * 4 > d.l1d_bytes) return false;
  // Tiles of whole row blocks (about tile_rows' rows) that divide the image; channel groups as
  // schedule_conv_tiles chooses them.
  int64_t tr = std::max<int64_t>(rows, (*rs + rows - 1) / rows * rows);
  while (h % tr != 0) tr -= rows;
  const int64_t ytiles = h / tr, blocks = (g.m_extent + rb - 1) / rb;
  int64_t group = std::clamp<int64_t>(d.l2_bytes / 4 / (tr * w * 4 * rb), 1, blocks);
  group = std::min(group, std::max<int64_t>(1, blocks / ((kTasks + ytiles - 1) / ytiles)));
  std::vector<Var> o = output.args();
  Var x = o[0], y = o[1], m = o[2], n = o[3];
  Var yo("conv_yo"), yi("conv_yi"), yb("conv_yb"), yr("conv_yr"), xo("conv_xo"), xi("conv_xi");
  Var mg("conv_mg"), mc("conv_mc"), mb("conv_mb"), mr("conv_mr");
  // A row of at least a vector ends on a vector shifted inwards (a few outputs stored twice, the
  // same values); a shorter one (R > 1) on a masked one.
  output.bound(x, 0, static_cast<int>(w))
      .bound(y, 0, static_cast<int>(h))
      .split(y, yo, yi, static_cast<int>(tr), TailStrategy::GuardWithIf)
      .split(yi, yb, yr, static_cast<int>(rows), TailStrategy::GuardWithIf)
      .split(m, mg, mc, static_cast<int>(group * rb), TailStrategy::GuardWithIf)
      .split(mc, mb, mr, rb, TailStrategy::GuardWithIf)
      .split(x, xo, xi, vec, w >= vec ? TailStrategy::ShiftInwards : TailStrategy::Predicate)
      .reorder(xi, xo, yr, mr, mb, yb, yo, mg, n)
      .vectorize(xi)
      .unroll(xo)
      .unroll(yr)
      .unroll(mr);
  output.parallel(fuse_vars(output, {yo, mg}));
  g.gemm.compute_inline();
  place_register_block(g.acc, g.k, output, mb, static_cast<int>(rows * w), rb, vec);
  return true;
}

// Loop nest of a convolution with two or more spatial dims (outermost first):
//   for each image: its planes, in parallel over channels; then
//   parallel task over (tile of image rows, group of output channels)
//     gemm over the tile: for each panel of `width` pixels, for each register block of `rows`
//       channels: acc block (rows × width) = 0; for k: rows × width/vec FMAs; store
//     output over the tile (bias, epilogue) from gemm, rows vectorized (the last vector masked)
// The tile's products stay in cache until the epilogue reads them: computed whole (as a 1-D
// convolution still is, below), they were written to memory and read back, a pass as large as the output itself, which
// for a pointwise convolution with few input channels costs more than its arithmetic. A group's
// products fit in a quarter of L2; when the image has few tiles, channels are split into smaller
// groups until there are about kTasks tasks.
void schedule_conv_tiles(ConvGemmFuncs g, Func output, const Target& t) {
  constexpr int kTasks = 8;
  const TargetDesc d = describe(t);
  const int vec = t.natural_vector_size<float>();
  const int width = g.panel.width, rows = g.panel.rows;
  std::vector<Var> o = output.args();
  const int sp = static_cast<int>(o.size()) - 2;
  Var y = o[sp - 1], m = o[sp], n = o[sp + 1];
  Expr r = tile_rows(g.row_pixels, width);
  if (schedule_conv_row_blocks(g, output, t, r)) return;
  const int64_t* r_static = Internal::as_const_int(r);
  const int64_t* rp = Internal::as_const_int(g.row_pixels);
  const int64_t* p_static = Internal::as_const_int(g.p_extent);
  const int64_t tile_pixels = r_static && rp ? *r_static * *rp : 4 * width;  // dynamic: tile_rows' aim
  // Channels per group: a multiple of the register block, at most what a quarter of L2 holds.
  const int64_t blocks = (g.m_extent + rows - 1) / rows;
  int64_t group_blocks = std::clamp<int64_t>(d.l2_bytes / 4 / (tile_pixels * 4 * rows), 1, blocks);
  if (p_static && rp && r_static) {
    const int64_t ytiles = (*p_static / *rp + *r_static - 1) / *r_static;
    const int64_t want_groups = (kTasks + ytiles - 1) / ytiles;
    group_blocks = std::min(group_blocks, std::max<int64_t>(1, blocks / want_groups));
  }
  const int group = static_cast<int>(group_blocks * rows);
  Var yo("conv_yo"), yi("conv_yi"), mg("conv_mg"), mc("conv_mc");
  std::vector<VarOrRVar> order(o.begin(), o.begin() + sp - 1);
  for (const Var& v : {yi, mc, yo, mg, n}) order.emplace_back(v);
  output.split(y, yo, yi, r, TailStrategy::GuardWithIf)
      .split(m, mg, mc, group, TailStrategy::GuardWithIf)
      .reorder(order)
      .vectorize(o[0], vec, TailStrategy::Predicate);
  Var task = fuse_vars(output, {yo, mg});
  output.parallel(task);
  if (!g.input_in_place) schedule_planes(g.input, g.input_rows, g.input_copies, t, output, n);

  Func gemm = g.gemm;
  Var p = gemm.args()[0], gm = gemm.args()[1], gn = gemm.args()[2];
  Var po("conv_po"), pi("conv_pi"), mo("conv_mo"), mi("conv_mi");
  gemm.compute_at(output, task)
      .split(p, po, pi, width, panel_tail(g))
      .split(gm, mo, mi, rows, TailStrategy::GuardWithIf)
      .reorder(pi, mi, mo, po, gn)
      .vectorize(pi, vec);
  place_register_block(g.acc, g.k, gemm, mo, width, rows, vec);
}

}  // namespace

// A 1-D convolution (the image has no rows to tile): gemm computed whole. Loop nest of gemm
// (outermost first):
//   parallel task over (group of row blocks, panel of `width` pixels, image)
//     for each register block of `rows` output channels:
//       acc block (rows × width) = 0; for k: rows × width/vec FMAs in registers; store
// A task covers every output channel when there are panels enough for the threads; a late layer
// has one or two panels (7×7 = 49 pixels) and hundreds of channels, so its channels are split in
// groups until there are about kTasks tasks per image.
void schedule_conv_gemm(ConvGemmFuncs g, Func output, const Target& t) {
  if (g.row_pixels.defined() && output.dimensions() >= 4) return schedule_conv_tiles(g, output, t);
  if (!g.input_in_place) schedule_planes(g.input, g.input_rows, g.input_copies, t);
  constexpr int kTasks = 8;
  const int vec = t.natural_vector_size<float>();
  const int width = g.panel.width, rows = g.panel.rows;
  const int blocks = (g.m_extent + rows - 1) / rows;
  const int64_t* p_static = Internal::as_const_int(g.p_extent);
  const int64_t panels = p_static ? (*p_static + width - 1) / width : kTasks;
  const int64_t groups = std::min<int64_t>(blocks, (kTasks + panels - 1) / panels);
  const int tiles = static_cast<int>((blocks + groups - 1) / groups);
  Func gemm = g.gemm;
  Var p = gemm.args()[0], m = gemm.args()[1], n = gemm.args()[2];
  Var po("conv_po"), pi("conv_pi"), mo("conv_mo"), mi("conv_mi"), mb("conv_mb"), tp("conv_tp"), task("conv_task");
  // Bounds starting at 0 let the simplifier see that a tile starts on a panel boundary, so the
  // panel is read with dense vector loads.
  gemm.compute_root()
      .bound(p, 0, g.p_extent)
      .bound(m, 0, g.m_extent)
      .split(p, po, pi, width, panel_tail(g))
      .split(m, mo, mi, rows, TailStrategy::GuardWithIf)
      .split(mo, mb, mo, tiles, TailStrategy::GuardWithIf)
      .reorder(pi, mi, mo, mb, po, n)
      .vectorize(pi, vec)
      .fuse(mb, po, tp)
      .fuse(tp, n, task)
      .parallel(task);

  place_register_block(g.acc, g.k, gemm, mo, width, rows, vec);
  schedule_output(output, KernelClass::Elementwise, t);
}

namespace {
// Relative speed of a block of 1..4 vectors per k step (the weights choose_panel uses: fewer
// vectors reload the broadcast operand more often per FMA).
constexpr double kSpeed[] = {0, 0.75, 0.9, 1.0, 1.0};
}  // namespace

PanelShape choose_conv_panel(int64_t pixels, int64_t k, const TargetDesc& d) {
  // Set from a measurement on AVX-512 (ResNet-50's 256 → 1024 1×1 conv over 14×14 alone, 1 thread:
  // 32-pixel panels, 32 KiB of input, 5% faster than 48-pixel ones, 48 KiB).
  constexpr double kOverflow = 0.95;
  const PanelShape wide = choose_panel(pixels, d);
  if (d.gpu || pixels < 1 || k < 1) return wide;
  const int lanes = std::max(1, d.f32_lanes());
  auto fits = [&](int width) { return k * width * 4 <= d.l1d_bytes; };
  const PanelShape two{2 * lanes, std::min(24, std::max(1, d.accumulator_budget() / 2))};
  if (wide.width <= two.width || fits(wide.width) || !fits(two.width)) return wide;
  auto use = [&](int width) { return static_cast<double>(pixels) / static_cast<double>((pixels + width - 1) / width * width); };
  const double wide_score = kSpeed[std::clamp(wide.width / lanes, 1, 4)] * use(wide.width) * kOverflow;
  return kSpeed[2] * use(two.width) > wide_score + 1e-9 ? two : wide;
}

std::optional<ChannelBlock> choose_channel_block(int64_t m, int64_t k, int64_t pixels, int64_t grid_pixels, bool strided_taps,
                                                 const TargetDesc& d) {
  if (d.gpu || m < 1 || k < 1 || pixels < 1) return std::nullopt;
  // With 16 vector registers (AVX2) the channel block is at most 24 × 4 or 16 × 6, and over taps
  // that alternate between stride phases it ran slower than the pixel panels it replaces:
  // ResNet-50's stride-2 3×3 convs at 15-21 GFLOP per CPU-second against 18-35 as pixel panels
  // (Zen 3, 1 thread, `onnxc bench --profile`). 32-register targets keep the measured trade below.
  if (strided_taps && d.vector_registers <= 16) return std::nullopt;
  const int lanes = std::max(1, d.f32_lanes()), budget = std::max(1, d.accumulator_budget());
  auto use = [](int64_t n, int64_t block) { return static_cast<double>(n) / static_cast<double>((n + block - 1) / block * block); };
  // The pixel panels: the useful output pixels among the grid's pixels padded to whole panels.
  const PanelShape panel = choose_panel(grid_pixels, d);
  const int panel_vecs = std::clamp(panel.width / lanes, 1, 4);
  double pixel_score = kSpeed[panel_vecs] * static_cast<double>(pixels) / static_cast<double>(grid_pixels) * use(grid_pixels, panel.width);
  // Taps that alternate between stride phases make the pixel form's inner loop irregular: LLVM
  // unrolls a short one and spills accumulators (ResNet-50's stride-2 3×3 convs ran at 120-160
  // GFLOP per CPU-second against 200-230 for stride 1 on AVX-512; its 7×7 stride-2 stem at 175-180).
  if (strided_taps) pixel_score *= 0.7;
  // Storing the block transposed costs about two cycles per output element (a strided read and
  // its share of the epilogue), against k / (2·lanes) cycles of FMAs per element on two FMA units.
  // Measured on ResNet-50 (AVX-512): a 1×1 conv of K = 256 over 14×14 was slower in this form.
  const double fma_cycles = static_cast<double>(k) / (2.0 * lanes);
  const double transpose = fma_cycles / (fma_cycles + 2.0);
  std::optional<ChannelBlock> best;
  double best_score = pixel_score;
  for (int vecs : {3, 4, 2, 1}) {
    // Every block of pixels streams its panel of weights (k × width floats) past the registers: a
    // panel near the size of L2 comes from L3 each time (on AVX-512, ResNet-50's 3×3 convs of 512
    // channels, 884 KiB panels, ran slower this way; those of 256 channels, 590 KiB, faster).
    if (k * vecs * lanes * 4 > d.l2_bytes * 3 / 4) continue;
    for (int rows = std::min(budget / vecs, 16); rows >= 4; --rows) {
      const double score = kSpeed[vecs] * use(m, vecs * lanes) * use(pixels, rows) * transpose;
      if (score > best_score + 1e-9) best = ChannelBlock{vecs * lanes, rows}, best_score = score;
    }
  }
  return best;
}

// Loop nest (outermost first):
//   for each image: its planes (as the implicit GEMM's), in parallel over channels; then
//   parallel task over groups of channel panels
//     gemm over the group: for each panel of `width` channels, for each block of `rows` pixels:
//       acc block (width × rows) = 0; for k: width/lanes vector loads of W, rows broadcasts,
//       rows × width/lanes FMAs; store
//     output over the group's channels (bias, epilogue), pixels vectorized, reading gemm transposed
// A panel's weights (K × width floats) stay in cache while every pixel block passes; the image's
// planes are read once per panel.
void schedule_conv_channels(ConvChannelFuncs g, Func output, const Target& t) {
  constexpr int kTasks = 8;
  const int vec = t.natural_vector_size<float>();
  const int width = g.block.width, rows = g.block.rows;
  const int panels = (g.m_extent + width - 1) / width;
  const int group = std::max(1, panels / kTasks) * width;
  std::vector<Var> o = output.args();
  const int sp = static_cast<int>(o.size()) - 2;
  Var m = o[sp], n = o[sp + 1], mg("conv_mg"), mc("conv_mc");
  std::vector<VarOrRVar> order(o.begin(), o.begin() + sp);
  for (const Var& v : {mc, mg, n}) order.emplace_back(v);
  output.split(m, mg, mc, group, TailStrategy::GuardWithIf).reorder(order).vectorize(o[0], vec, TailStrategy::Predicate);
  Var task = fuse_vars(output, {mg});
  output.parallel(task);
  schedule_planes(g.input, g.input_rows, g.input_copies, t, output, n);

  Func gemm = g.gemm;
  Var i = gemm.args()[0], q = gemm.args()[1], mo = gemm.args()[2], gn = gemm.args()[3];
  Var qo("conv_qo"), qi("conv_qi");
  gemm.compute_at(output, task)
      .bound(i, 0, width)
      .split(q, qo, qi, rows, TailStrategy::RoundUp)
      .reorder(i, qi, qo, mo, gn)
      .vectorize(i, vec)
      .unroll(qi);
  place_register_block(g.acc, g.k, gemm, qo, width, rows, vec);
}

void schedule_conv_gemv(ConvGemvFuncs g, Func output, const Target& t) {
  // Below this many weights (floats) one thread streams them faster than a pool wakes up.
  constexpr int64_t kParallelWeights = 1 << 18;
  const int vec = t.natural_vector_size<float>();
  const int panels = (g.m_extent + g.width - 1) / g.width;
  Func gemv = g.gemv;
  Var i = gemv.args()[0], n = gemv.args()[1], mo = gemv.args()[2];
  gemv.compute_root().bound(i, 0, g.width).bound(mo, 0, panels).reorder(i, n, mo).vectorize(i, vec).unroll(i);
  int64_t weights = static_cast<int64_t>(g.m_extent);
  for (int d = 0; d < g.k.dimensions(); ++d) weights *= *Internal::as_const_int(g.k[d].extent());
  if (weights >= kParallelWeights && panels > 1) gemv.parallel(mo);
  place_register_block(g.acc, g.k, gemv, n, g.width, 1, vec);
  g.input.compute_root();
  vectorize_planes(g.input, g.input_rows, vec);
  schedule_output(output, KernelClass::Elementwise, t);
}

// Lanes of the output rows' vectors (bias and epilogue): a row known when compiling to fit in half a
// vector or less takes the narrowest of vec, vec/2 and vec/4 (at least 4) that holds it, so a 7-wide
// row on AVX-512 runs its epilogue on 8 lanes, not 16 with 9 masked off. The same operations per
// lane; what it saves is the epilogue's work on the masked lanes: EfficientNet's 1152-channel 7×7
// 5×5 layer with SiLU 0.097 → 0.089 CPU ms, the same layer without an epilogue unchanged.
int depthwise_row_lanes(const Expr& out_width, int vec) {
  const int64_t* w = Internal::as_const_int(out_width);
  int lanes = vec;
  while (w && *w > 0 && lanes / 2 >= std::max<int64_t>(4, *w)) lanes /= 2;
  return lanes;
}

// Channels whose sums are computed before any of their output rows are read, for small grids: a
// channel's grid is summed in whole vectors and then read back row by row (rows that straddle two of
// the just-stored vectors), and a 7×7 image's channel has only ~125 FMAs to hide that behind. k
// channels' planes and sums (2 floats per grid pixel each) in a quarter of L1; at most 8.
// MobileNetV3's 960-channel 7×7 5×5 layer: 0.063 → 0.049 CPU ms at k = 4 or 8 (AVX-512); a 14×14
// grid (k = 4) measured unchanged.
int depthwise_channel_chunk(const Expr& pixels, const TargetDesc& d) {
  const int64_t* p = Internal::as_const_int(pixels);
  if (!p || *p <= 0) return 1;
  return static_cast<int>(std::clamp<int64_t>(d.l1d_bytes / 4 / (*p * 2 * 4), 1, 8));
}

// Vectors of pixels a depthwise kernel sums at once. Past the last whole group of chains, a guard
// per chain (GuardWithIf) splits the sums into conditional blocks, and LLVM then keeps them in
// memory, a load and a store around every tap: a 7×7 image with a 5×5 window (5 vectors on
// AVX-512: a group of 4, then one under guards) spent 11% more than with one group of 5 (960
// channels: 0.073 → 0.065 CPU ms). For a grid known when compiling, then: all of its vectors in one
// group when there are at most 8 (the only group, so no weight stays in a register between groups
// and `most` need not bound it), else the largest count from `most` down to half of it (not below
// 4: fewer chains leave the FMA units waiting on latency) that divides them. Either way the groups
// cover the vectors exactly, and the split is declared so (RoundUp: no guard, nothing read past
// the grid's last vector). Otherwise `most` and the guards: rounding 53 vectors up to 56 (a 5×5
// window at stride 2 on 56×56) cost more than the one guarded vector.
DepthwiseChains depthwise_chains(const Expr& pixels, int vec, int most) {
  const int64_t* p = Internal::as_const_int(pixels);
  if (!p || *p <= 0) return {most, false};
  const int64_t vectors = (*p + vec - 1) / vec;
  if (vectors <= 8) return {static_cast<int>(vectors), true};
  for (int c = most; c >= std::max(4, most / 2); --c)
    if (vectors % c == 0) return {c, true};
  return {most, false};
}

// Loop nest of a depthwise kernel (outermost first):
//   parallel task over (group of consecutive channels, image), sized so a task holds ~kDepthwiseGrain
//   pixels; the channel's planes and sums are allocated here, once per task
//     for each chunk of k channels of the group (k = depthwise_channel_chunk, 1 but for small grids):
//       planes of the k channels (zero, rows copied); acc over their grid pixels (every tap summed in
//       a register per vector of pixels, several vectors at a time); then the output rows of the
//       k channels (bias, epilogue) from acc
// The channel's planes and sums stay in cache between being written and read: computed whole
// (compute_root), they were an extra pass over memory each, and for a 7×7 image a task of one channel
// spent more in the thread pool than in its arithmetic. Rows shorter than a vector are written with
// masked stores, not one float at a time.
void schedule_depthwise(Func planes, const std::vector<RDom>& rows, Func acc, const RDom& r, const Expr& pixels, const Expr& out_width,
                        Func output, const Target& t, size_t strided_copies) {
  if (t.has_gpu_feature()) return schedule_output(output, KernelClass::Elementwise, t);
  constexpr int kDepthwiseGrain = 4096;
  const int vec = t.natural_vector_size<float>();
  std::vector<Var> o = output.args();
  const int sp = static_cast<int>(o.size()) - 2;
  Var co("dw_co"), task("dw_task"), ch("dw_ch"), cb("dw_cb");
  const int k = depthwise_channel_chunk(pixels, describe(t));
  output.vectorize(o[0], depthwise_row_lanes(out_width, vec), TailStrategy::Predicate)
      .split(o[sp], co, ch, Halide::max(k, kDepthwiseGrain / Halide::max(1, pixels) / k * k), TailStrategy::GuardWithIf)
      .fuse(co, o[sp + 1], task)
      .parallel(task);
  Var at = ch;
  if (k > 1) output.split(ch, cb, ch, k, TailStrategy::GuardWithIf), at = cb;
  Var p = acc.args()[0], po("dw_po"), pi("dw_pi");
  // The sums run on to a whole vector past the grid's end, over the zeros after the planes.
  acc.store_at(output, task).compute_at(output, at).vectorize(p, vec, TailStrategy::RoundUp);
  int taps = 1;
  for (int i = 0; i < r.dimensions(); ++i) taps *= *Internal::as_const_int(r[i].extent());
  // Several vectors of pixels at once, each its own sum: one vector's taps form a chain of dependent
  // FMAs (a 5×5 window: 25 × the FMA latency per vector), so alone it left the FMA units idle. Eight
  // chains where they fit in the vector registers beside the window's weights, else four; for a
  // grid known when compiling, a count that divides its vectors (depthwise_chains). Each pixel
  // still sums its taps in the same order.
  const int most = taps + 8 + 2 <= describe(t).vector_registers ? 8 : 4;
  const DepthwiseChains chains = depthwise_chains(pixels, vec, most);
  Var pc("dw_pc"), pb("dw_pb");
  std::vector<VarOrRVar> order = {pi, pc};
  for (int i = 0; i < r.dimensions(); ++i) order.push_back(r[i]);
  order.push_back(pb);
  Stage s = acc.update();
  s.split(p, po, pi, vec, TailStrategy::RoundUp)
      .split(po, pb, pc, chains.count, chains.round_up ? TailStrategy::RoundUp : TailStrategy::GuardWithIf)
      .reorder(order)
      .vectorize(pi)
      .unroll(pc);
  // Up to 7×7 windows unroll into one register sum per vector; larger ones loop.
  if (taps <= 49)
    for (int i = 0; i < r.dimensions(); ++i) s.unroll(r[i]);
  planes.store_at(output, task).compute_at(output, at);
  vectorize_planes(planes, rows, vec, strided_copies);
}

ChannelBlock choose_winograd_block(int64_t m, int64_t channels, int64_t tiles_h, int64_t tiles_w, int tile, const TargetDesc& d) {
  (void)channels, (void)tile;
  const int lanes = std::max(1, d.f32_lanes()), budget = std::max(1, d.accumulator_budget());
  auto use = [](int64_t n, int64_t block) { return static_cast<double>(n) / static_cast<double>((n + block - 1) / block * block); };
  const int64_t tiles = tiles_h * tiles_w;
  ChannelBlock best{lanes, 4};
  double best_score = -1;
  for (int vecs : {4, 3, 2, 1}) {
    const int rows = std::min<int64_t>(std::min(budget / vecs, 16), std::max<int64_t>(1, tiles));
    if (rows < 1) continue;
    const double score = kSpeed[vecs] * use(m, vecs * lanes) * (rows >= 4 ? 1.0 : 0.8);
    if (score > best_score + 1e-9) best = ChannelBlock{vecs * lanes, rows}, best_score = score;
  }
  return best;
}

int choose_winograd_tile(int64_t channels, int64_t m, int64_t oh, int64_t ow, const TargetDesc& d) {
  // A cost model in cycles of one core, its constants fitted to ResNet-50's four 3×3 shapes at 1
  // thread on AVX-512 (Zen 5; measured per layer with either form forced, within 10% of each time):
  //   arithmetic   multiply-adds / (2 FMA units · lanes), at 80% of that peak, both forms;
  //   weights      every run streams them from beyond L2 at kStreamBytes per cycle: the direct form
  //                overlaps that with its arithmetic (max), Winograd's per-e GEMMs mostly do not
  //                (0.8 of it added). Its weights are a²/9 times as large (F(4×4): 4×), which is
  //                what loses at 7×7 with 512 channels (16.8 MB for F(2×2) against 9.4 MB);
  //   transforms   per tile and channel (input and output), kTransform[tile] cycles on 16 lanes.
  constexpr double kStreamBytes = 5.0, kEfficiency = 0.8;
  if (d.gpu || !d.fma || channels < 16 || m < d.f32_lanes()) return 0;
  const double lanes = std::max(1, d.f32_lanes());
  const double c = static_cast<double>(channels), mm = static_cast<double>(m);
  const double mpad = std::ceil(mm / lanes) * lanes;
  const double direct_fma = 9.0 * c * mm * static_cast<double>(oh * ow) / (2.0 * lanes) / kEfficiency;
  const double direct = std::max(direct_fma, 9.0 * c * mm * 4.0 / kStreamBytes);
  // Winograd must win by kMargin: the fit is within about 10% on the shapes it was fitted to.
  constexpr double kMargin = 0.9;
  int best = 0;
  double best_cycles = kMargin * direct;
  for (int tile : {2, 4}) {
    const double a2 = (tile + 2.0) * (tile + 2.0);
    const double tiles = std::ceil(static_cast<double>(oh) / tile) * std::ceil(static_cast<double>(ow) / tile);
    // An image's transformed tiles are written whole before its products (schedule_conv_winograd):
    // past 4 L2s they would stream through memory (and a 512×512 image would take hundreds of MB).
    if (tiles * c * a2 * 4.0 > 4.0 * d.l2_bytes) continue;
    const double transform = (tile == 2 ? 8.0 : 45.0) * 16.0 / lanes;
    const double cycles = a2 * c * mpad * tiles / (2.0 * lanes) / kEfficiency + 0.8 * a2 * c * mm * 4.0 / kStreamBytes +
                          tiles * (c + mm) * transform;
    if (cycles < best_cycles) best = tile, best_cycles = cycles;
  }
  return best;
}

void schedule_conv_winograd(ConvWinogradFuncs g, Func output, const Target& t) {
  const TargetDesc d = describe(t);
  const int vec = t.natural_vector_size<float>();
  const int width = g.block.width, rows = g.block.rows, tile = g.tile, a = tile + 2;
  // Tile rows per task: the group's transformed input and products (a² floats per tile for each
  // input and output channel) in half of L2, and at least `rows` tiles.
  const int64_t mpad = (g.m_extent + width - 1) / width * width;
  const int64_t per_row = static_cast<int64_t>(g.tiles_w) * a * a * (g.channels + mpad) * 4;
  int64_t group = std::clamp<int64_t>(d.l2_bytes / 2 / std::max<int64_t>(1, per_row), 1, g.tiles_h);
  while (group < g.tiles_h && group * g.tiles_w < rows) ++group;
  // Tasks over (group of tile rows, group of channel panels): a 14×14 image has 7 rows of 2×2 tiles,
  // which did not split evenly over threads; about kTasks tasks per image. The transformed input is
  // per image, so a task of fewer channels recomputes nothing.
  constexpr int64_t kTasks = 8;
  const int64_t row_tasks = (g.tiles_h + group - 1) / group, panels = mpad / width;
  const int64_t channel_groups = std::clamp<int64_t>((kTasks + row_tasks - 1) / row_tasks, 1, panels);
  const int channels_per_task = static_cast<int>((panels + channel_groups - 1) / channel_groups * width);
  std::vector<Var> o = output.args();
  Var x = o[0], y = o[1], m = o[2], n = o[3], yo("wino_yo"), yi("wino_yi"), mg("wino_mg"), mc("wino_mc");
  output.split(y, yo, yi, static_cast<int>(group * tile), TailStrategy::GuardWithIf)
      .split(m, mg, mc, channels_per_task, TailStrategy::GuardWithIf)
      .reorder(x, yi, mc, yo, mg, n)
      .vectorize(x, vec, TailStrategy::Predicate);
  Var task = fuse_vars(output, {yo, mg});
  output.parallel(task);
  schedule_planes(g.input, g.input_rows, g.input_copies, t, output, n);

  // The image's transformed tiles after its planes, in parallel over channels; every e of a vector
  // of tiles in one loop body, so the a×a window's loads and the row sums (Bᵀ d)[., j] that several
  // e share are computed once. The tiles are disjoint (th · tiles_w + tw is injective), which Halide
  // cannot prove.
  Func v = g.transformed;
  Var c = v.args()[1], e = v.args()[2], vn = v.args()[3];
  RVar two("wino_two"), twi("wino_twi");
  const int tvec = std::min(vec, g.tiles_w >= 16 ? 16 : g.tiles_w >= 8 ? 8 : 4);
  v.compute_at(output, n).bound(e, 0, a * a);
  v.update()
      .allow_race_conditions()
      .split(g.tile_grid.x, two, twi, tvec, TailStrategy::Predicate)
      .reorder(twi, e, two, g.tile_grid.y, c, vn)
      .vectorize(twi)
      .unroll(e)
      .parallel(c);

  Func gemm = g.gemm;
  Var i = gemm.args()[0], tt = gemm.args()[1], ge = gemm.args()[2], mo = gemm.args()[3], gn = gemm.args()[4];
  Var to("wino_to"), ti("wino_ti");
  // The last block of a task's tiles shifted inwards (recomputing a few tiles) where every task,
  // the last one too, has a whole block of tiles; else guarded.
  const int64_t last_rows = g.tiles_h % group == 0 ? group : g.tiles_h % group;
  const bool shift = last_rows * g.tiles_w >= rows;
  gemm.compute_at(output, task)
      .bound(i, 0, width)
      .split(tt, to, ti, rows, shift ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf)
      .reorder(i, ti, to, mo, ge, gn)
      .vectorize(i, vec)
      .unroll(ti);
  place_register_block(g.acc, g.k, gemm, to, width, rows, vec);

  // The output transform and the exact form's pass share one tiling over the group: output-channel
  // vectors innermost, then the m×m tile's pixels. Returns the stage for form-specific directives.
  auto tile_over_group = [&](Func f, const std::string& p) {
    Var fi = f.args()[0], fx = f.args()[1], fy = f.args()[2], fm = f.args()[3];
    Var xo(p + "xo"), xi(p + "xi"), yo(p + "yo"), yi(p + "yi"), io(p + "io"), ii(p + "ii");
    f.compute_at(output, task)
        .bound(fi, 0, width)
        .split(fi, io, ii, vec)
        .split(fx, xo, xi, tile, TailStrategy::RoundUp)
        .split(fy, yo, yi, tile, TailStrategy::RoundUp)
        .reorder(ii, xi, yi, io, xo, yo, fm)
        .vectorize(ii);
    return std::make_pair(xi, yi);
  };
  const auto [rxi, ryi] = tile_over_group(g.result, "wino_r");
  g.result.unroll(rxi).unroll(ryi);
  // The exact form's pass over the group: the finite outputs copied in vectors; the direct sums of
  // the non-finite ones one output at a time (the domain's predicate, which reads only pure
  // variables, is tested once per output outside its loops).
  Func ex = g.exact;
  Var ei = ex.args()[0], exx = ex.args()[1], eyy = ex.args()[2], emo = ex.args()[3];
  tile_over_group(ex, "wino_e");
  ex.update().reorder(g.redo.x, g.redo.y, g.redo.z, ei, exx, eyy, emo);
}

}  // namespace onnxc::codegen
