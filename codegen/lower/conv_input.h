// The input planes of the CPU convolution forms (conv.cpp, conv_winograd.cpp): the zero-padded input
// split into stride phases, each plane flattened per channel.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/lower/window.h"

namespace onnxc::codegen {

// The input of a float32 convolution on a CPU, zero-padded and split into stride phases (a stride-2
// image into its 4 planes of even/odd rows and columns; a stride-1 image is its one plane), each
// plane flattened per channel: planes(q, phase, c, n). Output pixels are numbered over a plane's
// grid (rows as wide as a plane; the columns past the output's width are computed and dropped), so
// kernel tap r of every pixel p reads one plane shifted by a constant: planes(p + shift(r),
// phase(r), c, n), a dense vector load for consecutive pixels. A 3×3 stride-1 conv on a 14-wide
// image computes 16/14 of the outputs it keeps.
struct ShiftedInput {
  Halide::Func planes;
  // Per phase that a tap reads, the plane coordinates that hold input (innermost: the last spatial
  // dim): planes' update i writes its phase over interiors[i]; after the phases' interiors, the
  // zeros around them (halo_zeros), each RDom's first dim contiguous in the plane
  std::vector<Halide::RDom> interiors;
  size_t copies = 0;  // the updates copying the input (the first ones); the rest write the halo's zeros
  std::vector<int32_t> strides, dilations;
  std::vector<Halide::Expr> plane, grid;  // per spatial dim: a plane's extent; the grid's (output's in dim 0)
  Halide::Expr pixels;                    // grid pixels

  ShiftedInput(const HTensor& x, const Window& win, const std::vector<Halide::Expr>& out) {
    const int sp = win.spatial();
    pixels = 1;
    int phases = 1;
    for (int s = 0; s < sp; ++s) {
      strides.push_back(static_cast<int32_t>(win.strides[s]));
      dilations.push_back(static_cast<int32_t>(win.dilations[s]));
      Halide::Expr padded = x.shape[s + 2] + win.pad_begin[s] + win.pad_end[s];
      plane.push_back(Halide::Internal::simplify((padded + strides[s] - 1) / strides[s]));
      grid.push_back(s > 0 ? plane[s] : out[s + 2]);
      pixels = pixels * grid[s];
      phases *= strides[s];
    }
    pixels = Halide::Internal::simplify(pixels);
    // Zero everywhere (past a plane's end too: the last panel of pixels and the last taps read
    // beyond it), then per phase the plane coordinates j whose input position j·stride + phase −
    // pad lies inside the input, written row by row: each input row a dense (or, strided, an
    // evenly spaced) vector load with no clamp or select, which made a gather of every load. As a
    // function of the flat index instead, every element would cost a division and a modulo by the
    // plane's extents, which for image extents known only at run time are vector divisions.
    Halide::Var q("q"), ph("ph"), c("c"), n("n");
    planes = Halide::Func("conv_phases");
    // With one or two spatial dims, only the halo is zeroed (halo_zeros), not the whole plane before
    // the interior is copied over it: every element is written once.
    const bool halo = sp <= 2;
    planes(q, ph, c, n) = halo ? Halide::undef<float>() : Halide::Expr(0.0f);
    std::vector<std::function<void()>> zeroed;
    for (int f = 0; f < phases; ++f) {
      std::vector<int32_t> digit(sp);  // the phase per dim; the last dim's varies fastest (as in tap())
      for (int s = sp - 1, rest = f; s >= 0; --s) digit[s] = rest % strides[s], rest /= strides[s];
      // Only phases some tap reads: a strided 1×1 conv reads one of its stride² planes.
      bool read = true;
      for (int s = 0; s < sp; ++s) {
        bool any = false;
        for (int64_t r = 0; r < win.kernel[s]; ++r) any |= (r * dilations[s]) % strides[s] == digit[s];
        read &= any;
      }
      if (!read) continue;
      std::vector<Halide::Range> ranges;
      std::vector<Halide::Expr> first(sp);
      for (int s = sp - 1; s >= 0; --s) {
        Halide::Expr lead = win.pad_begin[s] - digit[s];  // j·stride >= lead, and j·stride <= extent − 1 + lead
        first[s] = Halide::max(0, (lead + strides[s] - 1) / strides[s]);
        Halide::Expr last = Halide::min(plane[s] - 1, (x.shape[s + 2] - 1 + lead) / strides[s]);
        ranges.emplace_back(Halide::Internal::simplify(first[s]), Halide::Internal::simplify(Halide::max(0, last - first[s] + 1)));
      }
      Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()), "plane" + std::to_string(f));
      Index xi = {n, c};
      Halide::Expr flat = 0;
      for (int s = 0; s < sp; ++s) {
        Halide::Expr j = r[sp - 1 - s];
        flat = flat * plane[s] + j;
        xi.push_back(j * strides[s] + digit[s] - win.pad_begin[s]);
      }
      planes(flat, f, c, n) = x.at(xi);
      interiors.push_back(r);
      if (halo) zeroed.push_back([this, f, first, ranges] { halo_zeros(f, first, ranges); });
    }
    // After the copies, so that update i < the phases read is still phase i's interior.
    copies = interiors.size();
    for (auto& z : zeroed) z();
  }

  // Zeros around phase f's interior (first coordinate per dim, `ranges` innermost first), in flat
  // plane coordinates: before its first row, between its rows (the columns of the left and right
  // pads), and after its last row, past the plane's end by kTail floats. Kept output pixels read
  // only inside the plane; the tail covers what the last pixel panels and taps of dropped pixels
  // read, most of it, so that they do not read stale memory.
  void halo_zeros(int f, const std::vector<Halide::Expr>& first, const std::vector<Halide::Range>& ranges) {
    constexpr int32_t kTail = 16;
    const bool two = ranges.size() == 2;
    const Halide::Expr width = plane.back(), cols = ranges[0].extent, c0 = first.back();
    const Halide::Expr r0 = two ? first[0] : Halide::Expr(0), rows = two ? ranges[1].extent : Halide::Expr(1);
    const Halide::Expr total = two ? plane[0] * width : width;
    const Halide::Expr empty = cols <= 0 || rows <= 0;
    auto simp = [](const Halide::Expr& e) { return Halide::Internal::simplify(e); };
    const Halide::Expr head = simp(Halide::select(empty, 0, r0 * width + c0));
    const Halide::Expr tail = simp(Halide::select(empty, 0, (r0 + rows - 1) * width + c0 + cols));
    Halide::Var c = planes.args()[2], n = planes.args()[3];
    Halide::RDom before(0, head, "halo_head" + std::to_string(f));
    planes(before.x, f, c, n) = 0.0f;
    Halide::RDom gaps({{0, simp(width - cols)}, {0, simp(Halide::select(empty, 0, rows - 1))}}, "halo_gap" + std::to_string(f));
    planes((r0 + gaps.y) * width + c0 + cols + gaps.x, f, c, n) = 0.0f;
    Halide::RDom after(tail, simp(total + kTail - tail), "halo_tail" + std::to_string(f));
    planes(after.x, f, c, n) = 0.0f;
    interiors.insert(interiors.end(), {before, gaps, after});
  }

  // The element tap `taps` (per spatial dim) of channel c reads for grid pixel p of image n.
  Halide::Expr tap(const std::vector<Halide::Expr>& taps, const Halide::Expr& p, const Halide::Expr& c, const Halide::Expr& n) const {
    Halide::Expr shift = 0, phase = 0, qstride = 1, pstride = 1;
    for (int s = static_cast<int>(taps.size()) - 1; s >= 0; --s) {
      Halide::Expr j = taps[s] * dilations[s];
      shift = shift + (j / strides[s]) * qstride;
      phase = phase + (j % strides[s]) * pstride;
      qstride = qstride * plane[s];
      pstride = pstride * strides[s];
    }
    return planes(p + shift, phase, c, n);
  }

  // The grid pixel of output index `o` ([n, m, spatial..]).
  Halide::Expr pixel(const Index& o) const {
    Halide::Expr flat = o[2];
    for (size_t s = 1; s < grid.size(); ++s) flat = flat * grid[s] + o[s + 2];
    return flat;
  }
};

}  // namespace onnxc::codegen
