// The optimizer steps of ai.onnx.preview.training: Adagrad, Adam and Momentum update n tensors at
// once, elementwise. Inputs are R (learning rate) and T (step count), scalars read at run time, then
// the lists X, G and the optimizer's state (H; V; V and H), n tensors each; output list j is the new
// value of input list j (X first, then the state). Arithmetic follows the ONNX reference: in the
// tensors' type, except the step-size factors of R and T, which are formed in double as NumPy does
// with Python scalars, then rounded once.
#include "codegen/lower/lower.h"
#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {
namespace {

using namespace Halide;

constexpr const char* kTraining = "ai.onnx.preview.training";

// One element of every list for tensor i, and the step's results for it in output-list order.
using Step = std::function<std::vector<Expr>(const std::vector<Expr>& lists)>;

// Applies `step` to each of the n tensors; `lists` counts the input lists after R and T.
std::vector<HTensor> update_all(LowerContext& ctx, int lists, const Step& step) {
  const ir::Node& node = ctx.node;
  const int n = (static_cast<int>(ctx.in.size()) - 2) / lists;
  user_check(n > 0 && static_cast<int>(ctx.in.size()) == 2 + lists * n)
      << node.describe() << ": expects R, T and " << lists << " equally long lists of tensors, got "
      << ctx.in.size() << " inputs";
  const int outs = static_cast<int>(node.num_outputs());
  user_check(outs % n == 0 && outs / n <= lists) << node.describe() << ": " << outs << " outputs for " << n << " tensors";
  std::vector<HTensor> result(static_cast<size_t>(outs));
  for (int i = 0; i < n; ++i) {
    const HTensor& x = ctx.in[2 + i];
    user_check(halide_type(x.dtype).is_float()) << node.describe() << ": X must be a float tensor";
    for (int l = 1; l < lists; ++l)
      user_check(ctx.in[2 + l * n + i].dtype == x.dtype && ctx.in[2 + l * n + i].rank() == x.rank())
          << node.describe() << ": list " << l << "'s tensor " << i << " does not match X's type and rank";
    for (int o = 0; o < outs / n; ++o) {
      const int out = o * n + i;
      result[static_cast<size_t>(out)] = define(node.output(out)->name(), out_shape(ctx, out), x.dtype, [&](const Index& idx) {
        std::vector<Expr> e;
        for (int l = 0; l < lists; ++l) e.push_back(ctx.in[2 + l * n + i].at(idx));
        return step(e)[static_cast<size_t>(o)];
      });
    }
  }
  return result;
}

Expr rate(LowerContext& ctx) { return cast<double>(element(ctx, 0, 0)); }
Expr step_count(LowerContext& ctx) { return cast<int64_t>(element(ctx, 1, 0)); }

// X_new = X - r·G' / (sqrt(H_new) + ε), H_new = H + G'², G' = λ·X + G, r = R / (1 + T·decay).
std::vector<HTensor> lower_adagrad(LowerContext& ctx) {
  const ir::Node& n = ctx.node;
  const double decay = n.attr_float("decay_factor", 0.0), eps = n.attr_float("epsilon", 1e-6f);
  const double lambda = n.attr_float("norm_coefficient", 0.0);
  Expr r = rate(ctx) / (Expr(1.0) + cast<double>(step_count(ctx)) * Expr(decay));
  return update_all(ctx, 3, [&](const std::vector<Expr>& v) {
    const Expr &x = v[0], &g = v[1], &h = v[2];
    Expr gr = literal(x.type(), lambda) * x + g;
    Expr h_new = h + gr * gr;
    Expr x_new = x - cast(x.type(), r) * gr / (sqrt(h_new) + literal(x.type(), eps));
    return std::vector<Expr>{x_new, h_new};
  });
}

// V_new = α·V + β'·G' (β' = β after the first step, 1 at T = 0), G' = λ·X + G;
// X_new = X - R·V_new (standard) or X - R·(G' + α·V_new) (nesterov).
std::vector<HTensor> lower_momentum(LowerContext& ctx) {
  const ir::Node& n = ctx.node;
  const std::string mode = n.attr_string("mode", "standard");
  user_check(mode == "standard" || mode == "nesterov") << n.describe() << ": mode '" << mode << "' is not standard or nesterov";
  const double alpha = n.attr_float("alpha", 0.0), beta = n.attr_float("beta", 0.0);
  const double lambda = n.attr_float("norm_coefficient", 0.0);
  Expr r = rate(ctx), t = step_count(ctx);
  return update_all(ctx, 3, [&](const std::vector<Expr>& v) {
    const Expr &x = v[0], &g = v[1], &vel = v[2];
    Type ty = x.type();
    Expr gr = literal(ty, lambda) * x + g;
    Expr v_new = literal(ty, alpha) * vel + select(t > 0, literal(ty, beta), literal(ty, 1.0)) * gr;
    Expr dir = mode == "nesterov" ? gr + literal(ty, alpha) * v_new : v_new;
    return std::vector<Expr>{x - cast(ty, r) * dir, v_new};
  });
}

// V_new = α·V + (1-α)·G', H_new = β·H + (1-β)·G'², G' = λ·X + G;
// X_new = (1 - λ_post)·(X - R'·V_new / (sqrt(H_new) + ε)), R' = R·sqrt(1-β^T)/(1-α^T) after step 0.
std::vector<HTensor> lower_adam(LowerContext& ctx) {
  const ir::Node& n = ctx.node;
  const double alpha = n.attr_float("alpha", 0.9f), beta = n.attr_float("beta", 0.999f);
  const double eps = n.attr_float("epsilon", 1e-6f), lambda = n.attr_float("norm_coefficient", 0.0);
  const double post = n.attr_float("norm_coefficient_post", 0.0);
  Expr r = rate(ctx), t = step_count(ctx);
  Expr td = cast<double>(t);
  Expr one(1.0);
  Expr r_adj = select(t > 0, r * sqrt(one - pow(Expr(beta), td)) / (one - pow(Expr(alpha), td)), r);
  return update_all(ctx, 4, [&](const std::vector<Expr>& v) {
    const Expr &x = v[0], &g = v[1], &vel = v[2], &h = v[3];
    Type ty = x.type();
    Expr gr = literal(ty, lambda) * x + g;
    Expr v_new = literal(ty, alpha) * vel + literal(ty, 1.0 - alpha) * gr;
    Expr h_new = literal(ty, beta) * h + literal(ty, 1.0 - beta) * (gr * gr);
    Expr x_new = x - cast(ty, r_adj) * (v_new / (sqrt(h_new) + literal(ty, eps)));
    return std::vector<Expr>{literal(ty, 1.0 - post) * x_new, v_new, h_new};
  });
}

const Registrar kAdagrad(kTraining, "Adagrad", KernelClass::Elementwise, lower_adagrad);
const Registrar kMomentum(kTraining, "Momentum", KernelClass::Elementwise, lower_momentum);
const Registrar kAdam(kTraining, "Adam", KernelClass::Elementwise, lower_adam);

}  // namespace
}  // namespace onnxc::codegen
