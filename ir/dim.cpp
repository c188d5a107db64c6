// Canonicalising constructors for symbolic dims. Sums and products are flattened and distributed
// into a polynomial whose terms are sorted by their text; like terms are merged. Division, modulo,
// min and max are simplified when the arithmetic is exact and kept as opaque atoms otherwise.
#include "ir/dim.h"

#include <algorithm>
#include <atomic>

#include "ir/error.h"

namespace onnxc::ir {

struct Dim::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  std::vector<Dim> ops;
  std::string key;  // canonical text (unknown symbols keep their unique name here)
};

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }
bool is_unknown_name(const std::string& n) { return n.rfind("?", 0) == 0; }

std::string render(const Dim::Node& n) {
  auto wrap = [](const Dim& d) { return d.kind() == Dim::Kind::Add ? "(" + d.str() + ")" : d.str(); };
  const auto& ops = n.ops;
  switch (n.kind) {
    case Dim::Kind::Const: return std::to_string(n.value);
    case Dim::Kind::Sym: return n.name;
    case Dim::Kind::Add: {  // positive terms first, so `seq-past` rather than `-past+seq`
      std::string pos, neg;
      for (const auto& op : ops) {
        std::string t = op.str();
        if (t[0] == '-') neg += t;
        else pos += (pos.empty() ? "" : "+") + t;
      }
      return pos.empty() ? neg : pos + neg;
    }
    case Dim::Kind::Mul: {
      std::string s;
      size_t i = 0;
      if (ops[0].is_const() && ops[0].value() == -1) {
        s = "-";
        i = 1;
      }
      for (size_t j = i; j < ops.size(); ++j) s += (j > i ? "*" : "") + wrap(ops[j]);
      return s;
    }
    default: {
      static const char* fn[] = {"", "", "", "", "floordiv", "ceildiv", "mod", "min", "max"};
      return std::string(fn[static_cast<int>(n.kind)]) + "(" + ops[0].str() + "," + ops[1].str() + ")";
    }
  }
}

// A polynomial: monomial key -> (factors, coefficient), plus a constant.
struct Poly {
  std::map<std::string, std::pair<std::vector<Dim>, int64_t>> terms;
  int64_t constant = 0;
};

}  // namespace

struct DimOps {
  static Dim make(Dim::Kind k, int64_t v, std::string name, std::vector<Dim> ops) {
    auto n = std::make_shared<Dim::Node>();
    n->kind = k;
    n->value = v;
    n->name = std::move(name);
    n->ops = std::move(ops);
    n->key = render(*n);
    return Dim(std::shared_ptr<const Dim::Node>(std::move(n)));
  }

  static std::string key(const Dim& d) { return d.n_->key; }

  static void add_to_poly(Poly& p, const Dim& d, int64_t scale) {
    switch (d.kind()) {
      case Dim::Kind::Const: p.constant += scale * d.value(); return;
      case Dim::Kind::Add:
        for (const auto& t : d.operands()) add_to_poly(p, t, scale);
        return;
      case Dim::Kind::Mul: {
        int64_t coef = 1;
        std::vector<Dim> factors;
        for (const auto& f : d.operands()) {
          if (f.is_const()) coef *= f.value();
          else factors.push_back(f);
        }
        add_term(p, coef * scale, factors);
        return;
      }
      default: add_term(p, scale, {d});
    }
  }

  static void add_term(Poly& p, int64_t coef, std::vector<Dim> factors) {
    if (factors.empty()) {
      p.constant += coef;
      return;
    }
    std::sort(factors.begin(), factors.end());
    std::string k;
    for (const auto& f : factors) k += key(f) + "*";
    auto& slot = p.terms[k];
    slot.first = std::move(factors);
    slot.second += coef;
  }

  static Dim monomial(int64_t coef, const std::vector<Dim>& factors) {
    if (coef == 0) return Dim(0);
    if (factors.empty()) return Dim(coef);
    if (coef == 1 && factors.size() == 1) return factors[0];
    std::vector<Dim> ops;
    if (coef != 1) ops.push_back(Dim(coef));
    ops.insert(ops.end(), factors.begin(), factors.end());
    return make(Dim::Kind::Mul, 0, "", std::move(ops));
  }

  static Dim from_poly(const Poly& p) {
    std::vector<Dim> terms;
    for (const auto& [k, t] : p.terms)
      if (t.second != 0) terms.push_back(monomial(t.second, t.first));
    if (terms.empty()) return Dim(p.constant);
    if (p.constant != 0) terms.push_back(Dim(p.constant));
    if (terms.size() == 1) return terms[0];
    return make(Dim::Kind::Add, 0, "", std::move(terms));
  }

  static Poly poly(const Dim& d) {
    Poly p;
    add_to_poly(p, d, 1);
    return p;
  }

  static Dim mul(const Dim& a, const Dim& b) {
    Poly pa = poly(a), pb = poly(b), out;
    auto each = [](const Poly& p, auto&& fn) {
      for (const auto& [k, t] : p.terms)
        if (t.second != 0) fn(t.second, t.first);
      if (p.constant != 0) fn(p.constant, std::vector<Dim>{});
    };
    each(pa, [&](int64_t ca, const std::vector<Dim>& fa) {
      each(pb, [&](int64_t cb, const std::vector<Dim>& fb) {
        std::vector<Dim> f = fa;
        f.insert(f.end(), fb.begin(), fb.end());
        add_term(out, ca * cb, std::move(f));
      });
    });
    return from_poly(out);
  }

  // True if every coefficient and the constant of `a` is divisible by c; fills the quotient.
  static bool divide_exact(const Dim& a, int64_t c, Dim& q) {
    Poly p = poly(a);
    if (p.constant % c != 0) return false;
    for (auto& [k, t] : p.terms)
      if (t.second % c != 0) return false;
    for (auto& [k, t] : p.terms) t.second /= c;
    p.constant /= c;
    q = from_poly(p);
    return true;
  }

  // Exact division by a monomial `b` (coefficient times symbols/atoms): every term of `a` must hold
  // b's factors and a multiple of its coefficient, e.g. (batch*seq*64 + batch*past*64) / (batch*64).
  static bool divide_monomial(const Dim& a, const Dim& b, Dim& q) {
    Poly pb = poly(b);
    if (pb.constant != 0 || pb.terms.size() != 1) return false;
    const auto& [bf, bc] = pb.terms.begin()->second;
    if (bc == 0) return false;
    Poly pa = poly(a), out;
    if (pa.constant != 0) return false;
    for (const auto& [k, t] : pa.terms) {
      if (t.second == 0) continue;
      if (t.second % bc != 0) return false;
      std::vector<Dim> rest = t.first;
      for (const auto& f : bf) {
        auto it = std::find(rest.begin(), rest.end(), f);
        if (it == rest.end()) return false;
        rest.erase(it);
      }
      add_term(out, t.second / bc, std::move(rest));
    }
    q = from_poly(out);
    return true;
  }

  static bool nonneg(const Dim& d) {
    const auto& ops = d.operands();
    auto all = [&] { return std::all_of(ops.begin(), ops.end(), nonneg); };
    switch (d.kind()) {
      case Dim::Kind::Const: return d.value() >= 0;
      case Dim::Kind::Sym: return true;
      case Dim::Kind::Add:
      case Dim::Kind::Mul:
      case Dim::Kind::FloorDiv:
      case Dim::Kind::CeilDiv:
      case Dim::Kind::Min: return all();
      case Dim::Kind::Mod: return nonneg(ops[1]);
      case Dim::Kind::Max: return nonneg(ops[0]) || nonneg(ops[1]);
    }
    return false;
  }

  static Dim binary(Dim::Kind k, const Dim& a, const Dim& b) {
    auto ca = a.as_const(), cb = b.as_const();
    switch (k) {
      case Dim::Kind::FloorDiv:
      case Dim::Kind::CeilDiv: {
        if (cb && *cb == 1) return a;
        if (ca && cb && *cb != 0)
          return Dim(k == Dim::Kind::FloorDiv ? floor_div(*ca, *cb) : -floor_div(-*ca, *cb));
        Dim q;
        if (cb && *cb != 0 && divide_exact(a, *cb, q)) return q;
        if (a == b) return Dim(1);
        if (!cb && divide_monomial(a, b, q)) return q;
        break;
      }
      case Dim::Kind::Mod: {
        if (cb && *cb == 1) return Dim(0);
        if (ca && cb && *cb != 0) return Dim(floor_mod(*ca, *cb));
        Dim q;
        if (cb && *cb != 0 && divide_exact(a, *cb, q)) return Dim(0);
        if (a == b) return Dim(0);
        if (!cb && divide_monomial(a, b, q)) return Dim(0);
        break;
      }
      case Dim::Kind::Min:
      case Dim::Kind::Max: {
        if (ca && cb) return Dim(k == Dim::Kind::Min ? std::min(*ca, *cb) : std::max(*ca, *cb));
        if (a == b) return a;
        // Dims are never negative, so e.g. min(seq, seq+1) = seq and max(seq-1+1, 0) = seq.
        bool b_ge_a = nonneg(b - a), a_ge_b = nonneg(a - b);
        if (b_ge_a) return k == Dim::Kind::Min ? a : b;
        if (a_ge_b) return k == Dim::Kind::Min ? b : a;
        std::vector<Dim> ops = {a, b};
        std::sort(ops.begin(), ops.end());
        return make(k, 0, "", std::move(ops));
      }
      default: internal_error << "not a binary atom kind";
    }
    return make(k, 0, "", {a, b});
  }
};

Dim::Dim(int64_t v) {
  static const std::shared_ptr<const Node> zero = [] {
    auto n = std::make_shared<Node>();
    n->kind = Kind::Const;
    n->key = "0";
    return std::shared_ptr<const Node>(n);
  }();
  if (v == 0) {
    n_ = zero;
    return;
  }
  auto n = std::make_shared<Node>();
  n->kind = Kind::Const;
  n->value = v;
  n->key = std::to_string(v);
  n_ = std::move(n);
}
Dim Dim::symbol(const std::string& name) { return DimOps::make(Kind::Sym, 0, name, {}); }
Dim Dim::unknown() {
  static std::atomic<int64_t> counter{0};
  return symbol("?" + std::to_string(counter++));
}

Dim::Kind Dim::kind() const { return n_->kind; }
bool Dim::is_unknown() const { return n_->kind == Kind::Sym && is_unknown_name(n_->name); }
bool Dim::has_unknown() const { return n_->key.find('?') != std::string::npos; }
std::optional<int64_t> Dim::as_const() const {
  if (n_->kind == Kind::Const) return n_->value;
  return std::nullopt;
}
int64_t Dim::value() const {
  internal_check(is_const()) << "Dim::value() on symbolic dim " << str();
  return n_->value;
}
const std::string& Dim::name() const {
  internal_check(is_symbol()) << "Dim::name() on non-symbol " << str();
  return n_->name;
}
const std::vector<Dim>& Dim::operands() const { return n_->ops; }

std::string Dim::str() const {
  if (is_unknown()) return "?";
  if (n_->kind == Kind::Const || n_->kind == Kind::Sym) return n_->key;
  // Compound dims may contain unknowns; re-render so they print as "?".
  return n_->key.find('?') == std::string::npos ? n_->key : render(*n_);
}
bool Dim::operator==(const Dim& o) const { return n_ == o.n_ || n_->key == o.n_->key; }
bool Dim::operator<(const Dim& o) const { return n_->key < o.n_->key; }

void Dim::collect_symbols(std::set<std::string>& out) const {
  if (n_->kind == Kind::Sym) out.insert(n_->name);
  for (const auto& o : n_->ops) o.collect_symbols(out);
}

std::optional<int64_t> Dim::evaluate(
    const std::function<std::optional<int64_t>(const std::string&)>& lookup) const {
  switch (n_->kind) {
    case Kind::Const: return n_->value;
    case Kind::Sym: return lookup(n_->name);
    default: break;
  }
  std::vector<int64_t> v;
  for (const auto& o : n_->ops) {
    auto x = o.evaluate(lookup);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  int64_t r = v[0];
  switch (n_->kind) {
    case Kind::Add: for (size_t i = 1; i < v.size(); ++i) r += v[i]; return r;
    case Kind::Mul: for (size_t i = 1; i < v.size(); ++i) r *= v[i]; return r;
    case Kind::FloorDiv: if (v[1] == 0) return std::nullopt; return floor_div(v[0], v[1]);
    case Kind::CeilDiv: if (v[1] == 0) return std::nullopt; return -floor_div(-v[0], v[1]);
    case Kind::Mod: if (v[1] == 0) return std::nullopt; return floor_mod(v[0], v[1]);
    case Kind::Min: return std::min(v[0], v[1]);
    case Kind::Max: return std::max(v[0], v[1]);
    default: return std::nullopt;
  }
}

Dim Dim::substitute(const std::map<std::string, Dim>& binding) const {
  switch (n_->kind) {
    case Kind::Const: return *this;
    case Kind::Sym: {
      auto it = binding.find(n_->name);
      return it == binding.end() ? *this : it->second;
    }
    default: break;
  }
  std::vector<Dim> ops;
  for (const auto& o : n_->ops) ops.push_back(o.substitute(binding));
  Dim r = ops[0];
  switch (n_->kind) {
    case Kind::Add: for (size_t i = 1; i < ops.size(); ++i) r = r + ops[i]; return r;
    case Kind::Mul: for (size_t i = 1; i < ops.size(); ++i) r = r * ops[i]; return r;
    default: return DimOps::binary(n_->kind, ops[0], ops[1]);
  }
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) return Dim(a.value() + b.value());
  Poly p = DimOps::poly(a);
  DimOps::add_to_poly(p, b, 1);
  return DimOps::from_poly(p);
}
Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) return Dim(a.value() - b.value());
  Poly p = DimOps::poly(a);
  DimOps::add_to_poly(p, b, -1);
  return DimOps::from_poly(p);
}
Dim operator-(const Dim& a) { return Dim(0) - a; }
Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) return Dim(a.value() * b.value());
  return DimOps::mul(a, b);
}
Dim floordiv(const Dim& a, const Dim& b) { return DimOps::binary(Dim::Kind::FloorDiv, a, b); }
Dim ceildiv(const Dim& a, const Dim& b) { return DimOps::binary(Dim::Kind::CeilDiv, a, b); }
Dim mod(const Dim& a, const Dim& b) { return DimOps::binary(Dim::Kind::Mod, a, b); }
Dim min(const Dim& a, const Dim& b) { return DimOps::binary(Dim::Kind::Min, a, b); }
Dim max(const Dim& a, const Dim& b) { return DimOps::binary(Dim::Kind::Max, a, b); }

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + s[i].str();
  return r + "]";
}
Dim shape_numel(const Shape& s) {
  Dim n(1);
  for (const auto& d : s) n = n * d;
  return n;
}
bool shape_is_static(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](const Dim& d) { return d.is_const(); });
}
bool known_nonnegative(const Dim& d) { return DimOps::nonneg(d); }
std::optional<std::vector<int64_t>> shape_as_ints(const Shape& s) {
  std::vector<int64_t> r;
  for (const auto& d : s) {
    if (!d.is_const()) return std::nullopt;
    r.push_back(d.value());
  }
  return r;
}

}  // namespace onnxc::ir
