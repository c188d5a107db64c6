// A parser for the printer's IR text (see ir_text.h): recursive descent over characters.
#include "ir_text.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "ir/eval/symbolic_shape.h"

namespace onnxc::testing {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  ir::Model model() {
    ir::Model m;
    skip_ws();
    if (word_ahead("model")) {
      std::string line = rest_of_line();
      auto p = line.find("opset=[");
      if (p != std::string::npos) {
        std::string list = line.substr(p + 7, line.find(']', p) - p - 7);
        std::stringstream ss(list);
        std::string item;
        while (std::getline(ss, item, ',')) {
          while (!item.empty() && item[0] == ' ') item.erase(0, 1);
          auto colon = item.rfind(':');
          std::string dom = item.substr(0, colon);
          m.opset_imports.push_back({dom == "ai.onnx" ? "" : dom, std::stoll(item.substr(colon + 1))});
        }
      }
    } else {
      m.opset_imports.push_back({"", 17});
    }
    graph(*m.graph);
    return m;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    int line = 1;
    for (size_t k = 0; k < i_ && k < s_.size(); ++k) line += s_[k] == '\n';
    throw std::runtime_error("IR text line " + std::to_string(line) + ": " + what);
  }
  void skip_spaces() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool peek(char c) {
    skip_spaces();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++i_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word_ahead(const std::string& w) {
    skip_spaces();
    if (s_.compare(i_, w.size(), w) != 0) return false;
    size_t e = i_ + w.size();
    if (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) return false;
    i_ = e;
    return true;
  }
  std::string rest_of_line() {
    size_t e = s_.find('\n', i_);
    if (e == std::string::npos) e = s_.size();
    std::string r = s_.substr(i_, e - i_);
    i_ = e;
    return r;
  }
  std::string ident() {
    skip_spaces();
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
      ++i_;
    if (b == i_) fail("expected a name");
    return s_.substr(b, i_ - b);
  }
  std::string quoted() {
    expect('"');
    std::string r;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        ++i_;
        r += s_[i_] == 'n' ? '\n' : s_[i_];
      } else {
        r += s_[i_];
      }
      ++i_;
    }
    expect('"');
    return r;
  }
  // %name or %"quoted name"; "" for an omitted value (%"").
  std::string value_name() {
    expect('%');
    if (peek('"')) return quoted();
    size_t b = i_;
    // Plain names may hold ':' (onnx::MatMul_1), but "%x: f32[...]" ends the name at ": ".
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || std::string("_./:-").find(s_[i_]) != std::string::npos)) {
      if (s_[i_] == ':' && (i_ + 1 >= s_.size() || s_[i_ + 1] == ' ')) break;
      ++i_;
    }
    return s_.substr(b, i_ - b);
  }
  // The text up to the matching ']' of a '[' just consumed, split at depth-0 commas.
  std::vector<std::string> bracket_items() {
    std::vector<std::string> items;
    std::string cur;
    int depth = 0;
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == ']' && depth == 0) break;
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c == ',' && depth == 0) {
        items.push_back(cur);
        cur.clear();
      } else if (c != ' ') {
        cur += c;
      }
    }
    if (!cur.empty()) items.push_back(cur);
    return items;
  }
  ir::DType dtype() {
    std::string n = ident();
    auto dt = ir::dtype_from_name(n);
    if (!dt) fail("unknown dtype '" + n + "'");
    return *dt;
  }
  ir::Type type() {
    skip_spaces();
    if (word_ahead("unknown")) return ir::Type{};
    ir::DType dt = dtype();
    expect('[');
    std::vector<std::string> items = bracket_items();
    if (items.size() == 1 && items[0] == "?r") return ir::Type::tensor(dt);
    ir::Shape shape;
    for (const std::string& it : items) {
      auto d = ir::parse_dim(it);
      if (!d) fail("bad dim '" + it + "'");
      shape.push_back(*d);
    }
    return ir::Type::tensor(dt, shape);
  }
  double number() {
    skip_spaces();
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || std::string("+-.").find(s_[i_]) != std::string::npos))
      ++i_;
    std::string t = s_.substr(b, i_ - b);
    if (t == "inf") return INFINITY;
    if (t == "-inf") return -INFINITY;
    if (t == "nan" || t == "-nan") return NAN;
    try {
      return std::stod(t);
    } catch (...) {
      fail("bad number '" + t + "'");
    }
  }
  // Conversions of a parsed number that refuse what the type cannot hold (a C++ cast would be
  // undefined behaviour there; found by fuzz_ir_text).
  // A double beyond float's range rounds as IEEE does, done by hand: to ±max below the midpoint
  // 2^128 - 2^103 ("-3.40282347e+38", finfo.min printed to 9 digits, is such a value), else to ±inf.
  static float to_f32(double v) {
    const double big = std::fabs(v);
    if (std::isfinite(v) && big > std::numeric_limits<float>::max())
      return std::copysign(big < 0x1.ffffffp127 ? std::numeric_limits<float>::max() : INFINITY, static_cast<float>(v > 0 ? 1 : -1));
    return static_cast<float>(v);
  }
  template <class T>
  T to_int(double v) {
    // 2^63 and the other limits are exact doubles; the upper bound is exclusive.
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
    if (!(v >= lo && v < hi) || v != std::trunc(v)) fail("number is not an integer the type can hold");
    return static_cast<T>(v);
  }
  static bool looks_float(const std::string& t) {
    return t.find_first_of(".eE") != std::string::npos || t.find("inf") != std::string::npos ||
           t.find("nan") != std::string::npos;
  }
  std::string token_ahead() {
    skip_spaces();
    size_t e = i_;
    while (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || std::string("+-.").find(s_[e]) != std::string::npos))
      ++e;
    return s_.substr(i_, e - i_);
  }
  ir::Tensor tensor() {
    ir::DType dt = dtype();
    expect('[');
    std::vector<int64_t> dims;
    for (const std::string& d : bracket_items()) dims.push_back(std::stoll(d));
    if (peek('#')) fail("a tensor given by fingerprint cannot be parsed; write its values");
    expect('{');
    if (dt == ir::DType::String) {
      std::vector<std::string> v;
      while (!eat('}')) {
        v.push_back(quoted());
        eat(',');
      }
      return ir::Tensor::strings(dims, v);
    }
    ir::Tensor t(dt, dims);
    for (int64_t k = 0; k < t.numel(); ++k) {
      double v = number();
      switch (dt) {
        case ir::DType::Float32: t.mutable_data<float>()[k] = to_f32(v); break;
        case ir::DType::Float64: t.mutable_data<double>()[k] = v; break;
        case ir::DType::Float16: t.mutable_data<uint16_t>()[k] = ir::f32_to_f16(to_f32(v)); break;
        case ir::DType::Int64: t.mutable_data<int64_t>()[k] = to_int<int64_t>(v); break;
        case ir::DType::Int32: t.mutable_data<int32_t>()[k] = to_int<int32_t>(v); break;
        case ir::DType::Int8: case ir::DType::Int4: t.mutable_data<int8_t>()[k] = to_int<int8_t>(v); break;
        case ir::DType::UInt8: case ir::DType::UInt4: case ir::DType::Bool: t.mutable_data<uint8_t>()[k] = to_int<uint8_t>(v); break;
        default: fail("dtype not supported in IR text tensors");
      }
      eat(',');
    }
    expect('}');
    return t;
  }
  ir::Attribute attribute() {
    ir::Attribute a;
    a.name = ident();
    expect('=');
    skip_spaces();
    if (peek('"')) {
      a.kind = ir::Attribute::Kind::String;
      a.s = quoted();
    } else if (word_ahead("tensor")) {
      a.kind = ir::Attribute::Kind::Tensor;
      a.t = tensor();
    } else if (eat('[')) {
      if (peek('"')) {
        a.kind = ir::Attribute::Kind::Strings;
        while (!eat(']')) {
          a.strings.push_back(quoted());
          eat(',');
        }
      } else {
        std::vector<std::string> items = bracket_items();
        bool fl = false;
        for (const auto& it : items) fl |= looks_float(it);
        a.kind = fl ? ir::Attribute::Kind::Floats : ir::Attribute::Kind::Ints;
        for (const auto& it : items) {
          if (fl) a.floats.push_back(it == "inf" ? INFINITY : it == "-inf" ? -INFINITY : to_f32(std::stod(it)));
          else a.ints.push_back(std::stoll(it));
        }
      }
    } else {
      bool fl = looks_float(token_ahead());
      double v = number();
      a.kind = fl ? ir::Attribute::Kind::Float : ir::Attribute::Kind::Int;
      if (fl) a.f = to_f32(v);
      else a.i = to_int<int64_t>(v);
    }
    return a;
  }
  ir::Value* lookup(ir::Graph& g, const std::string& name) {
    if (name.empty()) return nullptr;
    ir::Value* v = g.find_value(name);
    if (!v) fail("unknown value '%" + name + "'");
    return v;
  }
  void node_line(ir::Graph& g) {
    std::vector<std::pair<std::string, ir::Type>> outs;
    size_t save = i_;
    if (peek('%')) {
      for (;;) {
        std::string n = value_name();
        ir::Type t;
        if (eat(':')) t = type();
        outs.emplace_back(n, t);
        if (eat(',')) continue;
        expect('=');
        break;
      }
      if (outs.size() == 1 && outs[0].second.kind == ir::Type::Kind::Unknown && word_ahead("const")) {
        g.add_initializer(outs[0].first, tensor());  // %c = const i64[2] {0, 1}
        return;
      }
    } else {
      i_ = save;
    }
    std::string op = ident(), domain;
    auto dot = op.rfind('.');
    if (dot != std::string::npos) {
      domain = op.substr(0, dot);
      op = op.substr(dot + 1);
    }
    expect('(');
    std::vector<ir::Value*> ins;
    while (!eat(')')) {
      ins.push_back(lookup(g, value_name()));
      eat(',');
    }
    std::vector<std::string> names;
    for (auto& o : outs) names.push_back(o.first);
    ir::Node* n = g.add_node(op, ins, names, domain);
    for (size_t k = 0; k < outs.size(); ++k)
      if (n->output(k)) n->output(k)->set_type(outs[k].second);
    if (eat('{')) {
      while (!eat('}')) {
        n->set_attr(attribute());
        eat(',');
      }
    }
    if (eat('#')) {
      std::string name = rest_of_line();
      n->set_name(name.substr(name.find_first_not_of(' ')));
    }
  }
  void graph(ir::Graph& g) {
    skip_ws();
    if (!word_ahead("graph")) fail("expected 'graph'");
    g.set_name(ident());
    expect('(');
    while (!eat(')')) {
      std::string n = value_name();
      expect(':');
      ir::Type t = type();
      if (word_ahead("=")) fail("graph inputs with defaults are not supported");
      g.add_input(n, t);
      eat(',');
    }
    expect('{');
    for (;;) {
      skip_ws();
      if (word_ahead("return")) break;
      if (i_ >= s_.size()) fail("missing 'return'");
      node_line(g);
    }
    while (peek('%')) {
      std::string name = value_name();
      if (name.empty()) fail("a graph output needs a name ('%' alone is an omitted input)");
      g.add_output(lookup(g, name));
      if (eat(':')) type();  // the value's own type is what prints
      eat(',');
    }
    skip_ws();
    expect('}');
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

ir::Model parse_model(const std::string& text) {
  try {
    return Parser(text).model();
  } catch (const std::invalid_argument& e) {  // std::stoll & co. on a malformed number (found by fuzz_ir_text)
    throw std::runtime_error(std::string("IR text: malformed number (") + e.what() + ")");
  } catch (const std::out_of_range& e) {
    throw std::runtime_error(std::string("IR text: number out of range (") + e.what() + ")");
  }
}

std::string dedent(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    lines.push_back(line);
  }
  while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t indent = std::string::npos;
  for (const auto& l : lines)
    if (!l.empty()) indent = std::min(indent, l.find_first_not_of(' '));
  std::string out;
  for (const auto& l : lines) out += (l.empty() ? l : l.substr(indent)) + "\n";
  return out;
}

}  // namespace onnxc::testing
