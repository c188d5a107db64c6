// IR node -> host step arguments (see host_steps.h). The argument order here is the one
// runtime/src/host_*.c read (host_ops.c: the table); model_abi.h documents it.
#include "codegen/host_steps.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "onnxc/model_abi.h"

namespace onnxc::codegen {

namespace {

using Args = HostStepArgs;

Args::Input input(const ir::Node& n, size_t i, std::optional<ir::Tensor> fallback = std::nullopt) {
  const ir::Value* v = i < n.num_inputs() ? n.input(i) : nullptr;
  return {v, v ? std::nullopt : std::move(fallback)};
}

Args::Output output(const ir::Node& n, size_t i, ir::DType dtype, ir::Shape shape) {
  const ir::Value* v = i < n.num_outputs() ? n.output(i) : nullptr;
  return {v, dtype, std::move(shape)};
}

const ir::Shape& shape(const ir::Value* v) {
  internal_check(v && v->shape()) << "host step: value without a shape";
  return *v->shape();
}

// The axis attribute normalized to [0, rank), or -1 when absent (the op flattens its input).
int64_t axis_attr(const ir::Node& n, int64_t rank) {
  const ir::Attribute* a = n.attr("axis");
  if (!a) return -1;
  int64_t axis = a->i < 0 ? a->i + rank : a->i;
  user_check(axis >= 0 && axis < rank) << n.describe() << ": axis " << a->i << " is out of range for rank " << rank;
  return axis;
}

Args nonzero(const ir::Node& n) {
  Args a{ONNXC_HOST_NONZERO, {input(n, 0)}, {}, {}, {{0, 1}}};
  a.outputs.push_back(output(n, 0, ir::DType::Int64, shape(n.output(0))));
  return a;
}

Args compress(const ir::Node& n) {
  int64_t axis = axis_attr(n, static_cast<int64_t>(shape(n.input(0)).size()));
  Args a{ONNXC_HOST_COMPRESS, {input(n, 0), input(n, 1)}, {}, {axis}, {{0, axis < 0 ? 0 : static_cast<int>(axis)}}};
  a.outputs.push_back(output(n, 0, n.input(0)->dtype(), shape(n.output(0))));
  return a;
}

// Unique's outputs are all optional; the op writes all four, so absent ones get shapes here:
// indices and counts [u], inverse [slices] (u from whichever output is present).
Args unique(const ir::Node& n) {
  const ir::Shape& x = shape(n.input(0));
  int64_t axis = axis_attr(n, static_cast<int64_t>(x.size()));
  ir::Dim slices = axis < 0 ? ir::shape_numel(x) : x[axis];
  std::optional<ir::Dim> u;
  if (n.output(0)) u = shape(n.output(0))[axis < 0 ? 0 : axis];
  for (size_t i : {1, 3})
    if (!u && i < n.num_outputs() && n.output(i)) u = shape(n.output(i))[0];
  user_check(u.has_value()) << n.describe() << ": none of Y, indices, counts is used";
  ir::Shape y = axis < 0 ? ir::Shape{*u} : x;
  if (axis >= 0) y[axis] = *u;
  Args a{ONNXC_HOST_UNIQUE, {input(n, 0)}, {}, {axis, n.attr_int("sorted", 1) != 0}, {}};
  a.outputs = {output(n, 0, n.input(0)->dtype(), y), output(n, 1, ir::DType::Int64, {*u}),
               output(n, 2, ir::DType::Int64, {slices}), output(n, 3, ir::DType::Int64, {*u})};
  a.binds = {{1, 0}};
  return a;
}

Args nms(const ir::Node& n) {
  auto one = [](ir::DType dt, auto v) { return ir::Tensor::from_vector<decltype(v)>(dt, {1}, {v}); };
  Args a{ONNXC_HOST_NMS, {input(n, 0), input(n, 1)}, {}, {n.attr_int("center_point_box", 0)}, {{0, 0}}};
  a.inputs.push_back(input(n, 2, one(ir::DType::Int64, int64_t{0})));
  a.inputs.push_back(input(n, 3, one(ir::DType::Float32, 0.0f)));
  a.inputs.push_back(input(n, 4, one(ir::DType::Float32, -std::numeric_limits<float>::infinity())));
  a.outputs.push_back(output(n, 0, ir::DType::Int64, shape(n.output(0))));
  return a;
}

// A Reduce* whose axes are a run-time tensor and keepdims=0: which dims remain depends on data. The
// position in this list is the runtime's reduction kind (runtime/src/host_reduce.c).
const std::vector<std::string>& reduce_kinds() {
  static const std::vector<std::string> k = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                             "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  return k;
}

int64_t reduce_kind(const ir::Node& n) {
  const auto& k = reduce_kinds();
  auto it = std::find(k.begin(), k.end(), n.op_type());
  return it == k.end() ? -1 : it - k.begin();
}

// With keepdims=1 a kernel computes it when the output's dims are known (declared or inferred);
// dims that only the axes' data decides are bound by the host op.
bool is_reduce_by_data(const ir::Node& n) {
  if (reduce_kind(n) < 0 || n.num_inputs() < 2 || !n.input(1) || n.input(1)->is_constant()) return false;
  if (n.attr_int("keepdims", 1) == 0) return true;
  const auto& x = n.input(0)->shape();
  const auto& y = n.output(0)->shape();
  if (!x || !y || x->size() != y->size()) return false;
  for (size_t i = 0; i < y->size(); ++i)
    if (!(*y)[i].is_const() && !((*y)[i] == (*x)[i])) return true;
  return false;
}

Args reduce_by_data(const ir::Node& n) {
  const ir::Shape& y = shape(n.output(0));
  int64_t kind = reduce_kind(n);
  Args a{kind == 0 ? ONNXC_HOST_REDUCE_SUM : ONNXC_HOST_REDUCE, {input(n, 0), input(n, 1)}, {},
         {n.attr_int("keepdims", 1), n.attr_int("noop_with_empty_axes", 0)}, {}};
  if (kind != 0) a.scalars.push_back(kind);
  a.outputs.push_back(output(n, 0, n.input(0)->dtype(), y));
  for (size_t i = 0; i < y.size(); ++i) a.binds.push_back({0, static_cast<int>(i)});
  return a;
}

// TfIdfVectorizer over integer tokens: the pool and its tables (attributes) travel as weights.
Args tfidf(const ir::Node& n) {
  user_check(!n.attr("pool_strings")) << n.describe() << ": TfIdfVectorizer over strings (pool_strings) is not supported";
  user_check(n.input(0) && (n.input(0)->dtype() == ir::DType::Int32 || n.input(0)->dtype() == ir::DType::Int64))
      << n.describe() << ": TfIdfVectorizer needs int32 or int64 tokens";
  auto ints = [&](const char* name) {
    std::vector<int64_t> v = n.attr_ints(name);
    return ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {static_cast<int64_t>(v.size())}, v);
  };
  std::vector<float> weights = n.attr_floats("weights");
  std::string mode = n.attr_string("mode", "TF");
  int64_t mode_id = mode == "TF" ? 0 : mode == "IDF" ? 1 : mode == "TFIDF" ? 2 : -1;
  user_check(mode_id >= 0) << n.describe() << ": mode '" << mode << "' is not TF, IDF or TFIDF";
  Args a{ONNXC_HOST_TFIDF, {input(n, 0)}, {}, {}, {}};
  for (const char* name : {"pool_int64s", "ngram_counts", "ngram_indexes"}) a.inputs.push_back({nullptr, ints(name)});
  a.inputs.push_back(
      {nullptr, ir::Tensor::from_vector<float>(ir::DType::Float32, {static_cast<int64_t>(weights.size())}, weights)});
  a.outputs.push_back(output(n, 0, ir::DType::Float32, shape(n.output(0))));
  a.scalars = {n.attr_int("min_gram_length", 1), n.attr_int("max_gram_length", 1), n.attr_int("max_skip_count", 0), mode_id};
  return a;
}

// A string attribute as NUL-terminated bytes (a uint8 weight the host op reads).
ir::Tensor c_string(const ir::Node& n, const std::string& s, const char* what) {
  user_check(s.find('\0') == std::string::npos) << n.describe() << ": " << what << " holds a NUL byte";
  std::vector<uint8_t> bytes(s.begin(), s.end());
  bytes.push_back(0);
  return ir::Tensor::from_vector<uint8_t>(ir::DType::UInt8, {static_cast<int64_t>(bytes.size())}, bytes);
}

// StringSplit (opset 20): no delimiter, or an empty one, splits on runs of whitespace.
Args string_split(const ir::Node& n) {
  std::string delim = n.attr_string("delimiter", "");
  const ir::Shape& y = shape(n.output(0));
  Args a{ONNXC_HOST_STRING_SPLIT, {input(n, 0), {nullptr, c_string(n, delim, "delimiter")}}, {},
         {n.attr("maxsplit") ? n.attr_int("maxsplit", -1) : -1, delim.empty() ? 1 : 0}, {}};
  a.outputs.push_back(output(n, 0, ir::DType::String, y));
  a.outputs.push_back(output(n, 1, ir::DType::Int64, shape(n.input(0))));
  a.binds = {{0, static_cast<int>(y.size()) - 1}};
  return a;
}

Args regex_full_match(const ir::Node& n) {
  Args a{ONNXC_HOST_REGEX_FULL_MATCH, {input(n, 0), {nullptr, c_string(n, n.attr_string("pattern", ""), "pattern")}}, {}, {}, {}};
  a.outputs.push_back(output(n, 0, ir::DType::Bool, shape(n.input(0))));
  return a;
}

// Cast or CastLike from or to strings: the runtime parses and prints the numbers.
bool is_string_cast(const ir::Node& n) {
  if (n.op_type() != "Cast" && n.op_type() != "CastLike") return false;
  return (n.input(0) && n.input(0)->dtype() == ir::DType::String) || (n.output(0) && n.output(0)->dtype() == ir::DType::String);
}

Args string_cast(const ir::Node& n) {
  auto ok = [](ir::DType t) {
    return t == ir::DType::String || t == ir::DType::Float32 || t == ir::DType::Float64 || t == ir::DType::Int32 ||
           t == ir::DType::Int64;
  };
  ir::DType from = n.input(0)->dtype(), to = n.output(0)->dtype();
  user_check(ok(from) && ok(to)) << n.describe() << ": casting " << ir::dtype_name(from) << " to " << ir::dtype_name(to)
                                 << " is not supported (strings cast to and from float32, float64, int32, int64)";
  Args a{ONNXC_HOST_STRING_CAST, {input(n, 0)}, {}, {}, {}};
  a.outputs.push_back(output(n, 0, n.output(0)->dtype(), shape(n.output(0))));
  return a;
}

// onnxc.CacheAppend (passes/use_kv_cache): args {past, new, present, axis, heads, layer, grow}; the
// runtime writes only the new rows when present shares past's buffer (a session keeping its cache, or
// the links of a stacked cache's chain, which the partitioner makes views of its last one).
Args cache_append(const ir::Node& n) {
  Args a{ONNXC_HOST_CACHE_APPEND, {input(n, 0), input(n, 1)}, {},
         {n.attr_int("axis", 0), n.attr_int("heads", 0), n.attr_int("layer", -1), n.attr_int("grow", 0)}, {}};
  a.outputs.push_back(output(n, 0, n.input(0)->dtype(), shape(n.output(0))));
  return a;
}

// onnxc.CacheScatter (from TensorScatter): args {past, update, write_indices (absent: 0 elements),
// present, axis, circular}.
Args cache_scatter(const ir::Node& n) {
  Args a{ONNXC_HOST_CACHE_SCATTER, {input(n, 0), input(n, 1), input(n, 2, ir::Tensor(ir::DType::Int64, {0}))}, {},
         {n.attr_int("axis", 1), n.attr_int("circular", 0)}, {}};
  a.outputs.push_back(output(n, 0, n.input(0)->dtype(), shape(n.output(0))));
  return a;
}

// StringConcat: two string tensors joined elementwise; Y's (broadcast) shape is known before the run.
Args string_concat(const ir::Node& n) {
  Args a{ONNXC_HOST_STRING_CONCAT, {input(n, 0), input(n, 1)}, {}, {}, {}};
  a.outputs.push_back(output(n, 0, ir::DType::String, shape(n.output(0))));
  return a;
}

// Equal on two string tensors: one bool per (broadcast) pair, the same bytes.
bool is_string_equal(const ir::Node& n) {
  return n.op_type() == "Equal" && n.num_inputs() == 2 && n.input(0) && n.input(0)->dtype() == ir::DType::String;
}

Args string_equal(const ir::Node& n) {
  Args a{ONNXC_HOST_STRING_EQUAL, {input(n, 0), input(n, 1)}, {}, {}, {}};
  a.outputs.push_back(output(n, 0, ir::DType::Bool, shape(n.output(0))));
  return a;
}

// StringNormalizer: the stopwords travel as one uint8 weight, each word followed by a NUL byte (a lone
// NUL when there are none: a weight is never empty), and their count.
Args string_normalizer(const ir::Node& n) {
  std::vector<uint8_t> words;
  if (const ir::Attribute* sw = n.attr("stopwords"))
    for (const std::string& w : sw->strings) {
      user_check(w.find('\0') == std::string::npos) << n.describe() << ": a stopword holds a NUL byte";
      words.insert(words.end(), w.begin(), w.end());
      words.push_back(0);
    }
  int64_t count = 0;
  for (uint8_t b : words) count += b == 0;
  if (words.empty()) words.push_back(0);
  std::string action = n.attr_string("case_change_action", "NONE");
  int64_t change = action == "NONE" ? 0 : action == "LOWER" ? 1 : action == "UPPER" ? 2 : -1;
  user_check(change >= 0) << n.describe() << ": case_change_action '" << action << "' is not NONE, LOWER or UPPER";
  const ir::Shape& y = shape(n.output(0));
  user_check(!y.empty()) << n.describe() << ": StringNormalizer needs an input of rank 1 or 2";
  Args a{ONNXC_HOST_STRING_NORMALIZER, {input(n, 0)}, {}, {change, n.attr_int("is_case_sensitive", 0), count}, {}};
  a.inputs.push_back(
      {nullptr, ir::Tensor::from_vector<uint8_t>(ir::DType::UInt8, {static_cast<int64_t>(words.size())}, words)});
  a.outputs.push_back(output(n, 0, ir::DType::String, y));
  a.binds = {{0, static_cast<int>(y.size()) - 1}};
  return a;
}

// ---- run-time sequences and optionals (runtime/src/host_sequence.c) ----

int value_kind(const ir::Value* v) { return v ? value_kind_of(v->type()) : 0; }

// A value output: no shape (its tensors' shapes are data).
Args::Output value_output(const ir::Node& n, size_t i) {
  const ir::Value* v = n.output(i);
  return {v, element_dtype(v->type()), {}, value_kind(v)};
}

// A tensor output whose dims the op binds from the tensor it reads (SequenceAt, OptionalGetElement).
void tensor_output(const ir::Node& n, Args& a) {
  const ir::Shape& y = shape(n.output(0));
  a.outputs.push_back(output(n, 0, n.output(0)->dtype(), y));
  for (size_t i = 0; i < y.size(); ++i) a.binds.push_back({0, static_cast<int>(i)});
}

// An absent position is an int64 tensor of 0 elements.
Args::Input position(const ir::Node& n, size_t i) {
  return input(n, i, ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {0}, {}));
}

std::optional<Args> value_op(const ir::Node& n) {
  const std::string& op = n.op_type();
  bool in_value = n.num_inputs() > 0 && value_kind(n.input(0)) > 0;
  if (op.rfind("Optional", 0) == 0 && op != "Optional" && !in_value) return std::nullopt;  // opset 18: a plain tensor
  Args a;
  if (op == "Identity" && in_value) a = {ONNXC_HOST_VALUE_COPY, {input(n, 0)}, {value_output(n, 0)}, {}, {}};
  else if (op == "SequenceEmpty" || (op == "Optional" && (n.num_inputs() == 0 || !n.input(0)))) a = {ONNXC_HOST_VALUE_EMPTY, {}, {value_output(n, 0)}, {}, {}};
  else if (op == "SequenceInsert") a = {ONNXC_HOST_SEQ_INSERT, {input(n, 0), input(n, 1), position(n, 2)}, {value_output(n, 0)}, {}, {}};
  else if (op == "SequenceErase") a = {ONNXC_HOST_SEQ_ERASE, {input(n, 0), position(n, 1)}, {value_output(n, 0)}, {}, {}};
  else if (op == "SequenceLength") a = {ONNXC_HOST_SEQ_LENGTH, {input(n, 0)}, {output(n, 0, ir::DType::Int64, {})}, {}, {}};
  else if (op == "OptionalHasElement") a = {ONNXC_HOST_OPT_HAS, {input(n, 0)}, {output(n, 0, ir::DType::Bool, {})}, {}, {}};
  else if (op == "Optional") a = {ONNXC_HOST_OPT_WRAP, {input(n, 0)}, {value_output(n, 0)}, {}, {}};
  else if (op == "OptionalGetElement" && value_kind(n.output(0)) > 0) a = {ONNXC_HOST_VALUE_COPY, {input(n, 0)}, {value_output(n, 0)}, {}, {}};
  else if (op == "OptionalGetElement") a = {ONNXC_HOST_OPT_GET, {input(n, 0)}, {}, {}, {}};
  else if (op == "SequenceAt") a = {ONNXC_HOST_SEQ_AT, {input(n, 0), input(n, 1)}, {}, {}, {}};
  else return std::nullopt;
  // Optional(seq) wraps a whole sequence: a copy; an input that is a plain tensor is wrapped.
  if (op == "Optional" && n.num_inputs() > 0 && in_value) a.op = ONNXC_HOST_VALUE_COPY;
  if (a.op == ONNXC_HOST_OPT_GET || a.op == ONNXC_HOST_SEQ_AT) tensor_output(n, a);
  return a;
}

// Value ops whose operands the runtime carries (sequences of tensors, optionals of those).
// SequenceConstruct is several steps (codegen/partition_values.h), the others one.
bool is_value_op(const ir::Node& n) {
  if (!value_op(n) && n.op_type() != "SequenceConstruct") return false;
  for (const ir::Value* v : n.inputs())
    if (v && value_kind(v) < 0) return false;
  for (const ir::Value* v : n.outputs())
    if (v && value_kind(v) < 0) return false;
  return true;
}

// SplitToSequence whose parts passes/resolve_sequences could not unroll: a tensor cut into a run-time
// sequence (runtime/src/host_split_to_sequence.c). An absent split is an int64 tensor of 0 elements.
bool is_split_to_value(const ir::Node& n) {
  const ir::Value* split = n.num_inputs() > 1 ? n.input(1) : nullptr;
  return n.num_inputs() > 0 && value_kind(n.input(0)) == ONNXC_VALUE_TENSOR && n.input(0)->dtype() != ir::DType::String &&
         (!split || split->dtype() == ir::DType::Int64) && value_kind(n.output(0)) == ONNXC_VALUE_SEQUENCE;
}

Args split_to_sequence(const ir::Node& n) {
  Args::Input split = input(n, 1, ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {0}, {}));
  return {ONNXC_HOST_SPLIT_TO_SEQ, {input(n, 0), std::move(split)}, {value_output(n, 0)},
          {n.attr_int("axis", 0), n.attr_int("keepdims", 1)}, {}};
}

}  // namespace

int value_kind_of(const ir::Type& t) {
  using K = ir::Type::Kind;
  auto seq_of_tensors = [](const ir::Type& s) { return s.kind == K::Sequence && s.elem && s.elem->is_tensor(); };
  if (t.is_tensor()) return ONNXC_VALUE_TENSOR;
  if (seq_of_tensors(t)) return ONNXC_VALUE_SEQUENCE;
  if (t.kind == K::Optional && t.elem && t.elem->is_tensor()) return ONNXC_VALUE_OPTIONAL_TENSOR;
  if (t.kind == K::Optional && t.elem && seq_of_tensors(*t.elem)) return ONNXC_VALUE_OPTIONAL_SEQUENCE;
  return -1;
}

ir::DType element_dtype(const ir::Type& t) {
  const ir::Type* e = &t;
  while (!e->is_tensor() && e->elem) e = e->elem.get();
  return e->dtype;
}

namespace {

// The one table of host ops: each row names an op (domain and op type; nullptr for any op its `form`
// accepts) and builds its arguments. Which nodes run on the host is decided by the op table's traits
// (ir/op_registry.h) and the row's form: an op marked kDataDependent (output sizes come from data) or
// kHostOnly (strings, n-gram pools) always runs on the host, and its row has no form; other ops run
// on the host only in the forms a row accepts (a Cast to or from strings, a reduction whose axes come
// at run time, an op over sequence or optional values). is_host_op and host_step_args both read it,
// so a new host op is one row here plus its builder (and its C file in runtime/src).
struct HostOpRule {
  const char* domain;  // "" for ai.onnx
  const char* op;      // nullptr: any op type `form` accepts
  bool (*form)(const ir::Node&);  // nullptr: the op's traits say it runs on the host (host_only_by_traits)
  Args (*build)(const ir::Node&);
};

bool host_only_by_traits(const ir::Node& n) {
  uint32_t t = ir::op_traits(n.domain(), n.op_type());
  return (t & (ir::kDataDependent | ir::kHostOnly)) != 0;
}

// SequenceConstruct is a value op of several steps, built by codegen/partition_values.h.
Args build_value_op(const ir::Node& n) {
  std::optional<Args> a = value_op(n);
  internal_check(a.has_value()) << n.describe() << " is built by codegen/partition_values.h, not as one host step";
  return *a;
}

const HostOpRule kHostOps[] = {
    {"onnxc", "CacheAppend", nullptr, cache_append},
    {"onnxc", "CacheScatter", nullptr, cache_scatter},
    {"", "NonZero", nullptr, nonzero},
    {"", "Compress", nullptr, compress},
    {"", "Unique", nullptr, unique},
    {"", "NonMaxSuppression", nullptr, nms},
    {"", "TfIdfVectorizer", nullptr, tfidf},
    {"", "StringNormalizer", nullptr, string_normalizer},
    {"", "StringConcat", nullptr, string_concat},
    {"", "StringSplit", nullptr, string_split},
    {"", "RegexFullMatch", nullptr, regex_full_match},
    {"", "Cast", is_string_cast, string_cast},
    {"", "CastLike", is_string_cast, string_cast},
    {"", "Equal", is_string_equal, string_equal},
    {"", nullptr, is_reduce_by_data, reduce_by_data},
    {"", nullptr, is_value_op, build_value_op},
    {"", "SplitToSequence", is_split_to_value, split_to_sequence},
};

const HostOpRule* find_rule(const ir::Node& n) {
  std::string_view domain = n.domain() == "ai.onnx" ? std::string_view() : std::string_view(n.domain());
  for (const HostOpRule& r : kHostOps)
    if (domain == r.domain && (!r.op || n.op_type() == r.op) && (r.form ? r.form(n) : host_only_by_traits(n))) return &r;
  return nullptr;
}

}  // namespace

std::vector<HostOpRow> host_op_rows() {
  std::vector<HostOpRow> r;
  for (const HostOpRule& h : kHostOps) r.push_back({h.domain, h.op ? h.op : "", h.form == nullptr});
  return r;
}

bool is_host_op(const ir::Node& n) { return find_rule(n) != nullptr; }

HostStepArgs host_step_args(const ir::Node& n) {
  const HostOpRule* r = find_rule(n);
  internal_check(r) << n.describe() << " is not a host op";
  return r->build(n);
}

}  // namespace onnxc::codegen
