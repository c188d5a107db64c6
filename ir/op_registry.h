// The op table: (domain, op_type, opset range) -> traits and a shape/type inference rule. It is the one
// authority on which ops exist at which opsets and what they are (traits). The layers that implement
// ops key their tables by the same OpKey and OpsetRange (OpImplTable below): constant evaluation
// (ir/eval) and Halide lowering (codegen/lower); tests/codegen/op_table_test.cpp checks every
// implementation against this table (op_table_mismatch). Partitioning and the choice of host and
// control steps read the traits (op_traits) rather than lists of op names.
// Entries come from one file per op family under ir/infer/ (elementwise.cpp, reduce.cpp, ...).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <tuple>
#include <optional>
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
  kView = 1u << 8,           // output 0 is input 0's bytes under new dims (Reshape, Squeeze; Dropout at inference)
  kHostOnly = 1u << 9,       // never a kernel: runs as a host step of the runtime (strings, n-gram pools)
};
// The traits partitioning reads; every entry of one op must agree on them (op_traits is opset-free).
constexpr uint32_t kPartitionTraits = kShapeOnly | kDataDependent | kControlFlow | kSequence | kView | kHostOnly;

constexpr int64_t kLatestOpset = std::numeric_limits<int32_t>::max();

// The key of every op table: the domain ("" for ai.onnx; "ai.onnx" is stored as "") and the op type.
struct OpKey {
  OpKey(std::string_view domain, std::string_view op_type);
  std::string domain;
  std::string op_type;
  bool operator<(const OpKey& o) const { return std::tie(domain, op_type) < std::tie(o.domain, o.op_type); }
  bool operator==(const OpKey& o) const { return domain == o.domain && op_type == o.op_type; }
  std::string str() const;  // "Add", "onnxc.CacheAppend"
};

// Opset versions [since, until], both inclusive.
struct OpsetRange {
  int64_t since = 1;
  int64_t until = kLatestOpset;
  bool covers(int64_t v) const { return since <= v && v <= until; }
  std::string str() const;  // "1-latest", "13-17"
};

// Computes a node's output types (and shape values) from its inputs; see ir/infer/context.h.
using InferFn = void (*)(InferContext&);

// Entries start at opset 1 unless an op changed its inputs or meaning (then one entry per range):
// inference is lenient about ops used before their ONNX debut (ONNX Runtime's LayerNormalization in
// the default domain, a fused Attention emitted into an older model).
struct OpInfo {
  static constexpr int64_t kLatest = kLatestOpset;
  std::string domain;  // "" for the default ONNX domain (ai.onnx)
  std::string op_type;
  int64_t since = 1;        // first opset version this entry covers
  int64_t until = kLatest;  // last opset version it covers (inclusive)
  uint32_t traits = 0;
  InferFn infer = nullptr;

  bool has(uint32_t trait) const { return (traits & trait) == trait; }
  OpKey key() const { return {domain, op_type}; }
  OpsetRange range() const { return {since, until}; }
};

// The entry for an op at an opset version; nullptr when the op is unknown or the version is not
// covered. `domain` "ai.onnx" is the same as "".
const OpInfo* find_op(std::string_view domain, std::string_view op_type, int64_t opset);
// Every entry, sorted by (domain, op_type, since): for op coverage reports.
const std::vector<OpInfo>& all_ops();
// The traits of an op at any opset (its newest entry's; the entries of one op agree on
// kPartitionTraits, which tests/codegen/op_table_test.cpp checks); 0 for an op the table lacks.
uint32_t op_traits(std::string_view domain, std::string_view op_type);
inline bool op_has(std::string_view domain, std::string_view op_type, uint32_t trait) {
  return (op_traits(domain, op_type) & trait) == trait;
}
// Why an implementation of `key` for `range` (a lowering, an evaluator) does not fit the op table, or
// nullopt when it does: the op is unknown, the range covers opsets no entry covers, or it starts or
// ends inside an entry (some versions of one entry implemented, others not).
std::optional<std::string> op_table_mismatch(const OpKey& key, OpsetRange range);

// A layer's implementations of ops, keyed like the op table: (key, opset range) -> Impl. Ranges of
// one key must not overlap. Entries live in a node-based map, so pointers stay valid as entries are
// added (lowerings register from static initializers of their family files).
template <class Impl>
class OpImplTable {
 public:
  struct Entry {
    OpKey key;
    OpsetRange range;
    Impl impl;
  };
  // False (nothing added) when the range overlaps one already there for the key.
  bool add(OpKey key, OpsetRange range, Impl impl) {
    if (find_overlap(key, range)) return false;
    entries_.emplace(std::pair(key, range.since), Entry{key, range, std::move(impl)});
    return true;
  }
  // The entry for the op at `opset`, or nullptr.
  const Entry* find(std::string_view domain, std::string_view op_type, int64_t opset) const {
    OpKey key(domain, op_type);
    auto it = entries_.upper_bound(std::pair(key, opset));
    if (it == entries_.begin()) return nullptr;
    --it;
    return it->second.key == key && it->second.range.covers(opset) ? &it->second : nullptr;
  }
  // Whether any opset of the op has an entry.
  bool has_op(std::string_view domain, std::string_view op_type) const {
    OpKey key(domain, op_type);
    auto it = entries_.lower_bound(std::pair(key, int64_t{0}));
    return it != entries_.end() && it->second.key == key;
  }
  // Every entry of the op, by opset.
  std::vector<const Entry*> entries_of(std::string_view domain, std::string_view op_type) const {
    OpKey key(domain, op_type);
    std::vector<const Entry*> r;
    for (auto it = entries_.lower_bound(std::pair(key, int64_t{0})); it != entries_.end() && it->second.key == key; ++it)
      r.push_back(&it->second);
    return r;
  }
  std::vector<const Entry*> all() const {
    std::vector<const Entry*> r;
    for (const auto& [k, e] : entries_) r.push_back(&e);
    return r;
  }

 private:
  const Entry* find_overlap(const OpKey& key, OpsetRange range) const {
    for (const Entry* e : entries_of(key.domain, key.op_type))
      if (e->range.since <= range.until && range.since <= e->range.until) return e;
    return nullptr;
  }
  std::map<std::pair<OpKey, int64_t>, Entry> entries_;
};

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
