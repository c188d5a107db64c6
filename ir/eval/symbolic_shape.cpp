// onnxc.SymbolicShape: building, reading and evaluating the node, and the dim text parser.
#include "ir/eval/symbolic_shape.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "ir/error.h"

namespace onnxc::ir {
namespace {

// Recursive descent over Dim::str() text:
//   expr := term (('+' | '-') term)*      term := ['-'] factor ('*' factor)*
//   factor := INT | '?' | '(' expr ')' | NAME | FN '(' expr ',' expr ')'
class DimParser {
 public:
  explicit DimParser(std::string_view s) : s_(s) {}
  std::optional<Dim> parse() {
    auto d = expr();
    skip();
    if (!d || i_ != s_.size()) return std::nullopt;
    return d;
  }

 private:
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::optional<Dim> expr() {
    auto d = term();
    while (d) {
      if (eat('+')) {
        auto t = term();
        if (!t) return std::nullopt;
        d = *d + *t;
      } else if (eat('-')) {
        auto t = term();
        if (!t) return std::nullopt;
        d = *d - *t;
      } else {
        break;
      }
    }
    return d;
  }
  std::optional<Dim> term() {
    bool neg = eat('-');
    auto d = factor();
    while (d && eat('*')) {
      auto f = factor();
      if (!f) return std::nullopt;
      d = *d * *f;
    }
    if (d && neg) d = -*d;
    return d;
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '/';
  }
  std::optional<Dim> factor() {
    skip();
    if (i_ >= s_.size()) return std::nullopt;
    char c = s_[i_];
    if (c == '?') {
      ++i_;
      return Dim::unknown();
    }
    if (c == '(') {
      ++i_;
      auto d = expr();
      if (!d || !eat(')')) return std::nullopt;
      return d;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        int digit = s_[i_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return std::nullopt;  // not an int64
        v = v * 10 + digit;
      }
      return Dim(v);
    }
    size_t start = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    if (i_ == start) return std::nullopt;
    std::string name(s_.substr(start, i_ - start));
    static const std::map<std::string, Dim (*)(const Dim&, const Dim&)> fns = {
        {"floordiv", floordiv}, {"ceildiv", ceildiv}, {"mod", mod}, {"min", min}, {"max", max}};
    auto fn = fns.find(name);
    skip();
    if (fn == fns.end() || i_ >= s_.size() || s_[i_] != '(') return Dim::symbol(name);
    ++i_;
    auto a = expr();
    if (!a || !eat(',')) return std::nullopt;
    auto b = expr();
    if (!b || !eat(')')) return std::nullopt;
    return fn->second(*a, *b);
  }

  std::string_view s_;
  size_t i_ = 0;
};

// The first graph input visible from `g` (own inputs first, then enclosing graphs') with a dim
// that is exactly the symbol `name`.
Value* input_carrying(Graph& g, const std::string& name) {
  Dim sym = Dim::symbol(name);
  for (Graph* scope = &g; scope; scope = scope->parent())
    for (Value* in : scope->inputs())
      if (in->shape())
        for (const Dim& d : *in->shape())
          if (d == sym) return in;
  return nullptr;
}

}  // namespace

std::optional<Dim> parse_dim(std::string_view text) { return DimParser(text).parse(); }

bool is_symbolic_shape(const Node& n) { return n.domain() == kOnnxcDomain && n.op_type() == kSymbolicShapeOp; }

std::vector<Dim> symbolic_shape_dims(const Node& n) {
  const Attribute* a = n.attr("dims");
  internal_check(a && a->kind == Attribute::Kind::Strings) << n.describe() << " has no 'dims' strings attribute";
  std::vector<Dim> dims;
  for (const std::string& s : a->strings) {
    auto d = parse_dim(s);
    internal_check(d.has_value()) << n.describe() << ": cannot parse dim '" << s << "'";
    dims.push_back(*d);
  }
  return dims;
}

bool symbolic_shape_is_scalar(const Node& n) { return n.attr_int("scalar", 0) != 0; }

Node* insert_symbolic_shape(Graph& g, Node* before, const std::vector<Dim>& dims, bool scalar,
                            const std::string& name_hint) {
  internal_check(!scalar || dims.size() == 1) << "a scalar SymbolicShape needs exactly one dim";
  std::set<std::string> symbols;
  for (const Dim& d : dims) d.collect_symbols(symbols);
  std::set<Value*> carriers;
  for (const std::string& s : symbols) {
    if (s.rfind("?", 0) == 0) return nullptr;  // an unknown dim: nothing to compute it from
    Value* in = input_carrying(g, s);
    if (!in) return nullptr;
    carriers.insert(in);
  }
  // Inputs in scope order (this graph's, then enclosing ones'), so equal shapes build equal nodes
  // and CSE merges them.
  std::vector<Value*> inputs;
  for (Graph* scope = &g; scope; scope = scope->parent())
    for (Value* in : scope->inputs())
      if (carriers.count(in)) inputs.push_back(in);
  Node* n = g.insert_node_before(before, kSymbolicShapeOp, inputs, {g.unique_name(name_hint)}, kOnnxcDomain);
  Attribute a;
  a.name = "dims";
  a.kind = Attribute::Kind::Strings;
  for (const Dim& d : dims) a.strings.push_back(d.str());
  n->set_attr(std::move(a));
  if (scalar) n->set_attr_int("scalar", 1);
  Shape out_shape;
  if (!scalar) out_shape.push_back(Dim(static_cast<int64_t>(dims.size())));
  n->output(0)->set_type(Type::tensor(DType::Int64, out_shape));
  return n;
}

std::optional<std::map<std::string, int64_t>> bind_symbols(const Node& n,
                                                           const std::vector<std::vector<int64_t>>& shapes) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < n.num_inputs() && i < shapes.size(); ++i) {
    const Value* in = n.input(i);
    if (!in || !in->shape()) continue;
    const Shape& s = *in->shape();
    if (s.size() != shapes[i].size()) return std::nullopt;
    for (size_t k = 0; k < s.size(); ++k)
      if (s[k].is_symbol() && !s[k].is_unknown()) out[s[k].name()] = shapes[i][k];
  }
  return out;
}

std::optional<Tensor> evaluate_symbolic_shape(const Node& n, const std::map<std::string, int64_t>& symbols) {
  std::vector<int64_t> values;
  for (const Dim& d : symbolic_shape_dims(n)) {
    auto v = d.evaluate([&](const std::string& s) -> std::optional<int64_t> {
      auto it = symbols.find(s);
      return it == symbols.end() ? std::nullopt : std::optional(it->second);
    });
    if (!v) return std::nullopt;
    values.push_back(*v);
  }
  if (symbolic_shape_is_scalar(n)) return Tensor::scalar<int64_t>(DType::Int64, values.at(0));
  return Tensor::from_vector<int64_t>(DType::Int64, {static_cast<int64_t>(values.size())}, values);
}

}  // namespace onnxc::ir
