// Recurrent lowerings (RNN, GRU, LSTM) against a plain loop over the ONNX equations, written here
// independently of the kernel: each attribute the ops define (directions, layout, activations with
// alpha/beta, clip, linear_before_reset, input_forget, peepholes, sequence_lens, initial states and
// all three outputs), at two batch/sequence shapes from one compiled library.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;
using ir::Dim;

enum class Cell { RNN, GRU, LSTM };

struct Config {
  std::string label;
  Cell cell = Cell::RNN;
  std::string direction = "forward";
  int layout = 0;
  std::vector<std::string> acts;  // empty: the op's defaults
  std::vector<float> alphas, betas;
  float clip = 0;
  int lbr = 0, input_forget = 0;
  bool bias = true, seq_lens = false, initial = false, peepholes = false;
};

int gates(Cell c) { return c == Cell::RNN ? 1 : c == Cell::GRU ? 3 : 4; }

using Fn = std::function<float(float)>;

Fn activation(std::string n, float a, float b) {
  if (n == "Relu") return [](float x) { return x > 0 ? x : 0.0f; };
  if (n == "Tanh") return [](float x) { return std::tanh(x); };
  if (n == "Sigmoid") return [](float x) { return 1 / (1 + std::exp(-x)); };
  if (n == "Affine") return [a, b](float x) { return a * x + b; };
  if (n == "LeakyRelu") return [a](float x) { return x >= 0 ? x : a * x; };
  if (n == "ThresholdedRelu") return [a](float x) { return x > a ? x : 0.0f; };
  if (n == "ScaledTanh") return [a, b](float x) { return a * std::tanh(b * x); };
  if (n == "HardSigmoid") return [a, b](float x) { return std::max(0.0f, std::min(1.0f, a * x + b)); };
  if (n == "Elu") return [a](float x) { return x >= 0 ? x : a * (std::exp(x) - 1); };
  if (n == "Softsign") return [](float x) { return x / (1 + std::fabs(x)); };
  if (n == "Softplus") return [](float x) { return std::log(1 + std::exp(x)); };
  ADD_FAILURE() << "unknown activation " << n;
  return {};
}

struct Data {
  int seq = 0, batch = 0, in = 0, hidden = 0, dirs = 1;
  std::vector<float> x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
};

struct Result {
  std::vector<float> y, y_h, y_c;
};

// The ONNX operator definitions as loops (layout 0 indices; layout 1 is transposed at the end).
Result reference(const Config& c, const Data& d) {
  const int H = d.hidden, G = gates(c.cell), I = d.in;
  std::vector<std::string> names = c.acts;
  std::vector<std::string> defaults = c.cell == Cell::RNN ? std::vector<std::string>{"Tanh"}
                                      : c.cell == Cell::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                            : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  if (names.empty())
    for (int k = 0; k < d.dirs; ++k) names.insert(names.end(), defaults.begin(), defaults.end());
  // alpha/beta values go, in order, to the activations that take them (ONNX Runtime's reading).
  std::vector<Fn> fns;
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) {
    bool takes_a = n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" ||
                   n == "HardSigmoid" || n == "Elu";
    bool takes_b = n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid";
    float a = takes_a && ai < c.alphas.size() ? c.alphas[ai++] : 0, b = takes_b && bi < c.betas.size() ? c.betas[bi++] : 0;
    fns.push_back(activation(n, a, b));
  }
  auto act = [&](int dir, int which, float v) {
    if (c.clip > 0) v = std::max(-c.clip, std::min(c.clip, v));
    return fns[dir * defaults.size() + which](v);
  };
  Result out;
  out.y.assign(size_t(d.seq) * d.dirs * d.batch * H, 0);
  out.y_h.assign(size_t(d.dirs) * d.batch * H, 0);
  out.y_c = out.y_h;
  for (int dir = 0; dir < d.dirs; ++dir) {
    bool rev = c.direction == "reverse" || dir == 1;
    auto W = [&](int g, int i) { return d.w[(size_t(dir) * G * H + g) * I + i]; };
    auto R = [&](int g, int k) { return d.r[(size_t(dir) * G * H + g) * H + k]; };
    auto Wb = [&](int g) { return c.bias ? d.b[size_t(dir) * 2 * G * H + g] : 0.0f; };
    auto Rb = [&](int g) { return c.bias ? d.b[size_t(dir) * 2 * G * H + G * H + g] : 0.0f; };
    auto P = [&](int k, int j) { return c.peepholes ? d.p[size_t(dir) * 3 * H + k * H + j] : 0.0f; };
    for (int b = 0; b < d.batch; ++b) {
      std::vector<float> h(H, 0), cs(H, 0);
      if (c.initial)
        for (int j = 0; j < H; ++j) h[j] = d.h0[(size_t(dir) * d.batch + b) * H + j], cs[j] = d.c0[(size_t(dir) * d.batch + b) * H + j];
      int len = c.seq_lens ? d.lens[b] : d.seq;
      for (int step = 0; step < len; ++step) {
        int t = rev ? len - 1 - step : step;
        const float* x = &d.x[(size_t(t) * d.batch + b) * I];
        auto xw = [&](int g) { float s = 0; for (int i = 0; i < I; ++i) s += x[i] * W(g, i); return s; };
        auto rh = [&](int g, const std::vector<float>& v) { float s = 0; for (int k = 0; k < H; ++k) s += v[k] * R(g, k); return s; };
        std::vector<float> nh(H), nc(H);
        if (c.cell == Cell::RNN) {
          for (int j = 0; j < H; ++j) nh[j] = act(dir, 0, xw(j) + rh(j, h) + Wb(j) + Rb(j));
        } else if (c.cell == Cell::GRU) {
          std::vector<float> z(H), rg(H), rh_h(H);
          for (int j = 0; j < H; ++j) z[j] = act(dir, 0, xw(j) + rh(j, h) + Wb(j) + Rb(j));
          for (int j = 0; j < H; ++j) rg[j] = act(dir, 0, xw(H + j) + rh(H + j, h) + Wb(H + j) + Rb(H + j));
          for (int k = 0; k < H; ++k) rh_h[k] = rg[k] * h[k];
          for (int j = 0; j < H; ++j) {
            int g = 2 * H + j;
            float hh = c.lbr ? act(dir, 1, xw(g) + rg[j] * (rh(g, h) + Rb(g)) + Wb(g))
                             : act(dir, 1, xw(g) + rh(g, rh_h) + Rb(g) + Wb(g));
            nh[j] = (1 - z[j]) * hh + z[j] * h[j];
          }
        } else {
          for (int j = 0; j < H; ++j) {
            float i = act(dir, 0, xw(j) + rh(j, h) + Wb(j) + Rb(j) + P(0, j) * cs[j]);
            float f = c.input_forget ? 1 - i : act(dir, 0, xw(2 * H + j) + rh(2 * H + j, h) + Wb(2 * H + j) + Rb(2 * H + j) + P(2, j) * cs[j]);
            float g = act(dir, 1, xw(3 * H + j) + rh(3 * H + j, h) + Wb(3 * H + j) + Rb(3 * H + j));
            nc[j] = f * cs[j] + i * g;
            float o = act(dir, 0, xw(H + j) + rh(H + j, h) + Wb(H + j) + Rb(H + j) + P(1, j) * nc[j]);
            nh[j] = o * act(dir, 2, nc[j]);
          }
          cs = nc;
        }
        h = nh;
        for (int j = 0; j < H; ++j) out.y[((size_t(t) * d.dirs + dir) * d.batch + b) * H + j] = h[j];
      }
      for (int j = 0; j < H; ++j) {
        out.y_h[(size_t(dir) * d.batch + b) * H + j] = h[j];
        out.y_c[(size_t(dir) * d.batch + b) * H + j] = cs[j];
      }
    }
  }
  return out;
}

// [a, b, c, ...] with dims 0 and 1 swapped (the layout 0 <-> 1 change of X, Y, Y_h and the states).
std::vector<float> swap01(const std::vector<float>& v, int d0, int d1, int inner) {
  std::vector<float> r(v.size());
  for (int i = 0; i < d0; ++i)
    for (int j = 0; j < d1; ++j)
      for (int k = 0; k < inner; ++k) r[(size_t(j) * d0 + i) * inner + k] = v[(size_t(i) * d1 + j) * inner + k];
  return r;
}

std::vector<float> values(size_t n, float scale, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * float(i) * float(seed % 7 + 1) + float(seed));
  return v;
}

const char* op_name(Cell c) { return c == Cell::RNN ? "RNN" : c == Cell::GRU ? "GRU" : "LSTM"; }

void check(const Config& c) {
  SCOPED_TRACE(c.label);
  const int H = 3, I = 2, G = gates(c.cell), dirs = c.direction == "bidirectional" ? 2 : 1;
  Dim seq = Dim::symbol("seq"), batch = Dim::symbol("batch");
  bool bf = c.layout == 1;
  ModelBuilder mb(14);
  auto shp = [&](Dim a, Dim b, Dim k) { return bf ? ir::Shape{b, a, k} : ir::Shape{a, b, k}; };
  std::vector<ir::Value*> ins = {mb.input("X", DType::Float32, shp(seq, batch, I)),
                                 mb.input("W", DType::Float32, {dirs, G * H, I}),
                                 mb.input("R", DType::Float32, {dirs, G * H, H})};
  ins.push_back(c.bias ? mb.input("B", DType::Float32, {dirs, 2 * G * H}) : nullptr);
  ins.push_back(c.seq_lens ? mb.input("lens", DType::Int32, {batch}) : nullptr);
  ins.push_back(c.initial ? mb.input("h0", DType::Float32, shp(dirs, batch, H)) : nullptr);
  if (c.cell == Cell::LSTM) {
    ins.push_back(c.initial ? mb.input("c0", DType::Float32, shp(dirs, batch, H)) : nullptr);
    ins.push_back(c.peepholes ? mb.input("P", DType::Float32, {dirs, 3 * H}) : nullptr);
  }
  while (!ins.back()) ins.pop_back();
  ir::Shape yshape = bf ? ir::Shape{batch, seq, dirs, H} : ir::Shape{seq, dirs, batch, H};
  std::vector<std::pair<std::string, ir::Type>> outs = {{"Y", ir::Type::tensor(DType::Float32, yshape)},
                                                        {"Y_h", ir::Type::tensor(DType::Float32, shp(dirs, batch, H))}};
  if (c.cell == Cell::LSTM) outs.push_back({"Y_c", ir::Type::tensor(DType::Float32, shp(dirs, batch, H))});
  ir::Node* n = mb.node(op_name(c.cell), ins, outs);
  n->set_attr_int("hidden_size", H);
  n->set_attr_string("direction", c.direction);
  if (c.layout) n->set_attr_int("layout", 1);
  if (c.clip > 0) n->set_attr_float("clip", c.clip);
  if (c.lbr) n->set_attr_int("linear_before_reset", 1);
  if (c.input_forget) n->set_attr_int("input_forget", 1);
  if (!c.acts.empty()) {
    ir::Attribute a;
    a.name = "activations";
    a.kind = ir::Attribute::Kind::Strings;
    a.strings = c.acts;
    n->set_attr(a);
  }
  for (auto [name, v] : {std::pair{"activation_alpha", c.alphas}, std::pair{"activation_beta", c.betas}}) {
    if (v.empty()) continue;
    ir::Attribute a;
    a.name = name;
    a.kind = ir::Attribute::Kind::Floats;
    a.floats = v;
    n->set_attr(a);
  }
  for (size_t i = 0; i < n->num_outputs(); ++i) mb.output(n->output(i));
  auto compiled = compile(mb.model(), "rnn");
  LoadedModel lib(compiled.so_path);

  for (auto [S_, B_] : {std::pair{4, 2}, std::pair{1, 3}}) {
    const int S = S_, B = B_;  // plain variables: clang 14 cannot capture structured bindings
    Data d;
    d.seq = S, d.batch = B, d.in = I, d.hidden = H, d.dirs = dirs;
    d.x = values(size_t(S) * B * I, 1.0f, 1);
    d.w = values(size_t(dirs) * G * H * I, 0.6f, 2);
    d.r = values(size_t(dirs) * G * H * H, 0.5f, 3);
    d.b = values(size_t(dirs) * 2 * G * H, 0.3f, 4);
    d.h0 = values(size_t(dirs) * B * H, 0.4f, 5);
    d.c0 = values(size_t(dirs) * B * H, 0.7f, 6);
    d.p = values(size_t(dirs) * 3 * H, 0.5f, 7);
    for (int b = 0; b < B; ++b) d.lens.push_back(S - b % S);
    Result ref = reference(c, d);
    std::vector<HostTensor> args = {HostTensor::f32(bf ? std::vector<int64_t>{B, S, I} : std::vector<int64_t>{S, B, I},
                                                    bf ? swap01(d.x, S, B, I) : d.x),
                                    HostTensor::f32({dirs, G * H, I}, d.w), HostTensor::f32({dirs, G * H, H}, d.r)};
    auto state = [&](const std::vector<float>& v) {
      return HostTensor::f32(bf ? std::vector<int64_t>{B, dirs, H} : std::vector<int64_t>{dirs, B, H}, bf ? swap01(v, dirs, B, H) : v);
    };
    if (c.bias) args.push_back(HostTensor::f32({dirs, 2 * G * H}, d.b));
    if (c.seq_lens) args.push_back(HostTensor::make(DType::Int32, {B}, d.lens));
    if (c.initial) args.push_back(state(d.h0));
    if (c.initial && c.cell == Cell::LSTM) args.push_back(state(d.c0));
    if (c.peepholes) args.push_back(HostTensor::f32({dirs, 3 * H}, d.p));
    auto got = lib.run(args);
    SCOPED_TRACE("seq " + std::to_string(S) + " batch " + std::to_string(B));
    // Y is [seq, dirs, batch, H]; batch-first it is [batch, seq, dirs, H].
    EXPECT_TRUE(all_close(got[0].values<float>(), bf ? swap01(swap01(ref.y, S, dirs * B, H), dirs, B * S, H) : ref.y, 1e-5, 1e-6));
    EXPECT_TRUE(all_close(got[1].values<float>(), bf ? swap01(ref.y_h, dirs, B, H) : ref.y_h, 1e-5, 1e-6));
    if (c.cell == Cell::LSTM) {
      EXPECT_TRUE(all_close(got[2].values<float>(), bf ? swap01(ref.y_c, dirs, B, H) : ref.y_c, 1e-5, 1e-6));
    }
  }
}

Config make(std::string label, Cell cell, std::string direction = "forward", int layout = 0,
            std::vector<std::string> acts = {}, std::vector<float> alphas = {}, std::vector<float> betas = {}) {
  Config c;
  c.label = std::move(label);
  c.cell = cell;
  c.direction = std::move(direction);
  c.layout = layout;
  c.acts = std::move(acts);
  c.alphas = std::move(alphas);
  c.betas = std::move(betas);
  return c;
}

TEST(LowerRnn, RnnForwardDefaults) { check(make("rnn", Cell::RNN)); }
TEST(LowerRnn, RnnReverseReluNoBias) {
  Config c = make("rnn reverse", Cell::RNN, "reverse", 0, {"Relu"});
  c.bias = false;
  check(c);
}
TEST(LowerRnn, RnnBidirectionalActivationsWithAlphaBeta) {
  Config c = make("rnn bidi", Cell::RNN, "bidirectional", 1, {"ScaledTanh", "LeakyRelu"}, {0.8f, 0.1f}, {1.5f});
  c.seq_lens = c.initial = true;
  check(c);
}
TEST(LowerRnn, RnnAffineEluSoftsignSoftplusThresholded) {
  for (std::string a : {"Affine", "Elu", "Softsign", "Softplus", "ThresholdedRelu", "HardSigmoid"})
    check(make("rnn " + a, Cell::RNN, "forward", 0, {a}, {0.7f}, {0.2f}));
}
TEST(LowerRnn, GruDefaults) { check(make("gru", Cell::GRU)); }
TEST(LowerRnn, GruLinearBeforeResetBidirectionalBatchFirst) {
  Config c = make("gru lbr", Cell::GRU, "bidirectional", 1);
  c.lbr = 1;
  c.seq_lens = c.initial = true;
  check(c);
}
TEST(LowerRnn, GruReverseClipHardSigmoid) {
  Config c = make("gru clip", Cell::GRU, "reverse", 0, {"HardSigmoid", "Tanh"}, {0.3f}, {0.4f});
  c.clip = 0.6f;
  c.seq_lens = c.initial = true;
  check(c);
}
TEST(LowerRnn, LstmDefaults) { check(make("lstm", Cell::LSTM)); }
TEST(LowerRnn, LstmPeepholesSequenceLensInitialStates) {
  Config c = make("lstm peep", Cell::LSTM, "bidirectional");
  c.peepholes = c.seq_lens = c.initial = true;
  check(c);
}
TEST(LowerRnn, LstmBatchFirstInputForgetClip) {
  Config c = make("lstm batch-first", Cell::LSTM, "reverse", 1);
  c.input_forget = 1;
  c.clip = 0.9f;
  c.initial = c.peepholes = true;
  check(c);
}

}  // namespace
}  // namespace onnxc::test
