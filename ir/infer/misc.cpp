// Ops of no larger family: random generators, text (StringNormalizer, StringConcat, StringSplit,
// RegexFullMatch, TfIdfVectorizer) and the
// training ops of ai.onnx.preview.training (Adagrad, Adam, Momentum, Gradient).
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

const char* kTraining = "ai.onnx.preview.training";

void infer_random_like(InferContext& ctx) {
  ctx.set_tensor(0, dtype_attr(ctx, "dtype", ctx.in_dtype(0)), ctx.in_shape(0));
}

void infer_random(InferContext& ctx) {
  ctx.set_tensor(0, dtype_attr(ctx, "dtype", DType::Float32), to_dims(ctx.node().attr_ints("shape")));
}

void infer_multinomial(InferContext& ctx) {
  std::optional<Shape> out;
  if (const auto& x = ctx.in_shape(0)) out = Shape{(*x)[0], ctx.node().attr_int("sample_size", 1)};
  ctx.set_tensor(0, dtype_attr(ctx, "dtype", DType::Int32), out);
}

// With stopwords the number of strings left depends on the data.
void infer_string_normalizer(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> out = x;
  const Attribute* stopwords = ctx.node().attr("stopwords");
  if (x && stopwords && !stopwords->strings.empty() && !x->empty())
    out->back() = ctx.fresh_dim(0, x->size() - 1, "strings");
  ctx.set_tensor(0, DType::String, out);
}

// StringConcat (opset 20): strings, with the inputs' numpy broadcast shape.
void infer_string_concat(InferContext& ctx) {
  ctx.set_tensor(0, DType::String, broadcast_shapes(ctx, {ctx.in_shape(0), ctx.in_shape(1)}));
}

// StringSplit (opset 20): the parts [X..., most parts] (a size only the data decides) and their
// counts [X...].
void infer_string_split(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> parts = x;
  if (parts) parts->push_back(ctx.fresh_dim(0, x->size(), "parts"));
  ctx.set_tensor(0, DType::String, parts);
  ctx.set_tensor(1, DType::Int64, x);
}

// RegexFullMatch (opset 20): one bool per string.
void infer_regex_full_match(InferContext& ctx) { ctx.set_tensor(0, DType::Bool, ctx.in_shape(0)); }

// ai.onnx.ml Binarizer: like its input.
void infer_binarizer(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

// ai.onnx.ml ArrayFeatureExtractor: X [..., N] and indices (any shape, read flat) -> [..., count];
// a 1-D X gives [1, count], as ONNX Runtime (and ONNX's reference) do.
void infer_array_feature_extractor(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  const auto& idx = ctx.in_shape(1);
  std::optional<Shape> out;
  if (x && !x->empty() && idx) {
    out = x->size() == 1 ? Shape{Dim(1)} : Shape(x->begin(), x->end() - 1);
    out->push_back(shape_numel(*idx));
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_tfidf(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  auto idx = ctx.node().attr_ints("ngram_indexes");
  int64_t width = idx.empty() ? 0 : *std::max_element(idx.begin(), idx.end()) + 1;
  std::optional<Shape> out;
  if (x && x->size() == 1) out = Shape{width};
  else if (x && x->size() == 2) out = Shape{(*x)[0], width};
  ctx.set_tensor(0, DType::Float32, out);
}

// Optimizers: inputs R, T, then `groups` lists of n tensors; outputs are new values for the lists
// from the first one on (X, then the optimizer's state lists).
void optimizer(InferContext& ctx, size_t groups) {
  size_t n = ctx.num_inputs() > 2 ? (ctx.num_inputs() - 2) / groups : 0;
  infer_check(ctx, n > 0 && ctx.num_inputs() == 2 + groups * n)
      << "expects R, T and " << groups << " equal lists of tensors";
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    size_t list = i / n, k = i % n;
    size_t src = 2 + (list == 0 ? 0 : list + 1) * n + k;  // skip the gradients list
    ctx.set_output(i, ctx.in_type(src));
  }
}

void infer_adagrad(InferContext& ctx) { optimizer(ctx, 3); }
void infer_adam(InferContext& ctx) { optimizer(ctx, 4); }
void infer_momentum(InferContext& ctx) { optimizer(ctx, 3); }

// Gradient: one output per name in `xs`, typed like that value.
void infer_gradient(InferContext& ctx) {
  const Attribute* xs = ctx.node().attr("xs");
  if (!xs) return;
  for (size_t i = 0; i < xs->strings.size() && i < ctx.num_outputs(); ++i)
    if (const Value* v = ctx.node().graph()->find_value(xs->strings[i])) ctx.set_output(i, v->type());
}

}  // namespace

void add_misc_ops(OpTable& t) {
  t.add_all({"Bernoulli", "RandomUniformLike", "RandomNormalLike"}, kRandom, infer_random_like);
  t.add_all({"RandomUniform", "RandomNormal"}, kRandom, infer_random);
  t.add_all({"Multinomial"}, kRandom, infer_multinomial);
  t.add_all({"StringNormalizer"}, kDataDependent, infer_string_normalizer);
  t.add_all({"StringConcat"}, kHostOnly, infer_string_concat);
  t.add_all({"StringSplit"}, kDataDependent, infer_string_split);
  t.add_all({"RegexFullMatch"}, kHostOnly, infer_regex_full_match);
  t.add_all({"TfIdfVectorizer"}, kHostOnly, infer_tfidf);
  t.add_all({"Binarizer"}, 0, infer_binarizer, "ai.onnx.ml");
  t.add_all({"ArrayFeatureExtractor"}, 0, infer_array_feature_extractor, "ai.onnx.ml");
  t.add_all({"Adagrad"}, 0, infer_adagrad, kTraining);
  t.add_all({"Adam"}, 0, infer_adam, kTraining);
  t.add_all({"Momentum"}, 0, infer_momentum, kTraining);
  t.add_all({"Gradient"}, 0, infer_gradient, kTraining);
}

}  // namespace onnxc::ir
