// Helpers shared by the expansions of ONNX Runtime's contrib ops (expand_contrib_ops.cpp: the
// language-model ops; expand_contrib_encoder.cpp: the encoder ops of ORT's transformer optimizer).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "passes/rewrite.h"

namespace onnxc::passes::contrib {

inline bool is_ms(const ir::Node& n) { return n.domain() == "com.microsoft"; }

// Builds nodes just before `at`, each output named after `hint`.
struct Builder {
  ir::Node* at;
  ir::Graph& g;
  ir::Value* op(const std::string& type, const std::vector<ir::Value*>& in, const std::string& hint) {
    return g.insert_node_before(at, type, in, {g.unique_name(hint)})->output(0);
  }
  ir::Node* node(const std::string& type, const std::vector<ir::Value*>& in, size_t outputs, const std::string& hint) {
    std::vector<std::string> names;
    for (size_t i = 0; i < outputs; ++i) names.push_back(g.unique_name(hint + "_" + std::to_string(i)));
    return g.insert_node_before(at, type, in, names);
  }
  ir::Node* named(const std::string& type, const std::vector<ir::Value*>& in, const std::vector<std::string>& names) {
    return g.insert_node_before(at, type, in, names);
  }
  ir::Value* constant(ir::Tensor t, const std::string& hint) { return g.add_initializer(g.unique_name(hint), std::move(t)); }
  // Dims [start, end) of v's shape, an int64 [end - start].
  ir::Value* dims(ir::Value* v, int64_t start, int64_t end, const std::string& hint) {
    ir::Node* s = g.insert_node_before(at, "Shape", {v}, {g.unique_name(hint)});
    s->set_attr_int("start", start);
    s->set_attr_int("end", end);
    return s->output(0);
  }
};

// Moves every use of output i of contrib node n to `to`, which was built under that output's name
// (the newest value owns a name, so graph outputs keep theirs: callers bind them by name). `to` is
// the same value, so it takes the output's inferred type where it has none yet (the next expansion
// reads the ranks of its inputs).
inline void take_over(ir::Node& n, size_t i, ir::Value* to) {
  if (!n.output(i) || !to) return;
  if (!to->shape() && n.output(i)->shape()) to->set_type(n.output(i)->type());
  replace_all_uses_everywhere(n.output(i), to);
}

// Output i's name, for the node that takes it over ("" when the output is omitted).
inline std::string name_of(const ir::Node& n, size_t i) { return n.output(i) ? n.output(i)->name() : ""; }

inline void check_unused(const ir::Node& n, size_t i, const char* what) {
  user_check(!n.output(i) || !is_used(*n.output(i)))
      << n.describe() << ": output " << i << " (" << what << ") is used; onnxc computes only the normalized output";
}

inline int64_t rank_of(const ir::Node& n, size_t i, const char* what) {
  const ir::Shape* s = shape_of(n.input(i));
  user_check(s) << n.describe() << ": the rank of " << what << " must be known (declare the input's shape)";
  return static_cast<int64_t>(s->size());
}

inline std::optional<int64_t> static_dim(const ir::Value* v, int64_t axis) {
  const ir::Shape* s = shape_of(v);
  if (!s || axis < 0 || axis >= static_cast<int64_t>(s->size())) return std::nullopt;
  return (*s)[static_cast<size_t>(axis)].as_const();
}

// (x + skip) + bias of a Skip(Simplified)LayerNormalization whose bias is input `bias_input`,
// under the name of its sum output (output 3) when it has one; ORT adds in that order.
inline ir::Value* skip_sum(Builder& b, ir::Node& n, size_t bias_input) {
  ir::Value* bias = n.inputs().size() > bias_input ? n.input(bias_input) : nullptr;
  // unique_name reserves nothing: the first sum's name is taken before the last one's is made.
  ir::Value* sum = bias ? b.op("Add", {n.input(0), n.input(1)}, "skip_sum") : nullptr;
  std::string sum_name = n.outputs().size() > 3 && n.output(3) ? n.output(3)->name() : b.g.unique_name("skip_sum");
  return b.named("Add", {sum ? sum : n.input(0), sum ? bias : n.input(1)}, {sum_name})->output(0);
}

// The encoder ops (expand_contrib_encoder.cpp): com.microsoft SkipLayerNormalization, BiasGelu,
// FastGelu, Gelu, QuickGelu, Attention and MultiHeadAttention.
bool is_encoder_op(const ir::Node& n);
void expand_encoder_op(ir::Node& n);

}  // namespace onnxc::passes::contrib
