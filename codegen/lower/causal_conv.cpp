// CausalConvWithState (opset 27): a depthwise causal 1-D convolution that carries the last k - 1 inputs
// between calls (state-space and linear-attention models' short convolution). With P = past_state
// (zeros when absent) and X the input [B, C, L], over padded = concat(P, X) along time:
//   output[b, c, t]        = act(sum_j weight[c, 0, j] * padded[b, c, t + j] + bias[c])
//   present_state[b, c, s] = padded[b, c, L + s],  s < k - 1
// act is none or SiLU ("silu", "swish"). As ONNX's reference, the convolution is rounded to the input's
// type before the activation, which is computed in float32.
#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

std::vector<HTensor> causal_conv_with_state(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const HTensor& w = ctx.in[1];
  user_check(x.rank() == 3 && w.rank() == 3)
      << ctx.node.describe() << ": CausalConvWithState needs input [B, C, L] and weight [C, 1, k]";
  std::string act = ctx.node.attr_string("activation", "none");
  user_check(act == "none" || act == "silu" || act == "swish")
      << ctx.node.describe() << ": activation '" << act << "' is not none, silu or swish";
  bool has_past = has_input(ctx, 3), has_bias = has_input(ctx, 2);
  Expr k = w.shape[2], len = x.shape[2];
  Halide::Type xt = halide_type(x.dtype), at = accumulator_type(xt);
  // padded[b, c, p]: the past state for p < k - 1, then the input.
  auto padded = [&](const Expr& b, const Expr& c, const Expr& p) {
    Expr from_x = x.at({b, c, Halide::clamp(p - (k - 1), 0, len - 1)});
    Expr from_past = has_past ? ctx.in[3].at({b, c, Halide::clamp(p, 0, Halide::max(k - 2, 0))})
                              : Halide::Internal::make_zero(xt);
    return Halide::select(p < k - 1, from_past, from_x);
  };
  Halide::RDom j(0, k);
  HTensor y = define("CausalConvWithState", out_shape(ctx, 0), out_dtype(ctx, 0), [&](const Index& o) {
    Expr sum = Halide::sum(Halide::cast(at, w.at({o[1], Expr(0), j})) * Halide::cast(at, padded(o[0], o[1], o[2] + j)));
    if (has_bias) sum = sum + Halide::cast(at, ctx.in[2].at({o[1]}));
    Expr conv = Halide::cast(xt, sum);
    if (act == "none") return conv;
    Expr v = Halide::cast<float>(conv);
    return Halide::cast(xt, v * (1.0f / (1.0f + exp_ieee(-v))));
  });
  std::vector<HTensor> outs = {y};
  if (ctx.node.num_outputs() > 1 && ctx.node.output(1))
    outs.push_back(define("present_state", out_shape(ctx, 1), out_dtype(ctx, 1),
                          [&](const Index& o) { return padded(o[0], o[1], len + o[2]); }));
  return outs;
}

Registrar reg_CausalConvWithState("", "CausalConvWithState", KernelClass::Elementwise, causal_conv_with_state);

}  // namespace

}  // namespace onnxc::codegen
