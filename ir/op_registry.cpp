// The op table, built once from the op family files of ir/infer/.
#include "ir/op_registry.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/infer/families.h"

namespace onnxc::ir {
namespace {

std::string_view norm_domain(std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; }

std::vector<OpInfo> build_table() {
  OpTable t;
  for (auto add : {add_elementwise_ops, add_reduce_ops, add_matmul_ops, add_conv_ops, add_norm_ops, add_nn_ops,
                   add_rnn_ops, add_shape_ops, add_slice_ops, add_index_ops, add_control_ops, add_sequence_ops,
                   add_quantize_ops, add_signal_ops, add_misc_ops, add_onnxc_ops})
    add(t);
  return std::move(t).entries();
}

}  // namespace

OpKey::OpKey(std::string_view d, std::string_view op) : domain(norm_domain(d)), op_type(op) {}

std::string OpKey::str() const { return domain.empty() ? op_type : domain + "." + op_type; }

std::string OpsetRange::str() const {
  return std::to_string(since) + "-" + (until == kLatestOpset ? std::string("latest") : std::to_string(until));
}

void OpTable::add_all(std::initializer_list<const char*> op_types, uint32_t traits, InferFn fn,
                      const std::string& domain) {
  for (const char* op : op_types) add({domain, op, 1, OpInfo::kLatest, traits, fn});
}

std::vector<OpInfo> OpTable::entries() && { return std::move(entries_); }

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> table = [] {
    auto v = build_table();
    auto key = [](const OpInfo& o) { return std::tie(o.domain, o.op_type, o.since); };
    std::sort(v.begin(), v.end(), [&](const OpInfo& a, const OpInfo& b) { return key(a) < key(b); });
    for (size_t i = 1; i < v.size(); ++i) {
      const OpInfo &p = v[i - 1], &c = v[i];
      internal_check(p.domain != c.domain || p.op_type != c.op_type || p.until < c.since)
          << "op table: overlapping entries for " << c.op_type;
    }
    return v;
  }();
  return table;
}

const OpInfo* find_op(std::string_view domain, std::string_view op_type, int64_t opset) {
  const auto& ops = all_ops();
  domain = norm_domain(domain);
  auto it = std::lower_bound(ops.begin(), ops.end(), std::pair(domain, op_type), [](const OpInfo& o, const auto& k) {
    return std::pair<std::string_view, std::string_view>(o.domain, o.op_type) < k;
  });
  for (; it != ops.end() && it->domain == domain && it->op_type == op_type; ++it)
    if (it->since <= opset && opset <= it->until) return &*it;
  return nullptr;
}

uint32_t op_traits(std::string_view domain, std::string_view op_type) {
  const OpInfo* newest = nullptr;
  const auto& ops = all_ops();
  domain = norm_domain(domain);
  auto it = std::lower_bound(ops.begin(), ops.end(), std::pair(domain, op_type), [](const OpInfo& o, const auto& k) {
    return std::pair<std::string_view, std::string_view>(o.domain, o.op_type) < k;
  });
  for (; it != ops.end() && it->domain == domain && it->op_type == op_type; ++it) newest = &*it;
  return newest ? newest->traits : 0;
}

std::optional<std::string> op_table_mismatch(const OpKey& key, OpsetRange range) {
  std::vector<const OpInfo*> entries;
  for (const OpInfo& o : all_ops())
    if (o.domain == key.domain && o.op_type == key.op_type) entries.push_back(&o);
  if (entries.empty()) return key.str() + " is not in the op table (ir/infer)";
  if (range.since > range.until) return key.str() + ": empty opset range " + range.str();
  // Every version in the range must be covered, and each entry covered whole or not at all.
  int64_t next = range.since;
  for (const OpInfo* o : entries) {
    if (o->until < range.since || o->since > range.until) continue;
    if (o->since < range.since || o->until > range.until)
      return key.str() + " opsets " + range.str() + " cover part of the op table's entry " + o->range().str();
    if (o->since != next) break;
    next = o->until == kLatestOpset ? kLatestOpset : o->until + 1;
    if (o->until == range.until) return std::nullopt;
  }
  return key.str() + " opsets " + range.str() + " include versions the op table has no entry for";
}

OpsetMap opset_map(const Model& m) {
  OpsetMap r;
  for (const auto& o : m.opset_imports) r[std::string(norm_domain(o.domain))] = o.version;
  return r;
}

int64_t opset_of(const OpsetMap& opsets, std::string_view domain) {
  auto it = opsets.find(std::string(norm_domain(domain)));
  return it == opsets.end() ? OpInfo::kLatest : it->second;
}

}  // namespace onnxc::ir
