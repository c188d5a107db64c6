// Dim: one tensor dimension, a known integer or a symbolic expression over named dims (`batch`,
// `seq+past`, `batch*seq`). Expressions are kept in a canonical form (a polynomial with integer
// coefficients over symbols and opaque floordiv/ceildiv/mod/min/max atoms), so equal expressions
// compare equal and print the same.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxc::ir {

class Dim {
 public:
  enum class Kind { Const, Sym, Add, Mul, FloorDiv, CeilDiv, Mod, Min, Max };

  Dim() : Dim(int64_t{0}) {}
  Dim(int64_t value);  // NOLINT: implicit, so `Shape{batch, 64}` reads naturally
  Dim(int value) : Dim(int64_t{value}) {}
  static Dim symbol(const std::string& name);
  // A dim nothing is known about (ONNX dim with neither value nor param). Each call makes a new,
  // distinct symbol; it prints as "?".
  static Dim unknown();

  Kind kind() const;
  bool is_const() const { return kind() == Kind::Const; }
  bool is_symbol() const { return kind() == Kind::Sym; }
  bool is_unknown() const;  // made by unknown()
  bool has_unknown() const;  // is or contains a dim made by unknown()
  std::optional<int64_t> as_const() const;
  int64_t value() const;                   // Const only
  const std::string& name() const;         // Sym only
  const std::vector<Dim>& operands() const;  // Add/Mul/FloorDiv/... (Mul's constant comes first)

  std::string str() const;  // canonical text; equal dims have equal text
  bool operator==(const Dim& o) const;
  bool operator!=(const Dim& o) const { return !(*this == o); }
  bool operator<(const Dim& o) const;  // canonical order, for sorting

  void collect_symbols(std::set<std::string>& out) const;
  // Value under a binding of symbols; nullopt if a symbol is unbound or arithmetic is undefined.
  std::optional<int64_t> evaluate(const std::function<std::optional<int64_t>(const std::string&)>& lookup) const;
  Dim substitute(const std::map<std::string, Dim>& binding) const;

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a);
  friend Dim floordiv(const Dim& a, const Dim& b);
  friend Dim ceildiv(const Dim& a, const Dim& b);
  friend Dim mod(const Dim& a, const Dim& b);
  friend Dim min(const Dim& a, const Dim& b);
  friend Dim max(const Dim& a, const Dim& b);

  struct Node;
  friend struct DimOps;

 private:
  explicit Dim(std::shared_ptr<const Node> n) : n_(std::move(n)) {}
  std::shared_ptr<const Node> n_;
};

// Namespace-scope declarations of the friends above, so they can also be named (`&floordiv`), not
// only found through argument-dependent lookup.
Dim floordiv(const Dim& a, const Dim& b);
Dim ceildiv(const Dim& a, const Dim& b);
Dim mod(const Dim& a, const Dim& b);
Dim min(const Dim& a, const Dim& b);
Dim max(const Dim& a, const Dim& b);

using Shape = std::vector<Dim>;

std::string shape_str(const Shape& s);  // "[batch,seq,64]"
// Product of dims (element count); 1 for a scalar.
Dim shape_numel(const Shape& s);
bool shape_is_static(const Shape& s);
// True when `d` is provably >= 0, taking every symbol as a dimension (so >= 0).
bool known_nonnegative(const Dim& d);
std::optional<std::vector<int64_t>> shape_as_ints(const Shape& s);

}  // namespace onnxc::ir
