// InferContext, the merge rules for inferred types, and the helpers rule files share.
#include "ir/infer/context.h"

#include <cmath>
#include <functional>
#include <iostream>

namespace onnxc::ir {
namespace {

const Type& unknown_type() {
  static const Type t;
  return t;
}

// How much a dim says: a constant, an expression of named symbols, one involving `?`, or `?`.
int precision(const Dim& d) {
  if (d.is_const()) return 3;
  if (d.is_unknown()) return 0;
  return d.has_unknown() ? 1 : 2;
}

void collect_type_symbols(const Type& t, std::set<std::string>& out) {
  if (t.shape)
    for (const auto& d : *t.shape) d.collect_symbols(out);
  if (t.elem) collect_type_symbols(*t.elem, out);
}

void collect_graph_symbols(const Graph& g, std::set<std::string>& out) {
  for (const Value* v : g.values()) collect_type_symbols(v->type(), out);
  for (const Node* n : g.nodes())
    for (const Graph* sg : n->subgraphs()) collect_graph_symbols(*sg, out);
}

std::optional<Dim> element_as_dim(const Tensor& t, int64_t i) {
  if (dtype_is_integer(t.dtype()) || t.dtype() == DType::Bool) return Dim(t.get_i64(i));
  if (!dtype_is_float(t.dtype())) return std::nullopt;
  double x = t.get_f64(i);
  if (!std::isfinite(x) || x != std::floor(x) || std::fabs(x) > 9e15) return std::nullopt;
  return Dim(static_cast<int64_t>(x));
}

// Shape values are kept for tensors of rank 0 or 1 only, with as many elements as the type says.
bool fits(const Type& t, const std::vector<Dim>& contents) {
  if (!t.has_rank() || t.rank() > 1) return false;
  Dim n = t.rank() == 0 ? Dim(1) : (*t.shape)[0];
  return !n.is_const() || n.value() == static_cast<int64_t>(contents.size());
}

}  // namespace

// ---- ShapeValues ----

std::optional<std::vector<Dim>> ShapeValues::get(const Value* v) const {
  if (!v) return std::nullopt;
  auto it = values_.find(v);
  if (it != values_.end()) return it->second;
  if (!v->is_constant()) return std::nullopt;
  return tensor_dims(v->constant());
}

std::optional<std::vector<Dim>> tensor_dims(const Tensor& t) {
  if (t.rank() > 1 || t.numel() > ShapeValues::kMaxElements || t.dtype() == DType::String) return std::nullopt;
  std::vector<Dim> r;
  if (t.numel() == 0) return r;
  if (t.empty_data()) return std::nullopt;
  for (int64_t i = 0; i < t.numel(); ++i) {
    auto d = element_as_dim(t, i);
    if (!d) return std::nullopt;
    r.push_back(*d);
  }
  return r;
}

std::optional<std::vector<Dim>> shape_value(const InferenceResult& r, const Value* v) { return r.shape_values.get(v); }

namespace {
const char kValuePrefix[] = "value:";
}  // namespace

std::string value_symbol(const Value& v) { return kValuePrefix + v.name(); }

std::optional<std::string> value_symbol_source(const std::string& symbol) {
  if (symbol.rfind(kValuePrefix, 0) != 0) return std::nullopt;
  return symbol.substr(sizeof kValuePrefix - 1);
}

Dim InferState::fresh_symbol(const std::string& prefix, const Graph& g) {
  if (!used_symbols) {
    used_symbols.emplace();
    const Graph* root = &g;
    while (root->parent()) root = root->parent();
    collect_graph_symbols(*root, *used_symbols);
  }
  for (;;) {
    std::string name = prefix + "_" + std::to_string(next_id[prefix]++);
    if (used_symbols->insert(name).second) return Dim::symbol(name);
  }
}

// ---- InferContext ----

InferContext::InferContext(Node& n, int64_t opset, InferState& st)
    : node_(n), opset_(opset), st_(st), out_types_(n.num_outputs()), out_values_(n.num_outputs()) {}

std::string InferContext::where() const {
  std::string g = node_.graph() && node_.graph()->parent() ? " in graph '" + node_.graph()->name() + "'" : "";
  return "shape inference: " + node_.describe() + g + " (opset " + std::to_string(opset_) + "): ";
}

const Type& InferContext::in_type(size_t i) const {
  const Value* v = node_.input(i);
  return v ? v->type() : unknown_type();
}

const std::optional<Shape>& InferContext::in_shape(size_t i) const {
  static const std::optional<Shape> none;
  const Type& t = in_type(i);
  return t.is_tensor() ? t.shape : none;
}

int64_t InferContext::in_rank(size_t i) const {
  const auto& s = in_shape(i);
  return s ? static_cast<int64_t>(s->size()) : -1;
}

const Tensor* InferContext::in_const(size_t i) const {
  const Value* v = node_.input(i);
  return v && v->is_constant() ? &v->constant() : nullptr;
}

std::optional<std::vector<Dim>> InferContext::in_value(size_t i) const {
  return st_.result.shape_values.get(node_.input(i));
}

std::optional<std::vector<int64_t>> InferContext::in_ints(size_t i) const {
  auto v = in_value(i);
  if (!v) return std::nullopt;
  std::vector<int64_t> r;
  for (const auto& d : *v) {
    if (!d.is_const()) return std::nullopt;
    r.push_back(d.value());
  }
  return r;
}

std::optional<int64_t> InferContext::in_int(size_t i) const {
  auto v = in_ints(i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

std::optional<double> InferContext::in_scalar_f64(size_t i) const {
  const Tensor* t = in_const(i);
  if (t && t->numel() == 1 && !t->empty_data() && t->dtype() != DType::String) return t->get_f64(0);
  auto v = in_int(i);
  if (v) return static_cast<double>(*v);
  return std::nullopt;
}

Dim InferContext::in_size(size_t i) const {
  auto v = in_value(i);
  if (v && v->size() == 1) return (*v)[0];
  const Value* x = node_.input(i);
  if (!x || x->is_constant() || !dtype_is_integer(x->dtype()) || !x->shape() || x->shape()->size() > 1) return Dim::unknown();
  if (x->shape()->size() == 1 && (*x->shape())[0] != Dim(1)) return Dim::unknown();
  return Dim::symbol(value_symbol(*x));
}

const Type& InferContext::out_type(size_t i) const {
  const Value* v = node_.output(i);
  return v ? v->type() : unknown_type();
}

void InferContext::set_output(size_t i, Type t) {
  if (i < out_types_.size()) out_types_[i] = std::move(t);
}

void InferContext::set_value(size_t i, std::vector<Dim> contents) {
  if (i < out_values_.size() && static_cast<int64_t>(contents.size()) <= ShapeValues::kMaxElements)
    out_values_[i] = std::move(contents);
}

Dim InferContext::fresh_dim(size_t out, size_t axis, const std::string& prefix) {
  const Type& t = out_type(out);
  if (t.shape && axis < t.shape->size() && !(*t.shape)[axis].is_unknown()) return (*t.shape)[axis];
  return st_.fresh_symbol(prefix, *node_.graph());
}

std::vector<Type> InferContext::infer_subgraph(Graph& g, const std::vector<Type>& input_types) {
  for (size_t i = 0; i < g.inputs().size() && i < input_types.size(); ++i) {
    Value* v = g.inputs()[i];
    v->set_type(
        merge_types(v->type(), input_types[i], where() + "subgraph '" + g.name() + "' input '" + v->name() + "': "));
  }
  infer_graph_nodes(g, st_);
  std::vector<Type> out;
  for (const Value* v : g.outputs()) out.push_back(v ? v->type() : Type());
  return out;
}

void InferContext::commit() {
  for (size_t i = 0; i < node_.num_outputs(); ++i) {
    Value* v = node_.output(i);
    if (!v) continue;
    if (out_types_[i]) {
      if (v->type_is_annotation() && !v->is_graph_output()) {
        try {
          v->set_type(merge_types(v->type(), *out_types_[i], ""));
        } catch (const UserError&) {
          st_.result.warnings.push_back(where() + "output '" + v->name() + "': value_info declares " + v->type().str() +
                                        ", but the node produces " + out_types_[i]->str() +
                                        "; using the inferred type (the declaration is wrong)");
          std::cerr << "onnxc: warning: " << st_.result.warnings.back() << "\n";
          v->set_type(*out_types_[i]);
        }
      } else {
        v->set_type(merge_types(v->type(), *out_types_[i], where() + "output '" + v->name() + "': "));
      }
    }
    v->set_type_is_annotation(false);
    if (out_values_[i] && fits(v->type(), *out_values_[i])) st_.result.shape_values.set(v, std::move(*out_values_[i]));
    else st_.result.shape_values.erase(v);
  }
}

// ---- merging ----

Type merge_types(const Type& e, const Type& i, const std::string& what) {
  if (i.kind == Type::Kind::Unknown) return e;
  if (e.kind == Type::Kind::Unknown) return i;
  user_check(e.kind == i.kind) << what << "inferred " << i.str() << ", but it has " << e.str();
  Type r = e;
  if (e.kind == Type::Kind::Tensor || e.kind == Type::Kind::SparseTensor) {
    user_check(e.dtype == DType::Undefined || i.dtype == DType::Undefined || e.dtype == i.dtype)
        << what << "inferred " << i.str() << ", but it has " << e.str();
    if (i.dtype != DType::Undefined) r.dtype = i.dtype;
    if (!i.shape) return r;
    if (!e.shape) {
      r.shape = i.shape;
      return r;
    }
    user_check(e.shape->size() == i.shape->size()) << what << "inferred " << i.str() << ", but it has " << e.str();
    for (size_t k = 0; k < e.shape->size(); ++k) {
      const Dim &de = (*e.shape)[k], &di = (*i.shape)[k];
      user_check(!(de.is_const() && di.is_const()) || de == di)
          << what << "inferred " << i.str() << ", but it has " << e.str();
      (*r.shape)[k] = precision(di) >= precision(de) ? di : de;
    }
    return r;
  }
  if (e.elem && i.elem) r.elem = std::make_shared<Type>(merge_types(*e.elem, *i.elem, what));
  else if (i.elem) r.elem = i.elem;
  return r;
}

Type join_types(const Type& a, const Type& b) {
  if (a.kind == Type::Kind::Unknown || a == b) return a;
  if (b.kind == Type::Kind::Unknown) return a;
  if (a.kind != b.kind) return Type();
  if (a.kind == Type::Kind::Tensor || a.kind == Type::Kind::SparseTensor) {
    std::optional<Shape> s;
    if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
      s = *a.shape;
      for (size_t k = 0; k < s->size(); ++k)
        if ((*s)[k] != (*b.shape)[k]) (*s)[k] = Dim::unknown();
    }
    Type r = Type::tensor(a.dtype != DType::Undefined ? a.dtype : b.dtype, std::move(s));
    r.kind = a.kind;
    return r;
  }
  Type r = a;
  if (a.elem && b.elem) r.elem = std::make_shared<Type>(join_types(*a.elem, *b.elem));
  else r.elem = nullptr;
  return r;
}

// ---- helpers ----

Shape unknown_shape(int64_t rank) {
  Shape s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(Dim::unknown());
  return s;
}

std::vector<Dim> to_dims(const std::vector<int64_t>& v) { return std::vector<Dim>(v.begin(), v.end()); }

int64_t norm_axis(const InferContext& ctx, int64_t axis, int64_t rank) {
  infer_check(ctx, axis >= -rank && axis < rank) << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> norm_axes(const InferContext& ctx, std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) a = norm_axis(ctx, a, rank);
  return axes;
}

Dim broadcast_dim(const InferContext& ctx, const Dim& a, const Dim& b) {
  if (a == b || b == Dim(1)) return a;
  if (a == Dim(1)) return b;
  infer_check(ctx, !(a.is_const() && b.is_const())) << "cannot broadcast dims " << a.str() << " and " << b.str();
  if (a.is_const()) return a;
  if (b.is_const()) return b;
  // Valid broadcasting has a == b, a == 1 or b == 1: the larger one either way.
  return max(a, b);
}

std::optional<Shape> broadcast_shapes(const InferContext& ctx, const std::vector<std::optional<Shape>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) {
    if (!s) return std::nullopt;
    rank = std::max(rank, s->size());
  }
  Shape r(rank, Dim(1));
  for (const auto& s : shapes)
    for (size_t k = 0; k < s->size(); ++k) {
      size_t j = rank - s->size() + k;
      r[j] = broadcast_dim(ctx, r[j], (*s)[k]);
    }
  return r;
}

IntsArg ints_arg(const InferContext& ctx, const std::string& attr, size_t input) {
  if (ctx.has_input(input)) return {true, ctx.in_ints(input)};
  const Attribute* a = ctx.node().attr(attr);
  if (!a) return {};
  if (a->kind == Attribute::Kind::Int) return {true, std::vector<int64_t>{a->i}};
  return {true, a->ints};
}

DimsArg dims_arg(const InferContext& ctx, const std::string& attr, size_t input) {
  IntsArg a = ints_arg(ctx, attr, input);
  if (a.values) return {true, to_dims(*a.values)};
  if (ctx.has_input(input)) return {true, ctx.in_value(input)};
  return {a.present, std::nullopt};
}

DType dtype_attr(const InferContext& ctx, const std::string& name, DType def) {
  const Attribute* a = ctx.node().attr(name);
  if (!a) return def;
  infer_check(ctx, a->kind == Attribute::Kind::Int && dtype_is_valid(static_cast<int32_t>(a->i)))
      << "attribute '" << name << "' is not a supported element type";
  return static_cast<DType>(a->i);
}

void pass_value(InferContext& ctx, size_t in, size_t out) {
  if (auto v = ctx.in_value(in)) ctx.set_value(out, *v);
}

void same_as_input(InferContext& ctx, size_t i) {
  ctx.set_output(0, ctx.in_type(i));
  if (auto v = ctx.in_value(i)) ctx.set_value(0, *v);
}

}  // namespace onnxc::ir
