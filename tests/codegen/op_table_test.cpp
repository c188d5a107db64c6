// The one op table (ir/op_registry.h) against the layers that implement ops: every lowering and every
// constant evaluator is keyed by an op the table has and covers whole entries of it; partitioning,
// host steps and control steps follow the table's traits; a missing lowering is an error naming the
// node, the op and the opset.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "codegen/host_steps.h"
#include "codegen/lower/lower.h"
#include "codegen/partition.h"
#include "codegen/partition_group.h"
#include "ir/error.h"
#include "ir/eval/eval_internal.h"
#include "ir/op_registry.h"
#include "test_util.h"

namespace onnxc::test {
namespace {

using ir::DType;

// "op opsets: why" for each implementation that does not fit the op table.
template <class Entries>
std::string mismatches(const Entries& entries) {
  std::string r;
  for (const auto& [key, range] : entries)
    if (auto why = ir::op_table_mismatch(key, range)) r += *why + "\n";
  return r;
}

TEST(OpTable, EveryLoweringFitsTheOpTable) {
  std::vector<std::pair<ir::OpKey, ir::OpsetRange>> entries;
  for (const codegen::OpLowering* l : codegen::all_lowerings()) entries.push_back({{l->domain, l->op_type}, l->range});
  ASSERT_GT(entries.size(), 150u);
  EXPECT_EQ(mismatches(entries), "");
}

TEST(OpTable, EveryEvaluatorFitsTheOpTable) {
  std::vector<std::pair<ir::OpKey, ir::OpsetRange>> entries;
  for (const auto* e : ir::eval_detail::eval_table().all()) entries.push_back({e->key, e->range});
  ASSERT_GT(entries.size(), 40u);
  EXPECT_EQ(mismatches(entries), "");
}

// The text op_table_mismatch gives, or "fits".
std::string fit(const ir::OpKey& key, ir::OpsetRange range) { return ir::op_table_mismatch(key, range).value_or("fits"); }

TEST(OpTable, MismatchesAreFound) {
  // Scan's entries are 8-8 and 9-latest; Resize's 10-10 and 11-latest.
  EXPECT_EQ(fit({"", "Scan"}, {8, ir::kLatestOpset}), "fits");
  EXPECT_EQ(fit({"ai.onnx", "Scan"}, {9, ir::kLatestOpset}), "fits");
  EXPECT_EQ(fit({"", "Scan"}, {8, 8}), "fits");
  EXPECT_EQ(fit({"", "Scan"}, {1, ir::kLatestOpset}), "Scan opsets 1-latest include versions the op table has no entry for");
  EXPECT_EQ(fit({"", "Resize"}, {10, 12}), "Resize opsets 10-12 cover part of the op table's entry 11-latest");
  EXPECT_EQ(fit({"", "NoSuchOp"}, {}), "NoSuchOp is not in the op table (ir/infer)");
  EXPECT_EQ(fit({"onnxc", "Add"}, {}), "onnxc.Add is not in the op table (ir/infer)");  // the domain counts
}

// op_traits is opset-free, which holds only while an op's entries agree on what partitioning reads.
TEST(OpTable, EntriesOfOneOpAgreeOnPartitionTraits) {
  std::map<std::pair<std::string, std::string>, uint32_t> seen;
  for (const ir::OpInfo& o : ir::all_ops()) {
    auto [it, fresh] = seen.emplace(std::pair(o.domain, o.op_type), o.traits & ir::kPartitionTraits);
    EXPECT_TRUE(fresh || it->second == (o.traits & ir::kPartitionTraits)) << o.op_type << " since " << o.since;
  }
}

// A node of the op with one output, enough for the decisions that look at the op alone.
ir::Node* node_of(ir::Graph& g, const ir::OpInfo& o) { return g.add_node(o.op_type, {}, {o.op_type + "_y"}, o.domain); }

TEST(OpTable, PartitionDecisionsFollowTraits) {
  int control = 0, views = 0, shape_only = 0;
  for (const ir::OpInfo& o : ir::all_ops()) {
    ir::Graph g;
    ir::Node* n = node_of(g, o);
    EXPECT_EQ(codegen::is_control_flow(*n), o.has(ir::kControlFlow)) << o.op_type;
    EXPECT_EQ(codegen::is_view_op(*n), o.has(ir::kView)) << o.op_type;
    EXPECT_EQ(codegen::is_shape_only(*n), o.has(ir::kShapeOnly)) << o.op_type;
    control += o.has(ir::kControlFlow);
    views += o.has(ir::kView);
    shape_only += o.has(ir::kShapeOnly);
  }
  EXPECT_GE(control, 4);  // If, Loop, Scan (two entries), SequenceMap
  EXPECT_EQ(views, 6);
  EXPECT_EQ(shape_only, 3);
}

// Ops the traits send to the host (kDataDependent, kHostOnly) run there in every form; the rows of the
// host-op table without a form name exactly such ops, and every such op has a row.
TEST(OpTable, HostStepsFollowTraits) {
  std::map<std::pair<std::string, std::string>, bool> rows;
  for (const codegen::HostOpRow& r : codegen::host_op_rows()) {
    if (!r.by_traits) continue;
    ASSERT_FALSE(r.op.empty()) << "a row without a form must name its op";
    uint32_t t = ir::op_traits(r.domain, r.op);
    EXPECT_NE(t & (ir::kDataDependent | ir::kHostOnly), 0u)
        << ir::OpKey(r.domain, r.op).str() << " has a host row without a form, but its traits do not send it to the host";
    rows[{r.domain, r.op}] = true;
  }
  int host_only = 0;
  for (const ir::OpInfo& o : ir::all_ops()) {
    if (!(o.traits & (ir::kDataDependent | ir::kHostOnly))) continue;
    ++host_only;
    ir::Graph g;
    EXPECT_TRUE(codegen::is_host_op(*node_of(g, o))) << o.op_type;
    EXPECT_TRUE(rows.count({o.domain, o.op_type})) << o.op_type << " runs on the host by its traits but has no host row";
  }
  EXPECT_GE(host_only, 11);
}

// A control-flow op without a control step (SequenceMap) and an op of an opset no lowering covers are
// named as unsupported, with the reason.
TEST(OpTable, UnsupportedByTraitsOrOpsetIsNamed) {
  {
    ModelBuilder b;
    auto* x = b.input("x", DType::Float32, {2});
    b.output(b.op("Relu", {x}, "y", DType::Float32, {2}));
    auto r = codegen::find_unsupported(b.model());
    EXPECT_TRUE(r.empty());
  }
  ModelBuilder b;
  auto* x = b.input("x", DType::Float32, {2});
  b.output(b.op("ImageDecoder", {x}, "y", DType::UInt8, {2}));
  auto r = codegen::find_unsupported(b.model());
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("ImageDecoder (ImageDecoder node"), std::string::npos) << r[0];
}

TEST(OpTable, MissingLoweringNamesNodeOpAndOpset) {
  ir::Graph g;
  ir::Node* n = g.add_node("ImageDecoder", {}, {"img"});
  try {
    codegen::lowering_for(*n, 20);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("ImageDecoder node"), std::string::npos) << msg;
    EXPECT_NE(msg.find("op ImageDecoder has no lowering for opset 20"), std::string::npos) << msg;
  }
  ir::Node* add = g.add_node("Add", {}, {"s"});
  EXPECT_EQ(codegen::lowering_for(*add, 14).op_type, "Add");
  EXPECT_EQ(codegen::find_lowering("ai.onnx", "Add", 7), codegen::find_lowering("", "Add", 14));
}

}  // namespace
}  // namespace onnxc::test
