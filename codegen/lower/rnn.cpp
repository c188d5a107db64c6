// Recurrent layers RNN, GRU and LSTM as one kernel each: the input projection of every time step is
// one GEMM (XW), then a single state Func S is stepped through time by one update definition whose
// reduction domain walks (unit, k, phase, step): each step runs the cell's phases in order
// (accumulate gate rows of R·h, activate, combine), so later phases see earlier phases' results.
#include <algorithm>
#include <cctype>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/rnn.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// One activation of the cell with the alpha/beta it consumed (ONNX defaults where none were given).
struct Activation {
  std::string name;  // lower case
  float alpha = 0, beta = 0;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// How many of activation_alpha / activation_beta an activation consumes, and their defaults.
struct ActivationParams {
  int n_alpha, n_beta;
  float alpha, beta;
};

std::optional<ActivationParams> activation_params(const std::string& n) {
  if (n == "relu" || n == "tanh" || n == "sigmoid" || n == "softsign" || n == "softplus") return ActivationParams{0, 0, 0, 0};
  if (n == "affine") return ActivationParams{1, 1, 1.0f, 0.0f};
  if (n == "leakyrelu") return ActivationParams{1, 0, 0.01f, 0};
  if (n == "thresholdedrelu") return ActivationParams{1, 0, 1.0f, 0};
  if (n == "scaledtanh") return ActivationParams{1, 1, 1.0f, 1.0f};
  if (n == "hardsigmoid") return ActivationParams{1, 1, 0.2f, 0.5f};
  if (n == "elu") return ActivationParams{1, 0, 1.0f, 0};
  return std::nullopt;
}

// The activations per direction: `per_dir` functions each, given or the op's defaults. alpha and
// beta values are consumed in order by the activations that take them.
std::vector<std::vector<Activation>> read_activations(const ir::Node& node, int dirs, const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  for (const auto& a : node.attributes())
    if (a.name == "activations") names = a.strings;
  int per_dir = static_cast<int>(defaults.size());
  if (names.empty())
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  // A unidirectional list given to a bidirectional layer serves both directions.
  if (static_cast<int>(names.size()) == per_dir && dirs == 2) names.insert(names.end(), names.begin(), names.end());
  user_check(static_cast<int>(names.size()) == per_dir * dirs)
      << node.describe() << ": expected " << per_dir * dirs << " activations, got " << names.size();
  std::vector<float> alphas = node.attr_floats("activation_alpha"), betas = node.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<std::vector<Activation>> r(dirs);
  for (size_t i = 0; i < names.size(); ++i) {
    Activation a{lower(names[i])};
    auto p = activation_params(a.name);
    user_check(p.has_value()) << node.describe() << ": activation '" << names[i] << "' is not supported";
    a.alpha = p->alpha;
    a.beta = p->beta;
    if (p->n_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (p->n_beta && bi < betas.size()) a.beta = betas[bi++];
    r[i / per_dir].push_back(a);
  }
  return r;
}

Expr apply(const Activation& a, Expr x) {
  Halide::Type t = x.type();
  auto c = [&](float v) { return literal(t, v); };
  const std::string& n = a.name;
  if (n == "relu") return Halide::max(x, c(0));
  if (n == "tanh") return tanh_ieee(x);
  if (n == "sigmoid") return c(1) / (c(1) + exp_ieee(-x));
  if (n == "affine") return c(a.alpha) * x + c(a.beta);
  if (n == "leakyrelu") return Halide::select(x >= c(0), x, c(a.alpha) * x);
  if (n == "thresholdedrelu") return Halide::select(x > c(a.alpha), x, c(0));
  if (n == "scaledtanh") return c(a.alpha) * tanh_ieee(c(a.beta) * x);
  if (n == "hardsigmoid") return Halide::clamp(c(a.alpha) * x + c(a.beta), c(0), c(1));
  if (n == "elu") return Halide::select(x >= c(0), x, c(a.alpha) * (exp_ieee(x) - c(1)));
  if (n == "softsign") return x / (c(1) + Halide::abs(x));
  if (n == "softplus") return log_ieee(c(1) + exp_ieee(x));
  internal_error << "unknown activation " << n;
}

enum class Cell { RNN, GRU, LSTM };

// One phase of a time step. Accumulate: S(row0 + u, PRE) = base(u) + Σ_k R(row0 + u, k)·v(k) for
// u < n. Set: S(row0 + u, slot) = value(u) for u < n.
struct Phase {
  bool accumulate = false;
  int slot = 0, row0 = 0, n = 0;
  std::function<Expr(Expr)> v;      // accumulate: the vector R's rows are multiplied with
  std::function<Expr(Expr)> value;  // set: the new value of unit u
};

constexpr int kPre = 0, kH = 1, kC = 2;  // state slots: gate pre-activations, hidden, cell

class RecurrentLowering {
 public:
  RecurrentLowering(LowerContext& ctx, Cell cell) : ctx_(ctx), node_(ctx.node), cell_(cell) {}

  std::vector<HTensor> run() {
    read_attributes();
    define_projection();
    define_state();
    return outputs();
  }

 private:
  void read_attributes() {
    const HTensor& x = ctx_.in[0];
    user_check(x.rank() == 3) << node_.describe() << ": X must be 3-D";
    batch_first_ = node_.attr_int("layout", 0) != 0;
    std::string dir = node_.attr_string("direction", "forward");
    user_check(dir == "forward" || dir == "reverse" || dir == "bidirectional")
        << node_.describe() << ": unknown direction '" << dir << "'";
    dirs_ = dir == "bidirectional" ? 2 : 1;
    reverse_only_ = dir == "reverse";
    gates_ = cell_ == Cell::RNN ? 1 : cell_ == Cell::GRU ? 3 : 4;
    const HTensor& r = ctx_.in[2];
    user_check(r.rank() == 3 && Halide::Internal::as_const_int(r.shape[2]))
        << node_.describe() << ": R must be 3-D with a static hidden size";
    const int64_t r_hidden = *Halide::Internal::as_const_int(r.shape[2]);
    hidden_ = static_cast<int>(node_.attr_int("hidden_size", r_hidden));
    user_check(hidden_ == r_hidden) << node_.describe() << ": hidden_size " << hidden_ << " does not match R's last dim "
                                    << r_hidden;
    seq_ = x.shape[batch_first_ ? 1 : 0];
    batch_ = x.shape[batch_first_ ? 0 : 1];
    clip_ = node_.attr_float("clip", 0.0f);
    lbr_ = node_.attr_int("linear_before_reset", 0) != 0;
    input_forget_ = node_.attr_int("input_forget", 0) != 0;
    std::vector<std::string> defaults = cell_ == Cell::RNN   ? std::vector<std::string>{"Tanh"}
                                        : cell_ == Cell::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    acts_ = read_activations(node_, dirs_, defaults);
    type_ = accumulator_type(halide_type(x.dtype));
  }

  Expr f32(Expr e) const { return Halide::cast(type_, e); }
  Expr zero() const { return Halide::Internal::make_zero(type_); }
  Expr one() const { return literal(type_, 1.0); }

  // Activation `which` (0 = f, 1 = g, 2 = h) of direction d, applied to x after the clip.
  Expr act(int which, const Expr& d, Expr x) const {
    if (clip_ > 0) x = Halide::clamp(x, literal(type_, -clip_), literal(type_, clip_));
    Expr r = apply(acts_[0][which], x);
    if (dirs_ == 2 && (acts_[1][which].name != acts_[0][which].name || acts_[1][which].alpha != acts_[0][which].alpha ||
                       acts_[1][which].beta != acts_[0][which].beta))
      r = Halide::select(d == 0, r, apply(acts_[1][which], x));
    return r;
  }

  Expr bias(int k, const Expr& d, const Expr& u) const {  // B[d, k*G*H + u], 0 without B
    if (!has_input(ctx_, 3)) return zero();
    return f32(ctx_.in[3].at({d, Expr(k * gates_ * hidden_) + u}));
  }

  Expr seq_len(const Expr& b) const {
    if (!has_input(ctx_, 4)) return seq_;
    return Halide::clamp(Halide::cast<int32_t>(ctx_.in[4].at({b})), 0, seq_);
  }

  // Time index processed at step s of direction d (reverse directions walk each sequence backwards
  // from its own last element), clamped into range for the steps past a sequence's end.
  Expr time_at(const Expr& s, const Expr& b, const Expr& d) const {
    Expr rev = reverse_only_ ? Halide::Internal::const_true() : dirs_ == 2 ? d == 1 : Halide::Internal::const_false();
    Expr t = Halide::select(rev, seq_len(b) - 1 - s, s);
    return Halide::clamp(t, 0, seq_ - 1);
  }

  Expr initial(int input, const Expr& u, const Expr& b, const Expr& d) const {
    if (!has_input(ctx_, input)) return zero();
    const HTensor& t = ctx_.in[input];
    Expr j = Halide::min(u, hidden_ - 1);  // the state Func spans all gate rows; only [0, H) is read
    return f32(batch_first_ ? t.at({b, d, j}) : t.at({d, b, j}));
  }

  // Input `in` ([dirs, rows, k]) as a Func over (row, k, d), rows innermost. A constant float32
  // weight is transposed once at compile time (`is_const`); otherwise the kernel copies it.
  Func transposed(int in, const std::string& name, bool& is_const) {
    const HTensor& w = ctx_.in[in];
    const ir::Tensor* c = ctx_.const_in[in];
    Var u("u"), k("k"), d("d");
    Func f(name);
    is_const = c && c->dtype() == ir::DType::Float32 && c->rank() == 3 && type_ == Halide::Float(32);
    if (!is_const) {
      f(u, k, d) = f32(w.at({d, u, k}));
      return f;
    }
    const auto& dims = c->dims();
    ir::Tensor t(ir::DType::Float32, {dims[0], dims[2], dims[1]});
    const float* src = static_cast<const float*>(c->raw());
    float* dst = t.mutable_data<float>();
    for (int64_t dd = 0; dd < dims[0]; ++dd)
      for (int64_t r = 0; r < dims[1]; ++r)
        for (int64_t kk = 0; kk < dims[2]; ++kk)
          dst[(dd * dims[2] + kk) * dims[1] + r] = src[(dd * dims[1] + r) * dims[2] + kk];
    HTensor ht = ctx_.add_constant(name, std::move(t));
    f(u, k, d) = ht.at({d, k, u});
    return f;
  }

  // XW(u, b, t, d) = Σ_i X(t, b, i)·W(d, u, i) + Wb(d, u): the input projection of every step.
  void define_projection() {
    const HTensor& x = ctx_.in[0];
    Expr in_size = x.shape[2];
    Var u("u"), b("b"), t("t"), d("d");
    Halide::RDom i(0, in_size, "i");
    xw_ = Func("rnn_xw");
    xw_(u, b, t, d) = bias(0, d, u);
    Expr xv = batch_first_ ? x.at({b, t, i.x}) : x.at({t, b, i.x});
    // W and R transposed (units innermost), so both products read neighbouring units from
    // neighbouring addresses.
    wt_ = transposed(1, "rnn_wt", w_const_);
    xw_(u, b, t, d) += f32(xv) * wt_(u, i.x, d);
    rt_ = transposed(2, "rnn_rt", r_const_);
    proj_vars_ = {u, b, t, d};
    proj_r_ = i;
  }

  Expr pre(const Expr& row, const Expr& b, const Expr& d, const Expr& s1) const { return s_(row, kPre, b, d, s1); }

  std::vector<Phase> phases(const Expr& b, const Expr& d, const Expr& s) {
    const int h = hidden_;
    Expr s1 = s + 1, t = time_at(s, b, d), valid = s < seq_len(b);
    auto h_prev = [=, this](Expr k) { return s_(k, kH, b, d, s); };
    auto c_prev = [=, this](Expr k) { return s_(k, kC, b, d, s); };
    auto xw = [=, this](Expr row) { return xw_(row, b, t, d); };
    auto peep = [=, this](int k, Expr u) {
      return has_input(ctx_, 7) ? f32(ctx_.in[7].at({d, Expr(k * h) + u})) : zero();
    };
    std::vector<Phase> ps;
    switch (cell_) {
      case Cell::RNN:
        ps.push_back({true, kPre, 0, h, h_prev, {}});
        ps.push_back({false, kH, 0, h, {}, [=, this](Expr u) {
                        return Halide::select(valid, act(0, d, pre(u, b, d, s1)), h_prev(u));
                      }});
        break;
      case Cell::GRU: {
        // z, r, h gates. Without linear_before_reset the h gate multiplies r⊙h by R_h, so r is
        // activated in place before the h rows accumulate.
        auto combine = [=, this](Expr u, Expr hh) {
          Expr z = act(0, d, pre(u, b, d, s1));
          return Halide::select(valid, (one() - z) * hh + z * h_prev(u), h_prev(u));
        };
        if (lbr_) {
          ps.push_back({true, kPre, 0, 3 * h, h_prev, {}});
          ps.push_back({false, kH, 0, h, {}, [=, this](Expr u) {
                          Expr r = act(0, d, pre(u + h, b, d, s1));
                          return combine(u, act(1, d, xw(u + 2 * h) + r * pre(u + 2 * h, b, d, s1)));
                        }});
        } else {
          ps.push_back({true, kPre, 0, 2 * h, h_prev, {}});
          ps.push_back({false, kPre, h, h, {}, [=, this](Expr u) { return act(0, d, pre(u + h, b, d, s1)); }});
          ps.push_back({true, kPre, 2 * h, h, [=, this](Expr k) { return pre(k + h, b, d, s1) * h_prev(k); }, {}});
          ps.push_back({false, kH, 0, h, {}, [=, this](Expr u) { return combine(u, act(1, d, pre(u + 2 * h, b, d, s1))); }});
        }
        break;
      }
      case Cell::LSTM: {
        // Gates i, o, f, c; peepholes i, o, f. C_t first, then H_t (its o gate peeks at C_t).
        ps.push_back({true, kPre, 0, 4 * h, h_prev, {}});
        ps.push_back({false, kC, 0, h, {}, [=, this](Expr u) {
                        Expr i = act(0, d, pre(u, b, d, s1) + peep(0, u) * c_prev(u));
                        Expr f = input_forget_ ? one() - i : act(0, d, pre(u + 2 * h, b, d, s1) + peep(2, u) * c_prev(u));
                        Expr g = act(1, d, pre(u + 3 * h, b, d, s1));
                        return Halide::select(valid, f * c_prev(u) + i * g, c_prev(u));
                      }});
        ps.push_back({false, kH, 0, h, {}, [=, this](Expr u) {
                        Expr c = s_(u, kC, b, d, s1);
                        Expr o = act(0, d, pre(u + h, b, d, s1) + peep(1, u) * c);
                        return Halide::select(valid, o * act(2, d, c), h_prev(u));
                      }});
        break;
      }
    }
    return ps;
  }

  // Each accumulate phase starts with a set phase that writes its rows' base (XW + Rb), so the
  // multiply-add loop itself is a plain S += R·v.
  std::vector<Phase> expand(std::vector<Phase> ps, const Expr& b, const Expr& d, const Expr& s) {
    std::vector<Phase> out;
    for (Phase& ph : ps) {
      if (ph.accumulate) {
        int row0 = ph.row0;
        out.push_back({false, kPre, row0, ph.n, {}, [=, this](Expr u) {
                         Expr row = row0 + u;
                         Expr base = xw_(row, b, time_at(s, b, d), d) + bias(1, d, row);
                         // GRU with linear_before_reset: the h rows hold R_h·h + Rb_h alone.
                         if (cell_ == Cell::GRU && lbr_) base = Halide::select(row >= 2 * hidden_, bias(1, d, row), base);
                         return base;
                       }});
      }
      out.push_back(std::move(ph));
    }
    return out;
  }

  // S(unit, slot, b, d, s): the state after step s (s = 0 is the initial state). One update walks
  // r = (u, k, phase, s), s outermost; a phase that sets values runs only at k = 0.
  void define_state() {
    Var u("u"), slot("slot"), b("b"), d("d"), s("s");
    s_ = Func("rnn_state");
    s_(u, slot, b, d, s) = Halide::select(s == 0 && slot == kH, initial(5, u, b, d),
                                          s == 0 && slot == kC, initial(6, u, b, d), zero());
    const int rows = gates_ * hidden_;
    // The phase count sizes the RDom whose step variable the phases read: count them first with a
    // placeholder step.
    int nph = static_cast<int>(expand(phases(b, d, Expr(0)), b, d, Expr(0)).size());
    Halide::RDom r(0, rows, 0, hidden_, 0, nph, 0, seq_, "r");
    std::vector<Phase> ps = expand(phases(b, d, r.w), b, d, r.w);
    Expr lhs_row = Expr(0), lhs_slot = Expr(0), value = zero(), cond = Halide::Internal::const_false();
    for (int p = nph - 1; p >= 0; --p) {
      const Phase& ph = ps[p];
      // r.x runs to the widest phase; clamping keeps every read of a narrower one in bounds (the
      // where clause skips those iterations anyway).
      Expr u = Halide::min(r.x, ph.n - 1), row = ph.row0 + u, here = r.z == p;
      Expr v = ph.accumulate ? s_(row, kPre, b, d, r.w + 1) + rt_(row, r.y, d) * ph.v(r.y) : ph.value(u);
      lhs_row = Halide::select(here, row, lhs_row);
      lhs_slot = Halide::select(here, ph.slot, lhs_slot);
      value = Halide::select(here, v, value);
      cond = cond || (here && r.x < ph.n && (ph.accumulate ? Halide::Internal::const_true() : r.y == 0));
    }
    r.where(cond);
    s_(lhs_row, lhs_slot, b, d, r.w + 1) = value;
    nphases_ = nph;
    r_ = r;
  }

  std::vector<HTensor> outputs() {
    const int h = hidden_;
    std::vector<HTensor> outs;
    // Y: the hidden state of each time step, zero past a sequence's end.
    auto y_at = [&](const Expr& t, const Expr& d, const Expr& b, const Expr& j) {
      Expr rev = reverse_only_ ? Halide::Internal::const_true() : dirs_ == 2 ? d == 1 : Halide::Internal::const_false();
      Expr len = seq_len(b);
      Expr step = Halide::clamp(Halide::select(rev, len - 1 - t, t), 0, seq_ - 1);
      return Halide::select(t < len, s_(j, kH, b, d, step + 1), zero());
    };
    ir::DType dt = ctx_.in[0].dtype;
    if (node_.output(0)) {
      std::vector<Expr> shape = batch_first_ ? std::vector<Expr>{batch_, seq_, dirs_, h} : std::vector<Expr>{seq_, dirs_, batch_, h};
      outs.push_back(define("rnn_y", shape, dt, [&](const Index& i) {
        return batch_first_ ? y_at(i[1], i[2], i[0], i[3]) : y_at(i[0], i[1], i[2], i[3]);
      }));
    } else {
      outs.emplace_back();
    }
    std::vector<Expr> sshape = batch_first_ ? std::vector<Expr>{batch_, dirs_, h} : std::vector<Expr>{dirs_, batch_, h};
    for (int slot : {kH, kC}) {
      int idx = slot == kH ? 1 : 2;
      if (!node_.output(idx)) {
        outs.emplace_back();
        continue;
      }
      outs.push_back(define(slot == kH ? "rnn_y_h" : "rnn_y_c", sshape, dt, [&](const Index& i) {
        Expr b = batch_first_ ? i[0] : i[1], d = batch_first_ ? i[1] : i[0];
        return s_(i[2], slot, b, d, seq_);
      }));
    }
    RnnStages stages{xw_, rt_, s_, wt_, r_, proj_r_, proj_vars_, !w_const_, !r_const_};
    ctx_.schedule = [stages](Func out, const Halide::Target& t) { schedule_rnn(out, stages, t); };
    ctx_.kclass = KernelClass::Other;
    return outs;
  }

  LowerContext& ctx_;
  const ir::Node& node_;
  Cell cell_;
  bool batch_first_ = false, reverse_only_ = false, lbr_ = false, input_forget_ = false;
  bool w_const_ = false, r_const_ = false;  // W / R transposed at compile time
  int dirs_ = 1, gates_ = 1, hidden_ = 0, nphases_ = 0;
  float clip_ = 0;
  Expr seq_, batch_;
  Halide::Type type_;
  std::vector<std::vector<Activation>> acts_;
  Func xw_, wt_, rt_, s_;
  std::vector<Var> proj_vars_;  // XW's vars (u, b, t, d) and its reduction over the input size
  Halide::RDom r_, proj_r_;
};

Registrar reg_RNN("", "RNN", KernelClass::Other, [](LowerContext& c) { return RecurrentLowering(c, Cell::RNN).run(); });
Registrar reg_GRU("", "GRU", KernelClass::Other, [](LowerContext& c) { return RecurrentLowering(c, Cell::GRU).run(); });
Registrar reg_LSTM("", "LSTM", KernelClass::Other, [](LowerContext& c) { return RecurrentLowering(c, Cell::LSTM).run(); });

}  // namespace
}  // namespace onnxc::codegen
