// Convolution schedules (see conv.h).
#include "codegen/schedule/conv.h"

#include <algorithm>

#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

using namespace Halide;

namespace {

// The input planes' loops inside whatever loop they are computed at: the zero fill and the row
// writes vectorized. The rows of a plane are disjoint (the flat index is injective in the
// coordinates), which Halide cannot prove for extents known only at run time.
void vectorize_planes(Func planes, const RDom& rows, int vec) {
  planes.vectorize(planes.args()[0], vec, TailStrategy::GuardWithIf);
  planes.update().allow_race_conditions().vectorize(rows[0], vec, TailStrategy::GuardWithIf);
}

}  // namespace

// Loop nest of gemm (outermost first):
//   parallel task over (group of row blocks, panel of `width` pixels, image)
//     for each register block of `rows` output channels:
//       acc block (rows × width) = 0; for k: rows × width/vec FMAs in registers; store
// A task covers every output channel when there are panels enough for the threads; a late layer
// has one or two panels (7×7 = 49 pixels) and hundreds of channels, so its channels are split in
// groups until there are about kTasks tasks per image.
void schedule_conv_gemm(ConvGemmFuncs g, Func output, const Target& t) {
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
      .split(p, po, pi, width, TailStrategy::GuardWithIf)
      .split(m, mo, mi, rows, TailStrategy::GuardWithIf)
      .split(mo, mb, mo, tiles, TailStrategy::GuardWithIf)
      .reorder(pi, mi, mo, mb, po, n)
      .vectorize(pi, vec)
      .fuse(mb, po, tp)
      .fuse(tp, n, task)
      .parallel(task);

  place_register_block(g.acc, g.k, gemm, mo, width, rows, vec);
  Var c = g.input.args()[2], in = g.input.args()[3], ch("conv_ch");
  g.input.compute_root().fuse(c, in, ch).parallel(ch);
  g.input.update().fuse(c, in, ch).parallel(ch);
  vectorize_planes(g.input, g.input_rows, vec);
  schedule_output(output, KernelClass::Elementwise, t);
}

void schedule_depthwise(Func planes, const RDom& rows, Func acc, const RDom& r, const Expr& pixels, Func output, const Target& t) {
  const int vec = t.natural_vector_size<float>();
  Var p = acc.args()[0], c = acc.args()[1], n = acc.args()[2];
  Var task("dw_task"), po("dw_po"), pi("dw_pi");
  acc.compute_root().bound(p, 0, pixels).fuse(c, n, task).parallel(task).vectorize(p, vec, TailStrategy::GuardWithIf);
  std::vector<VarOrRVar> order = {pi};
  for (int i = 0; i < r.dimensions(); ++i) order.push_back(r[i]);
  order.insert(order.end(), {po, task});
  Stage s = acc.update();
  s.fuse(c, n, task).split(p, po, pi, vec, TailStrategy::GuardWithIf).reorder(order).vectorize(pi).parallel(task);
  int taps = 1;
  for (int i = 0; i < r.dimensions(); ++i) taps *= *Internal::as_const_int(r[i].extent());
  // Up to 7×7 windows unroll into one register sum per vector; larger ones loop.
  if (taps <= 49)
    for (int i = 0; i < r.dimensions(); ++i) s.unroll(r[i]);
  planes.compute_at(acc, task);
  vectorize_planes(planes, rows, vec);
  schedule_output(output, KernelClass::Elementwise, t);
}

}  // namespace onnxc::codegen
