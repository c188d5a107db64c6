// The op table: (domain, op_type, opset range) -> traits and a shape/type inference rule. Other layers
// (codegen's lowering table, `onnxc inspect` op coverage) key their own tables the same way.
// Entries come from one file per op family under ir/infer/ (elementwise.cpp, reduce.cpp, ...).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace onnxc::ir {

class InferContext;
class Model;

// Traits: facts about an op other layers ask for without knowing the op.
enum OpTrait : uint32_t {
  kElementwise = 1u << 0,    // output element i depends on input element i (with broadcasting)
  kCommutative = 1u << 1,    // a binary op whose two inputs may be swapped
  kShapeOnly = 1u << 2,      // reads only its inputs' shapes, never their data (Shape, Size)
  kDataDependent = 1u << 3,  // output shape depends on input data (NonZero, Unique, ...)
  kRandom = 1u << 4,         // nondeterministic: never fold or merge two of them
  kControlFlow = 1u << 5,    // runs subgraphs (If, Loop, Scan, SequenceMap)
  kSequence = 1u << 6,       // takes or makes sequence/optional values
  kShapeArgs = 1u << 7,      // some input is a shape-like argument (Reshape's shape, Slice's starts)
};

// Computes a node's output types (and shape values) from its inputs; see ir/infer/context.h.
using InferFn = void (*)(InferContext&);

// Entries start at opset 1 unless an op changed its inputs or meaning (then one entry per range):
// inference is lenient about ops used before their ONNX debut (ONNX Runtime's LayerNormalization in
// the default domain, a fused Attention emitted into an older model).
struct OpInfo {
  static constexpr int64_t kLatest = std::numeric_limits<int32_t>::max();
  std::string domain;  // "" for the default ONNX domain (ai.onnx)
  std::string op_type;
  int64_t since = 1;        // first opset version this entry covers
  int64_t until = kLatest;  // last opset version it covers (inclusive)
  uint32_t traits = 0;
  InferFn infer = nullptr;

  bool has(uint32_t trait) const { return (traits & trait) == trait; }
};

// The entry for an op at an opset version; nullptr when the op is unknown or the version is not
// covered. `domain` "ai.onnx" is the same as "".
const OpInfo* find_op(std::string_view domain, std::string_view op_type, int64_t opset);
// Every entry, sorted by (domain, op_type, since): for op coverage reports.
const std::vector<OpInfo>& all_ops();

// Opset versions by domain ("" for ai.onnx), as a model imports them.
using OpsetMap = std::map<std::string, int64_t>;
OpsetMap opset_map(const Model& m);
// The version a node of `domain` runs at; the newest (OpInfo::kLatest) for a domain the map lacks,
// so hand-built graphs get current semantics.
int64_t opset_of(const OpsetMap& opsets, std::string_view domain);

// Collects the entries of one op family file (ir/infer/*.cpp).
class OpTable {
 public:
  void add(OpInfo info) { entries_.push_back(std::move(info)); }
  // The same rule and traits for several ops.
  void add_all(std::initializer_list<const char*> op_types, uint32_t traits, InferFn fn,
               const std::string& domain = "");
  std::vector<OpInfo> entries() &&;

 private:
  std::vector<OpInfo> entries_;
};

}  // namespace onnxc::ir
