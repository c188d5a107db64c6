// Sequence and optional ops: element types flow through SequenceConstruct/Insert/At/Erase,
// SplitToSequence and ConcatFromSequence; Optional's `type` attribute (a serialized TypeProto) is
// decoded here since the IR keeps it as bytes.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// ---- a minimal protobuf reader for TypeProto ----

struct Reader {
  const std::string& s;
  size_t pos = 0;
  bool ok = true;

  bool done() const { return !ok || pos >= s.size(); }
  uint64_t varint() {
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && pos < s.size(); shift += 7) {
      auto b = static_cast<uint8_t>(s[pos++]);
      r |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return r;
    }
    ok = false;
    return 0;
  }
  // Reads one field: its number, and its bytes when length-delimited (else its varint).
  int field(std::string& bytes, uint64_t& value) {
    uint64_t key = varint();
    int wire = static_cast<int>(key & 7);
    if (wire == 0) value = varint();
    else if (wire == 2) {
      uint64_t n = varint();
      if (n > s.size() - pos) ok = false;
      else bytes = s.substr(pos, n);
      pos += n;
    } else if (wire == 1 || wire == 5) pos += wire == 1 ? 8 : 4;
    else ok = false;
    return static_cast<int>(key >> 3);
  }
};

Shape decode_shape(const std::string& bytes) {
  Shape r;
  Reader rd{bytes};
  std::string b;
  uint64_t v;
  while (!rd.done()) {
    if (rd.field(b, v) != 1) continue;
    Reader dim{b};
    std::string db;
    uint64_t dv;
    Dim d = Dim::unknown();
    while (!dim.done()) {
      int f = dim.field(db, dv);
      if (f == 1) d = Dim(static_cast<int64_t>(dv));
      else if (f == 2) d = Dim::symbol(db);
    }
    r.push_back(d);
  }
  return r;
}

Type decode_type(const std::string& bytes) {
  Reader rd{bytes};
  std::string b;
  uint64_t v;
  while (!rd.done()) {
    int f = rd.field(b, v);
    Reader inner{b};
    std::string ib;
    uint64_t iv;
    if (f == 1 || f == 8) {  // tensor_type, sparse_tensor_type
      Type t = Type::tensor(DType::Undefined);
      if (f == 8) t.kind = Type::Kind::SparseTensor;
      while (!inner.done()) {
        int g = inner.field(ib, iv);
        if (g == 1) t.dtype = dtype_is_valid(static_cast<int32_t>(iv)) ? static_cast<DType>(iv) : DType::Undefined;
        else if (g == 2) t.shape = decode_shape(ib);
      }
      return t;
    }
    if (f == 4 || f == 9) {  // sequence_type, optional_type
      Type elem;
      while (!inner.done())
        if (inner.field(ib, iv) == 1) elem = decode_type(ib);
      return Type::container(f == 4 ? Type::Kind::Sequence : Type::Kind::Optional, elem);
    }
  }
  return Type();
}

// ---- rules ----
// Besides the element type, a sequence of known length keeps its elements' types in
// InferenceResult::sequence_elements.

Type elem_of(const Type& t) { return t.elem ? *t.elem : Type(); }
Type seq_of(Type elem) { return Type::container(Type::Kind::Sequence, std::move(elem)); }

using Elements = std::optional<std::vector<Type>>;

Elements in_elements(const InferContext& ctx, size_t i) {
  const auto& m = ctx.state().result.sequence_elements;
  auto it = m.find(ctx.node().input(i));
  return it == m.end() ? Elements() : Elements(it->second);
}

// Output 0 is a sequence of `elements` (when known) whose element type is `elem`.
void set_sequence(InferContext& ctx, Type elem, const Elements& elements) {
  ctx.set_output(0, seq_of(std::move(elem)));
  auto& m = ctx.state().result.sequence_elements;
  if (!ctx.has_output(0)) return;
  if (elements) m[ctx.node().output(0)] = *elements;
  else m.erase(ctx.node().output(0));
}

Type join_all(const std::vector<Type>& ts, Type init) {
  for (const auto& t : ts) init = init.kind == Type::Kind::Unknown ? t : join_types(init, t);
  return init;
}

// A position argument (SequenceAt/Insert/Erase) as an index into `n` elements; nullopt if unknown.
std::optional<size_t> position(const InferContext& ctx, size_t input, size_t n, bool insert) {
  if (!ctx.has_input(input)) return insert ? n : n - 1;
  auto p = ctx.in_int(input);
  if (!p) return std::nullopt;
  int64_t k = *p < 0 ? *p + static_cast<int64_t>(n) : *p;
  int64_t limit = static_cast<int64_t>(insert ? n : n - 1);
  infer_check(ctx, k >= 0 && k <= limit) << "position " << *p << " is out of range for " << n << " elements";
  return static_cast<size_t>(k);
}

void infer_sequence_empty(InferContext& ctx) {
  DType dt = dtype_attr(ctx, "dtype", DType::Float32);
  set_sequence(ctx, Type::tensor(dt), std::vector<Type>{});
}

void infer_sequence_construct(InferContext& ctx) {
  std::vector<Type> elems;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) elems.push_back(ctx.in_type(i));
  set_sequence(ctx, join_all(elems, Type()), elems);
}

// An element type without a rank says nothing yet (SequenceEmpty's); the inserted tensor decides.
void infer_sequence_insert(InferContext& ctx) {
  Type elem = elem_of(ctx.in_type(0)), added = ctx.in_type(1);
  Elements elems = in_elements(ctx, 0);
  std::optional<size_t> at = elems ? position(ctx, 2, elems->size(), true) : std::nullopt;
  if (at) elems->insert(elems->begin() + static_cast<int64_t>(*at), added);
  else elems.reset();
  Type joined = elem.is_tensor() && !elem.shape ? added : join_types(elem, added);
  set_sequence(ctx, elems ? join_all(*elems, Type()) : joined, elems);
}

void infer_sequence_at(InferContext& ctx) {
  Elements elems = in_elements(ctx, 0);
  std::optional<size_t> at = elems && !elems->empty() ? position(ctx, 1, elems->size(), false) : std::nullopt;
  ctx.set_output(0, at ? (*elems)[*at] : elem_of(ctx.in_type(0)));
}

void infer_sequence_erase(InferContext& ctx) {
  Elements elems = in_elements(ctx, 0);
  std::optional<size_t> at = elems && !elems->empty() ? position(ctx, 1, elems->size(), false) : std::nullopt;
  if (at) elems->erase(elems->begin() + static_cast<int64_t>(*at));
  else elems.reset();
  set_sequence(ctx, elem_of(ctx.in_type(0)), elems);
}

void infer_sequence_length(InferContext& ctx) {
  ctx.set_tensor(0, DType::Int64, Shape{});
  if (Elements elems = in_elements(ctx, 0)) ctx.set_value(0, {static_cast<int64_t>(elems->size())});
}

// Sizes of the parts along the axis, when known: one per element.
std::optional<std::vector<Dim>> split_parts(const InferContext& ctx, const Dim& d) {
  if (!ctx.has_input(1)) {
    if (!d.is_const()) return std::nullopt;
    return std::vector<Dim>(static_cast<size_t>(d.value()), Dim(1));
  }
  auto split = ctx.in_ints(1);
  if (!split) return std::nullopt;
  if (ctx.in_rank(1) != 0) return to_dims(*split);
  int64_t s = (*split)[0];
  if (!d.is_const() || s <= 0) return std::nullopt;
  std::vector<Dim> parts(static_cast<size_t>(d.value() / s), Dim(s));
  if (d.value() % s) parts.push_back(d.value() % s);
  return parts;
}

void infer_split_to_sequence(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  if (!x) {
    set_sequence(ctx, Type::tensor(ctx.in_dtype(0)), std::nullopt);
    return;
  }
  int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), static_cast<int64_t>(x->size()));
  bool keep = ctx.node().attr_int("keepdims", 1) != 0 || ctx.has_input(1);
  auto part_type = [&](const Dim& d) {
    Shape s = *x;
    if (keep) s[axis] = d;
    else s.erase(s.begin() + axis);
    return Type::tensor(ctx.in_dtype(0), s);
  };
  auto parts = split_parts(ctx, (*x)[axis]);
  Elements elems;
  if (parts) {
    elems.emplace();
    for (const auto& d : *parts) elems->push_back(part_type(d));
  }
  set_sequence(ctx, elems && !elems->empty() ? join_all(*elems, Type()) : part_type(Dim::unknown()), elems);
}

// Concatenation (or stacking, with new_axis) of the elements along `axis`.
void infer_concat_from_sequence(InferContext& ctx) {
  Type elem = elem_of(ctx.in_type(0));
  Elements elems = in_elements(ctx, 0);
  std::optional<Shape> out;
  if (elem.has_rank()) {
    bool new_axis = ctx.node().attr_int("new_axis", 0) != 0;
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", 0), elem.rank() + (new_axis ? 1 : 0));
    out = *elem.shape;
    Dim total = Dim(0);
    for (const Type& t : elems ? *elems : std::vector<Type>{}) {
      if (!t.has_rank() || t.rank() != elem.rank()) return ctx.set_tensor(0, elem.dtype, std::nullopt);
      total = total + (new_axis ? Dim(1) : (*t.shape)[axis]);
    }
    Dim d = elems && !elems->empty() ? total : Dim::unknown();
    if (new_axis) out->insert(out->begin() + axis, d);
    else (*out)[axis] = d;
  }
  ctx.set_tensor(0, elem.dtype, out);
}

void infer_optional(InferContext& ctx) {
  if (ctx.has_input(0)) {
    ctx.set_output(0, Type::container(Type::Kind::Optional, ctx.in_type(0)));
    return;
  }
  const Attribute* a = ctx.node().attr("type");
  if (a && !a->opaque.empty()) ctx.set_output(0, Type::container(Type::Kind::Optional, decode_type(a->opaque[0])));
}

void infer_optional_has_element(InferContext& ctx) { ctx.set_tensor(0, DType::Bool, Shape{}); }

void infer_optional_get_element(InferContext& ctx) {
  const Type& t = ctx.in_type(0);
  ctx.set_output(0, t.kind == Type::Kind::Optional ? elem_of(t) : t);
}

}  // namespace

void add_sequence_ops(OpTable& t) {
  t.add_all({"SequenceEmpty"}, kSequence, infer_sequence_empty);
  t.add_all({"SequenceConstruct"}, kSequence, infer_sequence_construct);
  t.add_all({"SequenceInsert"}, kSequence, infer_sequence_insert);
  t.add_all({"SequenceAt"}, kSequence, infer_sequence_at);
  t.add_all({"SequenceErase"}, kSequence, infer_sequence_erase);
  t.add_all({"SequenceLength"}, kSequence, infer_sequence_length);
  t.add_all({"SplitToSequence"}, kSequence, infer_split_to_sequence);
  t.add_all({"ConcatFromSequence"}, kSequence, infer_concat_from_sequence);
  t.add_all({"Optional"}, kSequence, infer_optional);
  t.add_all({"OptionalHasElement"}, kSequence, infer_optional_has_element);
  t.add_all({"OptionalGetElement"}, kSequence, infer_optional_get_element);
}

}  // namespace onnxc::ir
