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
