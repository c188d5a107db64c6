// ai.onnx.ml ops that are plain tensor arithmetic: Binarizer (1 where x > threshold, else 0, in x's
// type; NaN gives 0) and ArrayFeatureExtractor (x's last axis gathered at the flat indices; an index
// out of range reads the nearest end, where ONNX Runtime fails the run).
#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

std::vector<HTensor> binarizer(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  Halide::Type t = halide_type(x.dtype);
  Expr threshold(static_cast<double>(ctx.node.attr_float("threshold", 0.0f)));
  return {define("Binarizer", x.shape, out_dtype(ctx), [&](const Index& i) {
    return Halide::select(Halide::cast<double>(x.at(i)) > threshold, literal(t, 1), literal(t, 0));
  })};
}

std::vector<HTensor> array_feature_extractor(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const HTensor& idx = ctx.in[1];
  const auto& shape = out_shape(ctx);
  Expr last = x.shape[x.rank() - 1];
  return {define("ArrayFeatureExtractor", shape, out_dtype(ctx), [&](const Index& o) {
    // The flat index j into the indices tensor, as its own coordinates (row-major).
    Expr j = o.back();
    Index ii(idx.rank());
    for (int a = idx.rank() - 1; a >= 0; --a) {
      ii[a] = j % idx.shape[a];
      j = j / idx.shape[a];
    }
    Expr k = Halide::cast<int32_t>(idx.rank() == 0 ? idx.func() : idx.at(ii));
    k = Halide::clamp(Halide::select(k < 0, k + last, k), 0, last - 1);
    Index xi;
    if (x.rank() > 1) xi.assign(o.begin(), o.end() - 1);
    xi.push_back(k);
    return x.at(xi);
  })};
}

Registrar reg_Binarizer("ai.onnx.ml", "Binarizer", KernelClass::Elementwise, binarizer);
Registrar reg_ArrayFeatureExtractor("ai.onnx.ml", "ArrayFeatureExtractor", KernelClass::Elementwise, array_feature_extractor);

}  // namespace

}  // namespace onnxc::codegen
