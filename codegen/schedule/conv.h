// Convolution schedules: the implicit GEMM (the GEMM's register block over shifted views of the
// input) and the depthwise kernel. lower/conv.cpp builds the Funcs; this file owns the loops.
#pragma once

#include <Halide.h>

#include <optional>

#include "codegen/schedule/gemm.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

// What the implicit-GEMM convolution lowering built (lower/conv.cpp explains the form). Pixels p
// are flattened row-major over a grid of p_extent pixels:
//   input(q, phase, c, n)  the zero-padded input split into stride phases, each plane flattened:
//                          zero, then one update per phase writing its plane over the RDom
//                          `input_rows[phase]` (the plane coordinates inside the input)
//   acc(p, m, n)           zero, then one update summing W[m, k] · input(p + shift(k), ..) over the
//                          RDom `k` (tap dims innermost, the channel outermost)
//   gemm(p, m, n)          acc realized whole over [0, p_extent) × [0, m_extent): the output Func
//                          reads it at its pixel, adding bias and any epilogue
struct ConvGemmFuncs {
  Halide::Func input, acc, gemm;
  std::vector<Halide::RDom> input_rows;
  size_t input_copies = 0;  // the first input_rows copy the input; the rest write the halo's zeros
  // acc reads the kernel's input buffer in place (a 1×1 stride-1 unpadded conv over a static image
  // of at least one panel; lower/conv.cpp in_place_tap); `input` is then undefined. Its reads are
  // not bounds-checked: every pixel panel must lie inside [0, p_extent) (the last one shifted inwards).
  bool input_in_place = false;
  Halide::RDom k;
  PanelShape panel;
  Halide::Expr p_extent;
  // Grid pixels per step of the output's outermost spatial dim (a grid row of a 2-D image);
  // undefined for a 1-D convolution
  Halide::Expr row_pixels;
  int m_extent = 0;
};

// The input's phase planes first, in parallel over channels; then register-blocked tasks over (row
// block group, pixel panel, image), each running every row block of its group over its panel;
// `output` (elementwise over gemm) last. With two or more spatial dims the output is tiled instead
// (rows of the image × groups of output channels), image by image with each image's planes just
// before its tiles, and gemm is computed per tile inside it, so the product and its epilogue meet
// in cache (schedule_conv_tiles in conv.cpp).
void schedule_conv_gemm(ConvGemmFuncs g, Halide::Func output, const Halide::Target& target);

// The pixel panel of the implicit GEMM over `pixels` grid pixels with K = `k` products per output:
// choose_panel's, except where its panel of the input (k × width floats, read again by every
// register block of output channels) overflows L1 while a two-vector panel's fits; then
// the two-vector panel if it still scores higher once the wide one is marked down for the overflow
// (ResNet-50's 256 → 1024 1×1 conv over 14×14 on AVX-512: 196 pixels in 7 panels of 32 instead
// of 5 of 48).
PanelShape choose_conv_panel(int64_t pixels, int64_t k, const TargetDesc& d);

// The register block of a convolution vectorized over output channels: `width` channels (whole
// vectors) × `rows` output pixels, each pixel's input broadcast to every lane.
struct ChannelBlock {
  int width = 48;
  int rows = 7;
};

// The channel-vectorized block for a convolution of M output channels, K = C·taps products per
// output, over `pixels` output pixels whose implicit GEMM would run over `grid_pixels` grid pixels;
// nullopt when the GEMM's pixel panels waste fewer lanes than the channel block would (its output
// channels padded to whole panels, its pixels to whole blocks) plus the cost of transposing its
// result into the output. Small images pay: a 7×7 image fills 49 of the 64 lanes of pixel panels.
// `strided_taps`: a window of several taps with a stride, whose taps read different stride phases.
std::optional<ChannelBlock> choose_channel_block(int64_t m, int64_t k, int64_t pixels, int64_t grid_pixels, bool strided_taps,
                                                 const TargetDesc& d);

// What the channel-vectorized lowering built (lower/conv.cpp, conv_channels):
//   input(q, phase, c, n)  as for ConvGemmFuncs
//   acc(i, q, mo, n)       zero, then one update summing Wp[mo, k, i] · input(grid(q) + shift(k), ..)
//                          over `k`: output channel mo·width + i at output pixel q (row-major over
//                          the output's spatial dims), W packed in panels of `width` channels
//   gemm(i, q, mo, n)      acc per task; the output Func reads it at (m % width, q, m / width)
struct ConvChannelFuncs {
  Halide::Func input, acc, gemm;
  std::vector<Halide::RDom> input_rows;
  size_t input_copies = 0;  // the first input_rows copy the input; the rest write the halo's zeros
  Halide::RDom k;
  ChannelBlock block;
  int m_extent = 0;
  int64_t pixels = 0;
};

// Per image, its planes, then parallel tasks over groups of channel panels; in each, for each panel, for each block of
// `rows` pixels: the block's sums in width/lanes × rows registers over the whole reduction, then
// stored; the output (bias, epilogue) of the group's channels last, reading the products transposed.
void schedule_conv_channels(ConvChannelFuncs g, Halide::Func output, const Halide::Target& target);

// What the one-pixel convolution lowering built (a matrix-vector product per image):
//   input(q, phase, c, n)  as for ConvGemmFuncs
//   acc(i, n, mo)          zero, then one update summing Wp[mo, k, i] · input(shift(k), ..) over `k`:
//                          output channel mo·width + i, W packed in panels of `width` channels
//   gemv(i, n, mo)         acc realized whole; the output Func reads it per channel
struct ConvGemvFuncs {
  Halide::Func input, acc, gemv;
  std::vector<Halide::RDom> input_rows;
  Halide::RDom k;
  int width = 48;
  int m_extent = 0;
};

// Per (panel of `width` channels, image): the panel's sums in `width / lanes` vector registers over
// the whole reduction, then stored; panels in parallel when the weights are large enough to pay.
void schedule_conv_gemv(ConvGemvFuncs g, Halide::Func output, const Halide::Target& target);

// How many vectors of a depthwise kernel's `pixels` it sums at once (at most `most` unless they
// all fit in one group of 8), and whether the groups cover them exactly (no guarded last group).
struct DepthwiseChains {
  int count;
  bool round_up;
};
DepthwiseChains depthwise_chains(const Halide::Expr& pixels, int vec, int most);
// Channels of a depthwise task whose planes and sums are computed together, before their output rows
// (1 unless the grid is small and known when compiling; schedule/conv.cpp).
int depthwise_channel_chunk(const Halide::Expr& pixels, const TargetDesc& d);

// A depthwise convolution `acc(p, c, n)` (zero, then one update over the taps `r`) over `pixels`
// grid pixels, reading the shifted input `planes(q, phase, c, n)` (zero, then an update per phase
// over `rows[phase]`): per (channel, image) task, the channel's planes, then each vector of pixels summing
// every (unrolled) tap in a register. The first `strided_copies` updates of `planes` read the input
// with a stride (copies of a strided convolution's phases). `out_width`: the output rows' length.
void schedule_depthwise(Halide::Func planes, const std::vector<Halide::RDom>& rows, Halide::Func acc, const Halide::RDom& r, const Halide::Expr& pixels,
                        const Halide::Expr& out_width, Halide::Func output, const Halide::Target& target, size_t strided_copies = 0);
// Lanes of a depthwise kernel's output-row vectors: fewer than `vec` for rows known to be short.
int depthwise_row_lanes(const Halide::Expr& out_width, int vec);

// What the Winograd lowering built (lower/conv_winograd.cpp), a = tile + 2, tiles numbered t = th ·
// tiles_w + tw over the output's tile grid:
//   input(q, phase, c, n)      the zero-padded planes (as for ConvGemmFuncs; one phase), large
//                              enough that every tile's a×a window lies inside
//   transformed(t, c, e, n)    the input tile's transform (Bᵀ d B)[e]: undefined, then one update
//                              over `tile_grid` (tw, th) writing tile th · tiles_w + tw, a select
//                              over e that folds to one sum once e is unrolled
//   acc(i, t, e, mo, n)        zero, then one update summing U[mo, e, c, i] · transformed(t, c, e)
//                              over `k` (the input channels): output channel mo·width + i
//   gemm(i, t, e, mo, n)       acc per task
//   result(i, xx, yy, mo, n)   the output transform (Aᵀ M A) at output pixel (yy, xx), a select over
//                              (yy % tile, xx % tile) that folds once both are unrolled; the output
//                              Func reads it at (m % width, x, y, m / width, n)
struct ConvWinogradFuncs {
  Halide::Func input, transformed, acc, gemm, result, exact;
  std::vector<Halide::RDom> input_rows;
  size_t input_copies = 0;
  Halide::RDom k, tile_grid, redo;
  ChannelBlock block;
  int tile = 2, tiles_h = 1, tiles_w = 1, m_extent = 0, channels = 0;
};

// The register block of the Winograd GEMMs: output channels in `width` lanes (whole vectors) ×
// `rows` tiles, from the target's registers and the lanes M fills.
ChannelBlock choose_winograd_block(int64_t m, int64_t channels, int64_t tiles_h, int64_t tiles_w, int tile, const TargetDesc& d);

// 2 or 4 where F(tile×tile, 3×3) is expected to beat the direct forms for a 3×3 stride-1 conv of
// `channels` → `m` channels over an oh × ow output on target `d`, 0 where the direct forms stay (by
// a cost model in cycles; never where an image's transformed tiles would exceed 4 L2s).
int choose_winograd_tile(int64_t channels, int64_t m, int64_t oh, int64_t ow, const TargetDesc& d);

// Loop nest (outermost first):
//   for each image: its planes, then its transformed tiles, each in parallel over channels
//     (tiles vectorized, e unrolled); then
//   parallel task over (group of tile rows, group of channel panels), about 8 per image
//     gemm: for each e, for each panel of `width` channels, for each block of `rows` tiles:
//       acc block in registers over the channels; store
//     result over the group (output channels vectorized, the tile's pixels unrolled)
//     exact over the group: result's finite outputs copied, the direct sums of its others
//     output rows of the group (bias, epilogue), reading result transposed
void schedule_conv_winograd(ConvWinogradFuncs g, Halide::Func output, const Halide::Target& target);

}  // namespace onnxc::codegen
