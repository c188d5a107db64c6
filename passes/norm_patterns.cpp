// Shared pieces of the normalization fusions (see norm_patterns.h).
#include "passes/norm_patterns.h"

namespace onnxc::passes {
namespace {

using namespace pat;

// p's dims without leading 1s beyond the last k (a constant [1,1,64] scale is a [64] scale).
ir::Shape trailing(const ir::Shape& s, int64_t k) {
  size_t lead = 0;
  while (s.size() - lead > static_cast<size_t>(k) && s[lead] == ir::Dim(1)) ++lead;
  return ir::Shape(s.begin() + static_cast<std::ptrdiff_t>(lead), s.end());
}

std::string check_param(const ir::Value* p, const ir::Value* x, int64_t k, const std::string& what) {
  if (p->dtype() != x->dtype()) return what + " '" + p->name() + "' has another dtype than the input";
  if (!p->shape() || !x->shape()) return what + " '" + p->name() + "' or the input has an unknown shape";
  const ir::Shape& ps = *p->shape();
  const ir::Shape& xs = *x->shape();
  ir::Shape tail = trailing(ps, k);
  if (ps.size() > xs.size()) return what + " '" + p->name() + "' broadcasts the input to a higher rank";
  if (tail.size() != ps.size() && !p->is_constant())
    return what + " '" + p->name() + "' has leading 1s and is not a constant";
  ir::Shape want(xs.end() - k, xs.end());
  if (tail != want)
    return what + " '" + p->name() + "' " + ir::shape_str(ps) + " is not over the normalized dims " +
           ir::shape_str(want);
  return "";
}

ir::Value* param(const Match& m, RewriteBuilder& b, const std::string& name, int64_t k) {
  ir::Value* p = m[name];
  ir::Shape tail = trailing(*p->shape(), k);
  if (tail.size() == p->shape()->size()) return p;
  return b.constant(p->constant().reshaped(*ir::shape_as_ints(tail)), p->name());
}

}  // namespace

Pattern norm_input() {
  Pattern x = any().capture("x");
  return alt({x, op("Cast", {x})}).capture("xf");
}

Pattern cast_back(const Pattern& core) { return optional_op("Cast", core); }

std::string check_casts(const Match& m) {
  const ir::Value* x = m["x"];
  if (m["normed"]->dtype() != x->dtype()) return "the normalized value is not cast back to the input's dtype";
  if (!ir::dtype_is_float(m["xf"]->dtype())) return "the input is cast to a non-float type";
  return "";
}

Pattern with_affine(const Pattern& core, bool bias) {
  Pattern normed = core.capture("normed");
  Pattern scaled = op("Mul", {normed, any().capture("scale")});
  if (!bias) return alt({scaled, normed});
  Pattern b = any().capture("bias");
  return alt({op("Add", {scaled, b}), scaled, op("Add", {normed, b}), normed});
}

std::string check_norm_affine(const Match& m, const FusionContext& /*c*/, const ir::Value* x, int64_t k) {
  if (!x->shape() || static_cast<int64_t>(x->shape()->size()) < k) return "the input's rank is unknown";
  for (const char* name : {"scale", "bias"}) {
    if (!m.has(name)) continue;
    std::string why = check_param(m[name], x, k, name);
    if (!why.empty()) return why;
  }
  if (!m.has("scale")) {
    ir::Shape want(x->shape()->end() - k, x->shape()->end());
    if (!ir::shape_is_static(want)) return "no scale, and the normalized dims " + ir::shape_str(want) + " are not static";
  }
  if (!ir::dtype_is_float(x->dtype())) return "the input is not floating point";
  return "";
}

std::vector<ir::Value*> norm_affine_inputs(const Match& m, RewriteBuilder& b, ir::Value* x, int64_t k, bool with_bias) {
  std::vector<ir::Value*> in = {x};
  if (m.has("scale")) {
    in.push_back(param(m, b, "scale", k));
  } else {
    std::vector<int64_t> dims = *ir::shape_as_ints(ir::Shape(x->shape()->end() - k, x->shape()->end()));
    in.push_back(b.filled(x->dtype(), dims, 1.0, x->name() + "_norm_scale"));
  }
  if (with_bias && m.has("bias")) in.push_back(param(m, b, "bias", k));
  return in;
}

float eps_of(const Match& m) { return static_cast<float>(m["eps"]->constant().get_f64(0)); }

}  // namespace onnxc::passes
